"""sparsenet: MXNet's sparse NDArray system on PyTorch.

``import sparsenet as mx`` and MXNet 1.x sparse code runs: storage-typed arrays
(``default``, ``csr``, ``row_sparse``) with storage-type inference and dense
fallback, sparse operators, and the training stack around them.

>>> import sparsenet as mx
>>> x = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 2], [0, 1, 2]), shape=(2, 3))
>>> mx.nd.dot(x, mx.nd.ones((2, 4)), transpose_a=True).stype
'row_sparse'
"""
from . import base, config, context, attribute
from .attribute import AttrScope
from .base import MXNetError, SparsenetError
from .context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus
from . import ndarray
from . import ndarray as nd
from . import autograd, random
from . import operator
from . import io
from . import optimizer, lr_scheduler
from . import kvstore
from . import kvstore as kv
from . import initializer
from . import initializer as init
from . import gluon
from . import symbol
from . import symbol as sym
from .symbol import name
from . import metric, model, callback
from . import module
from . import module as mod
from . import runtime, test_utils
from . import models

__version__ = "0.1.0"

__all__ = ["base", "config", "context", "attribute", "AttrScope", "MXNetError", "SparsenetError",
           "Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus", "ndarray", "nd", "autograd", "random",
           "test_utils", "io", "optimizer", "lr_scheduler", "kvstore", "kv", "initializer", "init", "gluon",
           "symbol", "sym", "name", "metric", "model", "callback", "module", "mod", "runtime", "operator", "models"]

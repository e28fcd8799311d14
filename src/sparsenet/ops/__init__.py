"""Operators: the registry and one module per family.

Importing this package registers every operator and its storage-type rules, and sets
the methods that run an operator (``a + b``, ``a.sum()``, ...) on the array classes
(:mod:`sparsenet.ops.methods`).
Users reach the operators through ``mx.nd`` (eager) and ``mx.sym`` (symbolic).
"""
# The nd namespace first: importing any sparsenet.ndarray module runs sparsenet.ndarray's
# __init__, which imports this package's modules; started here, before they are half
# loaded, it finds them whole (``import sparsenet`` no longer imports mx.nd first).
from ..ndarray import stype as _stype  # noqa: F401
from . import registry
from . import cast, unary, scalar, binary, arithmetic, shape, reduce, dot, indexing, nn, loss
from . import update_rules
from . import sparse_embedding
from . import layer_common, norm, sync_batch_norm, conv, pooling
from . import deformable_conv
from . import softmax, minmax, scatter, layout, quadratic, reset, sampling, ste
from . import sequence, fill
from . import rnn
from . import methods

__all__ = ["registry", "cast", "unary", "scalar", "binary", "arithmetic", "shape", "reduce", "dot",
           "indexing", "nn", "loss", "update_rules", "sparse_embedding",
           "layer_common", "norm", "sync_batch_norm", "conv", "deformable_conv", "pooling",
           "softmax", "minmax", "scatter", "layout", "quadratic", "reset", "sampling", "ste", "sequence", "fill", "rnn", "methods"]

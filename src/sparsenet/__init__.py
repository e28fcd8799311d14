"""sparsenet: MXNet's sparse NDArray system on PyTorch.

``import sparsenet as mx`` and MXNet 1.x sparse code runs: storage-typed arrays
(``default``, ``csr``, ``row_sparse``) with storage-type inference and dense
fallback, sparse operators, and the training stack around them.

>>> import sparsenet as mx
>>> x = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 2], [0, 1, 2]), shape=(2, 3))
>>> mx.nd.dot(x, mx.nd.ones((2, 4)), transpose_a=True).stype
'row_sparse'

The namespaces load on first use, as NumPy's and SciPy's do: ``import sparsenet``
itself imports neither torch nor NumPy, ``mx.nd`` imports :mod:`sparsenet.ndarray`
(and torch) the first time it is read, and ``from sparsenet import gluon`` imports the
Gluon package. So ``sparsenet --help`` answers at once, and a program pays only for
the namespaces it uses. Every name of :data:`__all__` is listed by ``dir(mx)`` and is
the very object an explicit import gives:

>>> import sparsenet.ndarray
>>> mx.nd is sparsenet.ndarray and mx.cpu is mx.context.cpu
True
"""
import gc
import importlib
import os
import sys

# read now, so a bad SPARSENET_STORAGE_FALLBACK fails at import (config needs no torch)
from . import config  # noqa: F401

__version__ = "0.1.0"

#: Top-level name -> (module it comes from, attribute of that module or None for the
#: module itself). Read by :func:`__getattr__` on first access; nothing here is imported
#: by ``import sparsenet``. A new namespace is one row.
_LAZY = {
    # modules under their own names
    "base": ("sparsenet.base", None),
    "config": ("sparsenet.config", None),
    "context": ("sparsenet.context", None),
    "attribute": ("sparsenet.attribute", None),
    "ndarray": ("sparsenet.ndarray", None),
    "autograd": ("sparsenet.autograd", None),
    "random": ("sparsenet.random", None),
    "operator": ("sparsenet.operator", None),
    "io": ("sparsenet.io", None),
    "optimizer": ("sparsenet.optimizer", None),
    "lr_scheduler": ("sparsenet.lr_scheduler", None),
    "kvstore": ("sparsenet.kvstore", None),
    "initializer": ("sparsenet.initializer", None),
    "gluon": ("sparsenet.gluon", None),
    "symbol": ("sparsenet.symbol", None),
    "metric": ("sparsenet.metric", None),
    "model": ("sparsenet.model", None),
    "callback": ("sparsenet.callback", None),
    "module": ("sparsenet.module", None),
    "runtime": ("sparsenet.runtime", None),
    "test_utils": ("sparsenet.test_utils", None),
    "util": ("sparsenet.util", None),
    "contrib": ("sparsenet.contrib", None),
    "models": ("sparsenet.models", None),
    "profiler": ("sparsenet.profiler", None),
    "rnn": ("sparsenet.rnn", None),
    # MXNet's short names
    "nd": ("sparsenet.ndarray", None),
    "kv": ("sparsenet.kvstore", None),
    "init": ("sparsenet.initializer", None),
    "sym": ("sparsenet.symbol", None),
    "mod": ("sparsenet.module", None),
    # names from inside modules
    "AttrScope": ("sparsenet.attribute", "AttrScope"),
    "MXNetError": ("sparsenet.base", "MXNetError"),
    "SparsenetError": ("sparsenet.base", "SparsenetError"),
    "Context": ("sparsenet.context", "Context"),
    "cpu": ("sparsenet.context", "cpu"),
    "gpu": ("sparsenet.context", "gpu"),
    "cpu_pinned": ("sparsenet.context", "cpu_pinned"),
    "current_context": ("sparsenet.context", "current_context"),
    "num_gpus": ("sparsenet.context", "num_gpus"),
    "name": ("sparsenet.symbol", "name"),
}

__all__ = ["base", "config", "context", "attribute", "AttrScope", "MXNetError", "SparsenetError",
           "Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus", "ndarray", "nd",
           "autograd", "random", "test_utils", "io", "optimizer", "lr_scheduler", "kvstore", "kv",
           "initializer", "init", "gluon", "symbol", "sym", "name", "metric", "model", "callback",
           "module", "mod", "runtime", "operator", "models", "util", "contrib", "profiler", "rnn"]


def __getattr__(name):
    """Import the namespace ``name`` names on first access and keep it (``mx.nd``, ``mx.cpu``).

    >>> import sparsenet as mx
    >>> mx.no_such_name
    Traceback (most recent call last):
    ...
    AttributeError: module 'sparsenet' has no attribute 'no_such_name'
    """
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        # builtin: a module __getattr__ must raise AttributeError
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    # importlib, on first access: the namespaces load only when used (see the module docstring)
    value = importlib.import_module(module_name)
    _freeze_engine()
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


_FROZEN = []


def _freeze_engine():
    """Once torch is loaded, move the objects alive then (torch's ~165,000 module-level
    objects, ours) out of the garbage collector's view (:func:`gc.freeze`): they live as
    long as the process, and each full collection walked them all, 40-80 ms at a time in
    the middle of a training loop (MXNet's own heap takes about 19 ms). Objects made later
    are collected as usual. ``SPARSENET_GC_FREEZE=0`` leaves the collector as it is."""
    if _FROZEN or "torch" not in sys.modules:
        return
    _FROZEN.append(True)
    if os.environ.get("SPARSENET_GC_FREEZE", "1") != "0":
        gc.freeze()


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

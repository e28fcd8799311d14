"""Data input: iterators and LibSVM reading and writing (``mx.io``).

- :class:`LibSVMIter`: CSR batches from LibSVM files, parsed by a validating
  compiled kernel in background threads, in bounded memory, shardable.
- :func:`load_libsvm` / :func:`save_libsvm`: whole files in and out.
- :class:`NDArrayIter`: batches from in-memory arrays (CSR stays CSR).
- :class:`CSVIter`: dense batches from CSV files, validated (:class:`CSVFormatError`).
- :class:`PrefetchingIter`: the next batch of one or several iterators, read in a thread.
- :class:`ResizeIter`: a fixed number of batches per epoch from any iterator.
- :class:`DataIter`, :class:`DataBatch`, :class:`DataDesc`: MXNet's iterator protocol.

>>> import sparsenet as mx
>>> it = mx.io.NDArrayIter(mx.nd.ones((4, 2)), batch_size=2)
>>> [b.data[0].shape for b in it]
[(2, 2), (2, 2)]
"""
import importlib

from .libsvm.compression import (CompressedFileError, CompressionFallbackWarning,
                                 CompressionUnavailableError)
from .libsvm.errors import LibSVMFormatError

# The iterators and readers load on first use (``mx.io.LibSVMIter``): they import torch,
# and ``sparsenet inspect`` (which reads with the parser alone) must not. The error
# classes above import neither NumPy nor torch.

#: name -> (module, attribute) of the names loaded on first access
_LAZY = {
    "DataBatch": (".base", "DataBatch"), "DataDesc": (".base", "DataDesc"),
    "DataIter": (".base", "DataIter"),
    "CSVFormatError": (".csv_format", "CSVFormatError"), "CSVIter": (".csv_iter", "CSVIter"),
    "LibSVMIter": (".libsvm.iterator", "LibSVMIter"),
    "load_libsvm": (".libsvm.load", "load_libsvm"),
    "save_libsvm": (".libsvm.save", "save_libsvm"),
    "NDArrayIter": (".ndarray_iter", "NDArrayIter"),
    "IteratorMismatchError": (".prefetching", "IteratorMismatchError"),
    "PrefetchingIter": (".prefetching", "PrefetchingIter"),
    "EmptyIteratorError": (".resize", "EmptyIteratorError"),
    "ResizeIter": (".resize", "ResizeIter"),
}


def _public(cls):
    """Show an error class as ``sparsenet.io.<name>`` (where users catch it)."""
    cls.__module__ = __name__
    return cls


for _cls in (LibSVMFormatError, CompressedFileError, CompressionFallbackWarning,
             CompressionUnavailableError):
    _public(_cls)
del _cls


def _load_all():
    """Import every lazy name (first access to any of them): the modules together, as an
    eager ``import`` did, so that the error classes are renamed before anything raises them."""
    for name, (module, attr) in _LAZY.items():
        globals()[name] = getattr(importlib.import_module(module, __name__), attr)
    for cls in (globals()["CSVFormatError"], globals()["IteratorMismatchError"],
                globals()["EmptyIteratorError"]):
        _public(cls)


def __getattr__(name):
    if name in _LAZY:
        _load_all()
        return globals()[name]
    # builtin: a module __getattr__ must raise AttributeError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["DataBatch", "DataDesc", "DataIter", "LibSVMIter", "LibSVMFormatError",
           "CompressedFileError", "CompressionFallbackWarning", "CompressionUnavailableError",
           "NDArrayIter", "load_libsvm", "save_libsvm", "CSVIter", "CSVFormatError",
           "PrefetchingIter", "IteratorMismatchError", "ResizeIter", "EmptyIteratorError"]

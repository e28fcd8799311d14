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
from .base import DataBatch, DataDesc, DataIter
from .csv_format import CSVFormatError
from .csv_iter import CSVIter
from .libsvm.compression import (CompressedFileError, CompressionFallbackWarning,
                                 CompressionUnavailableError)
from .libsvm.errors import LibSVMFormatError
from .libsvm.iterator import LibSVMIter
from .libsvm.load import load_libsvm
from .libsvm.save import save_libsvm
from .ndarray_iter import NDArrayIter
from .prefetching import IteratorMismatchError, PrefetchingIter
from .resize import EmptyIteratorError, ResizeIter

for _cls in (LibSVMFormatError, CompressedFileError, CompressionFallbackWarning,
             CompressionUnavailableError, CSVFormatError, IteratorMismatchError,
             EmptyIteratorError):
    _cls.__module__ = __name__
del _cls

__all__ = ["DataBatch", "DataDesc", "DataIter", "LibSVMIter", "LibSVMFormatError",
           "CompressedFileError", "CompressionFallbackWarning", "CompressionUnavailableError",
           "NDArrayIter", "load_libsvm", "save_libsvm", "CSVIter", "CSVFormatError",
           "PrefetchingIter", "IteratorMismatchError", "ResizeIter", "EmptyIteratorError"]

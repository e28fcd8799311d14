"""Errors and dtype maps shared by the whole package.

Every error sparsenet raises derives from :class:`SparsenetError`, which is also
exported as ``MXNetError`` so that ``except mx.base.MXNetError`` in MXNet code
keeps working.
"""
import numpy as np
import torch

__all__ = [
    "SparsenetError", "MXNetError", "StorageFallbackError", "StorageFallbackWarning",
    "StorageTypeError", "SparseFormatError", "FileFormatError", "NotSupportedForSparseNDArray",
    "mx_real_t", "numpy_dtype", "torch_dtype", "dtype_name",
]


class SparsenetError(Exception):
    """Base class of every error raised by sparsenet (alias: ``MXNetError``)."""


MXNetError = SparsenetError


class StorageFallbackError(SparsenetError):
    """Raised when an operator would densify its inputs and the policy is ``'error'``."""


class StorageFallbackWarning(UserWarning):
    """Issued when an operator has no kernel for its input storage types and densifies them."""


class StorageTypeError(SparsenetError, TypeError):
    """An array of the wrong storage type was given (e.g. CSR where row_sparse is needed)."""


class SparseFormatError(SparsenetError, ValueError):
    """The parts of a sparse array are inconsistent (unsorted indices, bad indptr, ...)."""


class FileFormatError(SparsenetError, ValueError):
    """A saved file is truncated, corrupt or not in the expected format (names path and key)."""


class NotSupportedForSparseNDArray(SparsenetError, NotImplementedError):
    """The method exists for dense arrays only (e.g. ``reshape`` on a CSR array)."""

    def __init__(self, function, alias=None, *args):
        name = getattr(function, "__name__", str(function))
        msg = f"Function {name}"
        if alias:
            msg += f" (namely operator \"{alias}\")"
        if args:
            msg += " with arguments (" + ", ".join(map(str, args)) + ")"
        msg += " is not supported for SparseNDArray and only available in NDArray."
        super().__init__(msg)


mx_real_t = np.float32

_NP_TO_TORCH = {
    np.dtype(np.float32): torch.float32,
    np.dtype(np.float64): torch.float64,
    np.dtype(np.float16): torch.float16,
    np.dtype(np.uint8): torch.uint8,
    np.dtype(np.int8): torch.int8,
    np.dtype(np.int16): torch.int16,
    np.dtype(np.int32): torch.int32,
    np.dtype(np.int64): torch.int64,
    np.dtype(np.bool_): torch.bool,
}
_TORCH_TO_NP = {v: k for k, v in _NP_TO_TORCH.items()}
_TORCH_TO_NP[torch.bfloat16] = np.dtype(np.float32)  # numpy has no bfloat16; asnumpy upcasts


def numpy_dtype(dtype):
    """Return the ``numpy.dtype`` for a numpy/torch dtype, a type or a name.

    >>> numpy_dtype('float16')
    dtype('float16')
    >>> numpy_dtype(torch.int64)
    dtype('int64')
    """
    if dtype is None:
        return np.dtype(mx_real_t)
    if isinstance(dtype, torch.dtype):
        try:
            return _TORCH_TO_NP[dtype]
        except KeyError:
            raise TypeError(f"unsupported dtype {dtype}; expected one of "
                            f"{sorted(str(d) for d in _NP_TO_TORCH)}") from None
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"unsupported dtype {dtype!r}; expected a numpy/torch dtype or its name") from None
    if dt not in _NP_TO_TORCH:
        raise TypeError(f"unsupported dtype {dt}; expected one of {sorted(str(d) for d in _NP_TO_TORCH)}")
    return dt


def torch_dtype(dtype):
    """Return the ``torch.dtype`` for a numpy/torch dtype, a type or a name (None -> float32).

    >>> torch_dtype('float64')
    torch.float64
    >>> torch_dtype(None)
    torch.float32
    """
    if isinstance(dtype, torch.dtype):
        return dtype
    return _NP_TO_TORCH[numpy_dtype(dtype)]


def dtype_name(dtype):
    """Return the short name of a dtype, e.g. ``'float32'``.

    >>> dtype_name(torch.float16)
    'float16'
    """
    return numpy_dtype(dtype).name

"""The NumPy/torch half of :mod:`sparsenet.base`: dtype maps, MXNet's type tuples and
:func:`as_shape`.

They live here, apart from the error classes, so that importing :mod:`sparsenet.base`
imports neither NumPy nor torch (``sparsenet --help`` and ``sparsenet inspect`` answer
without torch). :mod:`sparsenet.base` re-exports every name of :data:`__all__` on first
access, so ``from sparsenet.base import torch_dtype`` and ``mx.base.mx_real_t`` keep working.

>>> import sparsenet as mx
>>> mx.base.torch_dtype is torch_dtype
True
"""
import numpy as np
import torch

from .base import InvalidArgumentTypeError, ShapeError

__all__ = ["mx_real_t", "numeric_types", "integer_types", "numpy_dtype", "torch_dtype",
           "dtype_name", "as_shape"]

mx_real_t = np.float32

# the type tuples MXNet code imports from mxnet.base
numeric_types = (float, int, np.generic)
integer_types = (int, np.int32, np.int64)


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
            raise InvalidArgumentTypeError(f"unsupported dtype {dtype}; expected one of "
                                           f"{sorted(str(d) for d in _NP_TO_TORCH)}") from None
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise InvalidArgumentTypeError(
            f"unsupported dtype {dtype!r}; expected a numpy/torch dtype or its name") from None
    if dt not in _NP_TO_TORCH:
        raise InvalidArgumentTypeError(
            f"unsupported dtype {dt}; expected one of {sorted(str(d) for d in _NP_TO_TORCH)}")
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


def as_shape(shape, name="shape"):
    """``shape`` (an int or a sequence of ints) as a tuple of non-negative Python ints.

    Booleans, floats and other non-integral values raise
    :class:`InvalidArgumentTypeError`, negative dimensions :class:`ShapeError`
    (MXNet raises for both), each naming the argument.

    >>> as_shape(3), as_shape((2, np.int64(4)))
    ((3,), (2, 4))
    >>> as_shape((2.5, 3))
    Traceback (most recent call last):
    ...
    sparsenet.base.InvalidArgumentTypeError: shape: expected non-negative integer dimensions, got (2.5, 3) (dimension 0 is float 2.5)
    >>> as_shape((-1, 3), 'data_shape')
    Traceback (most recent call last):
    ...
    sparsenet.base.ShapeError: data_shape: expected non-negative integer dimensions, got (-1, 3) (dimension 0 is negative)
    """
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        dims = tuple(dims)
    except TypeError:
        raise InvalidArgumentTypeError(f"{name}: expected an int or a tuple of ints, got "
                                       f"{type(shape).__name__} {shape!r}") from None
    for i, d in enumerate(dims):
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise InvalidArgumentTypeError(f"{name}: expected non-negative integer dimensions, "
                                           f"got {shape!r} (dimension {i} is "
                                           f"{type(d).__name__} {d!r})")
        if d < 0:
            raise ShapeError(f"{name}: expected non-negative integer dimensions, got {shape!r} "
                             f"(dimension {i} is negative)")
    return tuple(int(d) for d in dims)

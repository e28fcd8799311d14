"""Errors and dtype maps shared by the whole package.

Every error sparsenet raises derives from :class:`SparsenetError`, which is also
exported as ``MXNetError`` so that ``except mx.base.MXNetError`` in MXNet code
keeps working.
"""
import numpy as np
import torch

__all__ = [
    "SparsenetError", "MXNetError", "StorageFallbackError", "StorageFallbackWarning",
    "NativeKernelWarning",
    "StorageTypeError", "SparseFormatError", "FileFormatError", "NotSupportedForSparseNDArray",
    "InvalidArgumentError", "InvalidArgumentTypeError", "ShapeError", "IndexOutOfRangeError",
    "UnknownOperatorError", "DistributedError",
    "OperatorArgumentError", "ParameterAssertionError", "NotImplementedForSymbol",
    "UnknownNameError", "UnsupportedError", "StateError", "OutOfMemoryError",
    "mx_real_t", "numpy_dtype", "torch_dtype", "dtype_name", "as_shape",
    "py_str", "string_types", "numeric_types", "integer_types",
]


class SparsenetError(RuntimeError):
    """Base class of every error raised by sparsenet (alias: ``MXNetError``).

    A ``RuntimeError``, as MXNet's ``MXNetError`` is; the subclasses below also
    inherit the builtin they refine, so ``except ValueError`` keeps working.

    >>> issubclass(MXNetError, RuntimeError)
    True
    """


MXNetError = SparsenetError


class StorageFallbackError(SparsenetError):
    """Raised when an operator would densify its inputs and the policy is ``'error'``."""


class NativeKernelWarning(UserWarning):
    """Issued once when a native (C) kernel is not built and its slower torch or Python
    counterpart serves instead (see :class:`sparsenet.runtime.Features`)."""


class StorageFallbackWarning(UserWarning):
    """Issued when an operator has no kernel for its input storage types and densifies them."""


class StorageTypeError(SparsenetError, TypeError):
    """An array of the wrong storage type was given (e.g. CSR where row_sparse is needed)."""


class SparseFormatError(SparsenetError, ValueError):
    """The parts of a sparse array are inconsistent (unsorted indices, bad indptr, ...)."""


class FileFormatError(SparsenetError, ValueError):
    """A saved file is truncated, corrupt or not in the expected format (names path and key)."""


class InvalidArgumentError(SparsenetError, ValueError):
    """An argument has a value the function cannot use (the message names it and what fits)."""


class InvalidArgumentTypeError(SparsenetError, TypeError):
    """An argument has a type the function cannot use (the message names it and what fits)."""


class ShapeError(InvalidArgumentError):
    """Input shapes do not fit the operator (e.g. ``dot`` of (3, 4) and (5, 2)).

    >>> import sparsenet as mx
    >>> try:
    ...     mx.nd.ones((2, 3)) + mx.nd.ones((4, 5))
    ... except ValueError as e:
    ...     print(type(e).__name__, isinstance(e, mx.MXNetError))
    ShapeError True
    """


class IndexOutOfRangeError(InvalidArgumentError, IndexError):
    """An axis or an index is out of range (catchable as ``IndexError`` and ``ValueError``).

    >>> import sparsenet as mx
    >>> try:
    ...     mx.nd.sum(mx.nd.ones((2, 3)), axis=2)
    ... except IndexError as e:
    ...     print(type(e).__name__, isinstance(e, ValueError))
    IndexOutOfRangeError True
    """


class DistributedError(SparsenetError):
    """A distributed operation failed on some rank, and every rank raises it.

    Raised by the ``dist_*`` KVStores and sharded tables: a bad argument found on
    one rank before an exchange (the message names the rank and the problem), a
    peer that died or a collective that timed out (the message names this rank,
    the operation, the key and, where they can be found, the dead peer ranks), or
    a missing launcher environment. A ``RuntimeError``, as ``MXNetError`` is.

    >>> issubclass(DistributedError, RuntimeError)
    True
    """


class ConcurrentModificationError(SparsenetError):
    """A weight that a recorded forward pass read was changed in place before its backward
    pass (by a ``Trainer.step`` in another thread sharing the network, or an in-place write):
    the gradient would be wrong, so backward stops. A ``RuntimeError``, as ``MXNetError`` is.

    >>> issubclass(ConcurrentModificationError, RuntimeError)
    True
    """


class UnknownOperatorError(SparsenetError, KeyError):
    """No operator is registered under the name asked for."""

    def __str__(self):  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class UnknownNameError(SparsenetError, KeyError):
    """A name looked up in a table of names is not there (e.g. a constant of a
    ``ParameterDict`` that was never given a value).

    >>> issubclass(UnknownNameError, KeyError)
    True
    """


class UnsupportedError(SparsenetError, NotImplementedError):
    """A well-formed request sparsenet does not serve: an operation that does not
    exist for this kind of array (``asscalar()`` of a CSR array), or a method that a
    subclass must define and did not.

    >>> import sparsenet as mx
    >>> try:
    ...     mx.nd.sparse.zeros('csr', (2, 2)).size
    ... except NotImplementedError as e:
    ...     print(type(e).__name__, isinstance(e, mx.MXNetError))
    UnsupportedError True
    """


class OutOfMemoryError(SparsenetError, MemoryError):
    """An array (declared by a shape rule, a custom operator's ``infer_shape``, a model's
    size arguments) would not fit in its device's memory, or its allocation failed; names
    what was to be allocated and its shape.

    >>> import sparsenet as mx
    >>> issubclass(mx.base.OutOfMemoryError, MemoryError)
    True
    """


class StateError(SparsenetError):
    """An object is used before the step that prepares it: a Gluon ``Parameter``
    before ``initialize()``, a ``Module`` before ``bind()``/``init_params()``, a
    hook handle attached twice. A ``RuntimeError``, as ``MXNetError`` is.

    >>> import sparsenet as mx
    >>> try:
    ...     mx.gluon.Parameter('w', shape=(2,)).data()
    ... except RuntimeError as e:
    ...     print(type(e).__name__)
    StateError
    """


class OperatorArgumentError(SparsenetError, TypeError):
    """An operator got a keyword it does not have (MXNet: "Cannot find argument").

    >>> import sparsenet as mx
    >>> try:
    ...     mx.nd.dot(mx.nd.ones((1, 1)), mx.nd.ones((1, 1)), foo=1)
    ... except mx.MXNetError as e:
    ...     print(type(e).__name__)
    OperatorArgumentError
    """


class ParameterAssertionError(SparsenetError, ValueError, AssertionError):
    """A bad argument value that MXNet rejects with an ``assert`` (e.g. a Parameter's stype).

    Catchable as ``AssertionError`` (what MXNet raises), ``ValueError`` and ``MXNetError``.

    >>> issubclass(ParameterAssertionError, AssertionError)
    True
    """


def _unsupported_call(function, alias, args, tail):
    """MXNet's message for a method that exists for another kind of object only."""
    name = getattr(function, "__name__", str(function))
    msg = f"Function {name}"
    if alias:
        msg += f" (namely operator \"{alias}\")"
    if args:
        msg += " with arguments (" + ", ".join(map(str, args)) + ")"
    return msg + tail


class NotImplementedForSymbol(SparsenetError, NotImplementedError, TypeError):
    """An NDArray-only method was called on a Symbol (``sym.asnumpy()``, ``bool(sym)``)."""

    def __init__(self, function, alias=None, *args):
        super().__init__(_unsupported_call(
            function, alias, args, " is not implemented for Symbol and only available in NDArray."))


class NotSupportedForSparseNDArray(SparsenetError, NotImplementedError):
    """The method exists for dense arrays only (e.g. ``reshape`` on a CSR array)."""

    def __init__(self, function, alias=None, *args):
        super().__init__(_unsupported_call(
            function, alias, args,
            " is not supported for SparseNDArray and only available in NDArray."))


mx_real_t = np.float32

# the type tuples MXNet code imports from mxnet.base
string_types = (str,)
numeric_types = (float, int, np.generic)
integer_types = (int, np.int32, np.int64)

# MXNet's storage-type ids (``mx.ndarray.ndarray._STORAGE_TYPE_STR_TO_ID``)
_STORAGE_TYPE_UNDEFINED = -1
_STORAGE_TYPE_DEFAULT = 0
_STORAGE_TYPE_ROW_SPARSE = 1
_STORAGE_TYPE_CSR = 2
_STORAGE_TYPE_STR_TO_ID = {"undefined": _STORAGE_TYPE_UNDEFINED,
                           "default": _STORAGE_TYPE_DEFAULT,
                           "row_sparse": _STORAGE_TYPE_ROW_SPARSE,
                           "csr": _STORAGE_TYPE_CSR}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}


def py_str(x):
    """Decode bytes from the C world to ``str`` (MXNet's helper; ``str`` passes through).

    >>> py_str(b'abc'), py_str('abc')
    ('abc', 'abc')
    """
    return x.decode("utf-8") if isinstance(x, (bytes, bytearray)) else x


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
    sparsenet.base.InvalidArgumentTypeError: shape: expected non-negative integer dimensions, got (2.5, 3) (dimension 0 is float)
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
                                           f"{type(d).__name__})")
        if d < 0:
            raise ShapeError(f"{name}: expected non-negative integer dimensions, got {shape!r} "
                             f"(dimension {i} is negative)")
    return tuple(int(d) for d in dims)

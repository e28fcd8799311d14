"""Errors and dtype maps shared by the whole package.

Every error sparsenet raises derives from :class:`SparsenetError`, which is also
exported as ``MXNetError`` so that ``except mx.base.MXNetError`` in MXNet code
keeps working.

This module imports neither NumPy nor torch: the dtype maps (``numpy_dtype``,
``torch_dtype``, ``mx_real_t``, ...) live in :mod:`sparsenet.dtypes` and are looked up
there on first access, so the command line can report errors without loading torch.
"""
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


# the type tuple MXNet code imports from mxnet.base (the NumPy ones are in dtypes.py)
string_types = (str,)

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


#: The names :mod:`sparsenet.dtypes` holds (they need NumPy and torch); looked up there on
#: first access, so that importing this module imports neither.
_DTYPE_NAMES = frozenset({"mx_real_t", "numeric_types", "integer_types", "numpy_dtype",
                          "torch_dtype", "dtype_name", "as_shape", "_NP_TO_TORCH",
                          "_TORCH_TO_NP"})


def __getattr__(name):
    """``mx.base.torch_dtype`` and the other dtype names, from :mod:`sparsenet.dtypes`.

    >>> import sparsenet as mx
    >>> mx.base.mx_real_t.__name__
    'float32'
    """
    if name in _DTYPE_NAMES:
        from . import dtypes  # on first use: NumPy and torch load only when a dtype is needed
        value = getattr(dtypes, name)
        globals()[name] = value
        return value
    # builtin: a module __getattr__ must raise AttributeError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _DTYPE_NAMES)

"""The dense :class:`NDArray`: one ``torch.Tensor`` with MXNet's methods.

Math methods forward to the operator registry (``sparsenet.ops``), so the same
storage-type rules apply whether you write ``a + b`` or ``mx.nd.elemwise_add(a, b)``.

>>> import sparsenet as mx
>>> a = mx.nd.array([[1, 2], [3, 4]])
>>> a
<BLANKLINE>
[[1. 2.]
 [3. 4.]]
<NDArray 2x2 @cpu(0)>
>>> (a * 2 + 1).asnumpy()
array([[3., 5.],
       [7., 9.]], dtype=float32)
"""
import numbers

import numpy as np
import torch

from .. import recording
from ..base import SparsenetError, numpy_dtype, torch_dtype
from ..base import (_STORAGE_TYPE_CSR, _STORAGE_TYPE_DEFAULT,  # noqa: F401 - MXNet names
                    _STORAGE_TYPE_ID_TO_STR, _STORAGE_TYPE_ROW_SPARSE,
                    _STORAGE_TYPE_STR_TO_ID, _STORAGE_TYPE_UNDEFINED)
from ..context import as_context, context_of
from . import nonzero
from .fluent import FluentMethods  # flatten, squeeze, broadcast_*, tan, slice, ... (MXNet's list)
from .stype import DEFAULT, CSR, ROW_SPARSE, STYPES

__all__ = ["NDArray", "to_tensor", "wrap", "waitall"]

_GRAD_REQS = ("write", "add", "null")
_binary_op = None  # ops.arithmetic.binary, imported on first use (ops import this module)


def _scalar_like(x):
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, np.ndarray)


def waitall():
    """Wait until all pending device work finishes (synchronises every CUDA device).

    >>> waitall()
    """
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            torch.cuda.synchronize(i)


def to_tensor(value, device=None, dtype=None):
    """Return ``value`` (NDArray, numpy array, scalar, list) as a dense torch tensor."""
    if isinstance(value, NDArray):
        t = value._dense_tensor()
    elif isinstance(value, torch.Tensor):
        t = value
    else:
        t = torch.as_tensor(np.asarray(value))
    if dtype is not None or device is not None:
        t = t.to(device=device if device is not None else t.device,
                 dtype=dtype if dtype is not None else t.dtype)
    return t


def wrap(t):
    """Wrap a dense torch tensor as an :class:`NDArray` (0-d becomes shape (1,), as in MXNet)."""
    if t.dim() == 0:
        t = t.reshape(1)
    return NDArray(t)


class NDArray(FluentMethods):
    """A dense n-dimensional array on a device, backed by one ``torch.Tensor``.

    Create arrays with :func:`sparsenet.nd.array`, :func:`~sparsenet.nd.zeros`
    and friends rather than with this constructor, which wraps an existing
    tensor without copying.

    Parameters
    ----------
    tensor : torch.Tensor
        The storage (not copied).

    Examples
    --------
    >>> import torch
    >>> NDArray(torch.ones(2, 3)).shape
    (2, 3)
    """

    __slots__ = ("_t", "_grad", "_grad_req", "__weakref__")
    __array_priority__ = 1000.0
    stype = DEFAULT

    def __init__(self, tensor):
        self._t = tensor
        self._grad = None
        self._grad_req = "null"

    # ------------------------------------------------------------------ basic properties
    @property
    def shape(self):
        """Tuple of dimensions."""
        return tuple(self._t.shape)

    @property
    def dtype(self):
        """Element type as a ``numpy.dtype`` (equal to ``numpy.float32`` etc.; ``np.dtype(arr)`` works)."""
        return numpy_dtype(self._t.dtype)

    @property
    def size(self):
        """Number of elements."""
        return self._t.numel()

    @property
    def ndim(self):
        """Number of dimensions."""
        return self._t.dim()

    @property
    def context(self):
        """The :class:`~sparsenet.Context` the array lives on."""
        return context_of(self._t.device)

    ctx = context

    @property
    def device(self):
        """The ``torch.device`` of the storage."""
        return self._t.device

    @property
    def nbytes(self):
        """Bytes held by the array's storage (sparsenet addition, as the seed's ``get_nbytes``).

        >>> import sparsenet as mx
        >>> mx.nd.zeros((10, 4)).nbytes
        160
        """
        return self._t.numel() * self._t.element_size()

    @property
    def T(self):
        """Transpose (dense) of a 2-D array."""
        from ..ops import shape
        return shape.transpose(self)

    @property
    def writable(self):
        return True

    @property
    def handle(self):
        """The underlying ``torch.Tensor`` (sparsenet: there is no C handle)."""
        return self._t

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __hash__(self):
        return id(self) // 16

    def __repr__(self):
        shape = "x".join(str(s) for s in self.shape)
        return f"\n{self.asnumpy()}\n<{type(self).__name__} {shape} @{self.context}>"

    def __str__(self):
        return repr(self)

    def __bool__(self):
        if self.size == 1:
            return bool(self.asscalar())
        if self.size == 0:
            return False
        raise ValueError("The truth value of an NDArray with more than one element is "
                         "ambiguous; use a.asnumpy().any() or .all().")

    def __iter__(self):
        for i in range(self.shape[0]):
            yield self[i]

    def __array__(self, dtype=None, copy=None):
        out = self.asnumpy()
        return out if dtype is None else out.astype(dtype)

    def __reduce__(self):
        from .serialization import _encode_array, _decode_array
        return (_decode_array, (_encode_array(self),))

    # ------------------------------------------------------------------ internal hooks
    def _dense_tensor(self):
        """The values as one dense tensor (a view for dense arrays)."""
        return self._t

    def _autograd_tensor(self):
        """The tensor autograd differentiates against."""
        return self._t

    def _grad_is_full(self):
        """Whether the autograd tensor has the array's whole shape (always, when dense)."""
        return True

    def _replace(self, other):
        """Make ``self`` hold ``other``'s storage (same storage type)."""
        self._t = other._t
        if self._grad is not None and self._grad_req != "null":  # stay an autograd leaf
            self._make_leaf(True)
            recording.register_variable(self)

    # ------------------------------------------------------------------ conversion
    def asnumpy(self):
        """Return a NumPy copy of the values.

        >>> import sparsenet as mx
        >>> mx.nd.ones((2,)).asnumpy()
        array([1., 1.], dtype=float32)
        """
        t = self._dense_tensor().detach()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.cpu().numpy().copy()

    def asscalar(self):
        """Return the value of a size-1 array as a Python/NumPy scalar.

        >>> import sparsenet as mx
        >>> mx.nd.array([3.5]).asscalar()
        np.float32(3.5)
        """
        if self.size != 1:
            raise ValueError(f"asscalar() needs an array of size 1, got shape {self.shape}")
        return self.asnumpy().reshape(-1)[0]

    def item(self):
        """Return the value of a size-1 array as a Python number."""
        return self.asscalar().item()

    def tolist(self):
        """Return the values as nested Python lists."""
        return self.asnumpy().tolist()

    def to_torch(self):
        """Return the storage as a ``torch.Tensor`` (zero-copy for dense arrays).

        >>> import sparsenet as mx
        >>> mx.nd.ones((2,)).to_torch()
        tensor([1., 1.])
        """
        return self._t

    def to_dlpack_for_read(self):
        """Return a DLPack capsule sharing the storage."""
        return torch.utils.dlpack.to_dlpack(self._t.detach())

    to_dlpack_for_write = to_dlpack_for_read

    def __dlpack__(self, *args, **kwargs):
        return self._t.detach().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._t.__dlpack_device__()

    def astype(self, dtype, copy=True):
        """Return the array converted to ``dtype`` (storage type kept).

        >>> import sparsenet as mx
        >>> mx.nd.ones((2,)).astype('int32').dtype
        dtype('int32')
        """
        from ..ops import unary
        if not copy and numpy_dtype(dtype) == self.dtype:
            return self
        return unary.cast(self, dtype=numpy_dtype(dtype).name)

    def tostype(self, stype):
        """Return the array in storage type ``stype`` ('default', 'csr' or 'row_sparse').

        >>> import sparsenet as mx
        >>> mx.nd.array([[0, 1], [0, 0]]).tostype('csr').stype
        'csr'
        """
        from .cast_storage import cast_storage
        return cast_storage(self, stype)

    def copy(self):
        """Return a deep copy (same storage type and context)."""
        return self.copyto(self.context)

    def copyto(self, other):
        """Copy into ``other`` (an array, whose storage type is kept) or onto a Context.

        >>> import sparsenet as mx
        >>> dst = mx.nd.zeros((2,))
        >>> _ = mx.nd.ones((2,)).copyto(dst)
        >>> dst.asnumpy()
        array([1., 1.], dtype=float32)
        """
        from .cast_storage import copy_into, copy_to_context
        if isinstance(other, NDArray):
            if other is self:
                return other
            return copy_into(self, other)
        return copy_to_context(self, as_context(other))

    def as_in_context(self, context):
        """Return the array on ``context`` (``self`` when already there)."""
        context = as_context(context)
        if context == self.context:
            return self
        return self.copyto(context)

    as_in_ctx = as_in_context

    def wait_to_read(self):
        """Wait for pending work on the array (synchronises CUDA streams)."""
        t = self._t if self._t is not None else self._data  # dense, or sparse values
        if t.is_cuda:
            torch.cuda.synchronize(t.device)

    wait_to_write = wait_to_read

    def detach(self):
        """Return an array sharing storage but cut from the autograd graph."""
        return NDArray(self._t.detach())

    # ------------------------------------------------------------------ autograd
    def attach_grad(self, grad_req="write", stype=None):
        """Allocate a gradient buffer and make the array an autograd variable.

        Parameters
        ----------
        grad_req : {'write', 'add', 'null'}
        stype : str, optional
            Storage type of the gradient ('default' or 'row_sparse'); defaults to
            the array's own storage type.

        Examples
        --------
        >>> import sparsenet as mx
        >>> w = mx.nd.ones((4, 2)); w.attach_grad(stype='row_sparse')
        >>> w.grad.stype
        'row_sparse'
        """
        from .creation import zeros
        gstype = stype or self.stype
        if gstype not in STYPES:
            raise ValueError(f"attach_grad: stype must be one of {STYPES}, got {stype!r}")
        grad = zeros(self.shape, ctx=self.context, dtype=self.dtype, stype=gstype)
        nonzero.mark_zero(grad)
        self._attach_grad_buffer(grad, grad_req)

    def _attach_grad_buffer(self, grad, grad_req):
        if grad_req not in _GRAD_REQS:
            raise ValueError(f"grad_req must be one of {_GRAD_REQS}, got {grad_req!r}")
        if tuple(grad.shape) != self.shape:
            raise ValueError(f"gradient buffer shape {grad.shape} does not match array shape "
                             f"{self.shape}")
        self._grad = grad
        self._grad_req = grad_req
        self._make_leaf(grad_req != "null")
        recording.register_variable(self)

    def _make_leaf(self, requires_grad):
        self._t = self._t.detach().requires_grad_(requires_grad)

    @property
    def grad(self):
        """The gradient buffer attached with :meth:`attach_grad` (None otherwise)."""
        return self._grad

    @property
    def grad_req(self):
        return self._grad_req

    def _store_grad(self, g):
        """Store a torch gradient into the buffer according to ``grad_req``."""
        from ..grad_store import store  # the gradient store sits above the containers
        store(self, g.detach(), full=self._grad_is_full())

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """Compute the gradients of this array with respect to the marked variables.

        >>> import sparsenet as mx
        >>> x = mx.nd.array([1.0, 2.0]); x.attach_grad()
        >>> with mx.autograd.record():
        ...     y = x * 2
        >>> y.backward()
        >>> x.grad.asnumpy()
        array([2., 2.], dtype=float32)
        """
        from ..autograd import backward  # backward sits above the containers
        backward([self], None if out_grad is None else [out_grad], retain_graph=retain_graph,
                 train_mode=train_mode)

    # ------------------------------------------------------------------ indexing
    def _index(self, key):
        if isinstance(key, tuple):
            return tuple(self._index_one(k) for k in key)
        return self._index_one(key)

    def _index_one(self, k):
        if isinstance(k, NDArray):
            return k._dense_tensor().to(self.device).long()
        if isinstance(k, np.ndarray):
            t = torch.from_numpy(k)
            return t.to(self.device) if t.dtype == torch.bool else t.to(self.device).long()
        if isinstance(k, list):
            return torch.as_tensor(k, device=self.device)
        if isinstance(k, np.integer):
            return int(k)
        return k

    def __getitem__(self, key):
        """Basic indexing returns a view, advanced indexing a copy (as in MXNet/NumPy).

        >>> import sparsenet as mx
        >>> a = mx.nd.arange(6).reshape((2, 3))
        >>> a[1].asnumpy()
        array([3., 4., 5.], dtype=float32)
        >>> a[1, 2].shape
        (1,)
        """
        idx = self._index(key)
        if recording.STATE.recording:
            return wrap(self._t[idx])
        with torch.no_grad():
            return wrap(self._t[idx])

    def __setitem__(self, key, value):
        """Assign a scalar, NDArray (any storage type) or NumPy array to a region.

        >>> import sparsenet as mx
        >>> a = mx.nd.zeros((2, 2))
        >>> a[:] = 1
        >>> a[0, 1] = 5
        >>> a.asnumpy()
        array([[1., 5.],
               [1., 1.]], dtype=float32)
        """
        idx = self._index(key)
        if _scalar_like(value):
            v = value
        else:
            v = to_tensor(value, device=self.device, dtype=self._t.dtype)
        if recording.STATE.recording:
            self._t[idx] = v
        else:
            with torch.no_grad():
                self._t[idx] = v

    def slice_assign(self, rhs, begin, end, step=()):
        key = tuple(slice(b, e, s) for b, e, s in
                    zip(begin, end, list(step) + [None] * (len(begin) - len(step))))
        self[key] = rhs
        return self

    # ------------------------------------------------------------------ shape methods
    def reshape(self, *shape, **kwargs):
        """Return a view with a new shape; MXNet's special values 0, -1, -2, -3, -4 work.

        >>> import sparsenet as mx
        >>> mx.nd.zeros((2, 3, 4)).reshape((0, -1)).shape
        (2, 12)
        """
        from ..ops import shape as shape_ops
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        if "shape" in kwargs:
            shape = tuple(kwargs.pop("shape"))
        return shape_ops.reshape(self, shape=shape, reverse=kwargs.pop("reverse", False))

    def reshape_like(self, other):
        return self.reshape(other.shape)

    def transpose(self, axes=None):
        from ..ops import shape
        return shape.transpose(self, axes=axes)

    def swapaxes(self, dim1, dim2):
        from ..ops import shape
        return shape.swapaxes(self, dim1=dim1, dim2=dim2)

    def tile(self, reps):
        from ..ops import shape
        return shape.tile(self, reps=reps)

    def repeat(self, repeats, axis=None):
        from ..ops import shape
        return shape.repeat(self, repeats=repeats, axis=axis)

    def split(self, num_outputs, axis=1, squeeze_axis=False):
        from ..ops import indexing
        return indexing.split(self, num_outputs=num_outputs, axis=axis, squeeze_axis=squeeze_axis)

    def slice_axis(self, axis, begin, end):
        from ..ops import indexing
        return indexing.slice_axis(self, axis=axis, begin=begin, end=end)

    def take(self, indices, axis=0, mode="clip"):
        from ..ops import indexing
        return indexing.take(self, indices, axis=axis, mode=mode)

    def one_hot(self, depth, on_value=1.0, off_value=0.0, dtype="float32"):
        from ..ops import indexing
        return indexing.one_hot(self, depth=depth, on_value=on_value, off_value=off_value,
                                dtype=dtype)

    def pick(self, index, axis=-1, keepdims=False):
        from ..ops import indexing
        return indexing.pick(self, index, axis=axis, keepdims=keepdims)

    # ------------------------------------------------------------------ reductions
    def sum(self, axis=None, keepdims=False, exclude=False):
        """Sum over ``axis`` (all axes by default; the result then has shape (1,)).

        >>> import sparsenet as mx
        >>> mx.nd.ones((2, 3)).sum(axis=1).asnumpy()
        array([3., 3.], dtype=float32)
        """
        from ..ops import reduce
        return reduce.sum(self, axis=axis, keepdims=keepdims, exclude=exclude)

    def mean(self, axis=None, keepdims=False, exclude=False):
        from ..ops import reduce
        return reduce.mean(self, axis=axis, keepdims=keepdims, exclude=exclude)

    def prod(self, axis=None, keepdims=False, exclude=False):
        from ..ops import reduce
        return reduce.prod(self, axis=axis, keepdims=keepdims, exclude=exclude)

    def max(self, axis=None, keepdims=False, exclude=False):
        from ..ops import reduce
        return reduce.max(self, axis=axis, keepdims=keepdims, exclude=exclude)

    def min(self, axis=None, keepdims=False, exclude=False):
        from ..ops import reduce
        return reduce.min(self, axis=axis, keepdims=keepdims, exclude=exclude)

    def norm(self, ord=2, axis=None, keepdims=False):  # noqa: A002
        from ..ops import reduce
        return reduce.norm(self, ord=ord, axis=axis, keepdims=keepdims)

    def argmax(self, axis=None, keepdims=False):
        from ..ops import reduce
        return reduce.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims=False):
        from ..ops import reduce
        return reduce.argmin(self, axis=axis, keepdims=keepdims)

    def topk(self, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
        from ..ops import reduce
        return reduce.topk(self, axis=axis, k=k, ret_typ=ret_typ, is_ascend=is_ascend,
                           dtype=dtype)

    def sort(self, axis=-1, is_ascend=True):
        from ..ops import reduce
        return reduce.sort(self, axis=axis, is_ascend=is_ascend)

    def argsort(self, axis=-1, is_ascend=True, dtype="float32"):
        from ..ops import reduce
        return reduce.argsort(self, axis=axis, is_ascend=is_ascend, dtype=dtype)

    # ------------------------------------------------------------------ elementwise methods
    def _unary(name):  # noqa: N805 - builds methods at class creation
        def method(self, *args, **kwargs):
            from ..ops import unary
            return getattr(unary, name)(self, *args, **kwargs)
        method.__name__ = name
        method.__doc__ = f"Elementwise ``{name}`` (see :func:`sparsenet.nd.{name}`)."
        return method

    abs = _unary("abs")
    sign = _unary("sign")
    sqrt = _unary("sqrt")
    rsqrt = _unary("rsqrt")
    square = _unary("square")
    exp = _unary("exp")
    expm1 = _unary("expm1")
    log = _unary("log")
    log1p = _unary("log1p")
    sin = _unary("sin")
    cos = _unary("cos")
    tanh = _unary("tanh")
    sigmoid = _unary("sigmoid")
    relu = _unary("relu")
    round = _unary("round")
    floor = _unary("floor")
    ceil = _unary("ceil")
    trunc = _unary("trunc")
    reciprocal = _unary("reciprocal")
    zeros_like = _unary("zeros_like")
    ones_like = _unary("ones_like")
    clip = _unary("clip")
    del _unary

    # ------------------------------------------------------------------ operators
    def _binary(self, other, op, scalar_op, reverse=False):
        global _binary_op
        if _binary_op is None:
            from ..ops.arithmetic import binary as _binary_op
        return _binary_op(self, other, op, scalar_op, reverse)

    def __add__(self, other):
        return self._binary(other, "add", "plus_scalar")

    def __radd__(self, other):
        return self._binary(other, "add", "plus_scalar")

    def __sub__(self, other):
        return self._binary(other, "subtract", "minus_scalar")

    def __rsub__(self, other):
        return self._binary(other, "subtract", "rminus_scalar", reverse=True)

    def __mul__(self, other):
        return self._binary(other, "multiply", "mul_scalar")

    def __rmul__(self, other):
        return self._binary(other, "multiply", "mul_scalar")

    def __truediv__(self, other):
        return self._binary(other, "divide", "div_scalar")

    def __rtruediv__(self, other):
        return self._binary(other, "divide", "rdiv_scalar", reverse=True)

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __mod__(self, other):
        return self._binary(other, "modulo", "mod_scalar")

    def __rmod__(self, other):
        return self._binary(other, "modulo", "rmod_scalar", reverse=True)

    def __pow__(self, other):
        return self._binary(other, "power", "power_scalar")

    def __rpow__(self, other):
        return self._binary(other, "power", "rpower_scalar", reverse=True)

    def __neg__(self):
        from ..ops import unary
        return unary.negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        from ..ops import unary
        return unary.abs(self)

    def __eq__(self, other):
        return self._binary(other, "equal", "equal_scalar")

    def __ne__(self, other):
        return self._binary(other, "not_equal", "not_equal_scalar")

    def __gt__(self, other):
        return self._binary(other, "greater", "greater_scalar")

    def __ge__(self, other):
        return self._binary(other, "greater_equal", "greater_equal_scalar")

    def __lt__(self, other):
        return self._binary(other, "lesser", "lesser_scalar")

    def __le__(self, other):
        return self._binary(other, "lesser_equal", "lesser_equal_scalar")

    def _inplace(self, other, op, scalar_op):
        """``a op= b`` is ``(a op b).copyto(a)``: the storage type of ``a`` is kept."""
        result = self._binary(other, op, scalar_op)
        from .cast_storage import copy_into
        copy_into(result, self)
        return self

    def __iadd__(self, other):
        return self._inplace(other, "add", "plus_scalar")

    def __isub__(self, other):
        return self._inplace(other, "subtract", "minus_scalar")

    def __imul__(self, other):
        return self._inplace(other, "multiply", "mul_scalar")

    def __itruediv__(self, other):
        return self._inplace(other, "divide", "div_scalar")

    __idiv__ = __itruediv__

    def __imod__(self, other):
        return self._inplace(other, "modulo", "mod_scalar")

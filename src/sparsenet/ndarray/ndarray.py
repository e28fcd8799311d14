"""The dense :class:`NDArray`: one ``torch.Tensor`` with MXNet's methods.

This module holds the container: storage, properties, conversion to NumPy and
torch, copies, indexing and the autograd hooks. The methods that run an operator
(``a + b``, ``a.sum()``, ``a.reshape(...)``, ``a.tan()``, ``a.tostype(...)``) are
set on the class by :mod:`sparsenet.ops.methods` when ``sparsenet.ops`` is
imported (``import sparsenet`` does it), so the same storage-type rules apply
whether you write ``a + b`` or ``mx.nd.elemwise_add(a, b)``, and this layer
never imports the operators above it. Likewise ``backward`` is set by
:mod:`sparsenet.autograd`, and ``_store_grad`` / ``_fresh_grad`` by
:mod:`sparsenet.grad_store`.

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
from ..base import InvalidArgumentError, InvalidArgumentTypeError, ShapeError, numpy_dtype
from ..base import (_STORAGE_TYPE_CSR, _STORAGE_TYPE_DEFAULT,  # noqa: F401 - MXNet names
                    _STORAGE_TYPE_ID_TO_STR, _STORAGE_TYPE_ROW_SPARSE,
                    _STORAGE_TYPE_STR_TO_ID, _STORAGE_TYPE_UNDEFINED)
from ..context import LOGICAL, as_context, context_of, place
from ..torch_compat import set_grad_enabled
from . import nonzero
from .stype import DEFAULT, STYPES

__all__ = ["NDArray", "to_tensor", "wrap", "waitall", "copy_into", "copy_to_context"]

_GRAD_REQS = ("write", "add", "null")
#: the functions of :mod:`sparsenet.autograd` the arrays call (set there on import: this
#: layer sits below it), so that ``y.backward()`` runs no import statement per call
_AUTOGRAD = {"backward": None}


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
    """Wrap a dense torch tensor as an :class:`NDArray` (0-d becomes shape (1,), as in MXNet).

    >>> import torch
    >>> wrap(torch.tensor(2.0)).shape
    (1,)
    """
    return NDArray(t if t.dim() else t.view(1))  # a 0-d tensor always has a (1,) view


class NDArray:
    """A dense n-dimensional array on a device, backed by one ``torch.Tensor``.

    Create arrays with :func:`sparsenet.nd.array`, :func:`~sparsenet.nd.zeros`
    and friends rather than with this constructor, which wraps an existing
    tensor without copying.

    The methods that run an operator (the Python operators, ``sum``, ``reshape``,
    ``exp``, ``astype``, ``tostype``, ...) are set on this class by
    :mod:`sparsenet.ops.methods` when ``sparsenet.ops`` is imported; see the tables
    there.

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

    # _rec: the recorded operator call that produced the array (set inside autograd.record());
    # _ctx: the context, for arrays placed on a host context other than cpu(0) (context.place)
    __slots__ = ("_t", "_grad", "_grad_req", "_rec", "_ctx", "__weakref__")
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
        ctx = getattr(self, "_ctx", None)
        return ctx if ctx is not None else context_of(self._t.device)

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
    def writable(self):
        return True

    @property
    def handle(self):
        """The underlying ``torch.Tensor`` (sparsenet: there is no C handle)."""
        return self._t

    def __len__(self):
        if not self.shape:
            raise InvalidArgumentTypeError("len() of a 0-d array")
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
        raise InvalidArgumentError("The truth value of an NDArray with more than one element is "
                                   "ambiguous; use a.asnumpy().any() or .all().")

    def __iter__(self):
        for i in range(self.shape[0]):
            yield self[i]

    def __array__(self, dtype=None, copy=None):
        out = self.asnumpy()
        return out if dtype is None else out.astype(dtype)

    def __reduce__(self):
        from .serialization import _encode_array, _decode_array  # it imports this module
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
        return self._host_values().copy()

    def _host_values(self):
        """The values as a NumPy array on the host, sharing the tensor's memory where it can
        (a CPU tensor): for reading only (``asnumpy`` copies it; metrics convert it)."""
        t = self._dense_tensor().detach()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.cpu().numpy()

    def asscalar(self):
        """Return the value of a size-1 array as a Python/NumPy scalar.

        >>> import sparsenet as mx
        >>> mx.nd.array([3.5]).asscalar()
        np.float32(3.5)
        """
        if self.size != 1:
            raise ShapeError(f"asscalar() needs an array of size 1, got shape {self.shape}")
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

    def copy(self):
        """Return a deep copy (same storage type and context).

        >>> import sparsenet as mx
        >>> a = mx.nd.ones((2,)); b = a.copy(); b[:] = 3
        >>> a.asnumpy(), b.asnumpy()
        (array([1., 1.], dtype=float32), array([3., 3.], dtype=float32))
        """
        t = self._t
        if t is None or recording.STATE.recording:  # sparse, or a copy a graph records
            return self.copyto(self.context)
        # dense, nothing recorded: a clone cut from any graph, on the array's own context
        # (copy_to_context's result without its context checks and grad-mode switch)
        out = NDArray(t.detach().clone())
        ctx = getattr(self, "_ctx", None)
        return out if ctx is None else place(out, ctx)

    def copyto(self, other):
        """Copy into ``other`` (an array, whose storage type is kept) or onto a Context.

        >>> import sparsenet as mx
        >>> dst = mx.nd.zeros((2,))
        >>> _ = mx.nd.ones((2,)).copyto(dst)
        >>> dst.asnumpy()
        array([1., 1.], dtype=float32)
        """
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
        return place(NDArray(self._t.detach()), self.context)

    # ------------------------------------------------------------------ autograd
    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """Compute the gradients of this array with respect to the marked variables
        (:func:`sparsenet.autograd.backward` of ``[self]``).

        >>> import sparsenet as mx
        >>> x = mx.nd.array([1.0, 2.0]); x.attach_grad()
        >>> with mx.autograd.record():
        ...     y = x * 2
        >>> y.backward()
        >>> x.grad.asnumpy()
        array([2., 2.], dtype=float32)
        """
        backward = _AUTOGRAD["backward"]
        if backward is None:  # autograd sits above the containers; it registers itself on
            from ..autograd import backward  # import (a recorded graph has loaded it already)
        backward([self], None if out_grad is None else [out_grad], retain_graph=retain_graph,
                 train_mode=train_mode)

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
        from .creation import zeros  # creation imports this module (NDArray)
        gstype = stype or self.stype
        if gstype not in STYPES:
            raise InvalidArgumentError(f"attach_grad: stype must be one of {STYPES}, got {stype!r}")
        grad = zeros(self.shape, ctx=self.context, dtype=self.dtype, stype=gstype)
        nonzero.mark_zero(grad)
        self._attach_grad_buffer(grad, grad_req)

    def _attach_grad_buffer(self, grad, grad_req):
        if grad_req not in _GRAD_REQS:
            raise InvalidArgumentError(f"grad_req must be one of {_GRAD_REQS}, got {grad_req!r}")
        if tuple(grad.shape) != self.shape:
            raise ShapeError(f"gradient buffer shape {grad.shape} does not match array shape "
                             f"{self.shape}")
        self._grad = grad
        self._grad_req = grad_req
        self._make_leaf(grad_req != "null")
        recording.register_variable(self)

    def _make_leaf(self, requires_grad):
        # An integer array keeps its gradient buffer (MXNet allocates one for an int8
        # Parameter) but no gradient flows into it: torch tracks floating point only.
        t = self._t.detach()
        self._t = t.requires_grad_(requires_grad and (t.is_floating_point() or t.is_complex()))

    @property
    def grad(self):
        """The gradient buffer attached with :meth:`attach_grad` (None otherwise)."""
        return self._grad

    @property
    def grad_req(self):
        return self._grad_req

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
        if recording.STATE.recording or not torch.is_grad_enabled():
            out = wrap(self._t[idx])
        else:  # not recorded (torch.no_grad() costs more than the view itself)
            set_grad_enabled(False)
            try:
                out = wrap(self._t[idx])
            finally:
                set_grad_enabled(True)
        return place(out, self.context) if LOGICAL.on else out

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

    def slice_assign_scalar(self, value, begin, end, step):
        """Set the region ``begin:end:step`` to ``value`` in place; return ``self``.

        >>> import sparsenet as mx
        >>> mx.nd.zeros((2, 3)).slice_assign_scalar(4, (0, 1), (2, 3), ()).asnumpy()
        array([[0., 4., 4.],
               [0., 4., 4.]], dtype=float32)
        """
        begin, end, step = _tuple(begin), _tuple(end), _tuple(step)
        step = step + (None,) * (len(begin) - len(step))
        self[tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))] = value
        return self

    def __pos__(self):
        return self

    # ------------------------------------------------------------------ gradient state
def _tuple(v):
    if v is None:
        return ()
    return (v,) if isinstance(v, int) else tuple(v)


def _grad_ctx():
    return torch.enable_grad() if recording.is_recording() else torch.no_grad()


def copy_into(src, dst):
    """Copy ``src`` into ``dst`` keeping ``dst``'s storage type, dtype and device; return ``dst``.

    Between storage types the values go through ``src.tostype(dst.stype)`` (the
    ``cast_storage`` operator, a method the operator layer sets on the class).

    >>> import sparsenet as mx
    >>> dst = mx.nd.zeros((2, 2)).tostype('row_sparse')
    >>> copy_into(mx.nd.array([[0, 1], [0, 0]]), dst).stype
    'row_sparse'
    >>> dst.indices.asnumpy()
    array([0])
    """
    if not isinstance(src, NDArray):
        raise InvalidArgumentTypeError(
            f"copyto: expected an NDArray source, got {type(src).__name__}")
    if tuple(src.shape) != tuple(dst.shape):
        raise ShapeError(f"copyto: shape mismatch, source {src.shape} vs destination "
                         f"{dst.shape}")
    if src is dst:
        return dst
    # grad mode as _grad_ctx() sets it, switched only when it differs (a context manager
    # costs more than the copy of a small array)
    want = recording.STATE.recording
    switch = torch.is_grad_enabled() != want
    if switch:
        set_grad_enabled(want)
    try:
        if dst.stype == DEFAULT:
            t = src._dense_tensor()
            if not (t.data_ptr() == dst._t.data_ptr() and t.stride() == dst._t.stride()
                    and t.dtype == dst._t.dtype):  # an in-place kernel already wrote it
                dst._t.copy_(t)
            return dst
        casted = src if src.stype == dst.stype else src.tostype(dst.stype)
        parts = [p.to(device=dst.device) for p in casted._parts()]
        parts[0] = parts[0].to(dtype=dst._data.dtype)
        if casted is src:  # never share a value tensor with the source
            parts = [q.clone() if q.data_ptr() == p.data_ptr() else q
                     for p, q in zip(src._parts(), parts)]
        dst._replace(type(dst)._from_parts(*parts, dst.shape))
    finally:
        if switch:
            set_grad_enabled(not want)
    return dst


def copy_to_context(src, ctx):
    """Return a copy of ``src`` (same storage type) on context ``ctx``."""
    ctx.check_available()
    device = ctx.torch_device
    with _grad_ctx():
        if src.stype == DEFAULT:
            t = src._t.to(device)
            return place(NDArray(t.clone() if t is src._t else t), ctx)
        parts = [p.to(device) for p in src._parts()]
        parts = [q.clone() if q is p else q for p, q in zip(src._parts(), parts)]
        out = type(src)._from_parts(*parts, src.shape)
        graph = src._graph_tensor() if recording.STATE.recording else None
        if graph is not None:  # a sparse array in a recorded graph: the copy stays in it
            out._set_graph(graph.to(device) if graph.device != device else graph * 1)
        return place(out, ctx)

"""What CSR and row_sparse arrays share: parts as tensors, copies, repr, autograd hooks."""
import numpy as np
import torch

from .. import recording
from ..base import (InvalidArgumentError, NotSupportedForSparseNDArray, SparseFormatError,
                    StorageTypeError, UnsupportedError, numpy_dtype)
from ..context import context_of, place
from .ndarray import NDArray, copy_into, to_tensor

__all__ = ["BaseSparseNDArray"]


class BaseSparseNDArray(NDArray):
    """Base class of :class:`CSRNDArray` and :class:`RowSparseNDArray`.

    A sparse array keeps its parts (values and int64 indices) as torch tensors
    and its logical ``shape``. Inside ``autograd.record()``, a sparse variable
    (``attach_grad``) and every sparse result computed from a variable also have
    a dense *graph tensor*: the same values as one dense tensor, through which
    autograd differentiates, so that the gradient with respect to a sparse array
    is the full mathematical gradient (positions it does not store included), as
    in MXNet. The row views of a Gluon row_sparse parameter instead differentiate
    through their stored values (:meth:`_make_values_leaf`).
    """

    __slots__ = ("_shape", "_data", "_indices", "_gt", "_gt_stamp", "_full_grad")

    def __init__(self, tensor=None):
        NDArray.__init__(self, tensor)
        self._gt = None          # dense graph tensor (None: not in a recorded graph)
        self._gt_stamp = None    # the parts the graph tensor was made from
        self._full_grad = False  # a variable whose graph tensor is made on first use

    @classmethod
    def _blank(cls):
        """An instance with every slot but the parts set (for ``_from_parts``)."""
        obj = cls.__new__(cls)
        obj._t = None
        obj._grad = None
        obj._grad_req = "null"
        obj._gt = obj._gt_stamp = None
        obj._full_grad = False
        return obj

    # ------------------------------------------------------------------ properties
    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return numpy_dtype(self._data.dtype)

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def context(self):
        ctx = getattr(self, "_ctx", None)
        return ctx if ctx is not None else context_of(self._data.device)

    ctx = context

    @property
    def device(self):
        return self._data.device

    @property
    def size(self):
        raise UnsupportedError(
            f"size is ambiguous for a {self.stype} array; use .nnz for the number of stored "
            f"values or numpy.prod(.shape) for the number of elements")

    @property
    def nnz(self):
        """Number of stored values, explicit zeros included (sparsenet addition)."""
        return self._data.numel()

    @property
    def data(self):
        """A copy of the stored values as a dense NDArray (MXNet returns a copy too)."""
        return NDArray(self._data.detach().clone())

    @property
    def indices(self):
        """A copy of the int64 index array as a dense NDArray."""
        return NDArray(self._indices.clone())

    @property
    def handle(self):
        return self._parts()

    @property
    def _num_aux(self):
        """Number of index arrays (MXNet's name): 1 for row_sparse, 2 for CSR.

        >>> import sparsenet as mx
        >>> mx.nd.sparse.zeros('csr', (2, 2))._num_aux
        2
        """
        return len(self._parts()) - 1

    def __len__(self):
        return self._shape[0]

    def __repr__(self):
        shape = "x".join(str(s) for s in self._shape)
        return f"\n<{type(self).__name__} {shape} @{self.context}>"

    def __hash__(self):
        return id(self) // 16

    # ------------------------------------------------------------------ internal hooks
    def _parts(self):
        # builtin: abstract hook, every concrete subclass overrides it
        raise NotImplementedError

    def _autograd_tensor(self):
        """The tensor autograd differentiates against: the graph tensor when the array is
        in a recorded graph (a variable's leaf, filled with its values or not), else the
        stored values."""
        return self._graph_leaf() if self._gt is not None or self._full_grad else self._data

    def _grad_is_full(self):
        return self._full_grad or self._gt is not None

    def _stamp(self):
        return (id(self._data), self._data._version, id(self._indices), self._indices._version)

    def _graph_leaf(self):
        """The full-shape graph tensor without filling it: a variable's leaf, made (and
        registered) on first use inside ``record()``, which receives the gradients of the
        kernels that read the stored values (:meth:`_values_view`, sparse rows) and of the
        operators that read the dense graph tensor (:meth:`_graph_tensor`); or the graph
        tensor of a recorded result; None for an array outside any graph, or a result whose
        parts were written in place since."""
        gt = self._gt
        if gt is not None:
            if gt.is_leaf or self._gt_stamp == self._stamp():
                return gt
            self._gt = None  # the parts were written in place: the graph no longer holds
            return None
        if not (self._full_grad and recording.STATE.recording):
            return None
        # not filled: the kernels that read only stored rows never need the dense values
        self._gt = torch.empty(self._shape, dtype=self._data.dtype,
                               device=self._data.device).requires_grad_(True)
        self._gt_stamp = None
        recording.register_variable(self)
        return self._gt

    def _graph_tensor(self):
        """The dense graph tensor, made (and registered) on first use inside ``record()``
        for a variable and filled with its values (again when the parts changed since);
        None for an array outside any graph."""
        gt = self._graph_leaf()
        if gt is None or not gt.is_leaf:
            return gt
        stamp = self._stamp()
        if self._gt_stamp != stamp:
            with torch.no_grad():
                gt.copy_(self._dense_tensor())
            self._gt_stamp = stamp
        return gt

    def _set_graph(self, t):
        """Attach dense graph tensor ``t`` (a result of recorded operators) to this array."""
        self._gt = t
        self._gt_stamp = self._stamp()

    def _make_leaf(self, requires_grad):
        self._data = self._data.detach()
        self._gt = self._gt_stamp = None
        self._full_grad = bool(requires_grad)

    def _make_values_leaf(self):
        """Differentiate through the stored values (the row view of a parameter)."""
        self._data = self._data.detach().requires_grad_(True)
        self._gt = self._gt_stamp = None
        self._full_grad = False

    def _replace(self, other):
        if type(other) is not type(self):
            raise StorageTypeError(f"cannot replace a {self.stype} array's storage with a "
                                   f"{other.stype} array's")
        for name in self._storage_slots:
            setattr(self, name, getattr(other, name))
        if self._grad is not None and self._grad_req != "null":  # stay an autograd variable
            self._make_leaf(True)
        else:
            self._gt = self._gt_stamp = None

    def detach(self):
        """Return an array sharing the parts but cut from the autograd graph.

        >>> import sparsenet as mx
        >>> mx.nd.array([[1, 0], [0, 2]]).tostype('row_sparse').detach().stype
        'row_sparse'
        """
        out = type(self)._from_parts(*[p.detach() for p in self._parts()], self._shape)
        return place(out, self.context)

    # ------------------------------------------------------------------ conversion
    def asnumpy(self):
        """Return a dense NumPy copy."""
        t = self._dense_tensor().detach()
        return t.cpu().numpy().copy()

    def asscalar(self):
        raise UnsupportedError(
            f"asscalar() is not supported for a {self.stype} array; use "
            f".tostype('default').asscalar()")

    def todense(self):
        """Return the dense NDArray with the same values (``tostype('default')``)."""
        return self.tostype("default")

    def to_torch(self):
        """Return a torch sparse tensor sharing the values (CSR or hybrid COO)."""
        # builtin: abstract hook, every concrete subclass overrides it
        raise NotImplementedError

    def reshape(self, *args, **kwargs):
        raise NotSupportedForSparseNDArray(self.reshape, None, *args)

    def _at(self, idx):
        raise NotSupportedForSparseNDArray(self._at, "[idx]", idx)

    def _slice(self, start, stop):
        raise NotSupportedForSparseNDArray(self._slice, "[start:stop]", start, stop)

    def _sync_copyfrom(self, source_array):
        raise NotSupportedForSparseNDArray(self._sync_copyfrom, "[:]", source_array)

    def copy(self):
        """Return a deep copy with the same storage type."""
        return self.copyto(self.context)

    def check_format(self, full_check=True):
        """Validate the parts; raise :class:`~sparsenet.base.SparseFormatError` if broken.

        Parameters
        ----------
        full_check : bool
            O(nnz) checks of index range, order and uniqueness (default, unlike
            MXNet whose default checks only the lengths).
        """
        # builtin: abstract hook, every concrete subclass overrides it
        raise NotImplementedError

    def __setitem__(self, key, value):
        """Only ``x[:] = value`` is supported: the value is copied and cast to this storage type.

        A scalar fills every element (all rows / all entries stored, as MXNet's
        ``rsp[:] = 1``); a NumPy array or NDArray of any storage type is copied.

        >>> import sparsenet as mx
        >>> r = mx.nd.zeros((2, 2), stype='row_sparse')
        >>> r[:] = 3
        >>> r.indices.asnumpy()
        array([0, 1])
        """
        if not (isinstance(key, slice) and key == slice(None)):
            raise InvalidArgumentError(
                f"{type(self).__name__} supports assignment to [:] only, got "
                f"key {key!r}")
        if isinstance(value, NDArray):
            copy_into(value, self)
        elif isinstance(value, (np.ndarray, list, tuple)):
            copy_into(NDArray(to_tensor(value, device=self.device, dtype=self._data.dtype)), self)
        elif isinstance(value, (int, float, np.number)):
            self._replace(self._filled(value))
        else:
            raise StorageTypeError(f"cannot assign a {type(value).__name__} to a {self.stype} "
                                   f"array; expected a scalar, a NumPy array or an NDArray")

    def _with_data(self, values):
        """Same structure, new values (no copy of the indices)."""
        # builtin: abstract hook, every concrete subclass overrides it
        raise NotImplementedError

    def __array__(self, dtype=None, copy=None):
        out = self.asnumpy()
        return out if dtype is None else out.astype(dtype)

    def __bool__(self):
        raise InvalidArgumentError(f"the truth value of a {self.stype} array is ambiguous")

    def __iter__(self):
        raise StorageTypeError(f"a {self.stype} array is not iterable; index rows instead")

    def _check_same_device(self, *tensors):
        for t in tensors:
            if t.device != self._data.device:
                raise InvalidArgumentError(f"all parts must be on one device, got {t.device} and "
                                           f"{self._data.device}")

    @staticmethod
    def _as_index(t, device):
        if isinstance(t, NDArray):
            t = t._dense_tensor()
        elif not isinstance(t, torch.Tensor):
            t = torch.as_tensor(np.asarray(t))
        if t.dtype.is_floating_point:
            if t.numel() and not bool((t == t.round()).all()):
                raise SparseFormatError("indices must be integers, got non-integral values")
        return t.to(device=device, dtype=torch.int64)

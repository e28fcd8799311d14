"""The row-sparse array :class:`RowSparseNDArray` (stored row slices of an n-D array)."""
import torch

from ..base import InvalidArgumentError, ShapeError
from .base_sparse import BaseSparseNDArray
from .ndarray import NDArray
from .stype import ROW_SPARSE, check_row_sparse

__all__ = ["RowSparseNDArray", "write_rows", "sends_sparse_rows"]


class RowSparseNDArray(BaseSparseNDArray):
    """An n-D array of which only some row slices (along axis 0) are stored.

    ``dense[indices[i]] == data[i]``; rows not in ``indices`` are zero.
    ``indices`` are int64, sorted ascending and unique. This is the storage of
    sparse gradients: a gradient of an embedding table touches a few rows.
    Build one with :func:`sparsenet.nd.sparse.row_sparse_array`.

    Examples
    --------
    >>> import sparsenet as mx
    >>> a = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 4]), shape=(6, 2))
    >>> a.indices.asnumpy()
    array([1, 4])
    >>> (a * 2).stype
    'row_sparse'
    >>> a.asnumpy()[4]
    array([3., 4.], dtype=float32)
    """

    stype = ROW_SPARSE
    _storage_slots = ("_data", "_indices", "_shape")

    def __init__(self, data, indices, shape, validate=True):
        super().__init__(None)
        self._data = data
        self._indices = indices
        self._shape = tuple(int(s) for s in shape)
        if validate:
            check_row_sparse(data, indices, self._shape)

    @classmethod
    def _from_parts(cls, data, indices, shape):
        """Wrap parts known to be valid (internal fast path, no check)."""
        obj = cls._blank()
        obj._data, obj._indices, obj._shape = data, indices, shape
        return obj

    @classmethod
    def _from_coo(cls, g, shape):
        """From a torch hybrid COO tensor (sparse_dim=1), e.g. an embedding gradient.

        Duplicated rows are summed and the indices sorted (``coalesce``).
        """
        g = g.coalesce()
        return cls._from_parts(g.values(), g.indices()[0], tuple(shape))

    def _parts(self):
        return self._data, self._indices

    def _dense_tensor(self):
        out = torch.zeros(self._shape, dtype=self._data.dtype, device=self._data.device)
        if self._indices.numel():
            out = out.index_put((self._indices,), self._data)
        return out

    def _filled(self, value):
        """A row_sparse array of this shape that stores every row, each element ``value``."""
        full = torch.full(self._shape, value, dtype=self._data.dtype, device=self.device)
        idx = torch.arange(self._shape[0], device=self.device)
        return RowSparseNDArray._from_parts(full, idx, self._shape)

    def _with_data(self, values):
        return RowSparseNDArray._from_parts(values, self._indices, self._shape)

    def _stores_every_row(self):
        """Whether every row is stored (indices are unique, so then ``0 .. rows-1``): the
        stored values are the dense array, row ``i`` at position ``i``.

        >>> import sparsenet as mx
        >>> mx.nd.ones((3, 2)).tostype('row_sparse')._stores_every_row()
        True
        """
        return self._indices.shape[0] == self._shape[0]

    def _values_view(self, read=None):
        """This variable as a row_sparse array whose values autograd differentiates: the
        stored rows, plus as zeros the rows of ``read`` (sorted unique row ids a kernel
        reads) it does not store. Backward sends the kernel's gradient of the rows in
        ``read`` (default: the stored rows) to the variable's full-shape graph leaf as
        sparse rows, without the dense graph tensor ever being filled.

        >>> import sparsenet as mx
        >>> v = mx.nd.sparse.row_sparse_array(([[1.0], [2.0]], [1, 3]), shape=(5, 1))
        >>> v.attach_grad()
        >>> with mx.autograd.record():
        ...     view = v._values_view(torch.tensor([0, 3]))
        ...     loss = NDArray((view._data * 10).sum())
        >>> view.indices.asnumpy(), view.data.asnumpy().ravel()
        (array([0, 1, 3]), array([0., 1., 2.], dtype=float32))
        >>> loss.backward()  # the rows read: 0 and 3
        >>> v.grad.indices.asnumpy(), v.grad.data.asnumpy().ravel()
        (array([0, 3]), array([10., 10.], dtype=float32))
        """
        leaf = self._graph_leaf()
        rows = self._indices
        if read is None:
            data = _RowGather.apply(leaf, self._data, None, rows, rows, None)
        else:
            at = torch.searchsorted(rows, read)
            if rows.numel() and bool((rows[at.clamp(max=rows.numel() - 1)] == read).all()):
                # every row read is stored (a pulled batch's rows): no new rows; when they
                # are all the stored rows, the view's ids are ``read`` itself (a kernel may
                # know positions among them already)
                data = _RowGather.apply(leaf, self._data, None, rows, read, at)
                if read.numel() == rows.numel():
                    rows = read
            else:
                union = torch.unique(torch.cat([rows, read]))
                data = _RowGather.apply(leaf, self._data, torch.searchsorted(union, rows),
                                        union, read, torch.searchsorted(union, read))
                rows = union
        view = RowSparseNDArray._from_parts(data, rows, self._shape)
        ctx = getattr(self, "_ctx", None)
        if ctx is not None:
            view._ctx = ctx
        return view

    @property
    def nbytes(self):
        """Bytes held by data and indices.

        >>> import sparsenet as mx
        >>> mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [3]), shape=(5, 2)).nbytes
        16
        """
        return sum(t.numel() * t.element_size() for t in self._parts())

    def check_format(self, full_check=True):
        """Validate the parts (see :func:`sparsenet.ndarray.stype.check_row_sparse`)."""
        check_row_sparse(self._data, self._indices, self._shape, full=full_check)

    def __getitem__(self, key):
        """Only ``x[:]`` (the array itself) is supported, as in MXNet."""
        if isinstance(key, slice) and key == slice(None):
            return self
        raise InvalidArgumentError(f"RowSparseNDArray supports x[:] only, got key {key!r}; use "
                                   f"mx.nd.sparse.retain(x, row_ids) to select rows")

    def asscipy(self):
        """Return a ``scipy.sparse.csr_matrix`` copy of a 2-D row_sparse array."""
        if len(self._shape) != 2:
            raise ShapeError(f"asscipy() needs a 2-D array, got shape {self._shape}")
        import scipy.sparse as sp  # on first use (start-up: training never needs SciPy)

        return sp.csr_matrix(self.asnumpy())

    def to_torch(self):
        """Return a torch hybrid COO tensor (``sparse_dim=1``) sharing the values.

        >>> import sparsenet as mx
        >>> mx.nd.sparse.row_sparse_array(([[1.0]], [2]), shape=(3, 1)).to_torch().sparse_dim()
        1
        """
        return torch.sparse_coo_tensor(self._indices.reshape(1, -1), self._data, self._shape,
                                       is_coalesced=True, check_invariants=False)

    @property
    def data(self):
        """A copy of the stored rows as a dense NDArray of shape ``(k,) + shape[1:]``."""
        return NDArray(self._data.detach().clone())


class _RowGather(torch.autograd.Function):
    """The rows ``rows`` (sorted ids) holding ``values`` at ``positions`` (None: all, in
    order) and zeros elsewhere; backward sends the gradient of the rows ``emit_rows`` (at
    ``emit_pos`` among ``rows``; None: all of them) to ``leaf``, a full-shape tensor that
    is not read, as sparse rows. A sparse gradient (a kernel's own sparse rows, by
    position) is sent as it is, its positions turned into row ids."""

    @staticmethod
    def forward(ctx, leaf, values, positions, rows, emit_rows, emit_pos):
        ctx.shape, ctx.rows, ctx.emit_rows, ctx.emit_pos = leaf.shape, rows, emit_rows, emit_pos
        if positions is None:
            return values.clone()
        out = values.new_zeros((rows.numel(),) + tuple(values.shape[1:]))
        return out.index_copy_(0, positions, values)

    @staticmethod
    def backward(ctx, grad):
        if grad.is_sparse:  # rows the kernel read, by position, perhaps repeated
            ids = ctx.rows.index_select(0, grad._indices()[0]).unsqueeze(0)
            sparse = torch.sparse_coo_tensor(ids, grad._values(), ctx.shape,
                                             check_invariants=False)
        else:
            g = grad if ctx.emit_pos is None else grad.index_select(0, ctx.emit_pos)
            sparse = torch.sparse_coo_tensor(ctx.emit_rows.unsqueeze(0), g, ctx.shape,
                                             check_invariants=False, is_coalesced=True)
        return sparse, None, None, None, None, None


def sends_sparse_rows(values):
    """Whether a kernel may send the gradient of ``values`` as sparse COO rows by position
    (a kernel's own sparse gradient, e.g. ``embedding_bag(..., sparse=True)``): ``values``
    are the data of a variable's :meth:`RowSparseNDArray._values_view`, whose backward takes
    such a gradient as it is. Any other tensor gets a dense gradient.

    >>> import sparsenet as mx
    >>> v = mx.nd.sparse.row_sparse_array(([[1.0]], [1]), shape=(3, 1)); v.attach_grad()
    >>> with mx.autograd.record():
    ...     view = v._values_view()
    >>> sends_sparse_rows(view._data), sends_sparse_rows(view._data * 2)
    (True, False)
    """
    fn = values.grad_fn
    return fn is not None and type(fn) is _RowGather._backward_cls


def write_rows(dst, src):
    """Overwrite the rows of row_sparse ``dst`` that ``src`` stores with ``src``'s values.

    Rows ``dst`` does not store yet are added; its other rows stay as they are.
    Returns ``dst``.

    >>> import sparsenet as mx
    >>> dst = mx.nd.sparse.row_sparse_array(([[1.0], [2.0]], [0, 3]), shape=(4, 1))
    >>> src = mx.nd.sparse.row_sparse_array(([[9.0], [8.0]], [1, 3]), shape=(4, 1))
    >>> write_rows(dst, src).asnumpy().ravel()
    array([1., 9., 0., 8.], dtype=float32)
    """
    ids, values = src._indices, src._data.detach().to(dst._data.dtype)
    if not ids.numel():
        return dst
    stored = dst._indices
    with torch.no_grad():
        if stored.numel() == dst.shape[0]:  # every row stored: row i sits at position i
            dst._data[ids.to(stored.device)] = values.to(stored.device)
            return dst
        keep = ~torch.isin(stored, ids)
        rows = torch.cat([stored[keep], ids.to(stored.device)])
        data = torch.cat([dst._data.detach()[keep], values.to(stored.device)])
        order = torch.argsort(rows)
        dst._replace(RowSparseNDArray._from_parts(data[order], rows[order], dst.shape))
    return dst

"""Matrix products: ``dot`` (with every sparse rule of MXNet and a few more) and ``batch_dot``.

The sparse kernels are torch index operations, differentiable by
``torch.autograd``: the gradient of a weight variable ``W`` in ``dot(csr, W)``
(``dot(csr, W, transpose_b=True)``) is a sparse COO tensor holding the rows
(columns) the batch touches, stored by :mod:`sparsenet.autograd` into the
weight's row_sparse or dense gradient buffer without a dense intermediate; the
gradient with respect to the CSR values keeps the CSR structure.

>>> import sparsenet as mx
>>> x = mx.nd.sparse.csr_matrix(([7.0, 8.0, 9.0], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 5))
>>> w = mx.nd.ones((5, 2))
>>> mx.nd.dot(x, w).asnumpy()
array([[15., 15.],
       [ 0.,  0.],
       [ 9.,  9.]], dtype=float32)
>>> g = mx.nd.dot(x, mx.nd.ones((3, 2)), transpose_a=True)
>>> g.stype, g.indices.asnumpy()
('row_sparse', array([0, 1, 2]))
"""
import weakref

import torch
import torch.nn.functional as F

from .. import recording
from ..torch_compat import embedding_bag
from ..base import ShapeError
from ..ndarray.csr import CSRNDArray
from ..ndarray.ndarray import NDArray
from ..ndarray.row_sparse import RowSparseNDArray, sends_sparse_rows
from .registry import CSR, DEFAULT, ROW_SPARSE, defop, rule
from .row_kernels import csr_column_sums, group_ids, unique_ids

__all__ = ["dot", "batch_dot", "csr_dense_mm", "csr_t_dense_rsp"]


@defop
def dot(lhs, rhs, *, transpose_a=False, transpose_b=False, forward_stype=None):
    """Dot product of two arrays.

    For 2-D inputs this is the matrix product ``op(lhs) @ op(rhs)``, where
    ``op`` transposes when ``transpose_a``/``transpose_b`` is set. N-D inputs
    contract the last axis of ``lhs`` with the first axis of ``rhs``.
    ``forward_stype`` forces the output storage type.

    Parameters
    ----------
    lhs, rhs : NDArray
    transpose_a, transpose_b : bool
    forward_stype : {None, 'default', 'csr', 'row_sparse'}

    Examples
    --------
    >>> import sparsenet as mx
    >>> a = mx.nd.array([[1.0, 2.0]]); b = mx.nd.array([[3.0], [4.0]])
    >>> mx.nd.dot(a, b).asnumpy()
    array([[11.]], dtype=float32)
    >>> mx.nd.dot(a, a, transpose_a=True).shape
    (2, 2)
    """
    a = _t(lhs) if transpose_a else lhs
    b = _t(rhs) if transpose_b else rhs
    if a.dim() == 1 and b.dim() == 1:
        return torch.dot(a, b).reshape(1)
    if a.shape[-1] != b.shape[0]:
        raise ShapeError(f"dot: shape mismatch, {tuple(a.shape)} x {tuple(b.shape)} "
                         f"(transpose_a={transpose_a}, transpose_b={transpose_b})")
    if a.dim() <= 2 and b.dim() <= 2:
        return torch.matmul(a, b)
    return torch.tensordot(a, b, dims=([a.dim() - 1], [0]))


def _t(x):
    return x.permute(tuple(range(x.dim() - 1, -1, -1))) if x.dim() > 1 else x


@defop
def batch_dot(lhs, rhs, *, transpose_a=False, transpose_b=False, forward_stype=None):
    """Batched matrix product of 3-D arrays ``(B, M, K) x (B, K, N)``.

    >>> import sparsenet as mx
    >>> mx.nd.batch_dot(mx.nd.ones((2, 1, 3)), mx.nd.ones((2, 3, 1))).asnumpy().ravel()
    array([3., 3.], dtype=float32)
    """
    a = lhs.transpose(1, 2) if transpose_a else lhs
    b = rhs.transpose(1, 2) if transpose_b else rhs
    return torch.bmm(a, b)


# ---------------------------------------------------------------------- kernels
def _wants_sparse_grad(w):
    """Whether ``w`` is an autograd variable: its gradient then travels as sparse COO.

    The buffer it lands in decides the stored storage type (see
    :func:`sparsenet.grad_store.store`); a sparse gradient never materialises
    a dense intermediate of the weight's size.
    """
    return w._grad is not None and w._grad_req != "null"


def _floating(*arrays):
    return all(a._data.dtype.is_floating_point if a.stype != DEFAULT
               else a._t.dtype.is_floating_point for a in arrays)


def csr_dense_mm(x, w, sparse_grad=False):
    """``x @ w`` for a CSR ``x`` and a dense 2-D tensor ``w`` (torch tensor result).

    One ``embedding_bag`` in sum mode weighted by the CSR values: it reads only
    the rows the batch touches and never materialises the dense ``x``. With
    ``sparse_grad`` the row gradient of ``w`` is ``x.T @ gout`` made by
    :func:`csr_t_dense_rsp` (one sort of the batch's columns, then bags over the
    small ``gout``): a coalesced hybrid-COO tensor, each touched row once, so the
    gradient store keeps its values as they are. The gradient of the CSR values
    comes from ``embedding_bag``'s own backward.
    """
    values = x._data if x._data.dtype == w.dtype else x._data.to(w.dtype)
    if (sparse_grad and values.numel() > _RSP_GRAD_MIN_NNZ and not values.requires_grad
            and w.requires_grad):
        return _CsrDenseMM.apply(w, x)
    # F.embedding_bag without its argument checks (done here)
    return embedding_bag(w, x._indices, x._indptr[:-1], values, sparse_grad)


#: ``csr_dense_mm`` makes the coalesced rows itself above this many stored values; below,
#: ``embedding_bag``'s backward and the store's native coalescing cost less.
_RSP_GRAD_MIN_NNZ = 1024


class _CsrDenseMM(torch.autograd.Function):
    """``x @ w`` whose backward gives ``w`` the coalesced rows ``x.T @ gout`` (see
    :func:`csr_dense_mm`); the CSR ``x`` is a constant."""

    @staticmethod
    def forward(ctx, w, x):
        values = x._data if x._data.dtype == w.dtype else x._data.to(w.dtype)
        ctx.x = x
        return embedding_bag(w, x._indices, x._indptr[:-1], values, False)

    @staticmethod
    def backward(ctx, gout):
        x = ctx.x  # kept (not cleared): a retained graph runs backward again
        rows = csr_t_dense_rsp(x, gout)
        shape = (x.shape[1], gout.shape[1])
        gw = torch.sparse_coo_tensor(rows._indices.unsqueeze(0), rows._data, shape,
                                     is_coalesced=True, check_invariants=False)
        return gw, None


class _CsrDenseTMM(torch.autograd.Function):
    """``x @ w.T`` for CSR ``x`` (values, indices, row ids) and dense ``w`` (n, k).

    Backward: the gradient of ``w`` touches only the columns ``x`` stores; it is
    a sparse COO tensor (sparse_dim 2) when ``sparse_grad``, else a dense tensor.
    """

    @staticmethod
    def forward(ctx, values, w, indices, row_ids, m, sparse_grad):
        cols = w.index_select(1, indices)  # (n, nnz): the columns the batch touches
        out = w.new_zeros(m, w.shape[0]).index_add_(0, row_ids, (cols * values).t())
        ctx.save_for_backward(values, w, indices, row_ids)
        ctx.sparse_grad = sparse_grad
        return out

    @staticmethod
    def backward(ctx, gout):
        values, w, indices, row_ids = ctx.saved_tensors
        g_rows = gout.index_select(0, row_ids)  # (nnz, n)
        gv = gw = None
        if ctx.needs_input_grad[0]:
            gv = (g_rows * w.index_select(1, indices).t()).sum(1)
        if ctx.needs_input_grad[1]:
            contrib = (g_rows * values.unsqueeze(1)).t()  # (n, nnz)
            if ctx.sparse_grad:
                n, nnz = w.shape[0], indices.numel()
                r = torch.arange(n, device=w.device).repeat_interleave(nnz)
                coo = torch.stack([r, indices.repeat(n)])
                gw = torch.sparse_coo_tensor(coo, contrib.reshape(-1), tuple(w.shape),
                                             check_invariants=False)
            else:
                gw = w.new_zeros(w.shape).index_add_(1, indices, contrib)
        return gv, gw, None, None, None, None


def csr_dense_t_mm(x, w):
    """``x @ w.T`` for a CSR ``x`` (m, k) and a dense array ``w`` (n, k); never densifies ``x``.

    The column-sparse gradient of a variable ``w`` travels on an alias of ``w``
    (:func:`sparsenet.recording.alias_of`): torch cannot add it to the row-sparse
    gradients of other uses of ``w``, the gradient storage does.
    """
    wt = w._t
    sparse_grad = _wants_sparse_grad(w) and recording.is_recording()
    if sparse_grad:
        wt = recording.alias_of(w)
    values = x._data if x._data.dtype == wt.dtype else x._data.to(wt.dtype)
    return _CsrDenseTMM.apply(values, wt, x._indices, x.row_ids(), x.shape[0], sparse_grad)


def _column_bags(x):
    """Group the stored values of CSR ``x`` by column.

    Returns ``(columns, offsets, order)``: the sorted unique columns, where each
    column's run starts in the sorted order, and the permutation sorting the
    values by column, stable: within a column the values keep their row-major
    order (:func:`~sparsenet.ops.row_kernels.group_ids`, a radix argsort on the CPU).
    """
    return group_ids(x._indices, x._shape[1])


def _weighted_bags(weight, ids, offsets, values):
    """Sum of ``values``-weighted rows ``weight[ids]`` per bag (no intermediate copy)."""
    if ids.numel() == 0:
        return weight.new_zeros((offsets.numel(), weight.shape[1]))
    values = values if values.dtype == weight.dtype else values.to(weight.dtype)
    return embedding_bag(weight, ids, offsets, values, False)


def csr_t_dense_rsp(x, g):
    """``x.T @ g`` as a row_sparse array whose rows are the columns ``x`` stores.

    On the CPU one native call (:func:`~sparsenet.ops.row_kernels.csr_column_sums`) groups
    the values by column with one radix sort and sums ``value * g[row]`` per column, in row
    order, with no intermediate. Elsewhere (or with the native kernels off) the torch
    kernels: few values, ``index_add`` of the products (the same arithmetic); more, each
    output row is an ``embedding_bag`` over the rows of ``g`` (float32: FBGEMM's fused
    multiply-adds, which may differ in the last bit).
    """
    if g.is_cpu and not g.is_contiguous():  # a transposed operand: the copy costs less
        g = g.contiguous()
    got = csr_column_sums(x._indptr, x._indices, x._data, g, x._shape[1])
    if got is not None:
        return RowSparseNDArray._from_parts(got[1], got[0], (x.shape[1], g.shape[1]))
    if x._data.numel() <= _SMALL_NNZ:  # few values: fewer, cheaper torch calls win
        cols, inv = torch.unique(x._indices, sorted=True, return_inverse=True)
        values = x._data if x._data.dtype == g.dtype else x._data.to(g.dtype)
        contrib = g.index_select(0, x.row_ids()) * values.unsqueeze(1)
        data = g.new_zeros((cols.numel(), g.shape[1])).index_add(0, inv, contrib)
    else:
        cols, offsets, order = _column_bags(x)
        data = _weighted_bags(g, x.row_ids().index_select(0, order), offsets,
                              x._data.index_select(0, order))
    return RowSparseNDArray._from_parts(data, cols, (x.shape[1], g.shape[1]))


_SMALL_NNZ = 512


def _rsp_positions(r, ids):
    """Positions of ``ids`` among the rows stored in row_sparse ``r`` and a hit mask (None:
    every id is stored)."""
    ref, version, cols, inverse = _COLUMNS
    if r._indices is cols and ref is not None and ref() is ids and ids._version == version:
        return inverse, None  # r stores exactly the columns of the CSR array ids belong to
    if r._indices.numel() == 0:
        return torch.zeros_like(ids), torch.zeros_like(ids, dtype=torch.bool)
    pos = torch.searchsorted(r._indices, ids).clamp_(max=r._indices.numel() - 1)
    return pos, r._indices[pos] == ids


def _check2d(lhs, rhs):
    return lhs.ndim == 2 and rhs.ndim == 2 and _floating(lhs, rhs)


def _mm_shape_error(lhs, rhs, p):
    a = lhs.shape[::-1] if p["transpose_a"] else lhs.shape
    b = rhs.shape[::-1] if p["transpose_b"] else rhs.shape
    if a[1] != b[0]:
        raise ShapeError(f"dot: shape mismatch, {tuple(a)} x {tuple(b)} (transpose_a="
                         f"{p['transpose_a']}, transpose_b={p['transpose_b']})")


@rule(dot, CSR, DEFAULT, out=DEFAULT, when={"transpose_a": False, "transpose_b": False})
def _dot_csr_dns(lhs, rhs, **p):
    w = rhs._t  # the hot path of sparse training: checks kept minimal
    if w.dim() != 2 or not (w.dtype.is_floating_point and lhs._data.dtype.is_floating_point):
        return NotImplemented
    if lhs._shape[1] != w.shape[0]:
        _mm_shape_error(lhs, rhs, p)
    g = rhs._grad  # a variable's gradient travels as sparse rows (see _wants_sparse_grad)
    return NDArray(csr_dense_mm(lhs, w, g is not None and rhs._grad_req != "null"))


@rule(dot, CSR, DEFAULT, out=DEFAULT, when={"transpose_a": False, "transpose_b": True})
def _dot_csr_dnsT(lhs, rhs, **p):
    if not _check2d(lhs, rhs):
        return NotImplemented
    _mm_shape_error(lhs, rhs, p)
    return NDArray(csr_dense_t_mm(lhs, rhs))


@rule(dot, CSR, DEFAULT, out=ROW_SPARSE, when={"transpose_a": True, "transpose_b": False})
def _dot_csrT_dns(lhs, rhs, **p):
    if not _check2d(lhs, rhs):
        return NotImplemented
    _mm_shape_error(lhs, rhs, p)
    return csr_t_dense_rsp(lhs, rhs._t)


@rule(dot, CSR, DEFAULT, out=DEFAULT, when={"transpose_a": True, "transpose_b": True})
def _dot_csrT_dnsT(lhs, rhs, **p):
    # dense, as MXNet 1.9.1 (which densifies the CSR input); computed from the stored values
    if not _check2d(lhs, rhs):
        return NotImplemented
    _mm_shape_error(lhs, rhs, p)
    r = csr_t_dense_rsp(lhs, rhs._t.t())
    out = r._data.new_zeros(r.shape)
    return NDArray(out.index_copy_(0, r._indices, r._data))


# the last CSR indices tensor seen by _csr_columns: (weak ref, its version, its sorted unique
# columns, each stored value's position among them)
_COLUMNS = [None, None, None, None]


def _csr_columns(lhs, rhs, **p):
    """The rows of ``rhs`` that ``dot(lhs, rhs)`` reads: the columns CSR ``lhs`` stores
    (remembered for the last indices tensor: a batch is often multiplied by several
    tables, and ``square(x)`` shares ``x``'s indices)."""
    ind = lhs._indices
    ref, version, cols, _ = _COLUMNS
    if ref is None or ref() is not ind or version != ind._version:
        cols, inverse = unique_ids(ind, lhs._shape[1], return_inverse=True)
        _COLUMNS[:] = [weakref.ref(ind), ind._version, cols, inverse]
    return {1: cols}


@rule(dot, CSR, ROW_SPARSE, out=DEFAULT, when={"transpose_a": False, "transpose_b": False},
      values_grad=True, reads=_csr_columns)
def _dot_csr_rsp(lhs, rhs, **p):
    if not _check2d(lhs, rhs):
        return NotImplemented
    _mm_shape_error(lhs, rhs, p)
    if rhs._data.shape[0] == 0 or lhs._data.numel() == 0:
        return NDArray(torch.zeros(lhs.shape[0], rhs.shape[1], dtype=rhs._data.dtype,
                                   device=rhs.device))
    if rhs._stores_every_row():
        # every row stored (a Module's weight): the stored values are the dense weight
        return NDArray(csr_dense_mm(lhs, rhs._data, _wants_sparse_grad(rhs)))
    pos, hit = _rsp_positions(rhs, lhs._indices)
    values = lhs._data.to(rhs._data.dtype)
    if hit is not None:
        values = values * hit
    # the gradient: only the rows touched (sparse rows of the variable, or of its values view)
    sparse = _wants_sparse_grad(rhs) or sends_sparse_rows(rhs._data)
    out = F.embedding_bag(pos, rhs._data, lhs._indptr[:-1], mode="sum", per_sample_weights=values,
                          sparse=sparse)
    return NDArray(out)


@rule(dot, CSR, ROW_SPARSE, out=ROW_SPARSE, when={"transpose_a": True, "transpose_b": False})
def _dot_csrT_rsp(lhs, rhs, **p):
    if not _check2d(lhs, rhs):
        return NotImplemented
    _mm_shape_error(lhs, rhs, p)
    cols, offsets, order = _column_bags(lhs)
    pos, hit = _rsp_positions(rhs, lhs.row_ids().index_select(0, order))
    values = lhs._data.index_select(0, order).to(rhs._data.dtype)
    if hit is not None:
        values = values * hit
    if rhs._data.shape[0] == 0:
        data = rhs._data.new_zeros((cols.numel(), rhs.shape[1]))
    else:
        data = _weighted_bags(rhs._data, pos, offsets, values)
    return RowSparseNDArray._from_parts(data, cols, (lhs.shape[1], rhs.shape[1]))


def _dense_rows_to_csr(dense_t, cols, n_cols):
    """CSR (m, n_cols) whose every row stores the columns ``cols`` with values ``dense_t``."""
    m, u = dense_t.shape
    indptr = torch.arange(0, m * u + 1, u if u else 1, device=dense_t.device)[: m + 1] \
        if u else torch.zeros(m + 1, dtype=torch.int64, device=dense_t.device)
    return CSRNDArray._from_parts(dense_t.reshape(-1), cols.repeat(m), indptr, (m, n_cols))


@rule(dot, DEFAULT, CSR, out=CSR, when={"transpose_a": False, "transpose_b": False})
def _dot_dns_csr(lhs, rhs, **p):
    if not _check2d(lhs, rhs):
        return NotImplemented
    _mm_shape_error(lhs, rhs, p)
    # (D @ X)^T = X^T @ D^T: rows of the result's transpose are the columns X stores
    r = csr_t_dense_rsp(rhs, lhs._t.t())
    return _dense_rows_to_csr(r._data.t(), r._indices, rhs.shape[1])


@rule(dot, DEFAULT, CSR, out=CSR, when={"transpose_a": False, "transpose_b": True})
def _dot_dns_csrT(lhs, rhs, **p):
    if not _check2d(lhs, rhs):
        return NotImplemented
    _mm_shape_error(lhs, rhs, p)
    # (D @ X^T)^T = X @ D^T; columns of the result = the rows of X that store values
    full = csr_dense_mm(rhs, lhs._t.t().contiguous())  # (n, m)
    counts = rhs._indptr[1:] - rhs._indptr[:-1]
    keep = (counts > 0).nonzero().reshape(-1)
    return _dense_rows_to_csr(full.index_select(0, keep).t(), keep, rhs.shape[0])


@rule(dot, DEFAULT, ROW_SPARSE, out=DEFAULT, when={"transpose_a": False, "transpose_b": False})
def _dot_dns_rsp(lhs, rhs, **p):
    if not _check2d(lhs, rhs):
        return NotImplemented
    _mm_shape_error(lhs, rhs, p)
    return NDArray(lhs._t.index_select(1, rhs._indices) @ rhs._data.to(lhs._t.dtype))


@rule(dot, ROW_SPARSE, DEFAULT, out=DEFAULT, when={"transpose_b": False})
def _dot_rsp_dns(lhs, rhs, **p):
    if not _check2d(lhs, rhs):
        return NotImplemented
    _mm_shape_error(lhs, rhs, p)
    w = rhs._t
    if p["transpose_a"]:
        return NDArray(lhs._data.t().to(w.dtype) @ w.index_select(0, lhs._indices))
    out = torch.zeros(lhs.shape[0], w.shape[1], dtype=w.dtype, device=w.device)
    return NDArray(out.index_copy(0, lhs._indices, lhs._data.to(w.dtype) @ w))

"""Torch-level building blocks shared by the sparse kernels (no dispatch, no policy).

All functions take and return tensors or containers built with ``_from_parts``;
inputs are valid by construction (checked at the public boundary). Index
tensors are never modified in place, so arrays may share them.
"""
import torch

from ..base import IndexOutOfRangeError
from ..ndarray.csr import CSRNDArray
from ..ndarray.row_sparse import RowSparseNDArray
from .row_kernels import unique_ids

__all__ = ["csr_keys", "csr_from_keys", "values_map", "csr_union", "csr_intersection",
           "rsp_union", "rsp_intersection", "csr_gather_dense", "scatter_add_dense",
           "empty_csr", "empty_rsp", "unique_inverse", "sorted_by_key", "csr_union_map",
           "rsp_union_map", "dense_rows", "zero_quotient_keys", "check_row_ids"]


def csr_keys(a):
    """Row-major linear position ``row * cols + col`` of every stored value (sorted)."""
    return a.row_ids() * a.shape[1] + a._indices


def csr_from_keys(keys, values, shape):
    """CSR array from sorted unique linear keys and their values."""
    rows, cols = shape
    r = torch.div(keys, cols, rounding_mode="floor") if cols else keys
    counts = torch.bincount(r, minlength=rows) if keys.numel() else torch.zeros(
        rows, dtype=torch.int64, device=keys.device)
    indptr = torch.zeros(rows + 1, dtype=torch.int64, device=keys.device)
    torch.cumsum(counts, 0, out=indptr[1:])
    return CSRNDArray._from_parts(values, keys - r * cols, indptr, tuple(shape))


def values_map(a, fn):
    """Same structure as sparse array ``a``, values ``fn(a.data)`` (indices shared)."""
    return a._with_data(fn(a._data))


def empty_csr(shape, dtype, device):
    rows = shape[0]
    return CSRNDArray._from_parts(torch.zeros(0, dtype=dtype, device=device),
                                  torch.zeros(0, dtype=torch.int64, device=device),
                                  torch.zeros(rows + 1, dtype=torch.int64, device=device),
                                  tuple(shape))


def empty_rsp(shape, dtype, device):
    return RowSparseNDArray._from_parts(
        torch.zeros((0,) + tuple(shape[1:]), dtype=dtype, device=device),
        torch.zeros(0, dtype=torch.int64, device=device), tuple(shape))


def unique_inverse(ids, bound=None):
    """``(sorted unique ids, inverse)`` of an int64 tensor (ids in ``[0, bound)`` when given):
    :func:`~sparsenet.ops.row_kernels.unique_ids`, a radix argsort on the CPU."""
    return unique_ids(ids, bound, return_inverse=True)


def csr_union(a, b, sign=1.0):
    """``a + sign * b`` for two CSR arrays of one shape (union of stored positions)."""
    ka, kb = csr_keys(a), csr_keys(b)
    keys, inv = unique_inverse(torch.cat([ka, kb]))
    dtype = torch.promote_types(a._data.dtype, b._data.dtype)
    bvals = b._data.to(dtype) if sign == 1.0 else b._data.to(dtype) * sign
    vals = torch.zeros(keys.numel(), dtype=dtype, device=keys.device).index_add(
        0, inv, torch.cat([a._data.to(dtype), bvals]))
    return csr_from_keys(keys, vals, a.shape)


def sorted_by_key(keys, values):
    """``(keys, values)`` in ascending key order.

    Parts built with ``validate=False`` may hold unsorted column (or row) ids;
    kernels that binary-search keys sort them first (O(nnz) check when sorted).
    """
    if keys.numel() > 1 and not bool((keys[1:] >= keys[:-1]).all()):
        order = torch.argsort(keys, stable=True)
        return keys[order], values[order]
    return keys, values


def csr_intersection(a, b, fn):
    """CSR of ``fn(a_values, b_values)`` on positions stored in both ``a`` and ``b``."""
    ka, va = sorted_by_key(csr_keys(a), a._data)
    kb, vb = sorted_by_key(csr_keys(b), b._data)
    if ka.numel() == 0 or kb.numel() == 0:
        dtype = torch.promote_types(a._data.dtype, b._data.dtype)
        return empty_csr(a.shape, dtype, a.device)
    pos = torch.searchsorted(ka, kb).clamp_(max=ka.numel() - 1)
    hit = ka[pos] == kb
    keys = kb[hit]
    vals = fn(va[pos[hit]], vb[hit])
    return csr_from_keys(keys, vals, a.shape)


def csr_union_map(a, b, fn):
    """CSR of ``fn(a, b)`` on the union of stored positions (``fn(0, 0)`` must be 0).

    Where only one operand stores a value the other contributes 0.
    """
    ka, kb = csr_keys(a), csr_keys(b)
    keys, inv = unique_inverse(torch.cat([ka, kb]))
    dtype = torch.promote_types(a._data.dtype, b._data.dtype)
    va, vb = _scatter_pair(keys.numel(), inv, ka.numel(), a._data, b._data, dtype)
    return csr_from_keys(keys, fn(va, vb), a.shape)


def rsp_union_map(a, b, fn):
    """Row_sparse ``fn(a, b)`` on the union of stored rows (``fn(0, 0)`` must be 0)."""
    idx, inv = unique_inverse(torch.cat([a._indices, b._indices]))
    dtype = torch.promote_types(a._data.dtype, b._data.dtype)
    va, vb = _scatter_pair(idx.numel(), inv, a._indices.numel(), a._data, b._data, dtype)
    return RowSparseNDArray._from_parts(fn(va, vb), idx, a.shape)


def _scatter_pair(n, inv, na, a_vals, b_vals, dtype):
    """Both operands' values laid out on the ``n`` union positions (zeros elsewhere)."""
    shape = (n,) + tuple(a_vals.shape[1:])
    va = torch.zeros(shape, dtype=dtype, device=a_vals.device).index_copy(
        0, inv[:na], a_vals.to(dtype))
    vb = torch.zeros(shape, dtype=dtype, device=a_vals.device).index_copy(
        0, inv[na:], b_vals.to(dtype))
    return va, vb


def rsp_union(a, b, sign=1.0):
    """``a + sign * b`` for two row_sparse arrays of one shape (union of rows)."""
    idx, inv = unique_inverse(torch.cat([a._indices, b._indices]))
    dtype = torch.promote_types(a._data.dtype, b._data.dtype)
    bvals = b._data.to(dtype) if sign == 1.0 else b._data.to(dtype) * sign
    data = torch.zeros((idx.numel(),) + tuple(a.shape[1:]), dtype=dtype, device=idx.device)
    data = data.index_add(0, inv, torch.cat([a._data.to(dtype), bvals]))
    return RowSparseNDArray._from_parts(data, idx, a.shape)


def rsp_intersection(a, b, fn):
    """Row_sparse ``fn(a_rows, b_rows)`` on rows stored in both arrays."""
    ia, da = sorted_by_key(a._indices, a._data)
    ib, db = sorted_by_key(b._indices, b._data)
    if ia.numel() == 0 or ib.numel() == 0:
        dtype = torch.promote_types(a._data.dtype, b._data.dtype)
        return empty_rsp(a.shape, dtype, a.device)
    pos = torch.searchsorted(ia, ib).clamp_(max=ia.numel() - 1)
    hit = ia[pos] == ib
    return RowSparseNDArray._from_parts(fn(da[pos[hit]], db[hit]), ib[hit], a.shape)


def dense_rows(x, rows):
    """The rows ``rows`` (int64 ids) of array ``x`` of any storage type, as a dense tensor."""
    if x.stype == "default":
        return x._t.index_select(0, rows)
    out = torch.zeros((rows.numel(),) + tuple(x.shape[1:]), dtype=x._data.dtype,
                      device=x.device)
    if x.stype == "row_sparse":
        idx, data = sorted_by_key(x._indices, x._data)
        if idx.numel() and rows.numel():
            pos = torch.searchsorted(idx, rows).clamp_(max=idx.numel() - 1)
            hit = idx[pos] == rows
            out[hit] = data[pos[hit]]
        return out
    starts, ends = x._indptr[rows], x._indptr[rows + 1]
    counts = ends - starts
    nnz = int(counts.sum())
    which = torch.repeat_interleave(torch.arange(rows.numel(), device=x.device), counts,
                                    output_size=nnz)
    first = torch.repeat_interleave(starts - torch.cumsum(counts, 0) + counts, counts,
                                    output_size=nnz)
    src = torch.arange(nnz, device=x.device) + first
    out[which, x._indices[src]] = x._data[src]
    return out


def csr_gather_dense(a, dense):
    """Values of ``dense`` (broadcast to ``a.shape``) at the stored positions of CSR ``a``."""
    d = dense.expand(a.shape) if tuple(dense.shape) != a.shape else dense
    return d[a.row_ids(), a._indices]


def scatter_add_dense(a, dense, sign=1.0):
    """``dense + sign * a`` as a new dense tensor (``a`` sparse, ``dense`` of its shape)."""
    vals = a._data if sign == 1.0 else a._data * sign
    dtype = torch.promote_types(vals.dtype, dense.dtype)
    if a.stype == "csr":
        flat = csr_keys(a)
        return dense.to(dtype).reshape(-1).index_add(0, flat, vals.to(dtype)).reshape(dense.shape)
    return dense.to(dtype).index_add(0, a._indices, vals.to(dtype))



def zero_quotient_keys(a, divisor):
    """Sorted linear keys of the positions CSR ``a`` does not store where ``divisor`` (a
    dense tensor of ``a``'s shape) is 0 or NaN: there ``a / divisor`` is NaN. None if none.
    """
    bad = divisor == 0
    if divisor.is_floating_point():
        bad |= torch.isnan(divisor)
    if not bool(bad.any()):
        return None
    keys = bad.reshape(-1).nonzero().reshape(-1)  # sorted
    keys = keys[~torch.isin(keys, csr_keys(a))]
    return keys if keys.numel() else None


def check_row_ids(rows, num_rows, what, is_sorted=False):
    """Raise :class:`~sparsenet.base.IndexOutOfRangeError` unless every id of the int64
    tensor ``rows`` is in ``[0, num_rows)``, naming ``what``, the first bad id, its position
    and the bound. With ``is_sorted`` (ascending ids) only the first and last are read.

    >>> check_row_ids(torch.tensor([0, 2]), 3, 'gradient')
    >>> check_row_ids(torch.tensor([1, 5]), 3, 'gradient', is_sorted=True)
    Traceback (most recent call last):
    ...
    sparsenet.base.IndexOutOfRangeError: gradient: row id 5 at position 1 is out of range for 3 ...
    """
    n = rows.numel()
    if n == 0:
        return
    if is_sorted:
        lo, hi = torch.stack((rows[0], rows[-1])).tolist()
        if lo >= 0 and hi < num_rows:
            return
    bad = (rows < 0) | (rows >= num_rows)
    if not bool(bad.any()):
        return
    pos = int(bad.nonzero()[0, 0])
    raise IndexOutOfRangeError(f"{what}: row id {int(rows[pos])} at position {pos} is out of "
                               f"range for {num_rows} rows (expected 0 <= row < {num_rows})")

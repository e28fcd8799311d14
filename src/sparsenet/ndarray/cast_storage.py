"""Conversion kernels between storage types (the kernels of the ``cast_storage`` operator).

The storage-type decisions live in the operator registry (``ops/cast.py``);
these are the kernels its rows call. Conversions from dense are compact
(zero values / all-zero rows are dropped); conversions between sparse types
keep every stored value. Copies that keep the destination's storage type are
:func:`sparsenet.ndarray.ndarray.copy_into`.

>>> import sparsenet as mx
>>> d = mx.nd.array([[0, 1], [0, 0], [2, 0]])
>>> r = d.tostype('row_sparse')
>>> r.indices.asnumpy()
array([0, 2])
>>> c = r.tostype('csr')
>>> c.indptr.asnumpy()
array([0, 1, 1, 2])
"""
import torch

from ..base import ShapeError
from .csr import CSRNDArray
from .row_sparse import RowSparseNDArray

__all__ = ["to_dense_tensor", "dense_to_csr", "dense_to_row_sparse", "csr_to_row_sparse",
           "row_sparse_to_csr"]


def to_dense_tensor(a):
    """Return the values of any array as one dense tensor (differentiable in the values)."""
    return a._dense_tensor()


def dense_to_csr(t):
    """Compact CSR of a 2-D dense tensor (zeros dropped)."""
    if t.dim() != 2:
        raise ShapeError(f"a CSR array must be 2-D, cannot convert shape {tuple(t.shape)}")
    rows, cols = t.shape
    mask = t != 0
    nz = mask.nonzero()
    counts = mask.sum(dim=1)
    indptr = torch.zeros(rows + 1, dtype=torch.int64, device=t.device)
    torch.cumsum(counts, 0, out=indptr[1:])
    data = t[mask]
    return CSRNDArray._from_parts(data, nz[:, 1].contiguous(), indptr, (rows, cols))


def dense_to_row_sparse(t):
    """Compact row_sparse array of a dense tensor (all-zero rows dropped)."""
    if t.dim() == 0:
        raise ShapeError("a row_sparse array has at least one dimension")
    inner = 1
    for d in t.shape[1:]:
        inner *= d
    keep = (t.reshape(t.shape[0], inner) != 0).any(dim=1)
    idx = keep.nonzero().reshape(-1)
    return RowSparseNDArray._from_parts(t.index_select(0, idx), idx, tuple(t.shape))


def csr_to_row_sparse(a):
    """Row_sparse array holding the rows of a CSR array that store at least one value."""
    rows, cols = a._shape
    counts = a._indptr[1:] - a._indptr[:-1]
    idx = (counts > 0).nonzero().reshape(-1)
    pos = torch.full((rows,), -1, dtype=torch.int64, device=idx.device)
    pos[idx] = torch.arange(idx.numel(), device=idx.device)
    local_rows = pos[a.row_ids()]
    flat = local_rows * cols + a._indices
    data = torch.zeros(idx.numel() * cols, dtype=a._data.dtype, device=a._data.device)
    data = data.index_put((flat,), a._data).reshape(idx.numel(), cols)
    return RowSparseNDArray._from_parts(data, idx, (rows, cols))


def row_sparse_to_csr(a):
    """CSR array of a 2-D row_sparse array (zero values inside stored rows dropped)."""
    if len(a._shape) != 2:
        raise ShapeError(f"a CSR array must be 2-D, cannot convert shape {a._shape}")
    rows, cols = a._shape
    local = dense_to_csr(a._data)
    counts = torch.zeros(rows, dtype=torch.int64, device=a._data.device)
    counts[a._indices] = local._indptr[1:] - local._indptr[:-1]
    indptr = torch.zeros(rows + 1, dtype=torch.int64, device=a._data.device)
    torch.cumsum(counts, 0, out=indptr[1:])
    return CSRNDArray._from_parts(local._data, local._indices, indptr, (rows, cols))

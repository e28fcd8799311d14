"""Conversion kernels between storage types, and copies that keep the destination's type.

The storage-type decisions live in the operator registry (``ops/cast.py``);
these are the kernels its rows call. Conversions from dense are compact
(zero values / all-zero rows are dropped); conversions between sparse types
keep every stored value.

>>> import sparsenet as mx
>>> d = mx.nd.array([[0, 1], [0, 0], [2, 0]])
>>> r = d.tostype('row_sparse')
>>> r.indices.asnumpy()
array([0, 2])
>>> c = r.tostype('csr')
>>> c.indptr.asnumpy()
array([0, 1, 1, 2])
"""
import numpy as np
import torch

from .. import recording
from ..base import StorageTypeError
from .csr import CSRNDArray
from .ndarray import NDArray, to_tensor
from .row_sparse import RowSparseNDArray
from .stype import CSR, DEFAULT, ROW_SPARSE, check_stype

__all__ = ["to_dense_tensor", "dense_to_csr", "dense_to_row_sparse", "csr_to_row_sparse",
           "row_sparse_to_csr", "cast_storage", "copy_into", "copy_to_context", "assign_all"]


def _csr_to_dense(a):
    rows, cols = a._shape
    out = torch.zeros(rows * cols, dtype=a._data.dtype, device=a._data.device)
    if a._data.numel():
        flat = a.row_ids() * cols + a._indices
        out = out.index_put((flat,), a._data)
    return out.reshape(rows, cols)


def _rsp_to_dense(a):
    out = torch.zeros(a._shape, dtype=a._data.dtype, device=a._data.device)
    if a._indices.numel():
        out = out.index_put((a._indices,), a._data)
    return out


def to_dense_tensor(a):
    """Return the values of any array as one dense tensor (differentiable in the values)."""
    if a.stype == DEFAULT:
        return a._t
    if a.stype == CSR:
        return _csr_to_dense(a)
    return _rsp_to_dense(a)


def dense_to_csr(t):
    """Compact CSR of a 2-D dense tensor (zeros dropped)."""
    if t.dim() != 2:
        raise ValueError(f"a CSR array must be 2-D, cannot convert shape {tuple(t.shape)}")
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
        raise ValueError("a row_sparse array has at least one dimension")
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
        raise ValueError(f"a CSR array must be 2-D, cannot convert shape {a._shape}")
    rows, cols = a._shape
    local = dense_to_csr(a._data)
    counts = torch.zeros(rows, dtype=torch.int64, device=a._data.device)
    counts[a._indices] = local._indptr[1:] - local._indptr[:-1]
    indptr = torch.zeros(rows + 1, dtype=torch.int64, device=a._data.device)
    torch.cumsum(counts, 0, out=indptr[1:])
    return CSRNDArray._from_parts(local._data, local._indices, indptr, (rows, cols))


def cast_storage(arr, stype):
    """Return ``arr`` converted to storage type ``stype`` (see :func:`sparsenet.nd.cast_storage`)."""
    from ..ops.cast import cast_storage as op
    return op(arr, stype=check_stype(stype))


def _grad_ctx():
    return torch.enable_grad() if recording.is_recording() else torch.no_grad()


def copy_into(src, dst):
    """Copy ``src`` into ``dst`` keeping ``dst``'s storage type, dtype and device; return ``dst``."""
    if not isinstance(src, NDArray):
        raise TypeError(f"copyto: expected an NDArray source, got {type(src).__name__}")
    if tuple(src.shape) != tuple(dst.shape):
        raise ValueError(f"copyto: shape mismatch, source {src.shape} vs destination "
                         f"{dst.shape}")
    if src is dst:
        return dst
    with _grad_ctx():
        if dst.stype == DEFAULT:
            t = to_dense_tensor(src)
            if not (t.data_ptr() == dst._t.data_ptr() and t.stride() == dst._t.stride()
                    and t.dtype == dst._t.dtype):  # an in-place kernel already wrote it
                dst._t.copy_(t)
            return dst
        casted = src if src.stype == dst.stype else cast_storage(src, dst.stype)
        parts = [p.to(device=dst.device) for p in casted._parts()]
        parts[0] = parts[0].to(dtype=dst._data.dtype)
        if casted is src:  # never share a value tensor with the source
            parts = [q.clone() if q.data_ptr() == p.data_ptr() else q
                     for p, q in zip(src._parts(), parts)]
        dst._replace(type(dst)._from_parts(*parts, dst.shape))
    return dst


def copy_to_context(src, ctx):
    """Return a copy of ``src`` (same storage type) on context ``ctx``."""
    ctx.check_available()
    device = ctx.torch_device
    with _grad_ctx():
        if src.stype == DEFAULT:
            t = src._t.to(device)
            return NDArray(t.clone() if t is src._t else t)
        parts = [p.to(device) for p in src._parts()]
        parts = [q.clone() if q is p else q for p, q in zip(src._parts(), parts)]
        out = type(src)._from_parts(*parts, src.shape)
        graph = src._graph_tensor() if recording.STATE.recording else None
        if graph is not None:  # a sparse array in a recorded graph: the copy stays in it
            out._set_graph(graph.to(device) if graph.device != device else graph * 1)
        return out


def assign_all(dst, value):
    """``dst[:] = value`` for a sparse ``dst``: arrays are cast to its storage type.

    A scalar fills every element (all rows / all entries stored, as MXNet's
    ``rsp[:] = 1``); a NumPy array or NDArray of any storage type is copied.
    """
    if isinstance(value, NDArray):
        copy_into(value, dst)
        return
    if isinstance(value, (np.ndarray, list, tuple)):
        copy_into(NDArray(to_tensor(value, device=dst.device, dtype=dst._data.dtype)), dst)
        return
    if isinstance(value, (int, float, np.number)):
        full = torch.full(dst.shape, value, dtype=dst._data.dtype, device=dst.device)
        if dst.stype == ROW_SPARSE:
            idx = torch.arange(dst.shape[0], device=dst.device)
            dst._replace(RowSparseNDArray._from_parts(full, idx, dst.shape))
        else:
            rows, cols = dst.shape
            indptr = torch.arange(0, rows * cols + 1, cols, device=dst.device)
            indices = torch.arange(cols, device=dst.device).repeat(rows)
            dst._replace(CSRNDArray._from_parts(full.reshape(-1), indices, indptr, dst.shape))
        return
    raise StorageTypeError(f"cannot assign a {type(value).__name__} to a {dst.stype} array; "
                           f"expected a scalar, a NumPy array or an NDArray")

"""Rows of a stored value, as ``KVStore.row_sparse_pull`` returns them.

>>> import sparsenet as mx, torch
>>> value = mx.nd.arange(6).reshape((3, 2))
>>> rows_of(value, torch.tensor([0, 2]), 'w').data.asnumpy()
array([[0., 1.],
       [4., 5.]], dtype=float32)
>>> out = mx.nd.sparse.zeros('row_sparse', (3, 2))
>>> pull_rows_into(value, torch.tensor([1]), out, 'w').asnumpy()
array([[0., 0.],
       [2., 3.],
       [0., 0.]], dtype=float32)
"""
from ..base import StorageTypeError
from ..ndarray.ndarray import NDArray
from ..ndarray.row_sparse import RowSparseNDArray
from ..ndarray.stype import CSR, ROW_SPARSE
from ..ops.indexing import retain, take

__all__ = ["rows_of", "pull_rows_into"]


def rows_of(value, ids, key):
    """The rows ``ids`` (a unique sorted int64 tensor, checked) of ``value``, as row_sparse.

    Every id is a stored row of the result; rows a row_sparse ``value`` does not
    store come as zeros (as MXNet's ``row_sparse_pull``). ``value`` may be
    row_sparse or dense; ``key`` is named in errors.

    Raises
    ------
    StorageTypeError
        A csr ``value``.
    """
    ids_nd = NDArray(ids.to(value.device))
    if value.stype == ROW_SPARSE:
        return retain(value, ids_nd)
    if value.stype == CSR:
        raise StorageTypeError(f"kvstore row_sparse_pull of key {key!r}: the value is csr; "
                               f"row_sparse_pull needs a row_sparse or default value")
    rows = take(value, ids_nd, axis=0)
    return RowSparseNDArray(rows.to_torch(), ids_nd.to_torch(), value.shape)


def _storages(arr):
    """Addresses of the memory blocks holding ``arr``'s tensors."""
    parts = (arr._t,) if arr.stype not in (ROW_SPARSE, CSR) else arr._parts()
    return {p.untyped_storage().data_ptr() for p in parts}


def pull_rows_into(value, ids, out, key):
    """Give the row_sparse ``out`` the rows ``ids`` of ``value`` (see :func:`rows_of`);
    return ``out``.

    The gathered rows are new memory: ``out`` takes them over when they already have its
    dtype and device (nothing is copied twice) and gets its own copy of the ids; otherwise
    (or should the rows share memory with ``value``) they are copied as ``copyto`` does.
    Neither ``value`` nor the memory ``out`` held before is written.
    """
    rows = rows_of(value, ids, key)
    data = rows._data
    if (data.dtype != out._data.dtype or data.device != out._data.device
            or data.untyped_storage().data_ptr() in _storages(value)):
        return rows.copyto(out)
    out._replace(RowSparseNDArray._from_parts(data, rows._indices.clone(), out.shape))
    return out

"""Rows of a stored value, as ``KVStore.row_sparse_pull`` returns them.

>>> import sparsenet as mx, torch
>>> value = mx.nd.arange(6).reshape((3, 2))
>>> rows_of(value, torch.tensor([0, 2]), 'w').data.asnumpy()
array([[0., 1.],
       [4., 5.]], dtype=float32)
"""
from ..base import StorageTypeError
from ..ndarray.ndarray import NDArray
from ..ndarray.row_sparse import RowSparseNDArray
from ..ndarray.stype import CSR, ROW_SPARSE
from ..ops.indexing import retain, take

__all__ = ["rows_of"]


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

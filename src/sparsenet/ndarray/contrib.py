"""``mx.nd.contrib``: the contrib operators sparse users call.

>>> import sparsenet as mx
>>> a = mx.nd.sparse.csr_matrix(([1.0, 0.0, 3.0], [0, 1, 1], [0, 2, 3]), shape=(2, 2))
>>> mx.nd.contrib.getnnz(a).asnumpy()
array([3])
>>> mx.nd.contrib.getnnz(a, axis=1).asnumpy()
array([2, 1])
>>> mx.nd.contrib.allclose(a.tostype('default'), mx.nd.array([[1.0, 0.0], [0.0, 3.0]])).asnumpy()
array([1], dtype=uint8)
"""
import torch

from ..base import InvalidArgumentError, StorageTypeError
from ..ops.allclose import allclose
from ..ops.control_flow import foreach
from ..ops.deformable_conv import DeformableConvolution, ModulatedDeformableConvolution
from ..ops.quadratic import quadratic
from ..ops.ste import round_ste, sign_ste
from ..ops.update_rules import adamw_update, group_adagrad_update
from ..ops.sparse_embedding import SparseEmbedding
from ..ops.sync_batch_norm import SyncBatchNorm
from .csr import CSRNDArray
from .ndarray import NDArray

__all__ = ["getnnz", "allclose", "quadratic", "round_ste", "sign_ste", "adamw_update",
           "group_adagrad_update", "SparseEmbedding", "SyncBatchNorm",
           "DeformableConvolution", "ModulatedDeformableConvolution", "foreach"]


def getnnz(data, axis=None):
    """Number of stored values of a CSR array (explicit zeros included), overall or per axis.

    Parameters
    ----------
    data : CSRNDArray
    axis : {None, 0, 1}
        None: one count; 0: per column; 1: per row.

    Returns
    -------
    NDArray
        int64 counts.
    """
    if not isinstance(data, CSRNDArray):
        raise StorageTypeError(f"getnnz: data must be a CSRNDArray, got {type(data).__name__} "
                               f"(stype {getattr(data, 'stype', '?')})")
    if axis is None:
        return NDArray(torch.tensor([data.nnz], dtype=torch.int64, device=data.device))
    if axis in (1, -1):
        return NDArray(data._indptr[1:] - data._indptr[:-1])
    if axis in (0, -2):
        return NDArray(torch.bincount(data._indices, minlength=data.shape[1]))
    raise InvalidArgumentError(f"getnnz: axis must be None, 0 or 1, got {axis!r}")

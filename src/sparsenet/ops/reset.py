"""``reset_arrays``: set arrays to zero in place (MXNet's multi-array reset).

>>> import sparsenet as mx
>>> a, b = mx.nd.ones((2,)), mx.nd.ones((1, 2)).tostype('row_sparse')
>>> mx.nd.reset_arrays(a, b, num_arrays=2)
[]
>>> a.asnumpy(), b.indices.asnumpy()
(array([0., 0.], dtype=float32), array([], dtype=int64))
"""
import torch

from ..base import InvalidArgumentError, InvalidArgumentTypeError
from ..ndarray import nonzero
from ..ndarray.ndarray import NDArray
from .kernels import empty_csr, empty_rsp

__all__ = ["reset_arrays"]

_EMPTY = {"csr": empty_csr, "row_sparse": empty_rsp}


def reset_arrays(*data, num_arrays=None):
    """Set every array in ``data`` to zero in place; return ``[]`` (as MXNet).

    Dense arrays are filled with zeros; CSR and row_sparse arrays keep their
    storage type and lose every stored value. Any dtype is accepted (MXNet
    1.9.1 takes floating point only).

    Parameters
    ----------
    *data : NDArray
        The arrays (or one list of them).
    num_arrays : int, optional
        The number of arrays, checked when given (MXNet requires it).
    """
    arrays = tuple(data[0]) if len(data) == 1 and isinstance(data[0], (list, tuple)) else data
    if num_arrays is not None and int(num_arrays) != len(arrays):
        raise InvalidArgumentError(f"reset_arrays: num_arrays={num_arrays} but {len(arrays)} "
                                   f"arrays were given")
    for i, a in enumerate(arrays):
        if not isinstance(a, NDArray):
            raise InvalidArgumentTypeError(f"reset_arrays: argument {i} must be an NDArray, got "
                                       f"{type(a).__name__}")
    for a in arrays:
        if a.stype == "default":
            with torch.no_grad():
                nonzero.clear_dense(a)
            nonzero.mark_zero(a)
        else:
            a._replace(_EMPTY[a.stype](a.shape, a._data.dtype, a.device))
    return []

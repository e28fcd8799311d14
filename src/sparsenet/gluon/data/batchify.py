"""Batchify functions: how a DataLoader joins samples into a batch.

Dense samples are stacked along a new first axis (as MXNet). Sparse samples of
one row, such as ``ArrayDataset(csr)[i]`` (shape ``(1, features)``), are joined
row-wise into a ``(batch, features)`` array of the same storage type, so CSR
batches stay CSR (MXNet 1.9.1 densified them to ``(batch, 1, features)``).

>>> import sparsenet as mx
>>> x = mx.nd.sparse.csr_matrix(([1., 2., 3.], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 4))
>>> b = default_batchify_fn([x[2], x[0]])
>>> b.stype, b.asnumpy()
('csr', array([[0., 3., 0., 0.],
       [1., 0., 2., 0.]], dtype=float32))
>>> default_batchify_fn([(mx.nd.ones((2,)), 1), (mx.nd.zeros((2,)), 0)])[1].asnumpy()
array([1, 0])
"""
import numpy as np

from ... import ndarray as nd
from ...base import ShapeError, StorageTypeError
from ...ndarray.base_sparse import BaseSparseNDArray
from ...ndarray.ndarray import NDArray

__all__ = ["default_batchify_fn", "stack_sparse"]


def stack_sparse(samples):
    """Join 1-row sparse samples ``(1, features)`` into ``(len(samples), features)``.

    Raises ValueError for samples of several rows or of different storage types
    or widths (a batch of multi-row sparse samples has no sparse layout; pass
    your own ``batchify_fn``).
    """
    first = samples[0]
    for k, s in enumerate(samples):
        if not isinstance(s, BaseSparseNDArray) or s.stype != first.stype:
            raise StorageTypeError(
                f"batchify: sample {k} is a {getattr(s, 'stype', type(s).__name__)} "
                f"array but sample 0 is {first.stype}; a batch needs one storage type")
        if len(s.shape) != 2 or s.shape[0] != 1 or s.shape[1:] != first.shape[1:]:
            raise ShapeError(f"batchify: sparse samples must be single rows of shape "
                             f"(1, {first.shape[-1]}), sample {k} has shape {s.shape}; use a "
                             f"custom batchify_fn for multi-row sparse samples")
    return nd.concat(*samples, dim=0)


def default_batchify_fn(data):
    """Join a list of samples into a batch (see the module docstring).

    NDArrays are stacked, 1-row sparse arrays joined row-wise, tuples batched
    field by field (a list comes back), and numbers or NumPy values become an
    NDArray of their dtype.
    """
    first = data[0]
    if isinstance(first, BaseSparseNDArray):
        return stack_sparse(data)
    if isinstance(first, NDArray):
        return nd.stack(*data)
    if isinstance(first, tuple):
        return [default_batchify_fn(list(field)) for field in zip(*data)]
    arr = np.asarray(data)
    return nd.array(arr, dtype=arr.dtype)

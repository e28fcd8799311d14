"""Selection methods of the arrays: ``x.slice()``, ``x.take()``, ``x.pick()``, ``x.split()``...

Each forwards to its operator in :mod:`sparsenet.ops.indexing` (``x.take(i)`` is
``mx.nd.take(x, i)``); ``retain`` is a method of row_sparse arrays only.

>>> import sparsenet as mx
>>> x = mx.nd.array([[0.0, 1.0, 2.0]])
>>> x.slice(begin=(0, 1), end=(1, 3)).asnumpy()
array([[1., 2.]], dtype=float32)
>>> x.take(mx.nd.array([0, 0])).shape
(2, 3)
"""
from .. import indexing

__all__ = ["slice", "slice_like", "slice_axis", "take", "pick", "one_hot", "split", "retain"]


def slice(self, *args, **kwargs):  # noqa: A001 - MXNet's method name
    """The region ``begin:end:step`` (``mx.nd.slice(self, begin, end, step)``)."""
    return indexing.slice(self, *args, **kwargs)


def slice_like(self, *args, **kwargs):
    """Slice to the shape of another array (``mx.nd.slice_like(self, other)``)."""
    return indexing.slice_like(self, *args, **kwargs)


def slice_axis(self, axis, begin, end):
    """The part between ``begin`` and ``end`` along ``axis`` (``mx.nd.slice_axis``)."""
    return indexing.slice_axis(self, axis=axis, begin=begin, end=end)


def take(self, indices, axis=0, mode="clip"):
    """Slices along ``axis`` at ``indices`` (``mx.nd.take(self, indices)``)."""
    return indexing.take(self, indices, axis=axis, mode=mode)


def pick(self, index, axis=-1, keepdims=False):
    """One element per slice along ``axis`` at ``index`` (``mx.nd.pick(self, index)``)."""
    return indexing.pick(self, index, axis=axis, keepdims=keepdims)


def one_hot(self, depth, on_value=1.0, off_value=0.0, dtype="float32"):
    """One-hot encoding of the integer values with ``depth`` classes (``mx.nd.one_hot``)."""
    return indexing.one_hot(self, depth=depth, on_value=on_value, off_value=off_value,
                            dtype=dtype)


def split(self, num_outputs, axis=1, squeeze_axis=False):
    """Split into ``num_outputs`` equal parts along ``axis`` (``mx.nd.split``)."""
    return indexing.split(self, num_outputs=num_outputs, axis=axis, squeeze_axis=squeeze_axis)


def retain(self, indices):
    """The rows ``indices`` of a row_sparse array (see :func:`sparsenet.nd.sparse.retain`).

    >>> import sparsenet as mx
    >>> a = mx.nd.sparse.row_sparse_array(([[1.0], [2.0]], [0, 3]), shape=(4, 1))
    >>> a.retain(mx.nd.array([3])).indices.asnumpy()
    array([3])
    """
    return indexing.retain(self, indices)

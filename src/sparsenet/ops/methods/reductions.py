"""Reduction, sorting and search methods of the arrays: ``x.sum()``, ``x.argmax()``, ``x.topk()``.

Each forwards to its operator in :mod:`sparsenet.ops.reduce` (``x.sum(axis=1)``
is ``mx.nd.sum(x, axis=1)``), so a CSR or row_sparse ``sum``/``mean``/``norm``
runs the sparse kernel.

>>> import sparsenet as mx
>>> x = mx.nd.array([[1.0, 0.0], [3.0, 4.0]])
>>> x.tostype('csr').sum(axis=0).asnumpy()
array([4., 4.], dtype=float32)
>>> x.argmax(axis=1).asnumpy()
array([0., 1.], dtype=float32)
"""
from .. import reduce

__all__ = ["sum", "mean", "prod", "nansum", "nanprod", "max", "min", "norm", "argmax", "argmin",
           "argmax_channel", "topk", "sort", "argsort"]


def sum(self, axis=None, keepdims=False, exclude=False):  # noqa: A001 - MXNet's method name
    """Sum over ``axis`` (all axes by default; the result then has shape (1,)).

    >>> import sparsenet as mx
    >>> mx.nd.ones((2, 3)).sum(axis=1).asnumpy()
    array([3., 3.], dtype=float32)
    """
    return reduce.sum(self, axis=axis, keepdims=keepdims, exclude=exclude)


def mean(self, axis=None, keepdims=False, exclude=False):
    """Mean over ``axis`` (``mx.nd.mean(self, ...)``)."""
    return reduce.mean(self, axis=axis, keepdims=keepdims, exclude=exclude)


def prod(self, axis=None, keepdims=False, exclude=False):
    """Product over ``axis`` (``mx.nd.prod(self, ...)``)."""
    return reduce.prod(self, axis=axis, keepdims=keepdims, exclude=exclude)


def nansum(self, *args, **kwargs):
    """Sum treating NaN as zero (``mx.nd.nansum(self, ...)``)."""
    return reduce.nansum(self, *args, **kwargs)


def nanprod(self, *args, **kwargs):
    """Product treating NaN as one (``mx.nd.nanprod(self, ...)``)."""
    return reduce.nanprod(self, *args, **kwargs)


def max(self, axis=None, keepdims=False, exclude=False):  # noqa: A001 - MXNet's method name
    """Maximum over ``axis`` (``mx.nd.max(self, ...)``)."""
    return reduce.max(self, axis=axis, keepdims=keepdims, exclude=exclude)


def min(self, axis=None, keepdims=False, exclude=False):  # noqa: A001 - MXNet's method name
    """Minimum over ``axis`` (``mx.nd.min(self, ...)``)."""
    return reduce.min(self, axis=axis, keepdims=keepdims, exclude=exclude)


def norm(self, ord=2, axis=None, keepdims=False):  # noqa: A002 - MXNet's parameter name
    """L1 or L2 norm over ``axis``, all elements by default (``mx.nd.norm(self, ...)``)."""
    return reduce.norm(self, ord=ord, axis=axis, keepdims=keepdims)


def argmax(self, axis=None, keepdims=False):
    """Index of the maximum along ``axis`` (``mx.nd.argmax(self, ...)``)."""
    return reduce.argmax(self, axis=axis, keepdims=keepdims)


def argmin(self, axis=None, keepdims=False):
    """Index of the minimum along ``axis`` (``mx.nd.argmin(self, ...)``)."""
    return reduce.argmin(self, axis=axis, keepdims=keepdims)


def argmax_channel(self, *args, **kwargs):
    """Index of the maximum along the last axis (``mx.nd.argmax_channel(self)``)."""
    return reduce.argmax_channel(self, *args, **kwargs)


def topk(self, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    """The ``k`` largest (or smallest) entries along ``axis`` (``mx.nd.topk(self, ...)``)."""
    return reduce.topk(self, axis=axis, k=k, ret_typ=ret_typ, is_ascend=is_ascend, dtype=dtype)


def sort(self, axis=-1, is_ascend=True):
    """Sorted copy along ``axis`` (``mx.nd.sort(self, ...)``)."""
    return reduce.sort(self, axis=axis, is_ascend=is_ascend)


def argsort(self, axis=-1, is_ascend=True, dtype="float32"):
    """Indices that sort ``self`` along ``axis`` (``mx.nd.argsort(self, ...)``)."""
    return reduce.argsort(self, axis=axis, is_ascend=is_ascend, dtype=dtype)

"""Elementwise ``_maximum``, ``_minimum`` and ``_hypot`` of two arrays of one shape.

Each maps ``(0, 0)`` to 0, so two CSR arrays give CSR and two row_sparse arrays
give row_sparse, computed on the union of the stored positions (rows), as in
MXNet 1.9.1. ``broadcast_maximum``, ``broadcast_minimum`` and ``broadcast_hypot``
follow the same rows when the shapes are equal, and ``mx.nd.maximum`` /
``minimum`` / ``hypot`` use these operators for equal shapes (MXNet's
``nd.maximum`` densifies two sparse arrays through ``broadcast_maximum``).
A sparse operand with a dense one falls back to dense, as in MXNet.

>>> import sparsenet as mx
>>> a = mx.nd.sparse.row_sparse_array(([[1.0, -2.0]], [0]), shape=(3, 2))
>>> b = mx.nd.sparse.row_sparse_array(([[-1.0, 5.0]], [2]), shape=(3, 2))
>>> c = mx.nd.maximum(a, b)
>>> c.stype, c.indices.asnumpy()
('row_sparse', array([0, 2]))
>>> c.asnumpy()
array([[1., 0.],
       [0., 0.],
       [0., 5.]], dtype=float32)
"""
import torch

from .binary import (broadcast_hypot, broadcast_maximum, broadcast_minimum, select_max,
                     select_min)
from .kernels import csr_union_map, rsp_union_map
from .registry import CSR, ROW_SPARSE, defop, rule
from ..base import InvalidArgumentError

__all__ = ["maximum", "minimum", "hypot"]


def _same_shape(name, lhs, rhs):
    if lhs.shape != rhs.shape:
        raise InvalidArgumentError(
            f"{name}: lhs and rhs must have one shape, got {tuple(lhs.shape)} and "
            f"{tuple(rhs.shape)}; use broadcast_{name.lstrip('_')} to broadcast")


@defop(name="_maximum")
def maximum(lhs, rhs):
    """Elementwise maximum of two arrays of one shape (MXNet's ``_maximum``).

    >>> import sparsenet as mx
    >>> mx.nd._internal._maximum(mx.nd.array([1.0, 5.0]), mx.nd.array([3.0, 2.0])).asnumpy()
    array([3., 5.], dtype=float32)
    """
    _same_shape("_maximum", lhs, rhs)
    return select_max(lhs, rhs)


@defop(name="_minimum")
def minimum(lhs, rhs):
    """Elementwise minimum of two arrays of one shape (MXNet's ``_minimum``).

    >>> import sparsenet as mx
    >>> mx.nd._internal._minimum(mx.nd.array([1.0, 5.0]), mx.nd.array([3.0, 2.0])).asnumpy()
    array([1., 2.], dtype=float32)
    """
    _same_shape("_minimum", lhs, rhs)
    return select_min(lhs, rhs)


@defop(name="_hypot")
def hypot(lhs, rhs):
    """``sqrt(lhs**2 + rhs**2)`` for two arrays of one shape (MXNet's ``_hypot``).

    >>> import sparsenet as mx
    >>> mx.nd._internal._hypot(mx.nd.array([3.0]), mx.nd.array([4.0])).asnumpy()
    array([5.], dtype=float32)
    """
    _same_shape("_hypot", lhs, rhs)
    return torch.hypot(lhs, rhs.to(lhs.dtype))


# ---------------------------------------------------------------------- rule rows
def _union_kernel(fn):
    def kernel(lhs, rhs):
        if lhs.shape != rhs.shape:
            return NotImplemented  # broadcasting: the dense definition runs (fallback)
        union = csr_union_map if lhs.stype == CSR else rsp_union_map
        return union(lhs, rhs, fn)
    kernel.__name__ = f"_{fn.__name__}_union"
    return kernel


for _ops, _fn in (((maximum, broadcast_maximum), torch.maximum),
                  ((minimum, broadcast_minimum), torch.minimum),
                  ((hypot, broadcast_hypot), torch.hypot)):
    for _op in _ops:
        rule(_op, CSR, CSR, out=CSR)(_union_kernel(_fn))
        rule(_op, ROW_SPARSE, ROW_SPARSE, out=ROW_SPARSE)(_union_kernel(_fn))

"""Fluent methods of :class:`~sparsenet.nd.NDArray` that forward to an operator.

``x.tan()`` is ``mx.nd.tan(x)``, ``x.slice(begin, end)`` is ``mx.nd.slice(x,
begin, end)``, and so on for the methods MXNet 1.9.1's ``NDArray`` has; the
storage-type rows of the operator apply (a CSR ``x.tan()`` falls back to
dense). :class:`FluentMethods` is a base class of ``NDArray`` (and so of the
sparse arrays); the older methods live in ``ndarray.py``. The operator modules are
imported inside the methods (they import this package).

>>> import sparsenet as mx
>>> x = mx.nd.array([[0.0, 1.0, 2.0]])
>>> x.degrees().asnumpy()
array([[  0.     ,  57.29578, 114.59156]], dtype=float32)
>>> x.slice(begin=(0, 1), end=(1, 3)).asnumpy()
array([[1., 2.]], dtype=float32)
>>> x.squeeze(inplace=True).shape
(3,)
"""
import builtins

import torch

from ..base import SparsenetError

__all__ = ["FluentMethods"]


def _view(arr, make):
    """A dense array viewing ``make(arr._t)`` (recorded by autograd only inside ``record()``)."""
    from .. import autograd
    if autograd.is_recording():
        return type(arr)(make(arr._t))
    with torch.no_grad():
        return type(arr)(make(arr._t))


def _tuple(v):
    if v is None:
        return ()
    return (v,) if isinstance(v, int) else tuple(v)


class FluentMethods:
    """Operator methods of NDArray: ``x.op(*args, **kwargs)`` is ``mx.nd.op(x, *args, **kwargs)``."""

    __slots__ = ()

    # ------------------------------------------------------------------ elementwise
    def rint(self, *args, **kwargs):
        """Round half to even (``mx.nd.rint(self)``)."""
        from ..ops import unary
        return unary.rint(self, *args, **kwargs)

    def fix(self, *args, **kwargs):
        """Round towards zero (``mx.nd.fix(self)``)."""
        from ..ops import unary
        return unary.fix(self, *args, **kwargs)

    def cbrt(self, *args, **kwargs):
        """Cube root (``mx.nd.cbrt(self)``)."""
        from ..ops import unary
        return unary.cbrt(self, *args, **kwargs)

    def rcbrt(self, *args, **kwargs):
        """``1 / cbrt(self)`` (``mx.nd.rcbrt(self)``)."""
        from ..ops import unary
        return unary.rcbrt(self, *args, **kwargs)

    def log10(self, *args, **kwargs):
        """Base-10 logarithm (``mx.nd.log10(self)``)."""
        from ..ops import unary
        return unary.log10(self, *args, **kwargs)

    def log2(self, *args, **kwargs):
        """Base-2 logarithm (``mx.nd.log2(self)``)."""
        from ..ops import unary
        return unary.log2(self, *args, **kwargs)

    def degrees(self, *args, **kwargs):
        """Radians to degrees (``mx.nd.degrees(self)``)."""
        from ..ops import unary
        return unary.degrees(self, *args, **kwargs)

    def radians(self, *args, **kwargs):
        """Degrees to radians (``mx.nd.radians(self)``)."""
        from ..ops import unary
        return unary.radians(self, *args, **kwargs)

    def tan(self, *args, **kwargs):
        """Tangent (``mx.nd.tan(self)``)."""
        from ..ops import unary
        return unary.tan(self, *args, **kwargs)

    def arcsin(self, *args, **kwargs):
        """Inverse sine (``mx.nd.arcsin(self)``)."""
        from ..ops import unary
        return unary.arcsin(self, *args, **kwargs)

    def arccos(self, *args, **kwargs):
        """Inverse cosine (``mx.nd.arccos(self)``)."""
        from ..ops import unary
        return unary.arccos(self, *args, **kwargs)

    def arctan(self, *args, **kwargs):
        """Inverse tangent (``mx.nd.arctan(self)``)."""
        from ..ops import unary
        return unary.arctan(self, *args, **kwargs)

    def sinh(self, *args, **kwargs):
        """Hyperbolic sine (``mx.nd.sinh(self)``)."""
        from ..ops import unary
        return unary.sinh(self, *args, **kwargs)

    def cosh(self, *args, **kwargs):
        """Hyperbolic cosine (``mx.nd.cosh(self)``)."""
        from ..ops import unary
        return unary.cosh(self, *args, **kwargs)

    def arcsinh(self, *args, **kwargs):
        """Inverse hyperbolic sine (``mx.nd.arcsinh(self)``)."""
        from ..ops import unary
        return unary.arcsinh(self, *args, **kwargs)

    def arccosh(self, *args, **kwargs):
        """Inverse hyperbolic cosine (``mx.nd.arccosh(self)``)."""
        from ..ops import unary
        return unary.arccosh(self, *args, **kwargs)

    def arctanh(self, *args, **kwargs):
        """Inverse hyperbolic tangent (``mx.nd.arctanh(self)``)."""
        from ..ops import unary
        return unary.arctanh(self, *args, **kwargs)

    def softmax(self, *args, **kwargs):
        """Softmax along an axis (``mx.nd.softmax(self)``)."""
        from ..ops import softmax
        return softmax.softmax(self, *args, **kwargs)

    def log_softmax(self, *args, **kwargs):
        """Log of the softmax along an axis (``mx.nd.log_softmax(self)``)."""
        from ..ops import softmax
        return softmax.log_softmax(self, *args, **kwargs)

    def softmin(self, *args, **kwargs):
        """Softmin along an axis (``mx.nd.softmin(self)``)."""
        from ..ops import softmax
        return softmax.softmin(self, *args, **kwargs)

    # ------------------------------------------------------------------ reductions
    def nansum(self, *args, **kwargs):
        """Sum treating NaN as zero (``mx.nd.nansum(self)``)."""
        from ..ops import reduce
        return reduce.nansum(self, *args, **kwargs)

    def nanprod(self, *args, **kwargs):
        """Product treating NaN as one (``mx.nd.nanprod(self)``)."""
        from ..ops import reduce
        return reduce.nanprod(self, *args, **kwargs)

    def argmax_channel(self, *args, **kwargs):
        """Index of the maximum along the last axis (``mx.nd.argmax_channel(self)``)."""
        from ..ops import reduce
        return reduce.argmax_channel(self, *args, **kwargs)

    # ------------------------------------------------------------------ shape
    def broadcast_to(self, shape):
        """Broadcast to ``shape`` (``mx.nd.broadcast_to(self, shape=shape)``).

        >>> import sparsenet as mx
        >>> mx.nd.ones((1, 3)).broadcast_to((2, 3)).shape
        (2, 3)
        """
        from ..ops import shape as shape_ops  # not "shape": the parameter
        return shape_ops.broadcast_to(self, shape=shape)

    def broadcast_like(self, other, lhs_axes=None, rhs_axes=None):
        """Broadcast to the shape of ``other`` (``mx.nd.broadcast_like(self, other)``)."""
        from ..ops import shape as shape_ops
        return shape_ops.broadcast_like(self, other, lhs_axes=lhs_axes, rhs_axes=rhs_axes)

    def broadcast_axes(self, *args, **kwargs):
        """Broadcast size-1 axes (``mx.nd.broadcast_axes(self, axis=..., size=...)``)."""
        from ..ops import shape as shape_ops
        return shape_ops.broadcast_axis(self, *args, **kwargs)

    def flip(self, *args, **kwargs):
        """Reverse the order along an axis (``mx.nd.flip(self, axis=...)``)."""
        from ..ops import shape as shape_ops
        return shape_ops.flip(self, *args, **kwargs)

    def squeeze(self, axis=None, inplace=False):
        """Remove size-1 dimensions; ``inplace=True`` returns a view sharing the storage.

        >>> import sparsenet as mx
        >>> x = mx.nd.zeros((1, 2))
        >>> v = x.squeeze(inplace=True); v[:] = 5
        >>> x.asnumpy()
        array([[5., 5.]], dtype=float32)
        """
        from ..ops import shape as shape_ops
        if inplace and self.stype == "default":
            return _view(self, lambda t: shape_ops.squeezed_view(t, axis))
        return shape_ops.squeeze(self, axis=axis)

    def expand_dims(self, axis, inplace=False):
        """Insert a size-1 dimension at ``axis``; ``inplace=True`` returns a view."""
        if inplace and self.stype == "default":
            return _view(self, lambda t: t.unsqueeze(axis))
        from ..ops import shape as shape_ops
        return shape_ops.expand_dims(self, axis=axis)

    def flatten(self, inplace=False):
        """Collapse all dimensions but the first; ``inplace=True`` returns a view."""
        from ..ops import shape as shape_ops
        if inplace and self.stype == "default":
            return _view(self, shape_ops.flattened_view)
        return shape_ops.flatten(self)

    def depth_to_space(self, *args, **kwargs):
        """Channel blocks into space (``mx.nd.depth_to_space(self, block_size)``)."""
        from ..ops import layout
        return layout.depth_to_space(self, *args, **kwargs)

    def space_to_depth(self, *args, **kwargs):
        """Spatial blocks into channels (``mx.nd.space_to_depth(self, block_size)``)."""
        from ..ops import layout
        return layout.space_to_depth(self, *args, **kwargs)

    def diag(self, k=0, **kwargs):
        """The ``k``-th diagonal, or a diagonal matrix from a vector (``mx.nd.diag``)."""
        from ..ops import layout
        return layout.diag(self, k=k, **kwargs)

    def shape_array(self, *args, **kwargs):
        """The shape as an int64 array (``mx.nd.shape_array(self)``)."""
        from ..ops import layout
        return layout.shape_array(self, *args, **kwargs)

    def size_array(self, *args, **kwargs):
        """The number of elements as an int64 array (``mx.nd.size_array(self)``)."""
        from ..ops import layout
        return layout.size_array(self, *args, **kwargs)

    def split_v2(self, *args, **kwargs):
        """Split into sections or at indices (``mx.nd.split_v2(self, ...)``)."""
        from ..ops import layout
        return layout.split_v2(self, *args, **kwargs)

    def pad(self, *args, **kwargs):
        """Pad a 4-D or 5-D array (``mx.nd.pad(self, mode, pad_width, ...)``)."""
        from ..ops.pooling import Pad
        return Pad(self, *args, **kwargs)

    # ------------------------------------------------------------------ slicing
    def slice(self, *args, **kwargs):
        """The region ``begin:end:step`` (``mx.nd.slice(self, begin, end, step)``)."""
        from ..ops import indexing
        return indexing.slice(self, *args, **kwargs)

    def slice_like(self, *args, **kwargs):
        """Slice to the shape of another array (``mx.nd.slice_like(self, other)``)."""
        from ..ops import indexing
        return indexing.slice_like(self, *args, **kwargs)

    def slice_assign_scalar(self, value, begin, end, step):
        """Set the region ``begin:end:step`` to ``value`` in place; return ``self``.

        >>> import sparsenet as mx
        >>> mx.nd.zeros((2, 3)).slice_assign_scalar(4, (0, 1), (2, 3), ()).asnumpy()
        array([[0., 4., 4.],
               [0., 4., 4.]], dtype=float32)
        """
        begin, end, step = _tuple(begin), _tuple(end), _tuple(step)
        step = step + (None,) * (len(begin) - len(step))
        self[tuple(builtins.slice(b, e, s) for b, e, s in zip(begin, end, step))] = value
        return self

    # ------------------------------------------------------------------ autograd state
    @property
    def _fresh_grad(self):
        """1 when a backward pass wrote this variable's gradient since the last optimizer
        step (or since it was set to False), else 0 (MXNet's gradient state).

        >>> import sparsenet as mx
        >>> x = mx.nd.ones((2,)); x.attach_grad()
        >>> with mx.autograd.record():
        ...     y = x * 2
        >>> y.backward()
        >>> x._fresh_grad
        1
        >>> x._fresh_grad = False; x._fresh_grad
        0
        """
        grad = self._grad
        if grad is None:
            return 0
        from ..grad_store import is_fresh  # the gradient store sits above the containers
        return int(is_fresh(grad))

    @_fresh_grad.setter
    def _fresh_grad(self, state):
        grad = self._grad
        if grad is None:
            raise SparsenetError("_fresh_grad: the array is not an autograd variable and has no "
                                 "gradient state; call attach_grad() first")
        from ..grad_store import mark_fresh, take_fresh
        if state:
            mark_fresh(grad)
        else:
            take_fresh(grad)

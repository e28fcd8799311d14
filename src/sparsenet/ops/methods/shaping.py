"""Shape and layout methods of the arrays: ``x.reshape()``, ``x.T``, ``x.squeeze()``, ``x.pad()``...

Each forwards to its operator (:mod:`sparsenet.ops.shape`, :mod:`sparsenet.ops.layout`,
:mod:`sparsenet.ops.pooling`); ``squeeze``, ``expand_dims`` and ``flatten`` with
``inplace=True`` return a view sharing the storage of a dense array instead.

>>> import sparsenet as mx
>>> x = mx.nd.zeros((1, 2, 3))
>>> x.reshape((0, -1)).shape, x.T.shape, x.squeeze().shape
((1, 6), (3, 2, 1), (2, 3))
"""
import torch

from ... import recording
from ...base import InvalidArgumentTypeError
from .. import layout
from .. import shape as shape_ops  # not "shape": broadcast_to's parameter
from ..pooling import Pad

__all__ = ["T", "reshape", "reshape_like", "transpose", "swapaxes", "tile", "repeat",
           "broadcast_to", "broadcast_like", "broadcast_axes", "flip", "squeeze", "expand_dims",
           "flatten", "depth_to_space", "space_to_depth", "diag", "shape_array", "size_array",
           "split_v2", "pad"]


def _view(arr, make):
    """A dense array viewing ``make(arr._t)`` (recorded by autograd only inside ``record()``)."""
    if recording.is_recording():
        return type(arr)(make(arr._t))
    with torch.no_grad():
        return type(arr)(make(arr._t))


def T(self):  # noqa: N802 - MXNet's property name
    """Transpose (dense) of the array: the axes in reverse order (a property).

    >>> import sparsenet as mx
    >>> mx.nd.zeros((2, 3)).T.shape
    (3, 2)
    """
    return shape_ops.transpose(self)


def reshape(self, *new_shape, **kwargs):
    """Return a view with a new shape; MXNet's special values 0, -1, -2, -3, -4 work.

    A float dimension that is a whole number is taken as that integer (MXNet's own tests
    write ``reshape((n / 2, 2))``, from Python 2's integer division); ``2.5`` is refused.

    >>> import sparsenet as mx
    >>> mx.nd.zeros((2, 3, 4)).reshape((0, -1)).shape
    (2, 12)
    >>> mx.nd.zeros((4, 2)).reshape((8 / 2, 2)).shape
    (4, 2)
    """
    if len(new_shape) == 1 and isinstance(new_shape[0], (list, tuple)):
        new_shape = tuple(new_shape[0])
    if "shape" in kwargs:
        new_shape = tuple(kwargs.pop("shape"))
    new_shape = tuple(_whole(d, new_shape) for d in new_shape)
    return shape_ops.reshape(self, shape=new_shape, reverse=kwargs.pop("reverse", False))


def _whole(d, shape):
    """A float dimension that is a whole number (``n / 2`` of an even ``n``: MXNet code
    written for Python 2's integer division) as that int; any other float refused; other
    values as given, for the operator's own checks."""
    if not isinstance(d, float):
        return d
    if d.is_integer():
        return int(d)
    raise InvalidArgumentTypeError(f"reshape: expected integer dimensions, got {shape!r} "
                                   f"({d!r} is not a whole number)")


def reshape_like(self, other):
    """The array reshaped to ``other.shape``."""
    return self.reshape(other.shape)


def transpose(self, axes=None):
    """Permute the axes, reversing them by default (``mx.nd.transpose(self, axes)``)."""
    return shape_ops.transpose(self, axes=axes)


def swapaxes(self, dim1, dim2):
    """Swap two axes (``mx.nd.swapaxes(self, dim1, dim2)``)."""
    return shape_ops.swapaxes(self, dim1=dim1, dim2=dim2)


def tile(self, reps):
    """Repeat the whole array ``reps`` times along each axis (``mx.nd.tile``)."""
    return shape_ops.tile(self, reps=reps)


def repeat(self, repeats, axis=None):
    """Repeat each element ``repeats`` times (``mx.nd.repeat``)."""
    return shape_ops.repeat(self, repeats=repeats, axis=axis)


def broadcast_to(self, shape):
    """Broadcast to ``shape`` (``mx.nd.broadcast_to(self, shape=shape)``).

    >>> import sparsenet as mx
    >>> mx.nd.ones((1, 3)).broadcast_to((2, 3)).shape
    (2, 3)
    """
    return shape_ops.broadcast_to(self, shape=shape)


def broadcast_like(self, other, lhs_axes=None, rhs_axes=None):
    """Broadcast to the shape of ``other`` (``mx.nd.broadcast_like(self, other)``)."""
    return shape_ops.broadcast_like(self, other, lhs_axes=lhs_axes, rhs_axes=rhs_axes)


def broadcast_axes(self, *args, **kwargs):
    """Broadcast size-1 axes (``mx.nd.broadcast_axes(self, axis=..., size=...)``)."""
    return shape_ops.broadcast_axis(self, *args, **kwargs)


def flip(self, *args, **kwargs):
    """Reverse the order along an axis (``mx.nd.flip(self, axis=...)``)."""
    return shape_ops.flip(self, *args, **kwargs)


def squeeze(self, axis=None, inplace=False):
    """Remove size-1 dimensions; ``inplace=True`` returns a view sharing the storage.

    >>> import sparsenet as mx
    >>> x = mx.nd.zeros((1, 2))
    >>> v = x.squeeze(inplace=True); v[:] = 5
    >>> x.asnumpy()
    array([[5., 5.]], dtype=float32)
    """
    if inplace and self.stype == "default":
        return _view(self, lambda t: shape_ops.squeezed_view(t, axis))
    return shape_ops.squeeze(self, axis=axis)


def expand_dims(self, axis, inplace=False):
    """Insert a size-1 dimension at ``axis``; ``inplace=True`` returns a view."""
    if inplace and self.stype == "default":
        return _view(self, lambda t: t.unsqueeze(axis))
    return shape_ops.expand_dims(self, axis=axis)


def flatten(self, inplace=False):
    """Collapse all dimensions but the first; ``inplace=True`` returns a view."""
    if inplace and self.stype == "default":
        return _view(self, shape_ops.flattened_view)
    return shape_ops.flatten(self)


def depth_to_space(self, *args, **kwargs):
    """Channel blocks into space (``mx.nd.depth_to_space(self, block_size)``)."""
    return layout.depth_to_space(self, *args, **kwargs)


def space_to_depth(self, *args, **kwargs):
    """Spatial blocks into channels (``mx.nd.space_to_depth(self, block_size)``)."""
    return layout.space_to_depth(self, *args, **kwargs)


def diag(self, k=0, **kwargs):
    """The ``k``-th diagonal, or a diagonal matrix from a vector (``mx.nd.diag``)."""
    return layout.diag(self, k=k, **kwargs)


def shape_array(self, *args, **kwargs):
    """The shape as an int64 array (``mx.nd.shape_array(self)``)."""
    return layout.shape_array(self, *args, **kwargs)


def size_array(self, *args, **kwargs):
    """The number of elements as an int64 array (``mx.nd.size_array(self)``)."""
    return layout.size_array(self, *args, **kwargs)


def split_v2(self, *args, **kwargs):
    """Split into sections or at indices (``mx.nd.split_v2(self, ...)``)."""
    return layout.split_v2(self, *args, **kwargs)


def pad(self, *args, **kwargs):
    """Pad a 4-D or 5-D array (``mx.nd.pad(self, mode, pad_width, ...)``)."""
    return Pad(self, *args, **kwargs)

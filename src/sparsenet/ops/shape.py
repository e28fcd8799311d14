"""Shape operators on dense arrays: reshape, transpose, expand_dims, tile, ...

These have no sparse kernels (a sparse input falls back to dense), as in MXNet.

>>> import sparsenet as mx
>>> mx.nd.transpose(mx.nd.array([[1, 2, 3]])).shape
(3, 1)
"""
import torch

from ..base import InvalidArgumentError
from .registry import defop

__all__ = ["reshape", "Reshape", "transpose", "expand_dims", "squeeze", "swapaxes",
           "SwapAxis", "broadcast_to", "broadcast_like", "broadcast_axis", "broadcast_axes",
           "tile", "repeat", "flatten", "Flatten", "flip", "reverse", "infer_reshape"]


def infer_reshape(src, target, reverse=False):
    """Resolve MXNet's reshape codes (0, -1, -2, -3, -4) against the source shape.

    >>> infer_reshape((2, 3, 4), (0, -1))
    (2, 12)
    >>> infer_reshape((2, 3, 4), (-3, 4))
    (6, 4)
    >>> infer_reshape((2, 3, 4), (-4, 1, 2, -2))
    (1, 2, 3, 4)
    """
    src, target = list(src), list(target)
    if reverse:
        src, target = src[::-1], target[::-1]
        target = _swap_split_order(target)
    out, i, j, infer = [], 0, 0, -1
    while j < len(target):
        t = target[j]
        if t == 0:
            out.append(src[i]); i += 1
        elif t == -1:
            infer = len(out); out.append(-1); i += 1
        elif t == -2:
            out.extend(src[i:]); i = len(src)
        elif t == -3:
            out.append(src[i] * src[i + 1]); i += 2
        elif t == -4:
            a, b = target[j + 1], target[j + 2]
            if a == -1:
                a = src[i] // b
            if b == -1:
                b = src[i] // a
            if a * b != src[i]:
                raise InvalidArgumentError(f"reshape: -4 split {a} x {b} does not match "
                                           f"dimension {src[i]}")
            out.extend([a, b]); i += 1; j += 2
        elif t > 0:
            out.append(t); i += 1
        else:
            raise InvalidArgumentError(f"reshape: invalid dimension code {t}")
        j += 1
    total = 1
    for s in src:
        total *= s
    if infer >= 0:
        known = 1
        for k, s in enumerate(out):
            if k != infer:
                known *= s
        if known == 0 or total % known:
            raise InvalidArgumentError(f"reshape: cannot infer -1 to reshape {tuple(src)} into "
                                       f"{tuple(target)}")
        out[infer] = total // known
    res = tuple(out[::-1]) if reverse else tuple(out)
    n = 1
    for s in res:
        n *= s
    if n != total:
        raise InvalidArgumentError(f"reshape: cannot reshape array of shape {tuple(src)} "
                                   f"({total} elements) into {res}")
    return res


def _swap_split_order(target):
    out, j = [], 0
    while j < len(target):
        if j + 2 < len(target) and target[j + 2] == -4:
            out.extend([target[j + 2], target[j + 1], target[j]]); j += 3
        else:
            out.append(target[j]); j += 1
    return out


@defop(name="Reshape")
def reshape(data, *, shape=(), reverse=False):
    """Give the array a new shape; MXNet codes 0 (copy), -1 (infer), -2, -3, -4 work.

    >>> import sparsenet as mx
    >>> mx.nd.reshape(mx.nd.zeros((2, 3)), shape=(-1,)).shape
    (6,)
    """
    return data.reshape(infer_reshape(tuple(data.shape), tuple(shape), reverse))


Reshape = reshape


@defop
def transpose(data, *, axes=None):
    """Permute the axes (reverse them by default). Returns a new array.

    >>> import sparsenet as mx
    >>> mx.nd.transpose(mx.nd.zeros((2, 3, 4)), axes=(1, 0, 2)).shape
    (3, 2, 4)
    """
    axes = tuple(axes) if axes else tuple(range(data.dim() - 1, -1, -1))
    return data.permute(axes).contiguous()


@defop
def expand_dims(data, *, axis=0):
    """Insert a dimension of size 1 at ``axis`` (a new array, as MXNet's operator).

    >>> import sparsenet as mx
    >>> mx.nd.expand_dims(mx.nd.zeros((2, 3)), axis=1).shape
    (2, 1, 3)
    """
    return data.unsqueeze(axis).clone()


@defop
def squeeze(data, *, axis=None):
    """Remove dimensions of size 1 (all, or those in ``axis``); a new array, as MXNet's operator.

    >>> import sparsenet as mx
    >>> mx.nd.squeeze(mx.nd.zeros((2, 1, 3))).shape
    (2, 3)
    """
    return squeezed_view(data, axis).clone()


def squeezed_view(data, axis=None):
    """``data`` (a tensor) without its size-1 dimensions (all, or ``axis``), as a view."""
    if axis is None:
        return data.squeeze()
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if data.shape[a] != 1:
            raise InvalidArgumentError(f"squeeze: axis {a} has size {data.shape[a]}, not 1 "
                                       f"(shape {tuple(data.shape)})")
    return data.squeeze(axes)


@defop(name="SwapAxis")
def swapaxes(data, *, dim1=0, dim2=0):
    """Swap two axes.

    >>> import sparsenet as mx
    >>> mx.nd.swapaxes(mx.nd.zeros((2, 3)), dim1=0, dim2=1).shape
    (3, 2)
    """
    return data.transpose(dim1, dim2).contiguous()


SwapAxis = swapaxes


@defop
def broadcast_to(data, *, shape=()):
    """Broadcast to ``shape`` (0 keeps the input's dimension).

    ``shape`` has the input's number of dimensions; each input dimension is 1 or
    equal to the target's.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_to(mx.nd.ones((1, 3)), shape=(2, 3)).shape
    (2, 3)
    >>> mx.nd.broadcast_to(mx.nd.ones((1, 3)), shape=(2, 0)).shape
    (2, 3)
    """
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if len(shape) != data.dim():
        raise InvalidArgumentError(f"broadcast_to: shape {shape} must have the input's "
                                   f"{data.dim()} dimensions (input shape {tuple(data.shape)})")
    shape = tuple(s if s != 0 else data.shape[i] for i, s in enumerate(shape))
    for i, (n, m) in enumerate(zip(data.shape, shape)):
        if n != m and n != 1:
            raise InvalidArgumentError(
                f"broadcast_to: dimension {i} has size {n}, which cannot be broadcast to {m} "
                f"(input shape {tuple(data.shape)}, shape {shape})")
    return data.expand(shape).contiguous()


def _axes(axes, ndim, name):
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    for a in axes:
        if not -ndim <= a < ndim:
            raise InvalidArgumentError(f"broadcast_like: {name} has axis {a}, out of range for "
                                       f"{ndim} dimensions")
    return tuple(a % ndim for a in axes)


@defop
def broadcast_like(lhs, rhs, *, lhs_axes=None, rhs_axes=None):
    """Broadcast ``lhs`` to the shape of ``rhs`` (or only ``lhs_axes`` to ``rhs_axes``).

    Without axes, ``lhs`` and ``rhs`` need the same number of dimensions and
    every dimension of ``lhs`` must be 1 or equal to ``rhs``'s. With axes,
    dimension ``lhs_axes[i]`` of ``lhs`` becomes dimension ``rhs_axes[i]`` of
    ``rhs``. Only the shape of ``rhs`` is used (it gets no gradient).

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_like(mx.nd.ones((1, 3)), mx.nd.zeros((2, 3))).shape
    (2, 3)
    >>> mx.nd.broadcast_like(mx.nd.ones((1, 1)), mx.nd.zeros((5, 2)),
    ...                      lhs_axes=(0, 1), rhs_axes=(1, 0)).shape
    (2, 5)
    """
    if (lhs_axes is None) != (rhs_axes is None):
        raise InvalidArgumentError(f"broadcast_like: give both lhs_axes and rhs_axes or neither, "
                                   f"got lhs_axes={lhs_axes!r}, rhs_axes={rhs_axes!r}")
    if lhs_axes is None:
        if lhs.dim() != rhs.dim():
            raise InvalidArgumentError(
                f"broadcast_like: lhs of shape {tuple(lhs.shape)} cannot be broadcast to "
                f"rhs's shape {tuple(rhs.shape)} (different numbers of dimensions)")
        target = list(rhs.shape)
    else:
        la, ra = _axes(lhs_axes, lhs.dim(), "lhs_axes"), _axes(rhs_axes, rhs.dim(), "rhs_axes")
        if len(la) != len(ra):
            raise InvalidArgumentError(f"broadcast_like: lhs_axes {tuple(la)} and rhs_axes "
                                       f"{tuple(ra)} must have one length")
        target = list(lhs.shape)
        for a, b in zip(la, ra):
            target[a] = rhs.shape[b]
    for i, (n, m) in enumerate(zip(lhs.shape, target)):
        if n != m and n != 1:
            raise InvalidArgumentError(
                f"broadcast_like: dimension {i} of lhs has size {n}, which cannot be broadcast "
                f"to {m} (lhs shape {tuple(lhs.shape)}, target {tuple(target)})")
    return lhs.expand(target).contiguous()


@defop
def broadcast_axis(data, *, axis=(), size=()):
    """Broadcast the size-1 dimensions ``axis`` to ``size`` (alias ``broadcast_axes``).

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_axis(mx.nd.ones((1, 3)), axis=0, size=4).shape
    (4, 3)
    """
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    sizes = (size,) if isinstance(size, int) else tuple(size)
    shape = list(data.shape)
    for a, s in zip(axes, sizes):
        shape[a] = s
    return data.expand(shape).contiguous()


broadcast_axes = broadcast_axis


@defop
def tile(data, *, reps=()):
    """Repeat the whole array ``reps`` times along each axis.

    >>> import sparsenet as mx
    >>> mx.nd.tile(mx.nd.array([1.0, 2.0]), reps=(2,)).asnumpy()
    array([1., 2., 1., 2.], dtype=float32)
    """
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    reps = (1,) * (data.dim() - len(reps)) + reps
    return data.repeat(*reps)


@defop
def repeat(data, *, repeats=1, axis=None):
    """Repeat each element ``repeats`` times (flattened when ``axis`` is None).

    >>> import sparsenet as mx
    >>> mx.nd.repeat(mx.nd.array([1.0, 2.0]), repeats=2).asnumpy()
    array([1., 1., 2., 2.], dtype=float32)
    """
    if axis is None:
        return data.reshape(-1).repeat_interleave(repeats)
    return data.repeat_interleave(repeats, dim=axis)


@defop(name="Flatten")
def flatten(data):
    """Collapse all dimensions but the first: ``(d0, d1 * d2 * ...)`` (a new array).

    >>> import sparsenet as mx
    >>> mx.nd.flatten(mx.nd.zeros((2, 3, 4))).shape
    (2, 12)
    """
    return flattened_view(data).clone()


def flattened_view(data):
    """``data`` (a tensor) as ``(d0, d1 * d2 * ...)``, a view when the layout allows."""
    return data.reshape(data.shape[0], -1) if data.dim() else data.reshape(1, 1)


Flatten = flatten


@defop
def flip(data, *, axis=0):
    """Reverse the order of elements along ``axis`` (alias ``reverse``).

    >>> import sparsenet as mx
    >>> mx.nd.flip(mx.nd.array([1.0, 2.0, 3.0]), axis=0).asnumpy()
    array([3., 2., 1.], dtype=float32)
    """
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return torch.flip(data, axes)


reverse = flip

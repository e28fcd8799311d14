"""Shape operators on dense arrays: reshape, transpose, expand_dims, tile, ...

These have no sparse kernels (a sparse input falls back to dense), as in MXNet.

>>> import sparsenet as mx
>>> mx.nd.transpose(mx.nd.array([[1, 2, 3]])).shape
(3, 1)
"""
import torch

from .registry import defop

__all__ = ["reshape", "Reshape", "transpose", "expand_dims", "squeeze", "swapaxes",
           "SwapAxis", "broadcast_to", "broadcast_axis", "broadcast_axes", "tile", "repeat",
           "flatten", "Flatten", "flip", "reverse", "infer_reshape"]


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
                raise ValueError(f"reshape: -4 split {a} x {b} does not match dimension {src[i]}")
            out.extend([a, b]); i += 1; j += 2
        elif t > 0:
            out.append(t); i += 1
        else:
            raise ValueError(f"reshape: invalid dimension code {t}")
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
            raise ValueError(f"reshape: cannot infer -1 to reshape {tuple(src)} into "
                             f"{tuple(target)}")
        out[infer] = total // known
    res = tuple(out[::-1]) if reverse else tuple(out)
    n = 1
    for s in res:
        n *= s
    if n != total:
        raise ValueError(f"reshape: cannot reshape array of shape {tuple(src)} "
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
    """Insert a dimension of size 1 at ``axis``.

    >>> import sparsenet as mx
    >>> mx.nd.expand_dims(mx.nd.zeros((2, 3)), axis=1).shape
    (2, 1, 3)
    """
    return data.unsqueeze(axis)


@defop
def squeeze(data, *, axis=None):
    """Remove dimensions of size 1 (all, or those in ``axis``).

    >>> import sparsenet as mx
    >>> mx.nd.squeeze(mx.nd.zeros((2, 1, 3))).shape
    (2, 3)
    """
    if axis is None:
        return data.squeeze()
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if data.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {data.shape[a]}, not 1")
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

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_to(mx.nd.ones((1, 3)), shape=(2, 3)).shape
    (2, 3)
    """
    shape = tuple(s if s != 0 else data.shape[i] for i, s in enumerate(shape))
    return data.expand(shape).contiguous()


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
    """Collapse all dimensions but the first: ``(d0, d1 * d2 * ...)``.

    >>> import sparsenet as mx
    >>> mx.nd.flatten(mx.nd.zeros((2, 3, 4))).shape
    (2, 12)
    """
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

"""Array layout operators: ``diag``, ``depth_to_space``, ``space_to_depth``, ``_split_v2``,
``shape_array``, ``size_array``.

Dense kernels (a sparse input falls back to dense, as in MXNet), except
``shape_array`` and ``size_array``, which read only the shape of a sparse input.

>>> import sparsenet as mx
>>> mx.nd.diag(mx.nd.array([1.0, 2.0])).asnumpy()
array([[1., 0.],
       [0., 2.]], dtype=float32)
>>> mx.nd.shape_array(mx.nd.zeros((2, 3))).asnumpy()
array([2, 3])
"""
import torch

from ..base import InvalidArgumentError
from ..ndarray.ndarray import NDArray
from .registry import CSR, DEFAULT, ROW_SPARSE, defop, numbered_outputs, rule

__all__ = ["diag", "depth_to_space", "space_to_depth", "split_v2", "shape_array",
           "size_array"]


@defop
def diag(data, *, k=0, axis1=0, axis2=1):
    """The ``k``-th diagonal of ``data``, or a diagonal matrix from a vector.

    A 1-D input gives the square matrix with ``data`` on diagonal ``k``. An
    input with two or more dimensions gives the diagonal of the planes spanned by
    ``axis1`` and ``axis2``, as a new last axis (NumPy's ``diagonal``).

    >>> import sparsenet as mx
    >>> mx.nd.diag(mx.nd.arange(6).reshape((2, 3)), k=1).asnumpy()
    array([1., 5.], dtype=float32)
    """
    if data.dim() == 1:
        return torch.diag(data, k)
    if data.dim() == 0:
        raise InvalidArgumentError("diag: the input needs at least one dimension")
    a1, a2 = axis1 % data.dim(), axis2 % data.dim()
    if a1 == a2:
        raise InvalidArgumentError(f"diag: axis1 and axis2 must differ, got {axis1} and {axis2}")
    n1, n2 = data.shape[a1], data.shape[a2]
    if (k >= 0 and k >= n2) or (k < 0 and -k >= n1):
        raise InvalidArgumentError(f"diag: diagonal k={k} does not exist in a {n1} x {n2} "
                                   f"plane (axes {axis1}, {axis2})")
    return torch.diagonal(data, offset=k, dim1=a1, dim2=a2).contiguous()


def _block_check(name, data, block_size):
    if data.dim() != 4:
        raise InvalidArgumentError(f"{name}: the input must be 4-D (N, C, H, W), got shape "
                                   f"{tuple(data.shape)}")
    if block_size < 1:
        raise InvalidArgumentError(f"{name}: block_size must be positive, got {block_size}")


@defop
def depth_to_space(data, *, block_size=1):
    """Move channel blocks into space: ``(N, C, H, W) -> (N, C/b², H·b, W·b)`` (DCR order).

    >>> import sparsenet as mx
    >>> mx.nd.depth_to_space(mx.nd.arange(4).reshape((1, 4, 1, 1)), block_size=2).asnumpy()
    array([[[[0., 1.],
             [2., 3.]]]], dtype=float32)
    """
    _block_check("depth_to_space", data, block_size)
    n, c, h, w = data.shape
    b = block_size
    if c % (b * b):
        raise InvalidArgumentError(f"depth_to_space: the channel axis ({c}) must be a multiple "
                                   f"of block_size**2 = {b * b}")
    x = data.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    return x.reshape(n, c // (b * b), h * b, w * b)


@defop
def space_to_depth(data, *, block_size=1):
    """Move spatial blocks into channels: ``(N, C, H, W) -> (N, C·b², H/b, W/b)``.

    The inverse of :func:`depth_to_space`.

    >>> import sparsenet as mx
    >>> mx.nd.space_to_depth(mx.nd.arange(4).reshape((1, 1, 2, 2)), block_size=2).shape
    (1, 4, 1, 1)
    """
    _block_check("space_to_depth", data, block_size)
    n, c, h, w = data.shape
    b = block_size
    if h % b or w % b:
        raise InvalidArgumentError(f"space_to_depth: height {h} and width {w} must be "
                                   f"multiples of block_size {b}")
    x = data.reshape(n, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4)
    return x.reshape(n, c * b * b, h // b, w // b)


def _split_points(indices_or_sections, n):
    if isinstance(indices_or_sections, int):
        if indices_or_sections < 1 or n % indices_or_sections:
            raise InvalidArgumentError(f"split_v2: an axis of size {n} does not split into "
                                       f"{indices_or_sections} equal parts")
        step = n // indices_or_sections
        return list(range(0, n, step)) if n else [0] * indices_or_sections
    return [0] + [int(i) for i in indices_or_sections]  # (0, 3): [:0], [0:3], [3:]


@defop(name="_split_v2", num_outputs=lambda p: _count(p["indices_or_sections"]),
       output_names=numbered_outputs)
def split_v2(data, *, indices_or_sections=1, axis=0, squeeze_axis=False):
    """Split along ``axis`` into equal sections (an int) or at the given indices (a tuple).

    As NumPy's ``split``: indices ``(3,)`` give ``data[:3]`` and ``data[3:]``.
    ``squeeze_axis`` drops the split axis (each part must then have size 1 there).
    One part is returned as an array, several as a list.

    >>> import sparsenet as mx
    >>> [p.asnumpy().tolist() for p in mx.nd.split_v2(mx.nd.arange(5), (2,))]
    [[0.0, 1.0], [2.0, 3.0, 4.0]]
    """
    ax = axis % data.dim()
    n = data.shape[ax]
    starts = _split_points(indices_or_sections, n)
    ends = starts[1:] + [n]
    parts = []
    for s, e in zip(starts, ends):
        s, e = min(s, n), min(max(e, s), n)
        part = data.narrow(ax, s, e - s)
        if squeeze_axis:
            if part.shape[ax] != 1:
                raise InvalidArgumentError(f"split_v2: squeeze_axis needs parts of size 1 along "
                                           f"axis {axis}, got {part.shape[ax]}")
            part = part.squeeze(ax)
        parts.append(part.clone())
    return parts if len(parts) > 1 else parts[0]


def _count(indices_or_sections):
    if isinstance(indices_or_sections, int):
        return indices_or_sections
    return len(tuple(indices_or_sections)) + 1


@defop(differentiable=False)
def shape_array(data):
    """The shape of ``data`` as a 1-D int64 array.

    >>> import sparsenet as mx
    >>> mx.nd.shape_array(mx.nd.zeros((4, 5))).asnumpy()
    array([4, 5])
    """
    return torch.tensor(tuple(data.shape), dtype=torch.int64, device=data.device)


@defop(differentiable=False)
def size_array(data):
    """The number of elements of ``data`` as a 1-element int64 array.

    >>> import sparsenet as mx
    >>> mx.nd.size_array(mx.nd.zeros((4, 5))).asnumpy()
    array([20])
    """
    return torch.tensor([data.numel()], dtype=torch.int64, device=data.device)


shape_array.output_dtype = size_array.output_dtype = "int64"  # for symbolic type inference


@rule(shape_array, CSR, out=DEFAULT)
@rule(shape_array, ROW_SPARSE, out=DEFAULT)
def _shape_array_sparse(data):
    return NDArray(torch.tensor(data.shape, dtype=torch.int64, device=data.device))


@rule(size_array, CSR, out=DEFAULT)
@rule(size_array, ROW_SPARSE, out=DEFAULT)
def _size_array_sparse(data):
    n = 1
    for s in data.shape:
        n *= s
    return NDArray(torch.tensor([n], dtype=torch.int64, device=data.device))

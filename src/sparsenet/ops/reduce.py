"""Reductions: sum, mean, prod, max, min, norm, ``_square_sum``, arg/sort.

A reduction over every axis returns shape ``(1,)`` (MXNet has no 0-d arrays).
CSR and row_sparse inputs of ``sum``, ``mean``, ``norm`` and ``_square_sum``
reduce their stored values directly; the result is dense, except
``_square_sum(rsp, axis=1, keepdims=True)`` which stays row_sparse.

>>> import sparsenet as mx
>>> a = mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [0, 2, 1], [0, 2, 3]), shape=(2, 3))
>>> mx.nd.sum(a, axis=1).asnumpy()
array([3., 3.], dtype=float32)
>>> mx.nd.norm(a).asnumpy()
array([3.7416575], dtype=float32)
"""
import builtins

import torch

from ..base import IndexOutOfRangeError, InvalidArgumentError, torch_dtype
from ..ndarray.ndarray import wrap
from ..ndarray.row_sparse import RowSparseNDArray
from .registry import CSR, DEFAULT, ROW_SPARSE, defop, numbered_outputs, rule

__all__ = ["sum", "sum_axis", "mean", "prod", "nansum", "nanprod", "max", "max_axis", "min",
           "min_axis", "norm", "square_sum", "argmax", "argmin", "argmax_channel", "topk",
           "sort", "argsort", "normalize_axes"]


def normalize_axes(axis, ndim, exclude=False):
    """Tuple of non-negative axes for ``axis`` (None or (): all), optionally the complement
    (of a given axis; with none given, ``exclude`` still reduces every axis, as MXNet does).

    >>> normalize_axes(None, 2, exclude=True), normalize_axes((0,), 2, exclude=True)
    ((0, 1), (1,))
    """
    if axis.__class__ is int and not exclude and -ndim <= axis < ndim:  # the common call
        return (axis % ndim,)
    if axis is None or axis == ():
        return tuple(range(ndim))  # every axis, with or without exclude (as MXNet 1.9.1)
    else:
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        n = builtins.max(ndim, 1)
        for a in axes:
            if not -n <= a < n:
                raise IndexOutOfRangeError(f"axis {a} is out of range for {ndim} dimensions "
                                           f"(expected {-n} <= axis < {n})")
        axes = tuple(sorted(a % n for a in axes))
    if exclude:
        axes = tuple(a for a in range(ndim) if a not in axes)
    return axes


def _reduce(fn, data, axis, keepdims, exclude):
    axes = normalize_axes(axis, data.dim(), exclude)
    if not axes:
        return data.clone()
    return fn(data, dim=axes, keepdim=keepdims)


@defop(name="sum")
def sum(data, *, axis=None, keepdims=False, exclude=False):  # noqa: A001
    """Sum over ``axis`` (int, tuple, or None for all; ``exclude`` inverts it).

    >>> import sparsenet as mx
    >>> mx.nd.sum(mx.nd.ones((2, 3)), axis=0).asnumpy()
    array([2., 2., 2.], dtype=float32)
    >>> mx.nd.sum(mx.nd.ones((2, 3))).shape
    (1,)
    """
    if axis is None and not keepdims and not exclude and data.dim():
        return torch.sum(data)  # every axis: torch's full reduction (the same sums)
    return _reduce(torch.sum, data, axis, keepdims, exclude)


sum_axis = sum


@defop
def mean(data, *, axis=None, keepdims=False, exclude=False):
    """Mean over ``axis``.

    >>> import sparsenet as mx
    >>> mx.nd.mean(mx.nd.array([[1.0, 3.0]]), axis=1).asnumpy()
    array([2.], dtype=float32)
    """
    return _reduce(torch.mean, data if data.dtype.is_floating_point else data.float(), axis,
                   keepdims, exclude)


@defop
def prod(data, *, axis=None, keepdims=False, exclude=False):
    """Product over ``axis``.

    >>> import sparsenet as mx
    >>> mx.nd.prod(mx.nd.array([2.0, 3.0])).asnumpy()
    array([6.], dtype=float32)
    """
    axes = normalize_axes(axis, data.dim(), exclude)
    out = data
    for a in sorted(axes, reverse=True):
        out = torch.prod(out, dim=a, keepdim=keepdims)
    return out


@defop
def nansum(data, *, axis=None, keepdims=False, exclude=False):
    """Sum over ``axis`` treating NaN as zero.

    >>> import sparsenet as mx
    >>> mx.nd.nansum(mx.nd.array([1.0, float('nan')])).asnumpy()
    array([1.], dtype=float32)
    """
    return _reduce(torch.nansum, data, axis, keepdims, exclude)


@defop
def nanprod(data, *, axis=None, keepdims=False, exclude=False):
    """Product over ``axis`` treating NaN as one.

    >>> import sparsenet as mx
    >>> mx.nd.nanprod(mx.nd.array([2.0, float('nan')])).asnumpy()
    array([2.], dtype=float32)
    """
    return prod.fn(torch.nan_to_num(data, nan=1.0), axis=axis, keepdims=keepdims,
                   exclude=exclude)


@defop(name="max")
def max(data, *, axis=None, keepdims=False, exclude=False):  # noqa: A001
    """Maximum over ``axis``.

    >>> import sparsenet as mx
    >>> mx.nd.max(mx.nd.array([[1.0, 5.0], [7.0, 2.0]]), axis=1).asnumpy()
    array([5., 7.], dtype=float32)
    """
    return _reduce(torch.amax, data, axis, keepdims, exclude)


max_axis = max


@defop(name="min")
def min(data, *, axis=None, keepdims=False, exclude=False):  # noqa: A001
    """Minimum over ``axis``.

    >>> import sparsenet as mx
    >>> mx.nd.min(mx.nd.array([[1.0, 5.0], [7.0, 2.0]]), axis=1).asnumpy()
    array([1., 2.], dtype=float32)
    """
    return _reduce(torch.amin, data, axis, keepdims, exclude)


min_axis = min


@defop
def norm(data, *, ord=2, axis=None, keepdims=False, out_dtype=None):  # noqa: A002
    """L1 or L2 norm over ``axis`` (all elements by default).

    >>> import sparsenet as mx
    >>> mx.nd.norm(mx.nd.array([3.0, 4.0])).asnumpy()
    array([5.], dtype=float32)
    >>> mx.nd.norm(mx.nd.array([[3.0, -4.0]]), ord=1, axis=1).asnumpy()
    array([7.], dtype=float32)
    """
    if ord not in (1, 2):
        raise InvalidArgumentError(f"norm: ord must be 1 or 2, got {ord}")
    axes = normalize_axes(axis, data.dim())
    x = data if data.dtype.is_floating_point else data.float()
    if ord == 1:
        out = torch.sum(torch.abs(x), dim=axes, keepdim=keepdims)
    else:
        out = torch.sqrt(torch.sum(x * x, dim=axes, keepdim=keepdims))
    return out.to(torch_dtype(out_dtype)) if out_dtype else out


@defop(name="_square_sum")
def square_sum(data, *, axis=None, keepdims=False, exclude=False):
    """Sum of squares over ``axis`` (MXNet's internal ``_square_sum``).

    ``_square_sum(row_sparse, axis=1, keepdims=True)`` stays row_sparse.

    >>> import sparsenet as mx
    >>> mx.nd.square_sum(mx.nd.array([[1.0, 2.0]]), axis=1).asnumpy()
    array([5.], dtype=float32)
    """
    return _reduce(torch.sum, data * data, axis, keepdims, exclude)


@defop
def argmax(data, *, axis=None, keepdims=False):
    """Index of the maximum along ``axis`` (as the input's float dtype, like MXNet).

    >>> import sparsenet as mx
    >>> mx.nd.argmax(mx.nd.array([[1.0, 5.0, 2.0]]), axis=1).asnumpy()
    array([1.], dtype=float32)
    """
    out = torch.argmax(data, dim=axis, keepdim=keepdims)
    return out.to(data.dtype if data.dtype.is_floating_point else torch.float32)


@defop
def argmin(data, *, axis=None, keepdims=False):
    """Index of the minimum along ``axis``.

    >>> import sparsenet as mx
    >>> mx.nd.argmin(mx.nd.array([[1.0, 5.0, 0.0]]), axis=1).asnumpy()
    array([2.], dtype=float32)
    """
    out = torch.argmin(data, dim=axis, keepdim=keepdims)
    return out.to(data.dtype if data.dtype.is_floating_point else torch.float32)


@defop
def argmax_channel(data):
    """Index of the maximum along the last axis.

    >>> import sparsenet as mx
    >>> mx.nd.argmax_channel(mx.nd.array([[1.0, 5.0, 2.0]])).asnumpy()
    array([1.], dtype=float32)
    """
    return torch.argmax(data, dim=-1).to(torch.float32)


def _topk_names(params, n):
    # MXNet's topk has two outputs (one visible) for ret_typ='value': named output0
    return numbered_outputs(params, n) if params["ret_typ"] in ("value", "both") else ["output"]


@defop(num_outputs=lambda p: 2 if p["ret_typ"] == "both" else 1, output_names=_topk_names)
def topk(data, *, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    """The ``k`` largest (or smallest) entries along ``axis``.

    ``ret_typ`` is 'indices', 'value', 'both' or 'mask'.

    >>> import sparsenet as mx
    >>> mx.nd.topk(mx.nd.array([[1.0, 5.0, 2.0]]), k=2, ret_typ='value').asnumpy()
    array([[5., 2.]], dtype=float32)
    """
    values, idx = torch.topk(data, k, dim=axis, largest=not is_ascend, sorted=True)
    idx_out = idx.to(torch_dtype(dtype))
    if ret_typ == "value":
        return values
    if ret_typ == "indices":
        return idx_out
    if ret_typ == "both":
        return values, idx_out
    if ret_typ == "mask":
        return torch.zeros_like(data).scatter(axis, idx, 1.0)
    raise InvalidArgumentError(f"topk: ret_typ must be 'indices', 'value', 'both' or 'mask', "
                               f"got {ret_typ!r}")


@defop(output_names=("output0",))
def sort(data, *, axis=-1, is_ascend=True):
    """Sorted copy along ``axis``.

    >>> import sparsenet as mx
    >>> mx.nd.sort(mx.nd.array([3.0, 1.0, 2.0])).asnumpy()
    array([1., 2., 3.], dtype=float32)
    """
    return torch.sort(data, dim=axis, descending=not is_ascend).values


@defop
def argsort(data, *, axis=-1, is_ascend=True, dtype="float32"):
    """Indices that sort ``data`` along ``axis``.

    >>> import sparsenet as mx
    >>> mx.nd.argsort(mx.nd.array([3.0, 1.0, 2.0])).asnumpy()
    array([1., 2., 0.], dtype=float32)
    """
    return torch.argsort(data, dim=axis, descending=not is_ascend).to(torch_dtype(dtype))


# ---------------------------------------------------------------------- sparse kernels
def _sparse_sum(x, values, axes, keepdims):
    """Sum of a sparse array whose stored values are ``values`` over ``axes`` (dense out)."""
    ndim = x.ndim
    dtype = values.dtype
    if axes == tuple(range(ndim)):
        out = values.sum()
        return out.reshape((1,) * ndim) if keepdims else out
    if x.stype == CSR:
        rows, cols = x.shape
        if axes == (0,):
            out = torch.zeros(cols, dtype=dtype, device=values.device).index_add(
                0, x._indices, values)
            return out.reshape(1, cols) if keepdims else out
        out = torch.zeros(rows, dtype=dtype, device=values.device).index_add(
            0, x.row_ids(), values)
        return out.reshape(rows, 1) if keepdims else out
    # row_sparse: reduce the stored rows over the inner axes, then place or add them
    inner = tuple(a for a in axes if a != 0)
    part = values.sum(dim=inner, keepdim=True) if inner else values
    if 0 in axes:
        out = part.sum(dim=0, keepdim=True)
    else:
        out = torch.zeros((x.shape[0],) + tuple(part.shape[1:]), dtype=dtype,
                          device=values.device).index_add(0, x._indices, part)
    if not keepdims:
        out = out.reshape([s for i, s in enumerate(out.shape) if i not in axes])
    return out


def _sum_kernel(x, *, axis=None, keepdims=False, exclude=False):
    axes = normalize_axes(axis, x.ndim, exclude)
    return wrap(_sparse_sum(x, x._data, axes, keepdims))


def _mean_kernel(x, *, axis=None, keepdims=False, exclude=False):
    axes = normalize_axes(axis, x.ndim, exclude)
    n = 1
    for a in axes:
        n *= x.shape[a]
    values = x._data if x._data.dtype.is_floating_point else x._data.float()
    return wrap(_sparse_sum(x, values, axes, keepdims) / n)


def _norm_kernel(x, *, ord=2, axis=None, keepdims=False, out_dtype=None):  # noqa: A002
    if ord not in (1, 2):
        return NotImplemented
    axes = normalize_axes(axis, x.ndim)
    v = x._data if x._data.dtype.is_floating_point else x._data.float()
    if ord == 1:
        out = _sparse_sum(x, torch.abs(v), axes, keepdims)
    else:
        out = torch.sqrt(_sparse_sum(x, v * v, axes, keepdims))
    return wrap(out.to(torch_dtype(out_dtype)) if out_dtype else out)


def _square_sum_kernel(x, *, axis=None, keepdims=False, exclude=False):
    axes = normalize_axes(axis, x.ndim, exclude)
    return wrap(_sparse_sum(x, x._data * x._data, axes, keepdims))


def _rsp_rowwise(p):
    """axis=1, keepdims=True on a 2-D array"""
    return p["keepdims"] and not p["exclude"] and p["axis"] in (1, -1, (1,), (-1,))


@rule(square_sum, ROW_SPARSE, out=ROW_SPARSE, when=_rsp_rowwise, values_grad=True)
def _square_sum_rsp_rows(x, *, axis, keepdims, exclude):
    if x.ndim != 2:
        return NotImplemented
    data = (x._data * x._data).sum(dim=1, keepdim=True)
    return RowSparseNDArray._from_parts(data, x._indices, (x.shape[0], 1))


for _s in (CSR, ROW_SPARSE):
    rule(sum, _s, out=DEFAULT)(_sum_kernel)
    rule(mean, _s, out=DEFAULT)(_mean_kernel)
    rule(norm, _s, out=DEFAULT)(_norm_kernel)
    # the derivative of a sum of squares vanishes where the input is zero: a row_sparse
    # variable is differentiated through its stored values
    rule(square_sum, _s, out=DEFAULT, values_grad=_s == ROW_SPARSE)(_square_sum_kernel)

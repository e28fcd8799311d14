"""Slicing, gathering and joining: slice, slice_axis, take, retain, concat, stack, split, ...

CSR arrays slice (rows and columns), take rows and concatenate along either
axis without densifying; row_sparse arrays ``retain`` rows and concatenate
along axis 0.

>>> import sparsenet as mx
>>> a = mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [0, 2, 1], [0, 2, 3]), shape=(2, 3))
>>> b = mx.nd.sparse.slice(a, begin=(0, 1), end=(2, 3))
>>> b.stype, b.asnumpy()
('csr', array([[0., 2.],
       [3., 0.]], dtype=float32))
>>> mx.nd.take(a, mx.nd.array([1, 1])).asnumpy()
array([[0., 3., 0.],
       [0., 3., 0.]], dtype=float32)
"""
import builtins

import torch

from ..base import IndexOutOfRangeError, InvalidArgumentError, ShapeError, torch_dtype
from ..ndarray.csr import CSRNDArray
from ..ndarray.ndarray import NDArray
from ..ndarray.row_sparse import RowSparseNDArray
from .kernels import csr_from_keys
from .registry import CSR, DEFAULT, ROW_SPARSE, Many, defop, numbered_outputs, rule

__all__ = ["slice", "crop", "slice_axis", "take", "retain", "concat", "Concat", "stack",
           "split", "SliceChannel", "one_hot", "pick", "gather_nd", "slice_like",
           "slice_assign", "slice_assign_scalar"]


def _tuple(v):
    """``begin``/``end``/``step`` as a tuple: MXNet also takes one int for the first axis."""
    if v is None:
        return ()
    return (v,) if isinstance(v, int) else tuple(v)


def _norm_slice(begin, end, step, shape):
    keys = []
    begin, end, step = _tuple(begin), _tuple(end), _tuple(step)
    if len(begin) != len(end):
        raise InvalidArgumentError(f"slice: begin {begin} and end {end} must have one length")
    for i, n in enumerate(shape):
        if i >= len(begin):
            keys.append(builtins.slice(None))
            continue
        s = step[i] if i < len(step) and step[i] is not None else 1
        keys.append(builtins.slice(begin[i], end[i], s))
    return tuple(keys)


@defop(name="slice")
def slice(data, *, begin=(), end=(), step=()):  # noqa: A001
    """The sub-array ``data[begin[0]:end[0]:step[0], ...]`` (None means the whole axis).

    For a CSR input the result is CSR (rows and columns, step 1). An int
    ``begin``/``end``/``step`` applies to the first axis (alias ``crop``).

    >>> import sparsenet as mx
    >>> mx.nd.slice(mx.nd.arange(6).reshape((2, 3)), begin=(0, 1), end=(2, 3)).asnumpy()
    array([[1., 2.],
           [4., 5.]], dtype=float32)
    >>> mx.nd.crop(mx.nd.arange(6).reshape((3, 2)), begin=1, end=3).asnumpy()
    array([[2., 3.],
           [4., 5.]], dtype=float32)
    """
    keys = _norm_slice(begin, end, step, data.shape)
    if any(k.step is not None and k.step < 0 for k in keys):
        out = data
        for axis, k in enumerate(keys):
            idx = torch.arange(data.shape[axis], device=data.device)[k]
            out = out.index_select(axis, idx)
        return out
    return data[keys].clone()


crop = slice


@defop(name="_slice_assign")
def slice_assign(lhs, rhs, *, begin=(), end=(), step=()):
    """A copy of ``lhs`` with the region ``slice(begin, end, step)`` set to ``rhs`` (alias
    ``_crop_assign``); ``lhs`` is not changed.

    >>> import sparsenet as mx
    >>> mx.nd._internal._slice_assign(mx.nd.zeros((2, 3)), mx.nd.ones((2, 1)),
    ...                               begin=(0, 1), end=(2, 2)).asnumpy()
    array([[0., 1., 0.],
           [0., 1., 0.]], dtype=float32)
    """
    out = lhs.clone()
    keys = _norm_slice(begin, end, step, lhs.shape)
    region = out[keys]
    if tuple(rhs.shape) != tuple(region.shape):
        raise InvalidArgumentError(f"_slice_assign: rhs of shape {tuple(rhs.shape)} does not "
                                   f"fit the region of shape {tuple(region.shape)}")
    out[keys] = rhs.to(out.dtype)
    return out


@defop(name="_slice_assign_scalar")
def slice_assign_scalar(data, *, scalar=0.0, begin=(), end=(), step=()):
    """A copy of ``data`` with the region ``slice(begin, end, step)`` set to ``scalar`` (alias
    ``_crop_assign_scalar``).

    >>> import sparsenet as mx
    >>> mx.nd._internal._slice_assign_scalar(mx.nd.zeros((3,)), scalar=2.0, begin=(1,),
    ...                                      end=(3,)).asnumpy()
    array([0., 2., 2.], dtype=float32)
    """
    out = data.clone()
    out[_norm_slice(begin, end, step, data.shape)] = scalar
    return out


@defop
def slice_axis(data, *, axis=0, begin=0, end=None):
    """The sub-array between ``begin`` and ``end`` along ``axis``.

    >>> import sparsenet as mx
    >>> mx.nd.slice_axis(mx.nd.arange(6).reshape((2, 3)), axis=1, begin=1, end=2).asnumpy()
    array([[1.],
           [4.]], dtype=float32)
    """
    n = data.shape[axis]
    start, stop, _ = builtins.slice(begin, end).indices(n)
    return data.narrow(axis, start, max(stop - start, 0)).clone()


@defop
def slice_like(data, shape_like, *, axes=()):
    """Slice ``data`` to the shape of ``shape_like`` (along ``axes``, or all).

    >>> import sparsenet as mx
    >>> mx.nd.slice_like(mx.nd.zeros((3, 4)), mx.nd.zeros((2, 2))).shape
    (2, 2)
    """
    axes = tuple(axes) if axes else tuple(range(shape_like.dim()))
    out = data
    for a in axes:
        out = out.narrow(a, 0, shape_like.shape[a])
    return out.clone()


def _take_indices(indices, n, mode):
    idx = indices.to(torch.int64) if indices.dtype != torch.int64 else indices
    if mode == "clip":
        return idx.clamp(0, max(n - 1, 0))
    if mode == "wrap":
        return torch.remainder(idx, n)
    if mode == "raise":
        if idx.numel() and (bool((idx < -n).any()) or bool((idx >= n).any())):
            bad = idx[(idx < -n) | (idx >= n)][0]
            raise IndexOutOfRangeError(f"take: index {int(bad)} is out of range for axis of "
                                       f"size {n}")
        return torch.remainder(idx, n)
    raise InvalidArgumentError(f"take: mode must be 'clip', 'wrap' or 'raise', got {mode!r}")


@defop
def take(a, indices, *, axis=0, mode="clip"):
    """Gather slices of ``a`` along ``axis`` at ``indices``.

    ``mode`` 'clip' clamps out-of-range indices, 'wrap' wraps them, 'raise'
    raises. A CSR ``a`` with ``axis=0`` gives a CSR of the selected rows.

    >>> import sparsenet as mx
    >>> mx.nd.take(mx.nd.array([[1.0, 2.0], [3.0, 4.0]]), mx.nd.array([1, 0])).asnumpy()
    array([[3., 4.],
           [1., 2.]], dtype=float32)
    """
    idx = _take_indices(indices, a.shape[axis], mode)
    out = a.index_select(axis, idx.reshape(-1))
    shape = list(a.shape[:axis]) + list(idx.shape) + list(a.shape[axis + 1:])
    return out.reshape(shape)


def _is_weight_variable(a):
    """axis=0 on a 2-D float variable (its gradient then travels as sparse rows)"""
    return a._grad is not None and a._grad_req != "null"


@rule(take, DEFAULT, DEFAULT, out=DEFAULT, when={"axis": 0})
def _take_rows_of_variable(a, indices, *, axis=0, mode="clip"):
    # the rows gathered from a weight variable: its gradient is a sparse tensor of
    # those rows, stored row_sparse or dense by the variable's gradient buffer
    if not (_is_weight_variable(a) and a.ndim == 2 and a._t.dtype.is_floating_point):
        return NotImplemented
    idx = _take_indices(indices._t, a.shape[0], mode)
    return NDArray(torch.nn.functional.embedding(idx, a._t, sparse=True))


@defop
def retain(data, indices):
    """Keep the rows ``indices`` of a row_sparse array.

    The result stores exactly the requested rows (sorted, duplicates removed);
    requested rows that ``data`` does not store are stored as zeros, as in MXNet.
    Float ids are truncated towards zero (as MXNet casts them); ids must then
    lie in ``[0, rows)``.

    >>> import sparsenet as mx
    >>> r = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4], [5, 6]], [0, 2, 3]), shape=(5, 2))
    >>> k = mx.nd.sparse.retain(r, mx.nd.array([0, 1]))
    >>> k.indices.asnumpy(), k.asnumpy()[:2]
    (array([0, 1]), array([[1., 2.],
           [0., 0.]], dtype=float32))
    """
    ids = _checked_row_ids(indices, data.shape[0])
    mask = torch.zeros(data.shape[0], dtype=torch.bool, device=data.device)
    mask[ids] = True
    return data * mask.reshape((-1,) + (1,) * (data.dim() - 1)).to(data.dtype)


def _checked_row_ids(indices, n):
    raw = indices.reshape(-1)
    ids = raw.to(torch.int64)  # floats truncate towards zero, as MXNet's cast
    if ids.numel():
        bad = (ids < 0) | (ids >= n)
        if raw.dtype.is_floating_point:
            bad |= ~torch.isfinite(raw)
        if bool(bad.any()):
            v = raw[bad][0].item()
            v = int(v) if isinstance(v, float) and v.is_integer() else v
            raise IndexOutOfRangeError(f"retain: row id {v} is out of range [0, {n})")
    if ids.numel() > 1 and bool((ids[1:] > ids[:-1]).all()):
        return ids  # already sorted and unique (a kvstore's checked row ids): no sort
    return torch.unique(ids, sorted=True)


@defop(name="Concat")
def concat(*data, dim=1):
    """Join arrays along axis ``dim`` (alias ``Concat``).

    >>> import sparsenet as mx
    >>> mx.nd.concat(mx.nd.ones((1, 2)), mx.nd.zeros((1, 2)), dim=0).asnumpy()
    array([[1., 1.],
           [0., 0.]], dtype=float32)
    """
    return torch.cat(data, dim=dim)


Concat = concat


@defop
def stack(*data, axis=0):
    """Join arrays of one shape along a new axis.

    >>> import sparsenet as mx
    >>> mx.nd.stack(mx.nd.ones((2,)), mx.nd.zeros((2,))).shape
    (2, 2)
    """
    return torch.stack(data, dim=axis)


@defop(name="SliceChannel", num_outputs=lambda p: p["num_outputs"],
       output_names=numbered_outputs)
def split(data, *, num_outputs=1, axis=1, squeeze_axis=False):
    """Split into ``num_outputs`` equal parts along ``axis`` (alias ``SliceChannel``).

    >>> import sparsenet as mx
    >>> [p.shape for p in mx.nd.split(mx.nd.zeros((2, 4)), num_outputs=2, axis=1)]
    [(2, 2), (2, 2)]
    """
    n = data.shape[axis]
    if n % num_outputs:
        raise InvalidArgumentError(f"split: axis {axis} of size {n} is not divisible by "
                                   f"{num_outputs}")
    parts = torch.chunk(data, num_outputs, dim=axis)
    if squeeze_axis:
        parts = [p.squeeze(axis) for p in parts]
    return [p.clone() for p in parts]


SliceChannel = split


@defop
def one_hot(indices, *, depth=1, on_value=1.0, off_value=0.0, dtype="float32"):
    """One-hot encoding of integer ``indices`` with ``depth`` classes.

    >>> import sparsenet as mx
    >>> mx.nd.one_hot(mx.nd.array([1, 0]), depth=3).asnumpy()
    array([[0., 1., 0.],
           [1., 0., 0.]], dtype=float32)
    """
    idx = indices.to(torch.int64)
    valid = (idx >= 0) & (idx < depth)
    oh = torch.nn.functional.one_hot(idx.clamp(0, max(depth - 1, 0)), depth) * valid.unsqueeze(-1)
    out = torch.where(oh.bool(), on_value, off_value)
    return out.to(torch_dtype(dtype))


@defop
def pick(data, index, *, axis=-1, keepdims=False, mode="clip"):
    """Pick one element per slice along ``axis`` at ``index``.

    >>> import sparsenet as mx
    >>> mx.nd.pick(mx.nd.array([[1.0, 2.0], [3.0, 4.0]]), mx.nd.array([1, 0])).asnumpy()
    array([2., 3.], dtype=float32)
    """
    ax = axis % data.dim()
    idx = _take_indices(index, data.shape[ax], mode)
    out = torch.gather(data, ax, idx.unsqueeze(ax))
    return out if keepdims else out.squeeze(ax)


@defop
def gather_nd(data, indices):
    """Gather elements by coordinate: ``indices`` has shape ``(M, ...)``, M <= data.ndim.

    >>> import sparsenet as mx
    >>> mx.nd.gather_nd(mx.nd.array([[1.0, 2.0], [3.0, 4.0]]),
    ...                 mx.nd.array([[0, 1], [1, 0]])).asnumpy()
    array([2., 3.], dtype=float32)
    """
    idx = indices.to(torch.int64)
    return data[tuple(idx[i] for i in range(idx.shape[0]))]


# ---------------------------------------------------------------------- sparse kernels
def _csr_slice_rows_cols(x, r0, r1, c0, c1):
    rows = x._rows(r0, r1) if (r0, r1) != (0, x.shape[0]) else x
    if (c0, c1) == (0, x.shape[1]):
        return rows if rows is not x else CSRNDArray._from_parts(
            x._data.clone(), x._indices.clone(), x._indptr.clone(), x.shape)
    keep = (rows._indices >= c0) & (rows._indices < c1)
    keys = rows.row_ids()[keep] * (c1 - c0) + (rows._indices[keep] - c0)
    return csr_from_keys(keys, rows._data[keep], (r1 - r0, c1 - c0))


def _bounds(b, e, n):
    return builtins.slice(b, e).indices(n)[:2]


def _unit_step(p):
    """step is 1 (or unset) on every axis"""
    return all(s in (None, 1) for s in _tuple(p["step"]))


@rule(slice, CSR, out=CSR, when=_unit_step)
def _slice_csr(data, *, begin=(), end=(), step=()):
    b = list(_tuple(begin)) + [None] * (2 - len(_tuple(begin)))
    e = list(_tuple(end)) + [None] * (2 - len(_tuple(end)))
    r0, r1 = _bounds(b[0], e[0], data.shape[0])
    c0, c1 = _bounds(b[1], e[1], data.shape[1])
    return _csr_slice_rows_cols(data, r0, max(r0, r1), c0, max(c0, c1))


@rule(slice_axis, CSR, out=CSR)
def _slice_axis_csr(data, *, axis=0, begin=0, end=None):
    ax = axis % 2
    lo, hi = _bounds(begin, end, data.shape[ax])
    hi = max(lo, hi)
    if ax == 0:
        return _csr_slice_rows_cols(data, lo, hi, 0, data.shape[1])
    return _csr_slice_rows_cols(data, 0, data.shape[0], lo, hi)


@rule(take, CSR, DEFAULT, out=CSR, when={"axis": 0})
def _take_csr(a, indices, *, axis=0, mode="clip"):
    if indices.ndim != 1:
        return NotImplemented
    rows = _take_indices(indices._t, a.shape[0], mode)
    starts, ends = a._indptr[rows], a._indptr[rows + 1]
    counts = ends - starts
    indptr = torch.zeros(rows.numel() + 1, dtype=torch.int64, device=a.device)
    torch.cumsum(counts, 0, out=indptr[1:])
    nnz = int(indptr[-1])
    # position of every output value inside the source arrays
    offset = torch.repeat_interleave(starts - indptr[:-1], counts, output_size=nnz)
    src = torch.arange(nnz, device=a.device) + offset
    return CSRNDArray._from_parts(a._data[src], a._indices[src], indptr,
                                  (rows.numel(), a.shape[1]))


@rule(retain, ROW_SPARSE, DEFAULT, out=ROW_SPARSE)
def _retain_rsp(data, indices):
    ids = _checked_row_ids(indices._t, data.shape[0])
    if data._stores_every_row():  # positions are row ids
        return RowSparseNDArray._from_parts(data._data.index_select(0, ids), ids, data.shape)
    out = torch.zeros((ids.numel(),) + data.shape[1:], dtype=data._data.dtype,
                      device=data.device)
    if data._indices.numel() and ids.numel():
        pos = torch.searchsorted(data._indices, ids).clamp_(max=data._indices.numel() - 1)
        hit = data._indices[pos] == ids
        out = out.index_put((hit.nonzero().reshape(-1),), data._data[pos[hit]])
    return RowSparseNDArray._from_parts(out, ids, data.shape)


def _same_trailing(arrays, dim):
    s0 = arrays[0].shape
    for a in arrays[1:]:
        if len(a.shape) != len(s0) or any(x != y for i, (x, y) in enumerate(zip(a.shape, s0))
                                          if i != dim):
            raise ShapeError(f"concat: shapes {[tuple(x.shape) for x in arrays]} differ outside "
                             f"axis {dim}")


def _concat_csr(*data, dim=1):
    d = dim % 2
    _same_trailing(data, d)
    dtype = data[0]._data.dtype
    if d == 0:
        indptrs, off = [data[0]._indptr], int(data[0]._indptr[-1])
        for a in data[1:]:
            indptrs.append(a._indptr[1:] + off)
            off += int(a._indptr[-1])
        rows = sum(a.shape[0] for a in data)
        return CSRNDArray._from_parts(torch.cat([a._data.to(dtype) for a in data]),
                                      torch.cat([a._indices for a in data]),
                                      torch.cat(indptrs), (rows, data[0].shape[1]))
    cols = sum(a.shape[1] for a in data)
    keys, vals, off = [], [], 0
    for a in data:
        keys.append(a.row_ids() * cols + a._indices + off)
        vals.append(a._data.to(dtype))
        off += a.shape[1]
    keys = torch.cat(keys)
    order = torch.argsort(keys)
    return csr_from_keys(keys[order], torch.cat(vals)[order], (data[0].shape[0], cols))


def _concat_rsp(*data, dim=1):
    if dim % len(data[0].shape) != 0:
        return NotImplemented
    _same_trailing(data, 0)
    dtype = data[0]._data.dtype
    idx, off = [], 0
    for a in data:
        idx.append(a._indices + off)
        off += a.shape[0]
    return RowSparseNDArray._from_parts(torch.cat([a._data.to(dtype) for a in data]),
                                        torch.cat(idx), (off,) + tuple(data[0].shape[1:]))


rule(concat, Many(CSR), out=CSR)(_concat_csr)
rule(concat, Many(ROW_SPARSE), out=ROW_SPARSE, when={"dim": 0})(_concat_rsp)

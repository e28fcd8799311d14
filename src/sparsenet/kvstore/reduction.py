"""Summing one push's values over the ranks: every key of the push in a few collectives.

:func:`reduce_over_ranks` takes this process's sums ``{key: array}`` (dense or
row_sparse) and returns every rank's total, whatever the number of keys, with:

1. one all-gather of each key's storage type and stored-row count (the
   metadata every rank needs to plan the same exchange);
2. one all-reduce per dtype of the dense contributions, concatenated: the
   dense keys, and the row_sparse keys too dense to gather (their rows
   densified, plus a column marking the rows some rank pushed, so the result is
   still the row_sparse sum);
3. one all-gather of the bytes of the row ids and rows of the row_sparse keys
   gathered; each key's rows are then summed in rank order (duplicates added,
   ids sorted), the same on every rank.

A row_sparse key is gathered when ``W * max_nnz <= sparse_as_dense * R`` (``W``
ranks, ``max_nnz`` the most rows one rank pushes, ``R`` the key's rows): past
that, the gathered rows would outweigh the dense table.

With gradient compression (:mod:`~sparsenet.kvstore.compression`, every key dense
float32, checked by the caller), each rank quantises its sum of each key against
its residual and the 2-bit codes of every key, 16 per int32 word, go in ONE
all-gather; each rank unpacks every rank's codes and sums them in rank order.

>>> import sparsenet as mx
>>> out = reduce_over_ranks({'w': mx.nd.ones((2,))}, 0.5)  # one process: returned as is
>>> out['w'].asnumpy()
array([1., 1.], dtype=float32)
"""
import torch

from ..context import place
from ..ndarray.ndarray import NDArray
from ..ndarray.row_sparse import RowSparseNDArray
from ..ndarray.stype import ROW_SPARSE
from . import collective
from .compression import dequantize_2bit, pack_2bit, unpack_2bit

__all__ = ["reduce_over_ranks"]


def _width(shape):
    n = 1
    for s in shape[1:]:
        n *= s
    return n


def _densified(m):
    """A row_sparse ``m`` as dense rows plus a marker column (1 where a row is stored)."""
    width = _width(m.shape)
    dense = m._data.new_zeros((m.shape[0], width + 1))
    dense[m._indices, :-1] = m._data.reshape(-1, width)
    dense[m._indices, -1] = 1
    return dense


def _undensified(total, shape, ctx):
    ids = torch.nonzero(total[:, -1]).reshape(-1)
    rows = total[ids, :-1].reshape((ids.numel(),) + tuple(shape[1:]))
    return place(RowSparseNDArray._from_parts(rows, ids, shape), ctx)


def _all_reduce_by_dtype(parts):
    """Sum each tensor of ``parts`` over the ranks: one all-reduce per dtype."""
    groups = {}
    for i, t in enumerate(parts):
        groups.setdefault(t.dtype, []).append(i)
    out = [None] * len(parts)
    for idx in groups.values():
        flat = torch.cat([parts[i].reshape(-1) for i in idx])
        total = collective.all_reduce_sum(flat, op="push")
        at = 0
        for i in idx:
            n = parts[i].numel()
            out[i] = total[at:at + n].reshape(parts[i].shape)
            at += n
    return out


def _bytes(t):
    """``t``'s storage as a flat uint8 tensor (a view when contiguous)."""
    if not t.numel():
        return torch.empty(0, dtype=torch.uint8, device=t.device)
    return t.contiguous().view(-1).view(torch.uint8)


def _gather_rows(keys, merged, nnz):
    """The row_sparse sums of ``keys`` (all gathered), in ONE all-gather: each rank sends
    the bytes of its row ids, then of its rows, key after key. ``nnz[r][j]``: rows rank
    ``r`` pushes for ``keys[j]``."""
    arrays = [merged[k] for k in keys]
    row_bytes = [_width(m.shape) * m._data.element_size() for m in arrays]
    sizes = [[n * 8 for n in row] + [n * b for n, b in zip(row, row_bytes)] for row in nnz]
    mine = [_bytes(m._indices.to(torch.int64)) for m in arrays] + [_bytes(m._data)
                                                                   for m in arrays]
    flat, _ = collective.allgather_v(torch.cat(mine), [sum(s) for s in sizes], op="push")
    chunks = [[] for _ in range(2 * len(keys))]
    at = 0
    for row in sizes:
        for j, n in enumerate(row):
            chunks[j].append(flat[at:at + n])
            at += n
    out = {}
    for j, (k, m) in enumerate(zip(keys, arrays)):
        ids = torch.cat(chunks[j]).view(torch.int64)
        rows = torch.cat(chunks[len(keys) + j]).view(m._data.dtype)
        rows = rows.reshape((ids.numel(),) + tuple(m.shape[1:]))
        uniq, inverse = torch.unique(ids, sorted=True, return_inverse=True)
        summed = rows.new_zeros((uniq.numel(),) + tuple(m.shape[1:]))
        summed.index_add_(0, inverse, rows)
        out[k] = place(RowSparseNDArray._from_parts(summed, uniq, m.shape), m.context)
    return out


def _reduce_compressed(merged, compression):
    """Every rank's sum of the quantised ``merged`` (dense float32 keys): the packed codes of
    all keys in one all-gather (none with one rank), unpacked and summed in rank order."""
    keys = list(merged)
    words = [pack_2bit(compression.codes((k, 0), merged[k]._t)) for k in keys]
    sizes = [w.numel() for w in words]
    world = collective.world_size()
    mine = torch.cat(words) if words else torch.empty(0, dtype=torch.int32)
    if world > 1 and mine.numel():
        every = collective.allgather(mine, op="push")
    else:
        every = mine.reshape(1, -1)
    out, at = {}, 0
    for k, n in zip(keys, sizes):
        m = merged[k]
        total = None
        for r in range(world):
            codes = unpack_2bit(every[min(r, every.shape[0] - 1), at:at + n], m._t.numel())
            sent = dequantize_2bit(codes, compression.threshold, m._t.dtype).reshape(m.shape)
            total = sent if total is None else total.add_(sent)
        out[k] = place(NDArray(total), m.context)
        at += n
    return out


def reduce_over_ranks(merged, sparse_as_dense, compression=None):
    """Every rank's sum of ``merged`` (``{key: NDArray}``, the same keys, shapes and dtypes on
    every rank, checked by the caller): ``{key: total}``, row_sparse keys stay row_sparse.

    Parameters
    ----------
    merged : dict
        This process's sum of each pushed key.
    sparse_as_dense : float
        Gather a row_sparse key while ``W * max_nnz <= sparse_as_dense * rows``.
    compression : GradientCompression, optional
        Send every key 2-bit quantised (the keys must be dense float32).
    """
    if compression is not None and merged:
        return _reduce_compressed(merged, compression)
    world = collective.world_size()
    if world == 1 or not merged:
        return dict(merged)
    keys = list(merged)
    meta = torch.tensor([[int(merged[k].stype == ROW_SPARSE),
                          merged[k]._indices.numel() if merged[k].stype == ROW_SPARSE else 0]
                         for k in keys], dtype=torch.int64).reshape(-1)
    info = collective.allgather(meta, op="push").reshape(world, len(keys), 2)
    gathered, dense, out = [], [], {}
    for j, k in enumerate(keys):
        sparse = bool(info[:, j, 0].all())
        if sparse and world * int(info[:, j, 1].max()) <= sparse_as_dense * merged[k].shape[0]:
            gathered.append(j)
        else:
            dense.append(j)
    parts = []
    for j in dense:
        m = merged[keys[j]]
        parts.append(_densified(m) if bool(info[:, j, 0].all()) else m._dense_tensor())
    for j, total in zip(dense, _all_reduce_by_dtype(parts)):
        m = merged[keys[j]]
        if bool(info[:, j, 0].all()):
            out[keys[j]] = _undensified(total, m.shape, m.context)
        else:
            out[keys[j]] = place(NDArray(total), m.context)
    if gathered:
        nnz = [[int(info[r, j, 1]) for j in gathered] for r in range(world)]
        out.update(_gather_rows([keys[j] for j in gathered], merged, nnz))
    return {k: out[k] for k in keys}

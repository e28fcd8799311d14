"""Whole batches straight from the LibSVM parser's chunks, for ``DataLoader(batch_size=None)``.

:class:`LibSVMBatches` is an ``IterableDataset`` whose items are already batches: the
parser (:class:`~sparsenet.io.libsvm.stream.ChunkStream`, parsing ahead in background
threads) hands over chunks of a few MiB of text as CSR arrays, and each chunk is cut into
batches with a handful of vectorised tensor operations, the batch tensors being views of
the chunk's arrays (no per-row Python, no copy of the features; in a DataLoader worker each
batch is copied once into a single storage, so that it crosses to the main process through
one shared-memory segment). A batch is

==================  ===========================================================
``collate``         item
==================  ===========================================================
``'embedding_bag'`` ``((ids, offsets, per_sample_weights), labels)`` for
                    ``nn.EmbeddingBag(mode='sum')``
``'csr'``           ``(x, labels)``, ``x`` a ``(B, num_features)`` torch sparse CSR tensor
``'csr_parts'``     ``((crow_indices, col_indices, values), labels)``
==================  ===========================================================

with int64 ids / indices, ``dtype`` values and labels, ``B = batch_size`` except for the
last batch of a shard (kept unless ``drop_last``).

>>> import os, tempfile, torch
>>> p = os.path.join(tempfile.mkdtemp(), 'd.svm')
>>> with open(p, 'w') as f:
...     _ = f.write('1 0:1 2:2\\n0 1:3\\n1 3:4\\n')
>>> [(ids.tolist(), off.tolist(), w.tolist(), y.tolist())
...  for (ids, off, w), y in LibSVMBatches(p, 4, batch_size=2, rank=0, world_size=1)]
[([0, 2, 1], [0, 2], [1.0, 2.0, 3.0], [1.0, 0.0]), ([3], [0], [4.0], [1.0])]
"""
from typing import NamedTuple

import torch

from ..base import InvalidArgumentError, InvalidArgumentTypeError
from ..io.libsvm.options import DEFAULT_MAX_LINE_BYTES, ParseOptions
from ..io.libsvm.source import DEFAULT_CHUNK_SIZE, list_files
from ..io.libsvm.stream import ChunkStream, num_threads

__all__ = ["LibSVMBatches", "COLLATES", "shard_of"]

#: The batch layouts :class:`LibSVMBatches` yields.
COLLATES = ("embedding_bag", "csr", "csr_parts")
_MIX = 0x9E3779B97F4A7C15  # odd 64-bit constant: spreads (seed, epoch, part) over seeds


class _Rows(NamedTuple):
    """Consecutive rows as torch CSR parts; ``indptr`` starts at 0."""

    indptr: torch.Tensor
    indices: torch.Tensor
    values: torch.Tensor
    labels: torch.Tensor

    @property
    def n(self):
        return self.labels.shape[0]


def _from_parsed(p):
    return _Rows(torch.from_numpy(p.indptr), torch.from_numpy(p.indices),
                 torch.from_numpy(p.values), torch.from_numpy(p.labels))


def _slice(rows, a, b):
    """Rows ``[a, b)`` (``indptr`` rebased to 0; the rest are views)."""
    ip = rows.indptr[a:b + 1]
    lo, hi = int(ip[0]), int(ip[-1])
    return _Rows(ip - lo, rows.indices[lo:hi], rows.values[lo:hi], rows.labels[a:b])


def _cat(parts):
    """Rows of ``parts`` one after the other (copies)."""
    if len(parts) == 1:
        return parts[0]
    ips, shift = [parts[0].indptr], int(parts[0].indptr[-1])
    for r in parts[1:]:
        ips.append(r.indptr[1:] + shift)
        shift += int(r.indptr[-1])
    return _Rows(torch.cat(ips), torch.cat([r.indices for r in parts]),
                 torch.cat([r.values for r in parts]), torch.cat([r.labels for r in parts]))


def _permute(rows, gen):
    """The rows in a random order drawn from ``gen`` (copies)."""
    n, ip = rows.n, rows.indptr
    perm = torch.randperm(n, generator=gen)
    counts = (ip[1:] - ip[:-1])[perm]
    new_ip = torch.zeros(n + 1, dtype=ip.dtype)
    torch.cumsum(counts, 0, out=new_ip[1:])
    nnz = int(new_ip[-1])
    src = torch.repeat_interleave(ip[:-1][perm] - new_ip[:-1], counts, output_size=nnz)
    src += torch.arange(nnz, dtype=src.dtype)
    return _Rows(new_ip, rows.indices.index_select(0, src), rows.values.index_select(0, src),
                 rows.labels.index_select(0, perm))


def _pack(parts):
    """Copies of ``parts`` as views of one new storage (8-byte aligned).

    A DataLoader worker sends every storage of an item through its own shared-memory
    segment; one segment a batch instead of four makes the hand-over ~1.4x faster.
    """
    sizes = [t.numel() * t.element_size() for t in parts]
    starts, end = [], 0
    for n in sizes:
        starts.append(end)
        end += -(-n // 8) * 8
    buf = torch.empty(end, dtype=torch.uint8)
    out = []
    for t, a, n in zip(parts, starts, sizes):
        v = buf[a:a + n].view(t.dtype)
        v.copy_(t)
        out.append(v)
    return out


class _Cutter:
    """Cut a sequence of row blocks into batches of ``batch_size`` rows, carrying the rows
    left at the end of a block over to the next. ``pack``: each batch in one storage."""

    def __init__(self, batch_size, collate, num_features, drop_last, pack=False):
        self.bs, self.collate = batch_size, collate
        self.num_features, self.drop_last = num_features, drop_last
        self.pack = pack
        self.rest, self.rest_n = [], 0

    def _item(self, crow_or_offsets, ids, values, labels):
        if self.pack:
            crow_or_offsets, ids, values, labels = _pack((crow_or_offsets, ids, values, labels))
        if self.collate == "embedding_bag":
            return (ids, crow_or_offsets, values), labels
        if self.collate == "csr_parts":
            return (crow_or_offsets, ids, values), labels
        x = torch.sparse_csr_tensor(crow_or_offsets, ids, values,
                                    (labels.shape[0], self.num_features), check_invariants=False)
        return x, labels

    def _one(self, rows):
        """One batch of all ``rows`` (indptr starting at 0)."""
        ip = rows.indptr
        head = ip[:-1] if self.collate == "embedding_bag" else ip
        return self._item(head, rows.indices, rows.values, rows.labels)

    def _full(self, rows, start, k):
        """``k`` batches of ``bs`` rows from row ``start`` on: O(1) tensor ops a batch."""
        bs, ip = self.bs, rows.indptr
        stop = start + k * bs
        first = ip[start:stop:bs].unsqueeze(1)  # (k, 1): each batch's first nnz
        bounds = ip[start:stop + 1:bs].tolist()
        if self.collate == "embedding_bag":
            heads = ip[start:stop].view(k, bs) - first
        else:
            heads = ip[start:stop + 1].unfold(0, bs + 1, bs) - first
        for j in range(k):
            lo, hi = bounds[j], bounds[j + 1]
            a = start + j * bs
            yield self._item(heads[j], rows.indices[lo:hi], rows.values[lo:hi],
                             rows.labels[a:a + bs])

    def feed(self, rows):
        """The batches completed by ``rows``; keeps the remainder for the next call."""
        n, start = rows.n, 0
        if self.rest:  # pieces of fewer than bs rows in all, joined once when complete
            need = self.bs - self.rest_n
            if n < need:
                self.rest.append(rows)
                self.rest_n += n
                return
            yield self._one(_cat(self.rest + [_slice(rows, 0, need)]))
            self.rest, self.rest_n, start = [], 0, need
        k = (n - start) // self.bs
        if k:
            yield from self._full(rows, start, k)
        tail = start + k * self.bs
        if tail < n:
            self.rest, self.rest_n = [_slice(rows, tail, n)], n - tail

    def finish(self):
        """The last, short batch (unless ``drop_last``)."""
        rest, self.rest, self.rest_n = self.rest, [], 0
        if rest and not self.drop_last:
            yield self._one(_cat(rest))


def _positive_int(name, v):
    if not isinstance(v, int) or isinstance(v, bool):
        raise InvalidArgumentTypeError(f"{name} must be a positive int, got {v!r}")
    if v < 1:
        raise InvalidArgumentError(f"{name} must be a positive int, got {v}")
    return v


def shard_of(rank=None, world_size=None):
    """``(num_parts, part_index)`` of this process and DataLoader worker.

    ``rank``/``world_size`` default to torch.distributed's when it is initialised
    (else 0 and 1); each rank's share is split again among its DataLoader workers.

    >>> shard_of(rank=1, world_size=3)
    (3, 1)
    """
    if (rank is None) != (world_size is None):
        raise InvalidArgumentError(f"give both rank and world_size or neither, got "
                                   f"rank={rank!r}, world_size={world_size!r}")
    if rank is None:
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized():
            rank, world_size = dist.get_rank(), dist.get_world_size()
        else:
            rank, world_size = 0, 1
    if not 0 <= rank < world_size:
        raise InvalidArgumentError(f"rank must be in [0, world_size={world_size}), got {rank}")
    info = torch.utils.data.get_worker_info()
    workers, worker = (1, 0) if info is None else (info.num_workers, info.id)
    return world_size * workers, rank * workers + worker


class LibSVMBatches(torch.utils.data.IterableDataset):
    """Batches of a LibSVM file (or directory), cut from the parser's chunks.

    Use with ``DataLoader(ds, batch_size=None, num_workers=...)`` (the items are batches
    already), or iterate it directly. Each iteration reads shard
    :func:`shard_of` of the input, ``num_parts = world_size *
    num_workers`` parts (every line belongs to exactly one), so the DataLoader workers of
    all ranks together read every row exactly once. Memory stays bounded: a few chunks
    are parsed ahead (``shuffle_chunks`` more when shuffling).

    Parameters
    ----------
    path : str, os.PathLike or list
        A file, a directory (its files in name order) or a list; ``.gz``, ``.zst``,
        ``.xz`` and ``.bz2`` are decompressed, as :func:`sparsenet.io.load_libsvm` does.
    num_features : int
        Columns; an index at or above it is a :class:`~sparsenet.io.LibSVMFormatError`.
    batch_size : int
        Rows per batch.
    collate : {'embedding_bag', 'csr', 'csr_parts'}
        The batch layout (see the module's table).
    shuffle : bool
        Shuffle the rows within a buffer of ``shuffle_chunks`` parsed chunks (about
        ``shuffle_chunks * chunk_size`` bytes of text): the batch order and contents change
        every epoch, and memory stays bounded (not a uniform shuffle of a whole file).
    shuffle_chunks : int
        Chunks per shuffle buffer.
    seed : int, optional
        With ``shuffle``: the orders are drawn from ``(seed, epoch, shard)`` (see
        :meth:`set_epoch`), the same in every run. Default: from torch's global random
        generator (seeded per worker by the DataLoader).
    drop_last : bool
        Drop each shard's last batch when it is short (each DataLoader worker ends with its
        own short batch otherwise).
    rank, world_size : int, optional
        This process's share (default: torch.distributed's when initialised, else 0 of 1).
    zero_based, dtype, duplicates, strict_order, allow_nonfinite, max_line_bytes
        As :func:`sparsenet.io.load_libsvm`.
    chunk_size : int
        Bytes of text per parsing task (default 4 MiB).

    Examples
    --------
    >>> import os, tempfile, torch
    >>> p = os.path.join(tempfile.mkdtemp(), 'd.svm')
    >>> with open(p, 'w') as f:
    ...     _ = f.write('1 0:1 2:2\\n0 1:3\\n1 3:4\\n')
    >>> ds = LibSVMBatches(p, 4, batch_size=2, collate='csr')
    >>> loader = torch.utils.data.DataLoader(ds, batch_size=None)
    >>> [x.to_dense().tolist() for x, y in loader]
    [[[1.0, 0.0, 2.0, 0.0], [0.0, 3.0, 0.0, 0.0]], [[0.0, 0.0, 0.0, 4.0]]]
    >>> LibSVMBatches(p, 4, batch_size=2, collate='coo')
    Traceback (most recent call last):
    ...
    sparsenet.base.InvalidArgumentError: collate must be one of ('embedding_bag', 'csr', \
'csr_parts'), got 'coo'
    """

    def __init__(self, path, num_features, batch_size, *, collate="embedding_bag",
                 shuffle=False, shuffle_chunks=8, seed=None, drop_last=False, rank=None,
                 world_size=None, zero_based=True, dtype="float32", duplicates="error",
                 strict_order=False, allow_nonfinite=False,
                 max_line_bytes=DEFAULT_MAX_LINE_BYTES, chunk_size=DEFAULT_CHUNK_SIZE):
        if collate not in COLLATES:
            raise InvalidArgumentError(f"collate must be one of {COLLATES}, got {collate!r}")
        self.batch_size = _positive_int("batch_size", batch_size)
        self.shuffle_chunks = _positive_int("shuffle_chunks", shuffle_chunks)
        self.chunk_size = _positive_int("chunk_size", chunk_size)
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise InvalidArgumentTypeError(f"seed must be an int or None, got {seed!r}")
        self.opts = ParseOptions(zero_based=zero_based, duplicates=duplicates,
                                 strict_order=strict_order, allow_nonfinite=allow_nonfinite,
                                 dtype=dtype, num_features=num_features,
                                 max_line_bytes=max_line_bytes)
        self.path, self.num_features = path, self.opts.num_features
        if self.num_features is None:
            raise InvalidArgumentError("num_features must be a positive integer, got None")
        self.collate, self.shuffle, self.seed = collate, bool(shuffle), seed
        self.drop_last = bool(drop_last)
        self.rank, self.world_size = rank, world_size
        self.epoch = 0
        shard_of(rank, world_size)  # validate now
        list_files(path, "LibSVMBatches")  # a missing path fails here, not in a worker

    def set_epoch(self, epoch):
        """Set the epoch that, with ``seed``, draws the shuffle order (as
        ``DistributedSampler.set_epoch``; call it before each epoch's iteration)."""
        self.epoch = int(epoch)

    def _generator(self, part_index):
        if self.seed is None:
            s = int(torch.randint(0, 2 ** 62, (1,)))
        else:
            s = ((self.seed * _MIX + self.epoch) * _MIX + part_index) % (2 ** 63)
        return torch.Generator().manual_seed(s)

    def _blocks(self, stream, gen):
        """Row blocks: each parsed chunk, or shuffled buffers of ``shuffle_chunks`` chunks."""
        buf = []
        for chunk in stream:
            if chunk.parsed.nrows == 0:
                continue
            rows = _from_parsed(chunk.parsed)
            if gen is None:
                yield rows
                continue
            buf.append(rows)
            if len(buf) == self.shuffle_chunks:
                yield _permute(_cat(buf), gen)
                buf = []
        if buf:
            yield _permute(_cat(buf), gen)

    def __iter__(self):
        num_parts, part_index = shard_of(self.rank, self.world_size)
        files = list_files(self.path, "LibSVMBatches")
        gen = self._generator(part_index) if self.shuffle else None
        stream = ChunkStream(files, self.opts, num_parts, part_index, self.chunk_size,
                             ahead=2 * num_threads())
        in_worker = torch.utils.data.get_worker_info() is not None
        cutter = _Cutter(self.batch_size, self.collate, self.num_features, self.drop_last,
                         pack=in_worker)
        try:
            for rows in self._blocks(stream, gen):
                yield from cutter.feed(rows)
            yield from cutter.finish()
        finally:
            stream.close()

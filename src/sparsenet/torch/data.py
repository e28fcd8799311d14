"""LibSVM datasets and sparse collate functions for ``torch.utils.data``.

To train, use :class:`LibSVMBatches` (from :mod:`~sparsenet.torch.data_batches`): whole
batches cut from the parser's chunks at the parser's rate, for ``DataLoader(batch_size=None)``.
The per-row datasets below hand out one sample at a time (any sampler, custom collates).

:class:`LibSVMDataset` (map-style: the file is loaded, ``ds[i]`` is one row) and
:class:`IterableLibSVMDataset` (streaming in bounded memory, each DataLoader worker and
each distributed rank reading its own disjoint shard) run sparsenet's LibSVM reader.
A sample is ``(row, label)`` with ``row`` a ``(1, num_features)`` torch sparse CSR tensor;
:func:`collate_csr` stacks samples into a CSR batch and :func:`collate_embedding_bag`
into ``(indices, offsets, per_sample_weights)`` for ``nn.EmbeddingBag``.

>>> import os, tempfile, torch
>>> p = os.path.join(tempfile.mkdtemp(), 'd.svm')
>>> with open(p, 'w') as f:
...     _ = f.write('1 0:1 2:2\\n0 1:3\\n1 3:4\\n')
>>> ds = LibSVMDataset(p, num_features=4)
>>> x, y = collate_csr([ds[0], ds[2]])
>>> x.to_dense(), y
(tensor([[1., 0., 2., 0.],
        [0., 0., 0., 4.]]), tensor([1., 1.]))
"""
import torch

from ..base import IndexOutOfRangeError, InvalidArgumentError
from ..io.libsvm.iterator import LibSVMIter
from ..io.libsvm.load import load_libsvm
from .data_batches import COLLATES, LibSVMBatches, shard_of

__all__ = ["LibSVMDataset", "IterableLibSVMDataset", "LibSVMBatches", "collate_csr",
           "collate_embedding_bag", "shard_of", "COLLATES"]


def _csr_row(crow, col, values, num_features):
    return torch.sparse_csr_tensor(crow, col, values, (1, num_features),
                                   check_invariants=False)


class LibSVMDataset(torch.utils.data.Dataset):
    """A LibSVM file (or directory) loaded in memory; ``ds[i]`` is ``(row, label)``.

    Works with any sampler, including ``DistributedSampler``. Labels are scalars, or
    dense ``(num_labels,)`` rows with ``multilabel=True``.

    Parameters
    ----------
    path : str or os.PathLike or list
        As :func:`sparsenet.io.load_libsvm` (``.gz``/``.zst``/``.xz``/``.bz2`` read).
    num_features : int, optional
        Columns (default: the largest index + 1).
    **kwargs
        Further :func:`~sparsenet.io.load_libsvm` options (``zero_based``, ``dtype``,
        ``multilabel``, ``num_parts``/``part_index``...).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), 'd.svm')
    >>> with open(p, 'w') as f:
    ...     _ = f.write('1 0:1 2:2\\n0 1:3\\n')
    >>> ds = LibSVMDataset(p)
    >>> len(ds), ds[1][0].to_dense(), ds[1][1]
    (2, tensor([[0., 3., 0.]]), tensor(0.))
    """

    def __init__(self, path, num_features=None, **kwargs):
        out = load_libsvm(path, num_features, progress=False, **kwargs)
        data, label = out[0], out[1]
        csr = data.to_torch()
        self.crow = csr.crow_indices()
        self.col = csr.col_indices()
        self.values = csr.values()
        self.num_features = int(data.shape[1])
        self.labels = label.to_torch()
        if self.labels.layout != torch.strided:
            self.labels = self.labels.to_dense()

    def __len__(self):
        return self.crow.numel() - 1

    def __getitem__(self, i):
        n = len(self)
        if not -n <= i < n:
            raise IndexOutOfRangeError(f"index {i} is out of range for a dataset of {n} rows")
        i %= n
        lo, hi = int(self.crow[i]), int(self.crow[i + 1])
        crow = torch.tensor([0, hi - lo], dtype=self.crow.dtype)
        return (_csr_row(crow, self.col[lo:hi], self.values[lo:hi], self.num_features),
                self.labels[i])


class IterableLibSVMDataset(torch.utils.data.IterableDataset):
    """LibSVM rows streamed in bounded memory, sharded over ranks and DataLoader workers.

    Each iteration reads shard :func:`shard_of` of the files (every line belongs to
    exactly one shard, so the workers of all ranks together read every row once) with
    :class:`sparsenet.io.LibSVMIter`, parsing in background threads, and yields
    ``(row, label)`` samples.

    Parameters
    ----------
    path : str or os.PathLike
    num_features : int
    rank, world_size : int, optional
        This process's shard (default: torch.distributed's, else 0 of 1).
    rows_per_read : int, default 1024
        Rows parsed per internal batch.
    **kwargs
        Further :class:`~sparsenet.io.LibSVMIter` options (``zero_based``, ``dtype``...).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), 'd.svm')
    >>> with open(p, 'w') as f:
    ...     _ = f.write('1 0:1 2:2\\n0 1:3\\n1 3:4\\n')
    >>> [float(y) for _, y in IterableLibSVMDataset(p, 4, rank=0, world_size=1)]
    [1.0, 0.0, 1.0]
    """

    def __init__(self, path, num_features, rank=None, world_size=None, rows_per_read=1024,
                 **kwargs):
        self.path = path
        self.num_features = int(num_features)
        self.rank, self.world_size = rank, world_size
        self.rows_per_read = int(rows_per_read)
        self.kwargs = kwargs
        shard_of(rank, world_size)  # validate now

    def __iter__(self):
        num_parts, part_index = shard_of(self.rank, self.world_size)
        it = LibSVMIter(data_libsvm=self.path, data_shape=(self.num_features,),
                        batch_size=self.rows_per_read, round_batch=False, num_parts=num_parts,
                        part_index=part_index, **self.kwargs)
        for batch in it:
            csr = batch.data[0].to_torch()
            labels = batch.label[0].to_torch()
            crow, col, values = csr.crow_indices(), csr.col_indices(), csr.values()
            bounds = crow.tolist()
            for i in range(len(bounds) - 1):
                lo, hi = bounds[i], bounds[i + 1]
                row = _csr_row(torch.tensor([0, hi - lo], dtype=crow.dtype), col[lo:hi],
                               values[lo:hi], self.num_features)
                yield row, labels[i]


def _parts(batch):
    rows = [r for r, _ in batch]
    if not rows:
        raise InvalidArgumentError("cannot collate an empty batch")
    cols = [r.col_indices() for r in rows]
    vals = [r.values() for r in rows]
    labels = torch.stack([torch.as_tensor(y) for _, y in batch])
    return rows, cols, vals, labels


def collate_csr(batch):
    """``[(row, label), ...]`` -> ``(csr_batch, labels)``: a ``(B, num_features)`` torch
    sparse CSR tensor (for :class:`sparsenet.torch.nn.SparseLinear`) and stacked labels.

    >>> import torch
    >>> row = torch.tensor([[0.0, 2.0]]).to_sparse_csr()
    >>> collate_csr([(row, 1.0), (row, 0.0)])[0].crow_indices()
    tensor([0, 1, 2])
    """
    rows, cols, vals, labels = _parts(batch)
    counts = torch.tensor([c.numel() for c in cols], dtype=torch.int64)
    crow = torch.zeros(len(rows) + 1, dtype=torch.int64)
    torch.cumsum(counts, 0, out=crow[1:])
    x = torch.sparse_csr_tensor(crow, torch.cat(cols).to(torch.int64), torch.cat(vals),
                                (len(rows), rows[0].shape[1]), check_invariants=False)
    return x, labels


def collate_embedding_bag(batch):
    """``[(row, label), ...]`` -> ``((indices, offsets, per_sample_weights), labels)`` for
    ``nn.EmbeddingBag(mode='sum')``: ``bag(indices, offsets, per_sample_weights)`` is the
    batch's sparse rows times the embedding table.

    >>> import torch
    >>> row = torch.tensor([[0.0, 2.0, 3.0]]).to_sparse_csr()
    >>> (idx, off, w), y = collate_embedding_bag([(row, 1.0)])
    >>> idx.tolist(), off.tolist(), w.tolist()
    ([1, 2], [0], [2.0, 3.0])
    """
    rows, cols, vals, labels = _parts(batch)
    counts = torch.tensor([c.numel() for c in cols], dtype=torch.int64)
    offsets = torch.zeros(len(rows), dtype=torch.int64)
    if len(rows) > 1:
        torch.cumsum(counts[:-1], 0, out=offsets[1:])
    return (torch.cat(cols).to(torch.int64), offsets, torch.cat(vals)), labels

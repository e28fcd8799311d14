"""Parsed rows as torch tensors: build them from chunks, slice, concatenate, grow.

:class:`Rows` holds ``n`` rows of CSR data (``indptr``, ``indices``, ``values``)
and their labels: a dense vector, CSR parts, or nothing. Slicing shares memory
with the source; :func:`cat_rows` copies.

>>> import numpy as np, torch
>>> r = Rows(torch.tensor([0, 1, 3]), torch.tensor([4, 0, 2]), torch.tensor([1., 2., 3.]),
...          dense=torch.tensor([1., 0.]))
>>> s = r.slice(1, 2)
>>> s.indptr.tolist(), s.indices.tolist(), s.dense.tolist()
([0, 2], [0, 2], [0.0])
"""
import numpy as np
import torch

from ...base import torch_dtype
from ...ndarray import memory

__all__ = ["Rows", "rows_from_parsed", "cat_rows", "split_rows", "Growable"]


#: the optional fields holding one value per row
_PER_ROW = ("dense", "qids", "weights")


class Rows:
    """``n`` rows of CSR data and their labels (dense vector or CSR parts, or none), and
    optionally per row a query id and an instance weight."""

    __slots__ = ("indptr", "indices", "values", "dense", "lab_indptr", "lab_indices",
                 "lab_values", "qids", "weights")

    def __init__(self, indptr, indices, values, dense=None, lab_indptr=None, lab_indices=None,
                 lab_values=None, qids=None, weights=None):
        self.indptr, self.indices, self.values = indptr, indices, values
        self.dense = dense
        self.lab_indptr, self.lab_indices, self.lab_values = lab_indptr, lab_indices, lab_values
        self.qids = qids
        self.weights = weights

    @property
    def n(self):
        return self.indptr.numel() - 1

    @property
    def nnz(self):
        return self.values.numel()

    def slice(self, a, b):
        """Rows ``[a, b)`` sharing memory (indptr rebased)."""
        ip = self.indptr
        lo, hi = int(ip[a]), int(ip[b])
        out = Rows(ip[a:b + 1] - lo, self.indices[lo:hi], self.values[lo:hi])
        for name in _PER_ROW:
            t = getattr(self, name)
            if t is not None:
                setattr(out, name, t[a:b])
        if self.lab_indptr is not None:
            lip = self.lab_indptr
            llo, lhi = int(lip[a]), int(lip[b])
            out.lab_indptr = lip[a:b + 1] - llo
            out.lab_indices = self.lab_indices[llo:lhi]
            out.lab_values = self.lab_values[llo:lhi]
        return out

    @property
    def nbytes(self):
        """Bytes held by every field."""
        return sum(t.numel() * t.element_size() for t in self._parts() if t is not None)

    def to(self, device):
        """The same rows on ``device`` (self when already there)."""
        if self.values.device == device:
            return self
        return Rows(*(None if t is None else t.to(device) for t in self._parts()))

    def clone(self):
        """A copy that shares no memory (batches handed to users own their tensors)."""
        return Rows(*(None if t is None else t.clone() for t in self._parts()))

    def _parts(self):
        """Every field, in the constructor's order."""
        return (self.indptr, self.indices, self.values, self.dense, self.lab_indptr,
                self.lab_indices, self.lab_values, self.qids, self.weights)


def _t(a):
    return None if a is None else torch.from_numpy(a)


def rows_from_parsed(parsed, label_mode):
    """Wrap a kernel result (numpy, zero-copy) as :class:`Rows`.

    ``label_mode``: ``'dense'`` (the line labels), ``'multilabel'`` (class ids
    as CSR with value 1) or ``None`` (labels not kept; a label file's rows are
    used as they are: their features are the CSR labels).
    """
    rows = Rows(_t(parsed.indptr), _t(parsed.indices), _t(parsed.values), qids=_t(parsed.qids),
                weights=_t(parsed.weights))
    if label_mode == "dense":
        rows.dense = _t(parsed.labels)
    elif label_mode == "multilabel":
        rows.lab_indptr = _t(parsed.label_indptr)
        rows.lab_indices = _t(parsed.label_ids)
        rows.lab_values = torch.ones(parsed.label_ids.shape[0], dtype=rows.values.dtype)
    return rows


def _cat_csr(parts):
    """Concatenate (indptr, indices, values) triples row-wise."""
    if len(parts) == 1:
        return parts[0]
    indptrs, off = [parts[0][0]], int(parts[0][0][-1])
    for ip, _, _ in parts[1:]:
        indptrs.append(ip[1:] + off)
        off += int(ip[-1])
    return (torch.cat(indptrs), torch.cat([p[1] for p in parts]),
            torch.cat([p[2] for p in parts]))


def cat_rows(rows):
    """Concatenate :class:`Rows` (copies unless there is one)."""
    if len(rows) == 1:
        return rows[0]
    ip, ind, val = _cat_csr([(r.indptr, r.indices, r.values) for r in rows])
    out = Rows(ip, ind, val)
    for name in _PER_ROW:
        if getattr(rows[0], name) is not None:
            setattr(out, name, torch.cat([getattr(r, name) for r in rows]))
    if rows[0].lab_indptr is not None:
        out.lab_indptr, out.lab_indices, out.lab_values = _cat_csr(
            [(r.lab_indptr, r.lab_indices, r.lab_values) for r in rows])
    return out


def _cycle_csr(indptr, indices, values, reps, rest):
    """CSR parts of ``reps`` copies of the rows then their first ``rest`` rows."""
    lengths = indptr[1:] - indptr[:-1]
    end = int(indptr[rest])
    ip = torch.zeros(lengths.numel() * reps + rest + 1, dtype=indptr.dtype, device=indptr.device)
    torch.cumsum(torch.cat([lengths.repeat(reps), lengths[:rest]]), 0, out=ip[1:])
    return (ip, torch.cat([indices.repeat(reps), indices[:end]]),
            torch.cat([values.repeat(reps), values[:end]]))


def cycle_rows(rows, count):
    """``count`` rows: ``rows`` over and over (the padding of a round batch), built in bulk.

    >>> r = Rows(torch.tensor([0, 1, 3]), torch.tensor([2, 0, 1]), torch.tensor([1., 2., 3.]),
    ...          dense=torch.tensor([5., 6.]))
    >>> c = cycle_rows(r, 5)
    >>> c.indptr.tolist(), c.indices.tolist(), c.dense.tolist()
    ([0, 1, 3, 4, 6, 7], [2, 0, 1, 2, 0, 1, 2], [5.0, 6.0, 5.0, 6.0, 5.0])
    """
    reps, rest = divmod(count, rows.n)
    out = Rows(*_cycle_csr(rows.indptr, rows.indices, rows.values, reps, rest))
    for name in _PER_ROW:
        t = getattr(rows, name)
        if t is not None:
            setattr(out, name, torch.cat([t.repeat((reps,) + (1,) * (t.dim() - 1)), t[:rest]]))
    if rows.lab_indptr is not None:
        out.lab_indptr, out.lab_indices, out.lab_values = _cycle_csr(
            rows.lab_indptr, rows.lab_indices, rows.lab_values, reps, rest)
    return out


def _split_csr(indptr, indices, values, nb, bs):
    """Per-batch (indptr, indices, values) views of the first ``nb * bs`` rows."""
    bounds = indptr[0:nb * bs + 1:bs]
    counts = (bounds[1:] - bounds[:-1]).tolist()
    end = int(bounds[-1])
    ips = torch.cat([indptr[:nb * bs].view(nb, bs), bounds[1:, None]], dim=1) - bounds[:-1, None]
    return ips.unbind(0), torch.split(indices[:end], counts), torch.split(values[:end], counts)


def split_rows(rows, bs):
    """Cut ``rows`` into full batches of ``bs`` rows (views, built in bulk) and the rest.

    >>> r = Rows(torch.tensor([0, 1, 1, 3]), torch.tensor([2, 0, 1]), torch.tensor([1., 2., 3.]),
    ...          dense=torch.tensor([5., 6., 7.]))
    >>> full, rest = split_rows(r, 2)
    >>> [(b.indptr.tolist(), b.indices.tolist(), b.dense.tolist()) for b in full], rest.n
    ([([0, 1, 1], [2], [5.0, 6.0])], 1)
    """
    nb = rows.n // bs
    if nb == 0:
        return [], rows
    ip, ind, val = _split_csr(rows.indptr, rows.indices, rows.values, nb, bs)
    lab = (_split_csr(rows.lab_indptr, rows.lab_indices, rows.lab_values, nb, bs)
           if rows.lab_indptr is not None else [[None] * nb] * 3)
    per_row = {name: [None] * nb if getattr(rows, name) is None
               else getattr(rows, name)[:nb * bs].view(nb, bs).unbind(0) for name in _PER_ROW}
    cols = [ip, ind, val, per_row["dense"], *lab, per_row["qids"], per_row["weights"]]
    batches = [Rows(*parts) for parts in zip(*cols)]
    return batches, rows.slice(nb * bs, rows.n)


def _empty(n, dtype):
    """An uninitialised 1-D numpy array from torch's allocator, on ordinary pages: a load
    writes its result once, front to back, so huge pages save it no TLB misses, and
    faulting them in cost a process's first load 1.3-2x its time (each is zeroed whole,
    and the kernel may compact memory to find one; NumPy's own allocator asks for them on
    large arrays). Measured in BENCHMARKS.md, "LibSVM parsing"."""
    return torch.empty((n,), dtype=torch_dtype(dtype)).numpy()


class Growable:
    """A 1-D numpy-backed tensor that grows by appending (whole-file loads).

    Capacity starts at ``capacity`` items; untouched capacity is address space
    only, so a generous estimate costs no memory.

    >>> g = Growable(np.int64, 2)
    >>> g.append(np.array([1, 2, 3])); g.append(np.array([4]))
    >>> g.tensor().tolist()
    [1, 2, 3, 4]
    """

    def __init__(self, dtype, capacity=1024):
        self._buf = _empty(max(int(capacity), 16), dtype)
        self.n = 0

    def _room(self, need):
        """Capacity for ``need`` items, the memory about to be written mapped in one call."""
        if need <= self._buf.shape[0]:
            memory.populate(self._buf, self.n, need)
            return
        grown = _empty(max(need, int(self._buf.shape[0] * 1.5)), self._buf.dtype)
        memory.populate(grown, 0, need)
        grown[:self.n] = self._buf[:self.n]
        self._buf = grown

    def append(self, a):
        need = self.n + a.shape[0]
        self._room(need)
        self._buf[self.n:need] = a
        self.n = need

    def append_shifted(self, a, shift):
        """Append ``a + shift`` (indptr pieces)."""
        need = self.n + a.shape[0]
        self._room(need)
        np.add(a, shift, out=self._buf[self.n:need])
        self.n = need

    def tensor(self):
        """The items as a tensor (a copy when the buffer is mostly unused, else a view)."""
        if self.n * 2 < self._buf.shape[0] and self.n < (1 << 20):
            return torch.from_numpy(self._buf[:self.n].copy())
        return torch.from_numpy(self._buf[:self.n])

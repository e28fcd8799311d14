"""``LibSVMIter``: CSR batches from LibSVM files, parsed in the background, in bounded memory."""
import os
from collections import deque

import numpy as np
import torch

from ...base import InvalidArgumentError, InvalidArgumentTypeError, SparsenetError
from ...context import as_context, cpu, place
from ...ndarray.csr import CSRNDArray
from ...kvstore import collective
from ...ndarray.ndarray import NDArray
from . import kernel
from ..base import DataBatch, DataDesc, DataIter
from .errors import LibSVMFormatError
from .load import Accumulator
from .options import DEFAULT_MAX_LINE_BYTES, ParseOptions
from .rows import Rows, cat_rows, cycle_rows, rows_from_parsed, split_rows
from .source import (DEFAULT_CHUNK_SIZE, check_part, count_rows_before, list_files)
from .stream import ChunkStream, claim

__all__ = ["LibSVMIter"]

#: A cached part with at most this many batches keeps them ready-made across epochs.
_MAX_REPLAY_BATCHES = 1 << 16

#: The most ready-made batches of a cached part :meth:`LibSVMIter.next_group` hands out at once.
GROUP_BATCHES = 16


def _shape1(shape, name):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    try:
        shape = tuple(int(s) for s in shape)
    except TypeError:
        raise InvalidArgumentTypeError(
            f"{name} must be a 1-D shape such as (1000000,), got {shape!r}") from None
    if len(shape) != 1 or shape[0] <= 0:
        raise InvalidArgumentError(
            f"{name} must be a 1-D shape with a positive size such as (1000000,), "
            f"got {shape}")
    return shape


def _open_stream(it):
    """The data stream of a pass over ``it``'s part: one :func:`~.stream.head_start` began
    for it, else a new one."""
    args = (it._files, it._opts, it._num_parts, it._part_index, it._chunk_size)
    early = claim(*args, ahead=it._ahead)
    return early if early is not None else ChunkStream(*args, it._ahead)


class _Epoch:
    """One streaming pass over the part: blocks of rows (one per data chunk), labels aligned."""

    def __init__(self, it):
        self.it = it
        self.data = _open_stream(it)
        self.label = None
        self.rows_out = 0
        if it._label_files is not None:
            self.label = ChunkStream(it._label_files, it._label_opts, chunk_size=it._chunk_size,
                                     ahead=max(1, it._ahead // 2))
        self.label_buf = deque()
        self.label_skip = None
        self.label_rows_read = 0

    def start(self):
        """Start parsing in the background now."""
        self.data.start()
        if self.label is not None:
            self.label.start()

    def close(self):
        self.data.close()
        if self.label is not None:
            self.label.close()

    def _next_data(self):
        for chunk in self.data:
            rows = rows_from_parsed(chunk.parsed, self.it._data_mode)
            if rows.n:
                return rows
        return None

    def _take_labels(self, n):
        """The next ``n`` label rows (fewer only when the label file ends)."""
        got, pieces = 0, []
        while got < n:
            if not self.label_buf:
                for chunk in self.label:
                    if chunk.parsed.nrows:
                        self.label_buf.append(rows_from_parsed(chunk.parsed, None))
                        break
                else:
                    break
            r = self.label_buf[0]
            k = min(n - got, r.n)
            if k == r.n:
                pieces.append(self.label_buf.popleft())
            else:
                pieces.append(r.slice(0, k))
                self.label_buf[0] = r.slice(k, r.n)
            got += k
        self.label_rows_read += got
        return pieces, got

    def _rest(self, stream, first=0):
        n = first
        for chunk in stream:
            n += chunk.parsed.nrows
        return n

    def next_rows(self):
        """The rows of the next data chunk with their labels, or None at the end of the part."""
        rows = self._next_data()
        it = self.it
        if self.label is not None:
            if self.label_skip is None:
                self.label_skip = it._label_row0()
                while self.label_skip:
                    _, got = self._take_labels(min(self.label_skip, 1 << 20))
                    if not got:
                        raise it._mismatch(
                            self.label_rows_read, self._rest(self.data, rows.n if rows else 0))
                    self.label_skip -= got
            if rows is not None:
                pieces, got = self._take_labels(rows.n)
                if got < rows.n:
                    data_rows = self.rows_out + self._rest(self.data, rows.n)
                    raise it._mismatch(self.label_rows_read, data_rows)
                lab = cat_rows(pieces)
                rows.lab_indptr, rows.lab_indices, rows.lab_values = (
                    lab.indptr, lab.indices, lab.values)
            elif it._last_part:
                extra = sum(r.n for r in self.label_buf) + self._rest(self.label)
                self.label_buf.clear()
                if extra:
                    raise it._mismatch(self.label_rows_read + extra, self.rows_out)
        if rows is not None:
            self.rows_out += rows.n
        return rows


def physical_memory():
    """This machine's physical memory in bytes, or None where the system does not say.

    >>> physical_memory() is None or physical_memory() > 2**20
    True
    """
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


class LibSVMIter(DataIter):
    """Batches of CSR data read from LibSVM text files, as MXNet's ``mx.io.LibSVMIter``.

    Each line is ``label [qid:q] index:value index:value ... [# comment]``.
    Files are parsed by a compiled, validating kernel in background threads
    (byte-range chunks, GIL released) while the consumer trains; memory is
    bounded by ``prefetch_buffer`` chunks of ``chunk_size`` bytes, not by the
    file. A part that fits in ``cache_bytes`` is parsed once and kept, so later
    epochs only slice it.

    Parameters
    ----------
    data_libsvm : str or os.PathLike
        A file, or a directory whose files are read in name order. ``.gz``,
        ``.zst``, ``.xz`` and ``.bz2`` files are decompressed.
    data_shape : tuple of int
        ``(num_features,)``: every index must be below it (checked).
    label_libsvm : str, optional
        A LibSVM file whose rows' features are the labels (CSR batches of
        ``label_shape``); it must have one row per data row. Default: use the
        labels at the start of the data lines.
    label_shape : tuple of int
        ``(1,)`` for line labels (batches of shape ``(batch_size,)``), else the
        width of the CSR labels (label file or ``multilabel``).
    batch_size : int
    round_batch : bool
        ``True`` (MXNet's default): a short last batch is filled with rows from
        the start of the part (wrapping around as often as needed) and
        ``pad``/``getpad()`` says how many; those rows are *not* consumed, so
        the next epoch starts at row 0 again. ``False``: the last batch is
        short (shape ``(rows_left, ...)``, ``pad == 0``). Either way every
        epoch sees every row exactly once.
    num_parts, part_index : int
        Read only part ``part_index`` of ``num_parts`` byte ranges; every line
        belongs to exactly one part. Not given, in a process of a distributed
        job that created a ``'dist*'`` kvstore (:mod:`sparsenet.kvstore.dist`),
        they are the number of workers and this worker's rank; else 1 and 0.
        With at least as many compressed files as
        parts, each part owns whole compressed files (balanced by size; see
        :mod:`~sparsenet.io.libsvm.source`) and decompresses only those.
    prefetch_buffer : int
        Chunks parsed ahead of the consumer.
    ctx : Context or str, optional
        Where batches go (``'cpu'``, ``'gpu'``, ``mx.gpu(0)``); default CPU.
    dtype : {'float32', 'float64'}, optional
        Values and labels (default float32).
    zero_based : bool
        Indices count from 0 (MXNet's convention and the default) or from 1.
    duplicates, strict_order, allow_nonfinite
        Validation options, as in :func:`~sparsenet.io.load_libsvm`.
    multilabel : bool
        Line labels are class-id lists (``1,3``), given as CSR batches
        ``(batch_size, label_shape[0])`` with 1 at each class.
    weights : bool
        Line labels may carry an instance weight, ``label:weight`` (1 where a line
        has none): each batch's ``label`` list then ends with the ``(batch_size,)``
        weights, named ``label_name + '_weight'`` in ``provide_label`` (for a loss's
        ``sample_weight``). Without it a ``label:weight`` token is an error.
    data_name, label_name : str
        Names in ``provide_data``/``provide_label`` (``'data'``, ``'softmax_label'``).
    max_line_bytes : int
        The longest line a compressed file may hold (decompressed; default 128 MiB):
        a longer one raises :class:`~sparsenet.io.LibSVMFormatError` naming the file
        and line, instead of holding it whole in memory.
    chunk_size : int
        Bytes of text per background parsing task (default 4 MiB).
    cache_bytes : int, optional
        Keep parsed parts up to this many bytes of text in memory across epochs
        (default ``prefetch_buffer * chunk_size``; 0 streams every epoch). A
        cached part's batches are made once and handed out again each epoch
        (a few microseconds per batch); they share storage with the cache, so
        copy a batch before modifying it in place.

    Examples
    --------
    >>> import os, tempfile
    >>> import sparsenet as mx
    >>> p = os.path.join(tempfile.mkdtemp(), 'd.svm')
    >>> with open(p, 'w') as f:
    ...     _ = f.write('1 0:1 2:2\\n0 1:3\\n1 3:4\\n')
    >>> it = mx.io.LibSVMIter(data_libsvm=p, data_shape=(4,), batch_size=2)
    >>> for batch in it:
    ...     print(batch.data[0].stype, batch.data[0].shape, batch.label[0].asnumpy(), batch.pad)
    csr (2, 4) [1. 0.] 0
    csr (2, 4) [1. 1.] 1
    >>> it.reset()
    >>> it.next().data[0].asnumpy()
    array([[1., 0., 2., 0.],
           [0., 3., 0., 0.]], dtype=float32)
    """

    def __init__(self, data_libsvm, data_shape, label_libsvm=None, label_shape=(1,),
                 batch_size=1, round_batch=True, num_parts=None, part_index=None,
                 prefetch_buffer=4,
                 ctx=None, dtype=None, *, zero_based=True, duplicates="error",
                 strict_order=False, allow_nonfinite=False, multilabel=False, weights=False,
                 data_name="data",
                 label_name="softmax_label", chunk_size=DEFAULT_CHUNK_SIZE, cache_bytes=None,
                 max_line_bytes=DEFAULT_MAX_LINE_BYTES):
        super().__init__(batch_size)
        if not isinstance(batch_size, (int, np.integer)) or isinstance(batch_size, bool) \
                or batch_size < 1:
            raise InvalidArgumentError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.batch_size = int(batch_size)
        if num_parts is None and part_index is None:
            num_parts, part_index = collective.joined_world()
        num_parts = 1 if num_parts is None else num_parts
        part_index = 0 if part_index is None else part_index
        check_part(num_parts, part_index)
        if label_libsvm in ("NULL", ""):
            label_libsvm = None
        self._data_shape = _shape1(data_shape, "data_shape")
        self._label_shape = _shape1(label_shape, "label_shape")
        if label_libsvm is None and not multilabel and self._label_shape != (1,):
            raise InvalidArgumentError(
                f"label_shape must be (1,) when the labels come from the data "
                f"lines, got {self._label_shape}; give label_libsvm or "
                f"multilabel=True for wider labels")
        if label_libsvm is not None and multilabel:
            raise InvalidArgumentError("give either label_libsvm or multilabel=True, not both")
        self._round_batch = bool(round_batch)
        self._num_parts, self._part_index = num_parts, part_index
        self._last_part = part_index == num_parts - 1
        self._ahead = max(1, int(prefetch_buffer))
        self._chunk_size = int(chunk_size)
        self._ctx = as_context(ctx) if ctx is not None else cpu()
        self._device = self._ctx.torch_device
        self._opts = ParseOptions(zero_based=zero_based, duplicates=duplicates,
                                  strict_order=strict_order, allow_nonfinite=allow_nonfinite,
                                  dtype="float32" if dtype is None else dtype,
                                  multilabel=multilabel, num_features=self._data_shape[0],
                                  num_labels=self._label_shape[0] if multilabel else None,
                                  weights=weights, max_line_bytes=max_line_bytes)
        self._label_opts = ParseOptions(zero_based=zero_based, duplicates=duplicates,
                                        strict_order=strict_order,
                                        allow_nonfinite=allow_nonfinite, dtype=self._opts.dtype,
                                        num_features=self._label_shape[0],
                                        max_line_bytes=max_line_bytes)
        self._files = list_files(data_libsvm, "data_libsvm")
        self._label_files = (list_files(label_libsvm, "label_libsvm")
                             if label_libsvm is not None else None)
        self._data_path, self._label_path = str(data_libsvm), str(label_libsvm)
        self._data_mode = ("multilabel" if multilabel
                           else None if label_libsvm is not None else "dense")
        self._csr_label = label_libsvm is not None or multilabel
        self.data_name, self.label_name = data_name, label_name
        self._dtype = self._opts.dtype.type
        if (self._label_files is not None and num_parts > 1
                and any(f.compression is not None for f in self._files)):
            raise InvalidArgumentError(
                "label_libsvm with num_parts > 1 needs uncompressed data files "
                "(compressed files are sharded by blocks, so their rows cannot be "
                "matched to label rows); decompress the data or use line labels")
        self._row0 = None
        self._head = None  # the first batch of the part, for wrapping the last batch
        self._cache = None
        self._replay = None
        self._epoch = None
        self._batch = None
        self._arange = np.zeros(0, dtype=np.int64)
        if cache_bytes is None:
            cache_bytes = self._ahead * self._chunk_size
        plain = all(f.compression is None for f in self._files + (self._label_files or []))
        part_bytes = sum(f.size for f in self._files) // num_parts
        if plain and part_bytes <= cache_bytes:
            self._load_cache()
        else:
            self._epoch = _Epoch(self)
            self._epoch.start()
            self._start_epoch()

    # ------------------------------------------------------------------ setup helpers
    def _label_row0(self):
        """Label rows before this part (data rows of the earlier parts)."""
        if self._label_files is None or self._part_index == 0:
            return 0
        if self._row0 is None:
            counter = kernel.count_rows
            self._row0 = count_rows_before(self._files, self._num_parts, self._part_index,
                                           counter, self._chunk_size)
        return self._row0

    def _mismatch(self, label_rows, data_rows):
        """The error for a label file whose rows do not match the data's."""
        return LibSVMFormatError(self._mismatch_text(label_rows, data_rows),
                                 path=self._label_path)

    def _mismatch_text(self, label_rows, data_rows):
        if self._num_parts == 1:
            return (f"label_libsvm '{self._label_path}' has {label_rows} rows but data_libsvm "
                    f"'{self._data_path}' has {data_rows}: every data row needs one label row "
                    f"(rows are lines that are not blank or comments)")
        r0 = self._label_row0()
        return (f"label_libsvm '{self._label_path}' ends after {label_rows} rows, but part "
                f"{self._part_index} of {self._num_parts} of data_libsvm '{self._data_path}' "
                f"needs label rows {r0} to {r0 + data_rows - 1}"
                if label_rows < r0 + data_rows else
                f"label_libsvm '{self._label_path}' has {label_rows} rows but data_libsvm "
                f"'{self._data_path}' has {r0 + data_rows}: every data row needs one label row")

    def _load_cache(self):
        """Parse the whole part once; later epochs replay its batches."""
        acc = Accumulator(self._opts)
        stream = _open_stream(self)
        try:
            for c in stream:
                acc.add(c.parsed, c.nbytes)
        finally:
            stream.close()
        arrays = acc.arrays_or_empty()
        vdt = arrays["values"].dtype
        rows = Rows(arrays["indptr"], arrays["indices"], arrays["values"])
        if self._opts.weights:
            rows.weights = arrays["weights"]
        if self._data_mode == "dense":
            rows.dense = arrays["labels"]
        elif self._data_mode == "multilabel":
            ids = arrays["label_ids"]
            rows.lab_indptr, rows.lab_indices = arrays["label_indptr"], ids
            rows.lab_values = torch.ones(ids.numel(), dtype=vdt)
        if self._label_files is not None:
            self._attach_label_file(rows)
        self._cache = rows.to(self._device)
        if self._cache.n // self.batch_size <= _MAX_REPLAY_BATCHES:
            self._start_epoch()
            replay = []
            while True:
                b = self._produce()
                if b is None:
                    break
                replay.append(b)
            self._replay = replay
        self._start_epoch()

    def _attach_label_file(self, rows):
        acc = Accumulator(self._label_opts)
        stream = ChunkStream(self._label_files, self._label_opts, chunk_size=self._chunk_size,
                             ahead=self._ahead)
        try:
            for c in stream:
                acc.add(c.parsed, c.nbytes)
        finally:
            stream.close()
        r0, n = self._label_row0(), rows.n
        total = acc.nrows
        if total < r0 + n or (self._last_part and total != r0 + n):
            raise self._mismatch(total, n)
        a = acc.arrays()
        if a is None:  # no data rows and no label rows
            return self._attach_empty_labels(rows)
        lab = Rows(a["indptr"], a["indices"], a["values"]).slice(r0, r0 + n)
        rows.lab_indptr, rows.lab_indices, rows.lab_values = lab.indptr, lab.indices, lab.values

    @staticmethod
    def _attach_empty_labels(rows):
        rows.lab_indptr = torch.zeros(1, dtype=torch.int64)
        rows.lab_indices = torch.zeros(0, dtype=torch.int64)
        rows.lab_values = rows.values.new_zeros(0)

    # ------------------------------------------------------------------ batching
    def _start_epoch(self):
        """Reset the batcher to the first row of the part."""
        self._queue = deque()
        self._partial = None
        self._ended = False
        self._row = 0
        self._pos = 0  # replay position
        if self._cache is not None:
            pending = [self._cache]
            self._source = lambda: pending.pop() if pending else None  # noqa: E731
        else:
            self._source = self._epoch.next_rows

    def _index(self, a, n):
        """Row numbers ``a .. a+n-1``: views of one array for a cached part (built once and
        replayed), fresh arrays when streaming (memory must not grow with the file)."""
        if self._cache is None:
            return np.arange(a, a + n, dtype=np.int64)
        if a + n > self._arange.shape[0]:
            self._arange = np.arange(self._cache.n, dtype=np.int64)
            self._arange.flags.writeable = False
        return self._arange[a:a + n]

    def _finish(self, rows):
        """(rows, pad, index) for a batch of ``rows`` starting at the current row."""
        a = self._row
        self._row += rows.n
        if self._head is None:
            self._head = rows.clone()  # small; frees the chunk it came from
        if rows.n == self.batch_size or not self._round_batch:
            return rows, 0, self._index(a, rows.n)
        pad = self.batch_size - rows.n
        head = self._head
        self._check_padding(head, pad)
        index = np.concatenate([self._index(a, rows.n), np.resize(np.arange(head.n), pad)])
        return cat_rows([rows, cycle_rows(head, pad)]), pad, index

    def _check_padding(self, head, pad):
        """Refuse, before allocating, a round batch whose padding (``pad`` rows cycled from the
        part's first rows) would not fit in this machine's memory."""
        need = (head.nbytes + 8 * head.n) * (pad // head.n + 1)  # the rows and the index
        have = physical_memory()
        if have is not None and need > have:
            raise InvalidArgumentError(
                f"LibSVMIter: batch_size={self.batch_size} with round_batch=True pads the last "
                f"batch of {self._data_path!r} with {pad} rows repeated from its first "
                f"{head.n}: about {need / 2**30:.1f} GiB, more than this machine's "
                f"{have / 2**30:.1f} GiB of memory; give a smaller batch_size, or "
                f"round_batch=False")

    def _produce(self):
        """The next (rows, pad, index) of the epoch, or None at its end."""
        bs = self.batch_size
        while not self._queue:
            if self._ended:
                return None
            block = self._source()
            if block is None:
                self._ended = True
                last, self._partial = self._partial, None
                return self._finish(last) if last is not None else None
            block = block.to(self._device)
            if self._partial is not None:
                take = min(bs - self._partial.n, block.n)
                self._partial = cat_rows([self._partial, block.slice(0, take)])
                block = block.slice(take, block.n)
                if self._partial.n == bs:
                    self._queue.append(self._partial)
                    self._partial = None
            full, rest = split_rows(block, bs)
            self._queue.extend(full)
            if rest.n:
                self._partial = rest
        return self._finish(self._queue.popleft())

    # ------------------------------------------------------------------ DataIter API
    @property
    def provide_data(self):
        """``[DataDesc(data_name, (batch_size, num_features), dtype)]``."""
        return [DataDesc(self.data_name, (self.batch_size,) + self._data_shape, self._dtype)]

    @property
    def provide_label(self):
        """``[DataDesc(label_name, (batch_size,) or (batch_size, width), dtype)]``, and the
        weights' ``DataDesc(label_name + '_weight', (batch_size,))`` with ``weights=True``."""
        shape = ((self.batch_size,) + self._label_shape if self._csr_label
                 else (self.batch_size,))
        descs = [DataDesc(self.label_name, shape, self._dtype)]
        if self._opts.weights:
            descs.append(DataDesc(self.label_name + "_weight", (self.batch_size,), self._dtype))
        return descs

    def reset(self):
        """Start the next epoch at the first row of the part."""
        with self._turns:
            if self._cache is None and self._epoch is not None and self._epoch.rows_out:
                self._epoch.close()
                self._epoch = _Epoch(self)
                self._epoch.start()
            if self._cache is not None or self._epoch.rows_out or self._row:
                self._start_epoch()
            self._batch = None

    def iter_next(self):
        """Advance to the next batch; False at the end of the epoch."""
        with self._turns:
            if self._replay is not None:
                if self._pos >= len(self._replay):
                    self._batch = None
                    return False
                self._batch = self._replay[self._pos]
                self._pos += 1
                return True
            self._batch = self._produce()
            return self._batch is not None

    def _current(self):
        batch = self._batch
        if batch is None:
            raise SparsenetError("no current batch: call iter_next() (or next()) first, and "
                                 "reset() after the end of an epoch")
        return batch

    def _rows(self):
        return self._current()[0]

    def _own(self, t):
        """``t`` as the caller's to edit: a copy when it lives in the epoch cache (which later
        epochs replay), else ``t`` itself (parsed for this batch). Labels are copied (code
        edits them: MXNet hands out fresh ones); the data's parts stay shared with the cache,
        read-only (an operator never writes its inputs)."""
        return t.clone() if self._cache is not None else t

    def getdata(self):
        """``[CSRNDArray (batch, num_features)]`` of the current batch."""
        return self._data_of(self._rows())

    def _data_of(self, r):
        return [place(CSRNDArray._from_parts(r.values, r.indices, r.indptr,
                                             (r.indptr.shape[0] - 1, self._data_shape[0])),
                      self._ctx)]

    def getlabel(self):
        """``[NDArray (batch,)]`` line labels, or ``[CSRNDArray (batch, width)]``; with
        ``weights=True`` followed by the ``(batch,)`` instance weights."""
        return self._label_of(self._rows())

    def _label_of(self, r):
        if self._csr_label:
            out = [CSRNDArray._from_parts(self._own(r.lab_values), self._own(r.lab_indices),
                                          r.lab_indptr,
                                          (r.lab_indptr.shape[0] - 1, self._label_shape[0]))]
        else:
            out = [NDArray(self._own(r.dense))]
        if r.weights is not None:
            out.append(NDArray(self._own(r.weights)))
        return [place(a, self._ctx) for a in out]

    def getpad(self):
        """Padding rows at the end of the current batch (round_batch only)."""
        return self._current()[1]

    def getindex(self):
        """Row numbers (within the part) of the current batch, padding included."""
        return self._current()[2]

    def next(self):
        """The next :class:`DataBatch` (StopIteration at the end of the epoch).

        Threads sharing the iterator take turns: each call hands one whole batch to
        one thread.
        """
        with self._turns:
            if not self.iter_next():
                raise StopIteration
            rows, pad, index = self._batch
        return DataBatch(self._data_of(rows), self._label_of(rows), pad=pad, index=index)

    def next_group(self):
        """The next batches of the epoch, several at once: a list of :class:`DataBatch`, the
        same batches in the same order as as many :meth:`next` calls give, or ``[]`` at the
        end of the epoch.

        A streamed part hands out every batch its next parsed chunk completes (a chunk of
        the default 4 MiB holds about eight batches of 1024 rows of 30 features), a cached
        part up to :data:`GROUP_BATCHES` of its ready-made batches. A consumer that reads in
        another thread than it trains (``sparsenet train``) takes a whole group in one
        hand-over, and the work of making it is done in bulk.

        >>> import os, tempfile
        >>> import sparsenet as mx
        >>> p = os.path.join(tempfile.mkdtemp(), 'd.svm')
        >>> with open(p, 'w') as f:
        ...     _ = f.write('1 0:1\\n0 1:3\\n1 3:4\\n')
        >>> it = mx.io.LibSVMIter(data_libsvm=p, data_shape=(4,), batch_size=2,
        ...                       round_batch=False)
        >>> [[b.label[0].asnumpy().tolist() for b in it.next_group()] for _ in range(2)]
        [[[1.0, 0.0], [1.0]], []]
        """
        with self._turns:
            if self._replay is not None:
                group = self._replay[self._pos:self._pos + GROUP_BATCHES]
                self._pos += len(group)
            else:
                first = self._produce()
                group = [] if first is None else [first]
                while group and self._queue:  # the rest of the chunk: full batches
                    group.append(self._finish(self._queue.popleft()))
            self._batch = group[-1] if group else None
            return [DataBatch(self._data_of(rows), self._label_of(rows), pad=pad, index=index)
                    for rows, pad, index in group]

    def __del__(self):
        if getattr(self, "_epoch", None) is not None:
            self._epoch.close()

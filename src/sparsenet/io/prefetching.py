"""``PrefetchingIter``: the next batch of one or several iterators, read in a background thread."""
import collections
import threading
import weakref

from ..base import InvalidArgumentError, ParameterAssertionError, SparsenetError
from .base import DataBatch, DataDesc, DataIter

__all__ = ["PrefetchingIter", "IteratorMismatchError"]

_CLOSE_WAIT_S = 10.0  # how long closing waits for a fetch in flight


class IteratorMismatchError(ParameterAssertionError):
    """The iterators zipped by a :class:`PrefetchingIter` disagree: one ends before another,
    or their batches have different ``pad``. An ``AssertionError`` (MXNet's type), a
    ``ValueError`` and an ``MXNetError``."""


class _Failure:
    """An exception raised by iterator ``index`` in the background thread."""

    __slots__ = ("exc", "index")

    def __init__(self, exc, index):
        self.exc, self.index = exc, index


_MAX_AHEAD = 8  # batches kept ready by default ...
_AHEAD_BYTES = 64 << 20  # ... within this many bytes (at least one batch)


def _batches_nbytes(batches):
    """Bytes held by the arrays of one fetch (a list of DataBatch)."""
    total = 0
    for b in batches:
        for a in list(b.data or []) + list(b.label or []):
            total += getattr(a, "nbytes", 0) or 0
    return total


def _terminal(result):
    """A fetch after which the thread fetches no more: a failure or an ended iterator."""
    return isinstance(result, _Failure) or any(b is None for b in result)


class _Worker:
    """The background thread: keeps the next fetches of every iterator ready.

    A fetch is the next batch of each iterator. Up to ``ahead`` fetches are kept
    ready; once the consumer has taken all but a quarter of them the thread
    fetches again, several in a row, so that it wakes up once per several
    batches (each wake-up and hand-over of the interpreter lock costs as much as
    a small batch). With ``ahead=None`` it is decided at the first fetch: up to
    eight fetches within 64 MiB. ``ahead=1`` is MXNet's one batch ahead. The
    thread stops at the end of the epoch and at a failure, and goes on when the
    consumer has taken it (a failure) or after :meth:`settle` (a reset).

    It holds the iterators but not the :class:`PrefetchingIter`, so the latter can
    be garbage-collected; its finalizer closes the worker, which ends the thread.
    """

    def __init__(self, iters, ahead=None):
        self.iters = iters
        self.ahead = ahead
        self.cond = threading.Condition(threading.Lock())
        self.ready = collections.deque()  # fetches in order: lists of batches or _Failure
        self.running = False  # a refill is requested or running
        self.halt = False  # stop the refill after the fetch in progress
        self.closed = False
        self.thread = threading.Thread(target=self._run, name="PrefetchingIter", daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            with self.cond:
                while not self.running and not self.closed:
                    self.cond.wait()
                if self.closed:
                    return
            while True:
                result = self._fetch()
                if self.ahead is None:
                    size = 0 if isinstance(result, _Failure) else _batches_nbytes(
                        [b for b in result if b is not None])
                    self.ahead = max(1, min(_MAX_AHEAD, _AHEAD_BYTES // max(size, 1)))
                with self.cond:
                    self.ready.append(result)
                    done = (_terminal(result) or self.halt or self.closed
                            or len(self.ready) >= self.ahead)
                    if done:
                        self.running = self.halt = False
                    self.cond.notify_all()
                if done:
                    break

    def _fetch(self):
        batches = []
        for k, it in enumerate(self.iters):
            try:
                batches.append(it.next())
            except StopIteration:
                batches.append(None)
            except BaseException as e:  # noqa: BLE001 - handed to the consumer, raised there
                return _Failure(e, k)
        return batches

    def request(self):
        """Start fetching (the thread must be idle and nothing ready: after settle)."""
        with self.cond:
            self.running = True
            self.cond.notify_all()

    def take(self):
        """The next fetch, once it is ready (fetching starts again when it is due).

        The end of the epoch stays ready (every later call gives it again, as
        MXNet's); a failure is handed out once: the next call fetches again.
        """
        with self.cond:
            if not self.ready and not self.running:
                self.running = True
                self.cond.notify_all()
            while not self.ready and not self.closed:
                self.cond.wait()
            if not self.ready:
                return None
            result = self.ready[0]
            if isinstance(result, _Failure) or not _terminal(result):
                self.ready.popleft()
            if not self.running and not (self.ready and _terminal(self.ready[-1])) \
                    and len(self.ready) <= ((self.ahead or 1) - 1) // 4:
                self.running = True
                self.cond.notify_all()
            return result

    def settle(self):
        """Stop fetching after the fetch in progress, wait for it, and drop what is ready."""
        with self.cond:
            if self.running:
                self.halt = True
            while self.running and not self.closed:
                self.cond.wait()
            self.ready.clear()

    def close(self):
        """End the thread: at once when idle, else after the fetch in progress (waited for
        up to ten seconds; a longer fetch finishes in the background)."""
        with self.cond:
            self.closed = True
            self.cond.notify_all()
        if threading.current_thread() is not self.thread:
            self.thread.join(_CLOSE_WAIT_S)


def _renamed(descs, renames, what):
    """``descs`` of one iterator under its ``{old: new}`` map (layout and dtype kept)."""
    out = []
    for d in descs:
        d = d if isinstance(d, DataDesc) else DataDesc(*d)
        if d.name not in renames:
            raise InvalidArgumentError(f"PrefetchingIter: {what} {renames!r} has no new name "
                                       f"for {d.name!r}; it needs one entry for each of "
                                       f"{[x[0] for x in descs]}")
        out.append(DataDesc(renames[d.name], d.shape, d.dtype, d.layout))
    return out


def _check_renames(renames, n, what):
    if renames is None:
        return None
    if not isinstance(renames, (list, tuple)) or len(renames) != n \
            or not all(isinstance(r, dict) for r in renames):
        raise InvalidArgumentError(f"PrefetchingIter: {what} must be a list of {n} dicts "
                                   f"{{old name: new name}}, one per iterator, got {renames!r}")
    return list(renames)


class PrefetchingIter(DataIter):
    """Read the next batch of one or several iterators in a background thread, as MXNet's.

    With several iterators their batches are zipped: each batch's ``data``
    (and ``label``) is the concatenation of the iterators' lists, in order;
    ``pad`` and ``index`` are the first iterator's. The thread starts fetching
    at construction and keeps the next batches ready while the current one is
    used: up to ``ahead`` of them (MXNet keeps one), fetched several in a row
    once all but a quarter have been taken, because every wake-up of the thread
    costs as much as reading a small batch. It ends when the iterator is garbage
    collected; :meth:`reset` stops fetching after the batch in progress, resets
    every iterator and starts fetching the new epoch.

    Parameters
    ----------
    iters : DataIter or list of DataIter
        The iterators; they must give the same number of batches with equal
        ``pad``.
    rename_data : list of dict, optional
        One ``{old name: new name}`` per iterator, covering every name of its
        ``provide_data``.
    rename_label : list of dict, optional
        The same for ``provide_label``.
    ahead : int, optional
        How many batches to keep ready (sparsenet addition, keyword only). By
        default up to 8, as many as fit in 64 MiB by the first batch's size (at
        least one); ``ahead=1`` reads one batch ahead, as MXNet does.

    Raises
    ------
    IteratorMismatchError
        From :meth:`iter_next`, when one iterator ends before another or the
        pads differ (MXNet raises ``AssertionError``, or ``AttributeError`` when
        the first iterator is the longer one).
    Exception
        An exception raised by an iterator in the background thread is raised
        again by :meth:`iter_next`, the same object with its traceback (the
        thread's frames).

    Examples
    --------
    >>> import sparsenet as mx
    >>> a = mx.io.NDArrayIter({'data': mx.nd.ones((4, 2))}, batch_size=2)
    >>> b = mx.io.NDArrayIter({'data': mx.nd.zeros((4, 3))}, batch_size=2)
    >>> it = mx.io.PrefetchingIter([a, b], rename_data=[{'data': 'x'}, {'data': 'y'}])
    >>> [(d.name, d.shape) for d in it.provide_data]
    [('x', (2, 2)), ('y', (2, 3))]
    >>> [[d.shape for d in batch.data] for batch in it]
    [[(2, 2), (2, 3)], [(2, 2), (2, 3)]]
    >>> it.reset()
    >>> it.next().data[0].asnumpy()
    array([[1., 1.],
           [1., 1.]], dtype=float32)
    """

    def __init__(self, iters, rename_data=None, rename_label=None, *, ahead=None):
        super().__init__()
        if ahead is not None and (isinstance(ahead, bool) or not isinstance(ahead, int)
                                  or ahead < 1):
            raise InvalidArgumentError(f"PrefetchingIter: ahead must be a positive integer "
                                       f"(batches kept ready) or None, got {ahead!r}")
        if not isinstance(iters, (list, tuple)):
            iters = [iters]
        iters = list(iters)
        if not iters:
            raise InvalidArgumentError("PrefetchingIter: iters must hold at least one iterator")
        for k, it in enumerate(iters):
            if not all(hasattr(it, a) for a in ("next", "reset", "provide_data")):
                raise InvalidArgumentError(f"PrefetchingIter: iters[{k}] must be a DataIter "
                                           f"(next, reset, provide_data), got "
                                           f"{type(it).__name__}")
        self.n_iter = len(iters)
        self.iters = iters
        self.rename_data = _check_renames(rename_data, self.n_iter, "rename_data")
        self.rename_label = _check_renames(rename_label, self.n_iter, "rename_label")
        first = self.provide_data  # validates the renames
        self.batch_size = first[0][1][0] if first else 0
        self.provide_label  # noqa: B018 - validates the label renames
        self.current_batch = None
        self._worker = _Worker(iters, ahead)
        self._finalizer = weakref.finalize(self, self._worker.close)
        self._worker.request()

    @property
    def provide_data(self):
        """The iterators' ``provide_data``, concatenated and renamed."""
        return self._descs("provide_data", self.rename_data, "rename_data")

    @property
    def provide_label(self):
        """The iterators' ``provide_label``, concatenated and renamed."""
        return self._descs("provide_label", self.rename_label, "rename_label")

    def _descs(self, attr, renames, what):
        out = []
        for k, it in enumerate(self.iters):
            descs = list(getattr(it, attr, None) or [])
            out += descs if renames is None else _renamed(descs, renames[k], f"{what}[{k}]")
        return out

    def reset(self):
        """Stop fetching after the batch in progress, reset every iterator, and prefetch the
        new epoch."""
        with self._turns:
            self._worker.settle()
            for it in self.iters:
                it.reset()
            self._worker.request()

    def iter_next(self):
        """Take the prefetched batches (waiting if needed) and start fetching the next ones."""
        with self._turns:
            return self._advance()

    def _advance(self):
        result = self._worker.take()
        if isinstance(result, _Failure):
            _raise(result, self.iters)
        ended = [b is None for b in result]
        if any(ended):
            if not all(ended):
                raise IteratorMismatchError(
                    f"PrefetchingIter: iterators {[k for k, e in enumerate(ended) if e]} ended "
                    f"but {[k for k, e in enumerate(ended) if not e]} still give batches: "
                    f"every iterator needs the same number of batches per epoch")
            return False
        pads = [b.pad for b in result]
        if any(p != pads[0] for p in pads):
            raise IteratorMismatchError(f"PrefetchingIter: the iterators' batches have "
                                        f"different pad {pads}: every iterator needs the same "
                                        f"number of examples")
        data, label = [], []
        for b in result:
            data += list(b.data or [])
            label += list(b.label or [])
        self.current_batch = DataBatch(data, label, result[0].pad, result[0].index,
                                       provide_data=self.provide_data,
                                       provide_label=self.provide_label)
        return True

    def next(self):
        """The next zipped :class:`DataBatch` (StopIteration at the end of the epoch); threads
        sharing the iterator take turns, each call hands one whole batch to one thread."""
        with self._turns:
            if self._advance():
                return self.current_batch
        raise StopIteration

    def _current(self):
        if self.current_batch is None:
            raise SparsenetError("PrefetchingIter: no current batch: call iter_next() (or "
                                 "next()) first")
        return self.current_batch

    def getdata(self):
        """The data arrays of the current batch (every iterator's, in order)."""
        return self._current().data

    def getlabel(self):
        """The label arrays of the current batch (every iterator's, in order)."""
        return self._current().label

    def getindex(self):
        """The first iterator's example indices of the current batch."""
        return self._current().index

    def getpad(self):
        """The padding count of the current batch."""
        return self._current().pad


def _raise(failure, iters):
    """Raise the exception of the background thread again, in the caller's thread."""
    exc = failure.exc
    note = getattr(exc, "add_note", None)
    if note is not None:
        note(f"(raised by {type(iters[failure.index]).__name__} iters[{failure.index}] in "
             f"PrefetchingIter's background thread)")
    raise exc

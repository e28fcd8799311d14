"""``PrefetchingIter``: the next batch of one or several iterators, read in a background thread."""
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


class _Worker:
    """The background thread: on request, fetches the next batch of every iterator.

    It holds the iterators but not the :class:`PrefetchingIter`, so the latter can
    be garbage-collected; its finalizer closes the worker, which ends the thread.
    """

    def __init__(self, iters):
        self.iters = iters
        self.cond = threading.Condition(threading.Lock())
        self.wanted = False  # a fetch is requested or running
        self.result = None  # the last fetch: a list (None for an ended iterator) or a _Failure
        self.closed = False
        self.thread = threading.Thread(target=self._run, name="PrefetchingIter", daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            with self.cond:
                while not self.wanted and not self.closed:
                    self.cond.wait()
                if self.closed:
                    return
            result = self._fetch()
            with self.cond:
                self.result, self.wanted = result, False
                self.cond.notify_all()

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
        """Start fetching the next batches (the previous result is dropped)."""
        with self.cond:
            self.result, self.wanted = None, True
            self.cond.notify_all()

    def take(self):
        """The result of the fetch in flight (one is started if none is), once it is done.

        A failure is handed out once: the next call fetches again.
        """
        with self.cond:
            if not self.wanted and self.result is None:
                self.wanted = True
                self.cond.notify_all()
            while self.wanted and not self.closed:
                self.cond.wait()
            result = self.result
            if isinstance(result, _Failure):
                self.result = None
            return result

    def settle(self):
        """Wait for the fetch in flight, if any, and drop its result."""
        with self.cond:
            while self.wanted and not self.closed:
                self.cond.wait()
            self.result = None

    def close(self):
        """End the thread: at once when idle, else after the fetch in flight (waited for up
        to ten seconds; a longer fetch finishes in the background)."""
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
    at construction and after every batch taken, so the next batch is read
    while the current one is used. It ends when the iterator is garbage
    collected; :meth:`reset` waits for the fetch in flight, resets every
    iterator and starts fetching the new epoch.

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

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
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
        self._worker = _Worker(iters)
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
        """Wait for the fetch in flight, reset every iterator, and prefetch the new epoch."""
        self._worker.settle()
        for it in self.iters:
            it.reset()
        self._worker.request()

    def iter_next(self):
        """Take the prefetched batches (waiting if needed) and start fetching the next ones."""
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
        self._worker.request()
        return True

    def next(self):
        """The next zipped :class:`DataBatch` (StopIteration at the end of the epoch)."""
        if self.iter_next():
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

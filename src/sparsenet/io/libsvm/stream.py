"""Parse a part's chunks in the background, in order, with bounded read-ahead.

:class:`ChunkStream` keeps at most ``ahead`` chunks in flight. Plain-file chunks
are read (``os.pread``) and parsed by a shared thread pool; the kernel releases
the GIL, so the pool's threads parse in parallel while the consumer trains.
Compressed files are decompressed in order by the stream's own reader thread
(gzip by ISA-L's thread, which the reader thread cuts into chunks) and parsed
by the pool, so decompression and parsing overlap, a bounded number of bytes
at a time whatever the compression ratio; a ``.gz``/``.zst`` file of sized
members or frames is read like a plain file instead, each run of frames (about
``chunk_size`` bytes of text) decompressed and parsed by one pool thread.
Results come back in file order, and so do errors: a
bad line in chunk 7 is raised when the consumer reaches chunk 7, as the first
error in file order.

>>> import os, tempfile
>>> from sparsenet.io.libsvm.source import list_files
>>> from sparsenet.io.libsvm.options import ParseOptions
>>> d = tempfile.mkdtemp(); p = os.path.join(d, 'x.svm')
>>> with open(p, 'wb') as f:
...     _ = f.write(b'1 0:1\\n0 2:2\\n' * 3)
>>> s = ChunkStream(list_files(p), ParseOptions(), chunk_size=8)
>>> [c.parsed.nrows for c in s]
[2, 1, 1, 2]
"""
import os
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from ...base import InvalidArgumentError
from . import kernel
from .errors import KernelError, LibSVMFormatError, make_error
from .source import (DEFAULT_CHUNK_SIZE, FrameTask, RangeTask, StreamTask, count_newlines,
                     plan)

__all__ = ["ChunkStream", "ParsedChunk", "parse_chunk", "num_threads", "head_start", "claim"]

# chunks parsed ahead for one compressed file, at most (its chunk count is unknown up front)
_STREAM_AHEAD = 64
_pool = None
_pool_lock = threading.Lock()
# streams started by head_start() that no reader has claimed yet: key -> ChunkStream
_started = {}
_started_lock = threading.RLock()  # reentrant: close() may run from __del__


def num_threads():
    """Parsing threads: ``SPARSENET_IO_THREADS`` or the number of CPUs (at most 8)."""
    env = os.environ.get("SPARSENET_IO_THREADS")
    if env:
        n = int(env)
        if n < 1:
            raise InvalidArgumentError(f"SPARSENET_IO_THREADS must be >= 1, got {env!r}")
        return n
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


def _forget_pool():
    """In a forked child the pool's threads are gone: start a new pool on demand."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _shared_pool():
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(num_threads(), thread_name_prefix="sparsenet-libsvm")
        return _pool


class ParsedChunk(NamedTuple):
    """A parsed chunk: numpy CSR parts plus where the text came from."""

    parsed: object
    path: str
    offset: int
    nbytes: int


def parse_chunk(chunk, opts, backend=None):
    """Parse a :class:`~sparsenet.io.source.Chunk`; raise LibSVMFormatError if invalid."""
    out = kernel.parse(chunk.data, opts, backend)
    if isinstance(out, KernelError):
        raise make_error(out, chunk.data, opts, chunk.file.path, chunk.offset,
                         lambda: count_newlines(chunk.file, chunk.offset))
    return ParsedChunk(out, chunk.file.path, chunk.offset, len(chunk.data))


def _read_and_parse(task, opts, backend):
    # the thread's read buffer is reused: parse_chunk copies nothing out of it
    return parse_chunk(task.read(reuse=True), opts, backend)


class ChunkStream:
    """Iterate the parsed chunks of a part; parsing runs ahead in background threads.

    Parameters
    ----------
    files : list of SourceFile
    opts : ParseOptions
    num_parts, part_index : int
        The shard to read.
    chunk_size : int
        Bytes of text per parsing task.
    ahead : int
        Chunks parsed ahead of the consumer (bounds memory).
    backend : str, optional
        Kernel override (tests).
    """

    def __init__(self, files, opts, num_parts=1, part_index=0, chunk_size=DEFAULT_CHUNK_SIZE,
                 ahead=4, backend=None):
        tasks = list(plan(files, num_parts, part_index, chunk_size, opts.max_line_bytes))
        self._tasks = iter(tasks)
        self._opts, self._backend = opts, backend
        # never more chunks ahead than the part can hold: one per byte range of a plain
        # file; a compressed stream's count is unknown until it is read
        limit = 1 + sum(_STREAM_AHEAD if isinstance(t, StreamTask) else 1 for t in tasks)
        self._ahead = max(1, min(int(ahead), limit))
        self._pending = deque()
        self._stream = None  # generator of the compressed file being read
        self._reader = None
        self._closed = False
        self._done = False
        self._lock = threading.Lock()

    # the producer side --------------------------------------------------------
    def _next_future(self):
        """Submit the next chunk's parse; return its future, or None at the end.

        Runs in the reader thread when compressed files are involved.
        """
        pool = _shared_pool()
        while True:
            if self._closed:
                self._close_stream()
                return None
            if self._stream is not None:
                try:
                    chunk = next(self._stream)
                except StopIteration:
                    self._stream = None
                    continue
                return pool.submit(parse_chunk, chunk, self._opts, self._backend)
            task = next(self._tasks, None)
            if task is None:
                return None
            if isinstance(task, (RangeTask, FrameTask)):
                return pool.submit(_read_and_parse, task, self._opts, self._backend)
            assert isinstance(task, StreamTask)
            self._stream = task.chunks()

    def _close_stream(self):
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def _fill(self):
        while not self._done and len(self._pending) < self._ahead:
            if self._reader is None:
                self._reader = ThreadPoolExecutor(1, thread_name_prefix="sparsenet-libsvm-reader")
            self._pending.append(self._reader.submit(self._next_future))
            # a plain-file plan ends as soon as one submission returns None; we learn
            # that when we collect it (the reader runs submissions in order)

    def start(self):
        """Begin parsing ahead now (iteration does it on first use otherwise)."""
        if not self._closed:
            self._fill()

    def _lower(self, ahead):
        """Keep at most ``ahead`` chunks in flight from now on (those already started are
        kept, and handed out first)."""
        with self._lock:
            self._ahead = max(1, int(ahead))

    # the consumer side ---------------------------------------------------------
    def __iter__(self):
        return self

    def __next__(self):
        while True:
            if self._closed:
                raise StopIteration
            self._fill()
            if not self._pending:
                raise StopIteration
            outer = self._pending.popleft()
            try:
                inner = outer.result()
            except BaseException:
                self.close()
                raise
            if inner is None:
                self._done = True
                for f in self._pending:  # later submissions also found the end
                    f.result()
                self._pending.clear()
                self.close()
                raise StopIteration
            try:
                result = inner.result()
            except LibSVMFormatError as e:
                self.close()
                raise e.with_traceback(None)  # the worker's frames say nothing useful
            except BaseException:
                self.close()
                raise
            if result.nbytes == 0:
                continue
            return result

    def close(self):
        """Stop reading ahead and release the threads (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if _started:  # a head start nobody claimed: forget it
            with _started_lock:
                for key in [k for k, v in _started.items() if v is self]:
                    del _started[key]
        for f in self._pending:
            f.cancel()
        self._pending.clear()
        if self._reader is not None:
            # No submit() here: close() may run from __del__ inside another submit(),
            # and the executors' locks are not reentrant. A compressed file left open
            # is closed with its generator.
            self._reader.shutdown(wait=False)
            self._reader = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass


def _key(files, opts, num_parts, part_index, chunk_size):
    return (tuple(files), opts, int(num_parts), int(part_index), int(chunk_size))


def head_start(files, opts, chunks, num_parts=1, part_index=0, chunk_size=DEFAULT_CHUNK_SIZE):
    """Start parsing a part now, ``chunks`` chunks deep, for the reader made later with the
    same files, options, part and chunk size to take over (:func:`claim`).

    A program that knows what it will read before it can read it (``sparsenet train``,
    before ``import torch``: the kernel releases the GIL, so the chunks are parsed on
    another core meanwhile) calls this; memory is bounded by ``chunks`` parsed chunks.
    An unclaimed stream is closed by :meth:`ChunkStream.close` (the caller's).

    >>> import os, tempfile
    >>> from sparsenet.io.libsvm.source import list_files
    >>> from sparsenet.io.libsvm.options import ParseOptions
    >>> p = os.path.join(tempfile.mkdtemp(), 'x.svm')
    >>> with open(p, 'wb') as f:
    ...     _ = f.write(b'1 0:1\\n0 2:2\\n')
    >>> early = head_start(list_files(p), ParseOptions(), chunks=8)
    >>> claim(list_files(p), ParseOptions(), 1, 0, DEFAULT_CHUNK_SIZE, ahead=4) is early
    True
    """
    stream = ChunkStream(files, opts, num_parts, part_index, chunk_size, ahead=chunks)
    stream.start()
    with _started_lock:
        old = _started.pop(_key(files, opts, num_parts, part_index, chunk_size), None)
        _started[_key(files, opts, num_parts, part_index, chunk_size)] = stream
    if old is not None:
        old.close()
    return stream


def claim(files, opts, num_parts, part_index, chunk_size, ahead):
    """The stream :func:`head_start` began for exactly these arguments, from now on with at
    most ``ahead`` chunks in flight; None when there is none (or it was closed). A stream
    is claimed once: the next reader of the part starts afresh."""
    with _started_lock:
        stream = _started.pop(_key(files, opts, num_parts, part_index, chunk_size), None)
    if stream is None or stream._closed:
        return None
    stream._lower(ahead)
    return stream

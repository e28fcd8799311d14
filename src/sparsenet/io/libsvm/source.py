"""Where LibSVM text comes from: files, directories, gzip/bz2, byte ranges and shards.

A *part* of the input (``num_parts``/``part_index``) is cut into *chunks* of
whole lines that the kernels parse independently. A line belongs to the byte
range that holds its first byte, so every line is read by exactly one range.

- Plain files: the files (sorted by name) are concatenated into one virtual
  byte stream; part ``k`` of ``n`` is the byte range ``[total*k//n,
  total*(k+1)//n)``, cut into chunks of about ``chunk_size`` bytes, each read
  with ``os.pread`` by a worker thread.
- gzip (``.gz``) and bzip2 (``.bz2``) files cannot be entered in the middle:
  every part decompresses them in order and keeps the lines that start in the
  blocks of :data:`SHARD_BLOCK` decompressed bytes it owns (block ``j`` belongs
  to part ``j % n``).

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> with open(os.path.join(d, 'a.svm'), 'wb') as f:
...     _ = f.write(b'1 0:1\\n0 1:2\\n1 2:3\\n')
>>> files = list_files(d)
>>> [bytes(c.data) for c in iter_chunks(files, num_parts=2, part_index=1)]
[b'1 2:3\\n']
"""
import bz2
import gzip
import os
import threading
from typing import NamedTuple

__all__ = ["SourceFile", "Chunk", "list_files", "plan", "iter_chunks", "count_newlines",
           "count_rows_before", "SHARD_BLOCK", "DEFAULT_CHUNK_SIZE"]

#: Bytes of text per parsing task.
DEFAULT_CHUNK_SIZE = 4 << 20
#: Shard granularity of compressed files (decompressed bytes); fixed so that all parts agree.
SHARD_BLOCK = 1 << 20
_TAIL = 64 << 10
_OPENERS = {"gzip": gzip.open, "bz2": bz2.open}


class SourceFile(NamedTuple):
    """One input file: path, size in bytes on disk, compression (None, 'gzip' or 'bz2')."""

    path: str
    size: int
    compression: object


class Chunk(NamedTuple):
    """Whole lines of one file: ``data`` starts at (decompressed) byte ``offset``."""

    file: SourceFile
    offset: int
    data: object


class RangeTask(NamedTuple):
    """The lines of a plain file that start in bytes ``[start, stop)``."""

    file: SourceFile
    start: int
    stop: int

    def read(self, reuse=False):
        return read_range(self.file, self.start, self.stop, reuse)


class StreamTask(NamedTuple):
    """The lines of a compressed file owned by part ``part_index`` of ``num_parts``."""

    file: SourceFile
    num_parts: int
    part_index: int
    chunk_size: int

    def chunks(self):
        return iter_stream(self.file, self.num_parts, self.part_index, self.chunk_size)


def _compression(path):
    low = path.lower()
    if low.endswith(".gz"):
        return "gzip"
    if low.endswith(".bz2"):
        return "bz2"
    return None


def list_files(path, what="data_libsvm"):
    """The files to read for ``path``: the file itself, or every file of a directory.

    Hidden files (names starting with '.') and subdirectories of a directory are
    skipped; the others are read in name order.

    Raises
    ------
    FileNotFoundError
        The path does not exist, or the directory holds no files.
    PermissionError
        A file cannot be read.
    """
    if isinstance(path, (list, tuple)):
        out = []
        for p in path:
            out.extend(list_files(p, what))
        return out
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(2, f"{what}: no such file or directory", path)
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if not n.startswith("."))
        paths = [os.path.join(path, n) for n in names if os.path.isfile(os.path.join(path, n))]
        if not paths:
            raise FileNotFoundError(2, f"{what}: the directory holds no data files (hidden "
                                       f"files and subdirectories are skipped)", path)
    else:
        paths = [path]
    out = []
    for p in paths:
        if not os.access(p, os.R_OK):
            raise PermissionError(13, f"{what}: the file is not readable", p)
        out.append(SourceFile(p, os.path.getsize(p), _compression(p)))
    return out


def check_part(num_parts, part_index):
    """Validate a shard; raise ValueError naming both values."""
    for name, v in (("num_parts", num_parts), ("part_index", part_index)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{name} must be an int, got {v!r}")
    if num_parts < 1 or not 0 <= part_index < num_parts:
        raise ValueError(f"part_index={part_index} is out of range for num_parts={num_parts}: "
                         f"need num_parts >= 1 and 0 <= part_index < num_parts")


def _part_range(files, num_parts, part_index):
    total = sum(f.size for f in files if f.compression is None)
    return total * part_index // num_parts, total * (part_index + 1) // num_parts


def plan(files, num_parts=1, part_index=0, chunk_size=DEFAULT_CHUNK_SIZE):
    """The tasks (RangeTask / StreamTask) that produce a part's chunks, in file order."""
    check_part(num_parts, part_index)
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    lo, hi = _part_range(files, num_parts, part_index)
    tasks, base = [], 0
    for f in files:
        if f.compression is not None:
            tasks.append(StreamTask(f, num_parts, part_index, chunk_size))
            continue
        a, b = max(lo, base) - base, min(hi, base + f.size) - base
        base += f.size
        for s in range(a, b, chunk_size):
            tasks.append(RangeTask(f, s, min(s + chunk_size, b)))
    return tasks


def _pread_into(fd, buf, n, offset):
    """Read up to ``n`` bytes at ``offset`` into ``buf``; return how many were read."""
    view, got = memoryview(buf), 0
    while got < n:
        k = os.preadv(fd, [view[got:n]], offset + got)
        if k == 0:
            break
        got += k
    return got


_local = threading.local()


def _scratch(n, reuse):
    """A buffer of at least ``n`` bytes: this thread's reusable one when ``reuse``."""
    if not reuse:
        return bytearray(n)
    buf = getattr(_local, "buf", None)
    if buf is None or len(buf) < n:
        buf = bytearray(n + n // 4)
        _local.buf = buf
    return buf


def read_range(file, start, stop, reuse=False):
    """The lines of a plain file whose first byte lies in ``[start, stop)``, as a :class:`Chunk`.

    With ``reuse=True`` the data lives in a per-thread buffer that the thread's
    next read overwrites (the parsing workers read, then parse, then read
    again): no fresh memory to fault in for every chunk.
    """
    with open(file.path, "rb", buffering=0) as f:
        fd = f.fileno()
        if start > 0 and os.pread(fd, 1, start - 1) != b"\n":
            pos = start
            while True:  # the first line start at or after `start`
                blk = os.pread(fd, _TAIL, pos)
                if not blk:
                    return Chunk(file, stop, b"")
                i = blk.find(b"\n")
                if i >= 0:
                    start = pos + i + 1
                    break
                pos += len(blk)
            if start >= stop:
                return Chunk(file, stop, b"")
        want = stop - start + _TAIL
        buf = _scratch(want, reuse)
        got = _pread_into(fd, buf, want, start)
        data = memoryview(buf)[:got]
        cut = stop - start
        if got <= cut:  # end of file
            return Chunk(file, start, data)
        nl = buf.find(b"\n", cut - 1, got)
        if nl >= 0:
            return Chunk(file, start, data[:nl + 1])
        parts, pos = [bytes(data)], start + got
        while True:  # a line longer than the read-ahead
            more = os.pread(fd, 1 << 20, pos)
            if not more:
                break
            i = more.find(b"\n")
            if i >= 0:
                parts.append(more[:i + 1])
                break
            parts.append(more)
            pos += len(more)
        return Chunk(file, start, b"".join(parts))


def iter_stream(file, num_parts=1, part_index=0, chunk_size=DEFAULT_CHUNK_SIZE):
    """Yield the chunks of a compressed file owned by a part (see the module docstring)."""
    step = chunk_size if num_parts == 1 else SHARD_BLOCK
    with _OPENERS[file.compression](file.path, "rb") as f:
        buf, base, eof = bytearray(), 0, False
        while True:
            if num_parts == 1:
                cut = buf.rfind(b"\n") + 1
                if cut == 0 or (len(buf) < chunk_size and not eof):
                    cut = 0
                if eof and not cut and buf:
                    cut = len(buf)
            else:
                boundary = (base // SHARD_BLOCK + 1) * SHARD_BLOCK
                rel = boundary - base - 1
                nl = buf.find(b"\n", rel) if rel < len(buf) else -1
                cut = nl + 1 if nl >= 0 else (len(buf) if eof else 0)
            if cut:
                owner = (base // SHARD_BLOCK) % num_parts
                if num_parts == 1 or owner == part_index:
                    yield Chunk(file, base, bytes(buf[:cut]))
                del buf[:cut]
                base += cut
                continue
            if eof:
                return
            more = f.read(step)
            if not more:
                eof = True
            buf += more


def iter_chunks(files, num_parts=1, part_index=0, chunk_size=DEFAULT_CHUNK_SIZE):
    """Yield every chunk of a part in order, in this thread (no prefetching)."""
    for task in plan(files, num_parts, part_index, chunk_size):
        if isinstance(task, RangeTask):
            c = task.read()
            if len(c.data):
                yield c
        else:
            yield from task.chunks()


def _open_plain_or_compressed(file):
    if file.compression is None:
        return open(file.path, "rb")
    return _OPENERS[file.compression](file.path, "rb")


def count_newlines(file, upto):
    """Number of '\\n' in the (decompressed) bytes ``[0, upto)`` of ``file``."""
    n, pos = 0, 0
    with _open_plain_or_compressed(file) as f:
        while pos < upto:
            blk = f.read(min(16 << 20, upto - pos))
            if not blk:
                break
            n += blk.count(b"\n")
            pos += len(blk)
    return n


def count_rows_before(files, num_parts, part_index, counter, chunk_size=DEFAULT_CHUNK_SIZE):
    """Data rows that come before part ``part_index`` (plain files only), read in chunks.

    ``counter(buffer)`` counts the rows of whole lines.
    """
    lo, _ = _part_range(files, num_parts, part_index)
    rows, base = 0, 0
    for f in files:
        if base >= lo:
            break
        end = min(lo, base + f.size) - base
        for s in range(0, end, chunk_size):
            rows += counter(read_range(f, s, min(s + chunk_size, end)).data)
        base += f.size
    return rows

"""Where LibSVM text comes from: files, directories, compressed files, byte ranges and shards.

A *part* of the input (``num_parts``/``part_index``) is cut into *chunks* of
whole lines that the kernels parse independently. A line belongs to the byte
range that holds its first byte, so every line is read by exactly one range.

- Plain files: the files (sorted by name) are concatenated into one virtual
  byte stream; part ``k`` of ``n`` is the byte range ``[total*k//n,
  total*(k+1)//n)``, cut into chunks of about ``chunk_size`` bytes, each read
  with ``os.pread`` by a worker thread.
- Compressed files (``.gz``, ``.zst``, ``.xz``, ``.bz2``; see
  :mod:`~sparsenet.io.libsvm.compression`): when there are at least as many
  of them as parts, each part owns whole files, so every byte is decompressed
  once by all the parts together. The files are dealt largest first (size on
  disk; ties in name order) to the part with the fewest bytes so far (ties to
  the lowest part index): deterministic, and balanced to within one file.
- A framed file (``.gz`` or ``.zst`` as sparsenet writes them: one member or
  frame per 4 MiB of text, each saying where it ends and how much text it
  holds; :func:`~sparsenet.io.libsvm.compression.frame_table`) is read like a
  plain file: one task per run of consecutive frames holding about
  ``chunk_size`` bytes of text (one frame when it holds more), decompressed and
  parsed by the same worker thread into its reused buffer, the tasks in
  parallel; each frame is checked against the size it declares, zero included.
  A task owns a range ``[s, e)`` of the decompressed text and the lines that
  start right after a newline in it (and the first line when ``s == 0``), so
  a task reads on past ``e`` to the end of its last line (decompressing the
  start of the next frames until that newline, at most ``max_line_bytes`` of
  them) and no task needs the byte before its ``s``. Such a file shared by
  parts (fewer compressed files than parts) is shared like a plain file, by
  text: part ``k`` of ``n`` owns ``[T*k//n, T*(k+1)//n)`` of its ``T`` bytes
  of text (the frame table says ``T``), so every part's text is within one line
  of ``T/n`` whatever the frame size. A part decompresses only the frames that
  overlap its range (a frame across a boundary is decompressed by both parts)
  and the starts of the frames after them.
- Any other compressed file shared by parts cannot be entered in the middle
  and does not say how much text it holds: every part decompresses it in
  order, cuts it into *blocks* of whole lines (from the end of the block
  before, the lines up to and including the one holding its ``B``-th byte: at
  least ``B`` bytes, less than ``B`` plus a line; the last block may be
  shorter) and keeps the blocks it owns (block ``j`` belongs to part
  ``j % n``). ``B`` is :func:`shard_block`: :data:`SHARD_BLOCK` at most, and
  small enough for :data:`BLOCKS_PER_PART` blocks per part when the text is at
  least as large as the file (LibSVM text is). The parts' counts of blocks
  differ by one at most, so a part's text is within ``2*B + c*L`` bytes of
  ``T/n`` (``c``: its count of blocks, ``L``: the longest line); lines longer
  than ``B`` make blocks of one line each, shared out row by row.

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> with open(os.path.join(d, 'a.svm'), 'wb') as f:
...     _ = f.write(b'1 0:1\\n0 1:2\\n1 2:3\\n')
>>> files = list_files(d)
>>> [bytes(c.data) for c in iter_chunks(files, num_parts=2, part_index=1)]
[b'1 2:3\\n']
"""
import bisect
import mmap
import os
import threading
from typing import NamedTuple

from ...base import InvalidArgumentError, InvalidArgumentTypeError
from .compression import (CompressedFileError, compression_of, frame_codec, frame_table,
                          open_read)
from .errors import LibSVMFormatError
from .options import DEFAULT_MAX_LINE_BYTES

__all__ = ["SourceFile", "Chunk", "FrameTask", "list_files", "plan", "iter_chunks",
           "count_newlines",
           "count_rows_before", "assign_files", "shard_block", "SHARD_BLOCK", "MIN_SHARD_BLOCK",
           "BLOCKS_PER_PART", "DEFAULT_CHUNK_SIZE"]

#: Bytes of text per parsing task.
DEFAULT_CHUNK_SIZE = 4 << 20
#: Largest shard block of a compressed stream shared by parts (decompressed bytes).
SHARD_BLOCK = 1 << 20
#: Smallest shard block (decompressed bytes), unless :data:`SHARD_BLOCK` is smaller.
MIN_SHARD_BLOCK = 4 << 10
#: Shard blocks per part that :func:`shard_block` aims at (bounds the imbalance of parts).
BLOCKS_PER_PART = 64
_TAIL = 64 << 10


class SourceFile(NamedTuple):
    """One input file: path, size on disk, compression (None, 'gzip', 'zstd', 'xz' or 'bz2')."""

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


class FrameTask(NamedTuple):
    """The lines of a framed ``.gz``/``.zst`` file that frames ``index`` to
    ``index + count - 1`` of ``frames`` own (see the module docstring); ``frames`` is the
    file's :func:`~sparsenet.io.libsvm.compression.frame_table`. ``start``/``stop`` crop the
    task's text range ``[s, e)`` (decompressed bytes of the file) inside those frames' text;
    None: where the frames' text starts/ends."""

    file: SourceFile
    frames: tuple
    index: int
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    count: int = 1
    start: object = None
    stop: object = None

    def read(self, reuse=False):
        return read_frame(self, reuse)


class StreamTask(NamedTuple):
    """The lines of a compressed file owned by part ``part_index`` of ``num_parts``."""

    file: SourceFile
    num_parts: int
    part_index: int
    chunk_size: int
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES

    def chunks(self):
        return iter_stream(self.file, self.num_parts, self.part_index, self.chunk_size,
                           self.max_line_bytes)


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
        out.append(SourceFile(p, os.path.getsize(p), compression_of(p)))
    return out


def check_part(num_parts, part_index):
    """Validate a shard; raise ValueError naming both values."""
    for name, v in (("num_parts", num_parts), ("part_index", part_index)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise InvalidArgumentTypeError(f"{name} must be an int, got {v!r}")
    if num_parts < 1 or not 0 <= part_index < num_parts:
        raise InvalidArgumentError(
            f"part_index={part_index} is out of range for num_parts={num_parts}: "
            f"need num_parts >= 1 and 0 <= part_index < num_parts")


def _part_range(files, num_parts, part_index):
    total = sum(f.size for f in files if f.compression is None)
    return total * part_index // num_parts, total * (part_index + 1) // num_parts


def plan(files, num_parts=1, part_index=0, chunk_size=DEFAULT_CHUNK_SIZE,
         max_line_bytes=DEFAULT_MAX_LINE_BYTES):
    """The tasks (RangeTask / FrameTask / StreamTask) that produce a part's chunks, in file
    order."""
    check_part(num_parts, part_index)
    if chunk_size < 1:
        raise InvalidArgumentError(f"chunk_size must be positive, got {chunk_size}")
    lo, hi = _part_range(files, num_parts, part_index)
    owner = assign_files(files, num_parts)
    tasks, base = [], 0
    for i, f in enumerate(files):
        if f.compression is not None:
            shared = owner is None and num_parts > 1
            if shared or owner is None or owner[i] == part_index:
                frames = frame_table(f.path, f.compression)
                if frames:  # shared by text, or all of it
                    n, k = (num_parts, part_index) if shared else (1, 0)
                    tasks += _frame_tasks(f, frames, n, k, chunk_size, max_line_bytes)
                else:
                    tasks.append(StreamTask(f, num_parts if shared else 1,
                                            part_index if shared else 0, chunk_size,
                                            max_line_bytes))
            continue
        a, b = max(lo, base) - base, min(hi, base + f.size) - base
        base += f.size
        for s in range(a, b, chunk_size):
            tasks.append(RangeTask(f, s, min(s + chunk_size, b)))
    return tasks


def _frame_tasks(file, frames, num_parts, part_index, chunk_size, max_line_bytes):
    """The FrameTasks of part ``part_index`` of ``num_parts`` of a framed file: its text
    range ``[T*k//n, T*(k+1)//n)``, cut at frame runs (:func:`_frame_runs`) of the frames
    that overlap it. Every frame is in some part's tasks (an empty frame in the part whose
    range holds its offset, or the last part), a frame across a part boundary in both.

    >>> rows = [(0, 0, 4, 0), (0, 0, 4, 4), (0, 0, 0, 8)]  # 8 bytes of text, 2 + 1 frames
    >>> [(t.index, t.count, t.start, t.stop) for t in _frame_tasks(None, rows, 3, 1, 9, 9)]
    [(0, 2, 2, 5)]
    >>> [(t.index, t.count, t.start, t.stop) for t in _frame_tasks(None, rows, 3, 2, 9, 9)]
    [(1, 2, 5, 8)]
    """
    total = frames[-1][3] + frames[-1][2]
    lo = total * part_index // num_parts
    hi = total * (part_index + 1) // num_parts
    # the first frame whose text ends past lo (an empty frame: that starts at lo or later)
    first = bisect.bisect_left(frames, lo, key=lambda r: r[3] + max(r[2], 1) - 1)
    # the first frame whose text starts at or after hi (none for the last part)
    end = len(frames) if hi == total else bisect.bisect_left(frames, hi, key=lambda r: r[3])
    tasks = []
    for j, count in _frame_runs(frames, first, end, chunk_size):
        last = frames[j + count - 1]
        tasks.append(FrameTask(file, frames, j, max_line_bytes, count,
                               max(lo, frames[j][3]), min(hi, last[3] + last[2])))
    return tasks


def _frame_runs(frames, lo, hi, chunk_size):
    """The runs ``(first, count)`` that cut frames ``[lo, hi)`` of a frame table into tasks:
    consecutive frames holding at most ``chunk_size`` bytes of text together, or one frame
    holding more (many tiny frames cost one task, not one each).

    >>> rows = [(0, 0, size, 0) for size in (3, 3, 9, 1, 1, 0, 1)]
    >>> _frame_runs(rows, 0, 7, 6), _frame_runs(rows, 3, 5, 6)
    ([(0, 2), (2, 1), (3, 4)], [(3, 2)])
    """
    runs, j = [], lo
    while j < hi:
        first, size = j, frames[j][2]
        j += 1
        while j < hi and size + frames[j][2] <= chunk_size:
            size += frames[j][2]
            j += 1
        runs.append((first, j - first))
    return runs


def assign_files(files, num_parts):
    """Which part owns each compressed file, or None when they are fewer than the parts.

    Largest first (size on disk, ties by position in ``files``), each to the
    part with the fewest bytes so far (ties to the lowest index). Plain files
    get ``None`` (they are shared by byte range).

    >>> F = SourceFile
    >>> assign_files([F('a.gz', 5, 'gzip'), F('b.gz', 9, 'gzip'), F('c.gz', 4, 'gzip'),
    ...               F('d.svm', 7, None)], 2)
    [1, 0, 1, None]
    >>> assign_files([F('a.gz', 5, 'gzip')], 2) is None
    True
    """
    packed = [i for i, f in enumerate(files) if f.compression is not None]
    if num_parts == 1 or len(packed) < num_parts:
        return None
    load = [0] * num_parts
    owner = [None] * len(files)
    for i in sorted(packed, key=lambda i: (-files[i].size, i)):
        k = min(range(num_parts), key=lambda k: (load[k], k))
        owner[i] = k
        load[k] += files[i].size
    return owner


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
# Private anonymous memory where the platform has it: Python's default for an anonymous
# mapping is a shared one, which Linux backs with shmem, slower to fault in (a process's first
# .zst load 0.138 -> 0.134 s, medians of 8 interleaved).
_PRIVATE = ({"flags": mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS}
            if hasattr(mmap, "MAP_PRIVATE") and hasattr(mmap, "MAP_ANONYMOUS") else {})


def _scratch(n, reuse, name="buf"):
    """A buffer of at least ``n`` bytes: this thread's reusable one (of that ``name``) when
    ``reuse``, an anonymous mapping (its pages zeroed by the system as they are first
    written: a ``bytearray`` zeroes them all up front, a second pass over memory that cost a
    process's first load 6-7 ms of 0.14 s, measured)."""
    if not reuse:
        return bytearray(n)
    buf = getattr(_local, name, None)
    if buf is None or len(buf) < n:
        buf = mmap.mmap(-1, n + n // 4, **_PRIVATE)
        setattr(_local, name, buf)
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


def read_frame(task, reuse=False):
    """The lines a :class:`FrameTask` owns, as a :class:`Chunk` (with ``reuse=True`` in this
    thread's reused buffer, as :func:`read_range`): those that start right after a newline
    in its text range ``[s, e)``, and the first line when ``s == 0``. Each frame of the task
    is decompressed into its own place in the buffer and checked against the size it
    declares (zero included); the frames after them are decompressed only up to the first
    newline, at most ``max_line_bytes`` of them, when the last line runs into them.

    Raises
    ------
    CompressedFileError
        A frame is corrupt or holds another size than it declares.
    LibSVMFormatError
        The line that runs into the next frames is longer than ``max_line_bytes``.
    """
    file, frames, k = task.file, task.frames, task.index
    run = frames[k:k + task.count]
    start, stop, offset = run[0][0], run[-1][1], run[0][3]
    content = run[-1][3] + run[-1][2] - offset
    lo = 0 if task.start is None else task.start - offset  # [lo, hi): the range, in buf
    hi = content if task.stop is None else task.stop - offset
    codec = frame_codec(file.compression)
    buf = _scratch(content + _TAIL, reuse)
    packed = _scratch(stop - start, reuse, "packed")
    rest, size, end = [], 0, -1
    with open(file.path, "rb", buffering=0) as f:
        try:
            if _pread_into(f.fileno(), packed, stop - start, start) < stop - start:
                raise EOFError("the file ends inside a compressed frame")
            packed_view, text_view = memoryview(packed), memoryview(buf)
            for a, b, size, at in run:
                codec.decode_into(packed_view[a - start:b - start],
                                  text_view[at - offset:at - offset + size])
            head = 0
            if offset + lo > 0:  # the first line that starts after a newline in the range
                head = buf.find(b"\n", lo, hi) + 1
                if head == 0:
                    return Chunk(file, offset + hi, b"")
            elif hi == 0:  # an empty range at the file's start owns no line
                return Chunk(file, offset, b"")
            last = buf.rfind(b"\n", head, hi) + 1 or head  # where the last line starts
            end = buf.find(b"\n", last, content) + 1 or -1  # and ends, in these frames
            size = content - last
            for j in range(k + task.count, len(frames) if end < 0 else 0):
                if size > task.max_line_bytes:  # that line's end, in the next frames
                    break
                piece, found = _frame_head(codec, f.fileno(), frames[j],
                                           task.max_line_bytes - size)
                rest.append(piece)
                size += len(piece)
                if found:
                    break
        except codec.errors + (EOFError, ValueError) as e:
            raise CompressedFileError(f"{file.path}: truncated or corrupt {file.compression} "
                                      f"data ({e})", file.path) from None
    if end < 0 and size > task.max_line_bytes:
        raise _long_line(file, offset + last, task.max_line_bytes)
    checked = last if end < 0 else end  # the lines in buf[head:checked] end in buf
    if checked - head > task.max_line_bytes:
        _check_line_lengths(file, buf, head, checked, offset, task.max_line_bytes)
    if end >= 0:
        return Chunk(file, offset + head, memoryview(buf)[head:end])
    tail = sum(len(p) for p in rest)
    if content + tail <= len(buf):
        pos = content
        for piece in rest:
            buf[pos:pos + len(piece)] = piece
            pos += len(piece)
        return Chunk(file, offset + head, memoryview(buf)[head:content + tail])
    return Chunk(file, offset + head, bytes(buf[head:content]) + b"".join(rest))


def _frame_head(codec, fd, row, budget):
    """The text of frame ``row`` (a frame table row) up to its first newline, decoding at
    most ``budget + 1`` bytes (one past what the line may still hold), and whether it has
    one. A frame found to hold more or (decoded whole) less than it declares raises
    ValueError or EOFError."""
    start, stop, declared, _ = row
    limit = min(budget, declared) + 1
    piece, found = codec.decode_head(fd, start, stop, limit)
    if len(piece) > declared:
        # builtin: read_frame turns it into CompressedFileError naming the file
        raise ValueError(f"a compressed frame holds more than the {declared} bytes it declares")
    if not found and len(piece) < min(limit, declared):  # decoded whole, and short
        # builtin: read_frame turns it into CompressedFileError naming the file
        raise EOFError(f"a compressed frame holds {len(piece)} bytes, it declares {declared}")
    return piece, found


def _check_line_lengths(file, buf, start, stop, offset, limit):
    """Raise for a line longer than ``limit`` among those starting in ``buf[start:stop]``
    (only frames larger than the limit can hold one)."""
    step = max(limit // 2, 1)  # such a line holds an aligned newline-free window this long
    if all(buf.find(b"\n", a, min(a + step, stop)) >= 0 or a + step > stop
           for a in range(start, stop, step)):
        return
    pos = start
    while pos < stop:
        nl = buf.find(b"\n", pos, stop)
        end = stop if nl < 0 else nl + 1
        if end - pos > limit:
            raise _long_line(file, offset + pos, limit)
        pos = end


def _long_line(file, offset, limit):
    """The error for a line of ``file`` starting at decompressed byte ``offset`` that runs
    past ``limit`` bytes (its line number is counted on this error path only)."""
    line = count_newlines(file, offset) + 1
    return LibSVMFormatError(
        f"{file.path}:{line}: line longer than max_line_bytes={limit} bytes (decompressed); "
        f"raise max_line_bytes if such lines are intended", file.path, line, 1, "")


def iter_stream(file, num_parts=1, part_index=0, chunk_size=DEFAULT_CHUNK_SIZE,
                max_line_bytes=DEFAULT_MAX_LINE_BYTES):
    """Yield the chunks of a compressed file owned by a part (see the module docstring);
    a line longer than ``max_line_bytes`` raises :class:`LibSVMFormatError`."""
    if num_parts == 1:
        with open_read(file.path, file.compression) as f:
            yield from _whole_stream(f, file, chunk_size, max_line_bytes)
        return
    block = shard_block(file, num_parts)
    with open_read(file.path, file.compression) as f:
        buf, base, eof, index = bytearray(), 0, False, 0
        rel = block - 1  # a block: the lines up to the one holding its byte `block - 1`
        while True:
            nl = buf.find(b"\n", rel) if rel < len(buf) else -1
            cut = nl + 1 if nl >= 0 else (len(buf) if eof else 0)
            if cut:
                if index % num_parts == part_index:
                    yield Chunk(file, base, bytes(buf[:cut]))
                del buf[:cut]
                base += cut
                index += 1
                continue
            if eof:
                return
            if len(buf) > max_line_bytes + SHARD_BLOCK:  # no line end in sight
                raise _long_line(file, base + max(0, rel), max_line_bytes)
            more = f.read(SHARD_BLOCK)
            if not more:
                eof = True
            buf += more


def shard_block(file, num_parts):
    """Decompressed bytes per shard block of a compressed stream shared by ``num_parts``
    parts (see the module docstring): ``file.size // (BLOCKS_PER_PART * num_parts)``, within
    ``[MIN_SHARD_BLOCK, SHARD_BLOCK]`` (``SHARD_BLOCK`` when that is smaller). It depends on
    the file's size on disk alone, so every part agrees.

    >>> shard_block(SourceFile('a.svm.bz2', 10 << 20, 'bz2'), 4), SHARD_BLOCK
    (40960, 1048576)
    >>> shard_block(SourceFile('a.svm.bz2', 100, 'bz2'), 4), shard_block(
    ...     SourceFile('a.svm.bz2', 1 << 40, 'bz2'), 4)
    (4096, 1048576)
    """
    want = file.size // (BLOCKS_PER_PART * num_parts)
    return max(1, min(SHARD_BLOCK, max(MIN_SHARD_BLOCK, want)))


def _whole_stream(f, file, chunk_size, max_line_bytes):
    """Chunks of whole lines of a decompressing reader, copying each byte at most once."""
    carry, base, carried = [], 0, 0
    while True:
        blk = f.read(chunk_size)
        if not blk:
            if carry:
                yield Chunk(file, base, b"".join(carry))
            return
        nl = blk.rfind(b"\n")
        if nl < 0:  # a line longer than the chunk
            carry.append(blk)
            carried += len(blk)
            if carried > max_line_bytes:
                raise _long_line(file, base, max_line_bytes)
            continue
        head = memoryview(blk)[:nl + 1]
        data = b"".join(carry + [head]) if carry else head
        yield Chunk(file, base, data)
        base += len(data)
        carry = [blk[nl + 1:]] if nl + 1 < len(blk) else []
        carried = len(blk) - nl - 1


def iter_chunks(files, num_parts=1, part_index=0, chunk_size=DEFAULT_CHUNK_SIZE):
    """Yield every chunk of a part in order, in this thread (no prefetching)."""
    for task in plan(files, num_parts, part_index, chunk_size):
        if isinstance(task, (RangeTask, FrameTask)):
            c = task.read()
            if len(c.data):
                yield c
        else:
            yield from task.chunks()


def _open_plain_or_compressed(file):
    if file.compression is None:
        return open(file.path, "rb")
    return open_read(file.path, file.compression)


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

"""Zstandard files as independent frames: written a few MiB of text per frame, read with the
frames decompressed in parallel.

A ``.zst`` file may hold any number of frames one after the other (RFC 8878); ``zstd -d``
and every reader decompress them in order. sparsenet writes one frame per
:data:`FRAME_TEXT_BYTES` of text, each with its content size in its header, so a reader can
find where each frame ends by walking the block headers (no decompression) and decompress
several frames at once: the decoder releases the GIL, so a ``.zst`` file reads at up to
twice one core's speed on two cores. Files whose frames do not declare their size, or
declare more than :data:`MAX_FRAME_BYTES`, are read by the streaming reader instead
(:class:`StreamReader`), a bounded number of bytes per step whatever the compression ratio.
Every frame is checked against the size it declares, zero included.

>>> import os, tempfile, zstandard
>>> p = os.path.join(tempfile.mkdtemp(), 'x.svm.zst')
>>> with FramedWriter(zstandard, p, 3, frame_bytes=8) as w:
...     _ = w.write(b'1 0:1\\n' * 3)
>>> [s.content for s in frame_spans(open(p, 'rb').read())]
[8, 8, 2]
>>> with FramedReader.open(zstandard, p) as r:
...     r.read()
b'1 0:1\\n1 0:1\\n1 0:1\\n'
"""
import collections
import concurrent.futures
import mmap
import os
import struct
import threading
from typing import NamedTuple

from .framing import FileWindow, FrameWriter, Pieces

__all__ = ["FRAME_TEXT_BYTES", "MAX_FRAME_BYTES", "FramedWriter", "FramedReader",
           "StreamReader", "Span", "frame_spans", "frame_table", "decode_into", "decode_head"]

#: Bytes of text per frame that sparsenet writes.
FRAME_TEXT_BYTES = 4 << 20
#: A frame declaring more content than this is not decompressed whole (streaming instead):
#: a parsing thread holds one such frame's text, so this bounds a load's memory whatever the
#: compression ratio (four times what sparsenet writes; a larger frame gains nothing from
#: being decompressed whole).
MAX_FRAME_BYTES = 16 << 20

_ZSTD_MAGIC = 0xFD2FB528
_SKIPPABLE = 0x184D2A50  # ... 0x184D2A5F: skippable frames (metadata)


class Span(NamedTuple):
    """One frame: its bytes ``[start, stop)`` of the file, its declared content size
    (-1: not declared; 0 for a skippable frame), and whether it is a skippable (metadata)
    frame, which holds no text."""
    start: int
    stop: int
    content: int
    skippable: bool = False


_ID_BYTES = (0, 1, 2, 4)  # Dictionary_ID_flag -> bytes of the dictionary id
_FCS_BYTES = (0, 2, 4, 8)  # Frame_Content_Size_flag -> bytes of the content size


def _frame_header(buf, start):
    """(where the first block starts, declared content size or -1, whether a checksum ends
    the frame) of the Zstandard frame at ``start`` (RFC 8878, 3.1.1.1)."""
    if len(buf) - start < 6:
        raise EOFError("the file ends inside a Zstandard frame header")
    desc = buf[start + 4]
    if desc & 0x08:
        # builtin: compression._Checked turns it into CompressedFileError naming the file
        raise ValueError(f"reserved bit set in the Zstandard frame header at byte {start}")
    single = desc & 0x20
    fcs = _FCS_BYTES[desc >> 6] or (1 if single else 0)
    pos = start + 5 + (0 if single else 1) + _ID_BYTES[desc & 3]
    if pos + fcs > len(buf):
        raise EOFError("the file ends inside a Zstandard frame header")
    content = int.from_bytes(buf[pos:pos + fcs], "little") if fcs else -1
    if fcs == 2:
        content += 256
    return pos + fcs, content, bool(desc & 0x04)


def _frame_end(buf, start):
    """Where the frame starting at ``start`` ends, its declared content size, and whether it
    is skippable."""
    n = len(buf)
    if n - start < 8:
        raise EOFError("the file ends inside a Zstandard frame header")
    magic = struct.unpack_from("<I", buf, start)[0]
    if magic & 0xFFFFFFF0 == _SKIPPABLE:
        size = struct.unpack_from("<I", buf, start + 4)[0]
        if start + 8 + size > n:
            raise EOFError("the file ends inside a skippable Zstandard frame")
        return start + 8 + size, 0, True
    if magic != _ZSTD_MAGIC:
        # builtin: compression._Checked turns it into CompressedFileError naming the file
        raise ValueError(f"no Zstandard frame at byte {start} (magic 0x{magic:08X})")
    pos, content, checksum = _frame_header(buf, start)
    while True:
        if pos + 3 > n:
            raise EOFError("the file ends inside a Zstandard frame")
        b0, b1, b2 = buf[pos], buf[pos + 1], buf[pos + 2]
        header = b0 | (b1 << 8) | (b2 << 16)
        last, kind, size = header & 1, (header >> 1) & 3, header >> 3
        if kind == 3:
            # builtin: compression._Checked turns it into CompressedFileError naming the file
            raise ValueError(f"reserved Zstandard block type at byte {pos}")
        pos += 3 + (1 if kind == 1 else size)
        if pos > n:
            raise EOFError("the file ends inside a Zstandard block")
        if last:
            break
    if checksum:
        pos += 4
        if pos > n:
            raise EOFError("the file ends inside a Zstandard frame's checksum")
    return pos, content, False


def frame_spans(buf, start=0, limit=None):
    """The frames of the Zstandard bytes ``buf`` (any buffer), from ``start``: at most
    ``limit`` of them (None: all) as :class:`Span` s, found from the frame and block headers
    alone (no codec needed). Raises EOFError for a file that ends inside a frame, ValueError
    for bytes that are not a frame."""
    spans, pos, n = [], start, len(buf)
    while pos < n and (limit is None or len(spans) < limit):
        stop, content, skippable = _frame_end(buf, pos)
        spans.append(Span(pos, stop, content, skippable))
        pos = stop
    return spans


def frame_table(path):
    """Every data frame of ``path`` as ``(start, stop, content size, text offset)``, when
    each declares its content size (at most :data:`MAX_FRAME_BYTES`); else None (also for a
    file that cannot be walked: the streaming reader reports what is wrong with it). A frame
    declaring no content is a row too (its task checks that it holds none); skippable frames
    are not. The table depends on the file alone, not on the installed codec.

    >>> import os, tempfile, zstandard
    >>> p = os.path.join(tempfile.mkdtemp(), 't.svm.zst')
    >>> with FramedWriter(zstandard, p, 1, frame_bytes=6) as w:
    ...     _ = w.write(b'1 0:1\\n0 1:1\\n')
    >>> [(t[2], t[3]) for t in frame_table(p)]
    [(6, 0), (6, 6)]
    """
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            spans = frame_spans(m)
    except (OSError, ValueError, EOFError):
        return None
    data = [sp for sp in spans if not sp.skippable]
    if not data or not all(0 <= sp.content <= MAX_FRAME_BYTES for sp in data):
        return None
    table, offset = [], 0
    for sp in data:
        table.append((sp.start, sp.stop, sp.content, offset))
        offset += sp.content
    return tuple(table)


_local = threading.local()


def _dctx(zstandard):
    """This thread's decompression context (making one costs ~50 us, more than decoding a
    frame of a few rows; a context serves one decoder at a time, each resets it)."""
    dctx = getattr(_local, "dctx", None)
    if dctx is None or getattr(_local, "module", None) is not zstandard:
        dctx = _local.dctx = zstandard.ZstdDecompressor()
        _local.module = zstandard
    return dctx


def decode_into(zstandard, frame, out):
    """Decompress one whole frame (a buffer holding exactly it) into ``out``, a writable
    buffer of the frame's declared content size (zero included); the frame's checksum, when
    it has one, is checked. Raises EOFError when the frame holds less than it declares,
    ValueError when more (decoding at most one byte more), ``zstandard.ZstdError`` for
    corrupt data. The decoder releases the GIL.

    >>> import zstandard
    >>> out = bytearray(6)
    >>> decode_into(zstandard, zstandard.ZstdCompressor().compress(b'1 0:1\\n'), out)
    >>> bytes(out)
    b'1 0:1\\n'
    """
    out = memoryview(out)  # slices of it are views (a bytearray's would be copies)
    with _dctx(zstandard).stream_reader(frame) as reader:
        got, n = 0, len(out)
        while got < n:
            k = reader.readinto(out[got:])
            if not k:
                raise EOFError(f"a Zstandard frame holds {got} bytes, it declares {n}")
            got += k
        if reader.read(1):
            # builtin: source.read_frame turns it into CompressedFileError naming the file
            raise ValueError(f"a Zstandard frame holds more than the {n} bytes it declares")


def decode_head(zstandard, fd, start, stop, limit):
    """The decompressed bytes of the frame in bytes ``[start, stop)`` of file descriptor
    ``fd``, up to and including its first newline, reading and decoding no further than
    needed and never more than ``limit`` bytes, and whether there is a newline among them
    (without, the whole content, or ``limit`` bytes).

    >>> import os, tempfile, zstandard
    >>> p = os.path.join(tempfile.mkdtemp(), 'h.zst')
    >>> n = open(p, 'wb').write(zstandard.ZstdCompressor().compress(b'1:2 3\\n4 5\\n'))
    >>> with open(p, 'rb') as f:
    ...     decode_head(zstandard, f.fileno(), 0, n, 99), decode_head(zstandard, f.fileno(), 0, n, 2)
    ((b'1:2 3\\n', True), (b'1:', False))
    """
    parts, got = [], 0
    source = FileWindow(fd, start, stop)
    with _dctx(zstandard).stream_reader(source, read_size=1 << 14) as reader:
        while got < limit:
            piece = reader.read(min(1 << 16, limit - got))
            if not piece:
                break
            i = piece.find(b"\n")
            if i >= 0:
                parts.append(piece[:i + 1])
                return b"".join(parts), True
            parts.append(piece)
            got += len(piece)
    return b"".join(parts), False


class _Closing:
    """``with reader:`` closes the reader at the end."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class FramedReader(_Closing):
    """The decompressed bytes of a ``.zst`` file whose frames all declare their size (at most
    :data:`MAX_FRAME_BYTES`): the frames are found by their block headers and decompressed
    in a pool of threads, up to ``ahead`` frames in advance (memory: about ``ahead`` frames
    of text), each checked against its declared size (:func:`decode_into`). ``read`` raises
    EOFError for a truncated file or a frame holding less than it declares, ValueError for
    one holding more, and ``zstandard.ZstdError`` for corrupt data, when it reaches them."""

    def __init__(self, zstandard, path, table, workers=2, ahead=4):
        self._zstd = zstandard
        self._file = open(path, "rb")
        size = os.fstat(self._file.fileno()).st_size
        self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self._frames = collections.deque(table)  # frame_table rows: start, stop, size, offset
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
        self._pending = collections.deque()
        self._ahead = ahead
        self._pieces, self._eof = Pieces(), False

    @classmethod
    def open(cls, zstandard, path):
        """A reader of ``path`` when every frame declares its content size, at most
        :data:`MAX_FRAME_BYTES` (sparsenet's own files do), else None. The frames are found
        once, by their block headers (no decompression; :func:`frame_table`); a file that
        cannot be walked (truncated, corrupt) gives None too, for the streaming reader to
        report."""
        table = frame_table(path)
        return None if table is None else cls(zstandard, path, table)

    def _decode(self, frame):
        start, stop, content, _ = frame
        view = memoryview(self._map)[start:stop]
        try:
            if content:  # the one-shot decoder checks the declared size (not a zero one)
                return _dctx(self._zstd).decompress(view, max_output_size=content)
            decode_into(self._zstd, view, bytearray(0))
            return b""
        finally:
            view.release()

    def _fill(self):
        while len(self._pending) < self._ahead and self._frames:
            self._pending.append(self._pool.submit(self._decode, self._frames.popleft()))

    def read(self, n=-1):
        """Up to ``n`` bytes (all when ``n < 0``); fewer only at the end or to save a copy."""
        if n is None or n < 0:
            n = float("inf")
        while self._pieces.size < n and not self._eof:
            self._fill()
            if not self._pending:
                self._eof = True
                break
            self._pieces.append(self._pending.popleft().result())
        if n == float("inf"):
            n = self._pieces.size
        return self._pieces.take(n) if self._pieces.size else b""

    def close(self):
        for future in self._pending:
            future.cancel()
        self._pool.shutdown(wait=True)
        if isinstance(self._map, mmap.mmap):
            self._map.close()
        self._file.close()


class StreamReader(_Closing):
    """The decompressed bytes of any ``.zst`` file, frame after frame, in bounded memory.

    Each frame is found by its block headers (:func:`frame_spans`: a file that ends inside
    a frame raises EOFError before any of that frame is decoded) and decoded by a streaming
    decoder that makes at most the bytes asked for per step, so a read of ``n`` bytes holds
    about ``n`` bytes whatever the compression ratio. A frame that declares its content
    size is checked against it (zero included): ValueError when it holds more (found at the
    first byte too many), EOFError when less. ``zstandard.ZstdError`` for corrupt data.
    Skippable frames are skipped. (``zstandard``'s own ``stream_reader`` takes a file cut
    inside a frame for a clean end, and its ``decompressobj`` has no output limit.)

    >>> import os, tempfile, zstandard
    >>> p = os.path.join(tempfile.mkdtemp(), 's.zst')
    >>> c = zstandard.ZstdCompressor(write_content_size=False)
    >>> _ = open(p, 'wb').write(c.compress(b'1 0:1\\n') + c.compress(b'0 1:1\\n'))
    >>> with StreamReader(zstandard, p) as r:
    ...     r.read(4), r.read(100), r.read(100)
    (b'1 0:', b'1\\n0 1:1\\n', b'')
    """

    _IN = 1 << 17  # compressed bytes read per decoder step
    _BATCH = 64  # frames walked at a time

    def __init__(self, zstandard, path):
        self._file = open(path, "rb", buffering=0)
        self._fd = self._file.fileno()
        size = os.fstat(self._fd).st_size
        self._map = mmap.mmap(self._fd, 0, access=mmap.ACCESS_READ) if size else b""
        self._dctx = zstandard.ZstdDecompressor()
        self._pos = 0  # where the frames not yet walked start
        self._spans = collections.deque()  # frames walked, not yet read
        self._frame = None  # the decoder of the current frame
        self._declared, self._got = -1, 0  # its declared content size, bytes decoded so far

    def _next_frame(self):
        """Open the next data frame's decoder; False at the end of the file."""
        while True:
            if not self._spans:
                if self._pos >= len(self._map):
                    return False
                # a few frames at a time (one walk of a frame covers all its blocks)
                self._spans.extend(frame_spans(self._map, self._pos, self._BATCH))
                self._pos = self._spans[-1].stop
            span = self._spans.popleft()
            if span.skippable:
                continue
            # a small frame is copied whole; a large one read a step at a time
            source = (self._map[span.start:span.stop] if span.stop - span.start <= self._IN
                      else FileWindow(self._fd, span.start, span.stop))
            self._frame = self._dctx.stream_reader(source, read_size=self._IN)
            self._declared, self._got = span.content, 0
            return True

    def _end_frame(self):
        if 0 <= self._declared != self._got:
            raise EOFError(f"a Zstandard frame holds {self._got} bytes, it declares "
                           f"{self._declared}")
        self._frame.close()
        self._frame = None

    def read(self, n=-1):
        """Up to ``n`` bytes (all when ``n < 0``); fewer only at the end of the file."""
        if n is None or n < 0:
            parts = []
            while True:
                part = self.read(1 << 24)
                if not part:
                    return b"".join(parts)
                parts.append(part)
        parts, need = [], n
        while need > 0:
            if self._frame is None and not self._next_frame():
                break
            ask = need
            if self._declared >= 0:  # never more than one byte past the declared size
                ask = min(need, self._declared - self._got + 1)
            piece = self._frame.read(ask)
            if not piece:
                self._end_frame()
                continue
            self._got += len(piece)
            if self._got > self._declared >= 0:
                # builtin: compression._Checked turns it into CompressedFileError naming the file
                raise ValueError(f"a Zstandard frame holds more than the {self._declared} "
                                 f"bytes it declares")
            parts.append(piece)
            need -= len(piece)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def close(self):
        if self._frame is not None:
            self._frame.close()
            self._frame = None
        if isinstance(self._map, mmap.mmap):
            self._map.close()
        self._file.close()


class FramedWriter(FrameWriter):
    """Writes a ``.zst`` file as one frame per ``frame_bytes`` (default
    :data:`FRAME_TEXT_BYTES`) of text, each declaring its content size and with a checksum;
    a background thread compresses while the caller formats text."""

    def __init__(self, zstandard, tmp, level, frame_bytes=None):
        cctx = zstandard.ZstdCompressor(level=level, write_content_size=True,
                                        write_checksum=True)
        super().__init__(tmp, cctx.compress,
                         FRAME_TEXT_BYTES if frame_bytes is None else frame_bytes)

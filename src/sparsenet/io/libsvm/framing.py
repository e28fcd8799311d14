"""What framed compressed files share: text cut into independently compressed pieces.

sparsenet writes ``.zst`` (frames, :mod:`~sparsenet.io.libsvm.zstd_frames`) and ``.gz``
(members, :mod:`~sparsenet.io.libsvm.gzip_members`) as one piece per few MiB of text,
each telling where it ends and how much text it holds, so that readers can decompress
the pieces in parallel (:class:`~sparsenet.io.libsvm.source.FrameTask`). Every reader of
the format still reads such a file whole: several frames or members one after another
are standard. This module holds the writer both formats use and a window on a file.

>>> import os, tempfile, zlib
>>> p = os.path.join(tempfile.mkdtemp(), 'x.bin')
>>> with FrameWriter(p, lambda text: zlib.compress(text), frame_bytes=4) as w:
...     _ = w.write(b'0123456789')
>>> raw = open(p, 'rb').read()
>>> d = zlib.decompressobj(); pieces = []
>>> while raw:
...     pieces.append(d.decompress(raw)); raw = d.unused_data; d = zlib.decompressobj()
>>> pieces
[b'0123', b'4567', b'89']
"""
import collections
import concurrent.futures
import os

__all__ = ["FrameWriter", "FileWindow", "Pieces", "inflate_into", "inflate_head"]


class FrameWriter:
    """Writes the pieces ``compress(text)`` of every ``frame_bytes`` of the text written,
    one after the other into ``tmp``; a background thread compresses while the caller
    formats text. An empty text is written as ``compress(b'')`` (one empty piece: a
    valid file of the format)."""

    def __init__(self, tmp, compress, frame_bytes):
        self._raw = open(tmp, "wb")
        self._compress = compress
        self._frame = frame_bytes
        self._buf, self._size = [], 0
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        self._pending = collections.deque()

    def _flush(self, force=False):
        while self._size >= self._frame or (force and self._size):
            data = b"".join(self._buf)
            frame, rest = data[:self._frame], data[self._frame:]
            self._buf, self._size = ([rest], len(rest)) if rest else ([], 0)
            self._pending.append(self._pool.submit(self._compress, frame))
            while len(self._pending) > 2 or (force and self._pending):
                self._raw.write(self._pending.popleft().result())

    def write(self, b):
        self._buf.append(bytes(b))
        self._size += len(b)
        if self._size >= self._frame:
            self._flush()
        return len(b)

    def close(self):
        try:
            if self._size == 0 and not self._pending and self._raw.tell() == 0:
                self._raw.write(self._compress(b""))  # an empty file is still one piece
            self._flush(force=True)
            while self._pending:
                self._raw.write(self._pending.popleft().result())
        finally:
            self._pool.shutdown(wait=True)
            self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class FileWindow:
    """A file-like reader of the bytes ``[start, stop)`` of an open file descriptor.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), 'w.bin')
    >>> _ = open(p, 'wb').write(b'0123456789')
    >>> with open(p, 'rb') as f:
    ...     w = FileWindow(f.fileno(), 2, 6)
    ...     w.read(3), w.read()
    (b'234', b'5')
    """

    def __init__(self, fd, start, stop):
        self._fd, self._pos, self._stop = fd, start, stop

    def read(self, n=-1):
        n = self._stop - self._pos if n is None or n < 0 else min(n, self._stop - self._pos)
        data = os.pread(self._fd, n, self._pos) if n > 0 else b""
        self._pos += len(data)
        return data


def inflate_into(d, piece, out, what):
    """Decompress ``piece``, one whole frame or member, with the fresh decompressor object
    ``d`` (zlib's ``decompressobj`` interface, or ``compression.zstd``'s) into ``out``, a
    writable buffer of its declared size (zero included). Never makes more than one byte
    past that size, whatever the piece's compression ratio. Raises EOFError when it holds
    less than it declares or is cut short, ValueError when it holds more or is followed by
    other bytes (``what`` names the piece in the messages); the codec's own error for
    corrupt data.

    >>> import gzip, zlib
    >>> out = bytearray(6)
    >>> inflate_into(zlib.decompressobj(wbits=31), gzip.compress(b'1 0:1\\n'), out, 'member')
    >>> bytes(out)
    b'1 0:1\\n'
    >>> empty = bytearray(0)  # declares 0 bytes: holding any is an error
    >>> inflate_into(zlib.decompressobj(wbits=31), gzip.compress(b'1 0:1\\n'), empty, 'member')
    Traceback (most recent call last):
    ...
    ValueError: a member holds more than the 0 bytes it declares
    """
    n = len(out)
    # one byte past the declared size at most (a zero limit would mean "no limit")
    text = d.decompress(piece, n + 1)
    if len(text) > n:
        # builtin: source.read_frame turns it into CompressedFileError naming the file
        raise ValueError(f"a {what} holds more than the {n} bytes it declares")
    if len(text) < n or not d.eof:  # below the limit: all the input was consumed
        raise EOFError(f"a {what} holds {len(text)} bytes or is cut short, it declares {n}")
    if d.unused_data:
        # builtin: source.read_frame turns it into CompressedFileError naming the file
        raise ValueError(f"a {what} is followed by {len(d.unused_data)} bytes that are not "
                         f"part of it")
    memoryview(out)[:n] = text


def inflate_head(d, source, limit):
    """The bytes that the fresh decompressor object ``d`` (as :func:`inflate_into`) makes of
    the file-like ``source`` (one frame or member), up to and including the first newline,
    decoding no further than needed and never more than ``limit`` bytes, and whether there
    is a newline among them (without, all of them: the whole content, or ``limit`` bytes).

    >>> import gzip, io, zlib
    >>> inflate_head(zlib.decompressobj(wbits=31), io.BytesIO(gzip.compress(b'1:2\\n4\\n')), 99)
    (b'1:2\\n', True)
    >>> inflate_head(zlib.decompressobj(wbits=31), io.BytesIO(gzip.compress(b'1:2\\n4\\n')), 2)
    (b'1:', False)
    """
    parts, pending, got = [], b"", 0
    while not d.eof and got < limit:
        if not pending and getattr(d, "needs_input", True):
            pending = source.read(1 << 14)
            if not pending:
                break
        piece = d.decompress(pending, min(1 << 16, limit - got))
        pending = getattr(d, "unconsumed_tail", b"")
        i = piece.find(b"\n")
        if i >= 0:
            parts.append(piece[:i + 1])
            return b"".join(parts), True
        parts.append(piece)
        got += len(piece)
    return b"".join(parts), False


class Pieces:
    """Decompressed pieces waiting to be read, in order: a queue of buffers and an offset
    into the first, so that reading a few bytes at a time copies each byte once (slicing the
    rest of a piece off on every read copies it again and again).

    >>> p = Pieces()
    >>> p.append(b'0123'); p.append(b''); p.append(b'45')
    >>> p.size, p.take(3), p.take(2), p.take(9), p.take(9)
    (6, b'012', b'34', b'5', b'')
    """

    def __init__(self):
        self._queue, self._pos, self.size = collections.deque(), 0, 0

    def append(self, piece):
        """Queue ``piece`` (any buffer; an empty one is dropped)."""
        if len(piece):
            self._queue.append(piece)
            self.size += len(piece)

    def take(self, n):
        """Up to ``n`` bytes from the front (fewer only when fewer are queued); a whole
        queued piece comes back as it is, without a copy."""
        out, got, queue = [], 0, self._queue
        while queue and got < n:
            first = queue[0]
            k = min(len(first) - self._pos, n - got)
            if self._pos == 0 and k == len(first):
                out.append(first)
            else:
                out.append(first[self._pos:self._pos + k])
            self._pos += k
            if self._pos == len(first):
                queue.popleft()
                self._pos = 0
            got += k
        self.size -= got
        if len(out) == 1:
            return out[0]
        return b"".join(out)

"""gzip files as independent members: written a few MiB of text per member, read with the
members decompressed in parallel.

A gzip file may hold any number of members one after the other (RFC 1952, 2.2); ``gzip -d``
and every reader decompress them in order. sparsenet writes one member per
:data:`MEMBER_TEXT_BYTES` of text, and puts in each member's header an extra field
(subfield ``SN``, RFC 1952 2.3.1.1, which readers skip) holding the member's length in the
file and the text it holds. A reader then finds every member from the headers alone (no
decompression) and decompresses several at once: ISA-L and zlib release the GIL, so such a
file reads at up to twice one core's speed on two cores. Other gzip files (one member, as
``gzip`` writes them) are read by the streaming reader.

A member's layout: the 10-byte header with FLG.FEXTRA, ``XLEN = 12``, the subfield
``b'SN'``, its length 8, then the member's length in bytes and its text size (both
unsigned 32-bit, little-endian); the raw deflate data; CRC-32 and ISIZE.

>>> import gzip, os, tempfile, zlib
>>> p = os.path.join(tempfile.mkdtemp(), 'x.svm.gz')
>>> with MemberWriter(p, 6, zlib, frame_bytes=8) as w:
...     _ = w.write(b'1 0:1\\n' * 3)
>>> [row[2:] for row in member_table(p)]  # (text size, text offset) of each member
[(8, 0), (8, 8), (2, 16)]
>>> gzip.open(p).read()
b'1 0:1\\n1 0:1\\n1 0:1\\n'
"""
import mmap
import struct

from .framing import FileWindow, FrameWriter, inflate_head, inflate_into

__all__ = ["MEMBER_TEXT_BYTES", "MAX_MEMBER_BYTES", "MemberWriter", "member_table",
           "decode_into", "decode_head"]

#: Bytes of text per member that sparsenet writes.
MEMBER_TEXT_BYTES = 4 << 20
#: A member declaring more text than this is not decompressed whole (streaming instead): a
#: parsing thread holds one such member's text, so this bounds a load's memory whatever the
#: compression ratio (four times what sparsenet writes).
MAX_MEMBER_BYTES = 16 << 20

_MAX_RATIO = 1032  # deflate's largest: a member claiming more text is forged
_FEXTRA = 0x04
_HEADER = struct.Struct("<BBBBIBBH2sHII")  # the header sparsenet writes: 24 bytes
_SUBFIELD = b"SN"


def _member(deflate, text, zlib_module):
    """One gzip member holding ``text``, whose raw deflate data is ``deflate``."""
    size = _HEADER.size + len(deflate) + 8
    head = _HEADER.pack(0x1F, 0x8B, 8, _FEXTRA, 0, 0, 255, 12, _SUBFIELD, 8, size, len(text))
    trailer = struct.pack("<II", zlib_module.crc32(text) & 0xFFFFFFFF, len(text) & 0xFFFFFFFF)
    return b"".join((head, deflate, trailer))


class MemberWriter(FrameWriter):
    """Writes a ``.gz`` file as one member per ``frame_bytes`` (default
    :data:`MEMBER_TEXT_BYTES`) of text, each declaring its length and text size;
    ``zlib_module`` (``isal.isal_zlib`` or ``zlib``) compresses at ``level``, in a
    background thread while the caller formats text."""

    def __init__(self, tmp, level, zlib_module, frame_bytes=None):
        def compress(text):
            return _member(zlib_module.compress(text, level, wbits=-15), text, zlib_module)

        super().__init__(tmp, compress,
                         MEMBER_TEXT_BYTES if frame_bytes is None else frame_bytes)


def _extent(buf, start):
    """(member length, text size) from the ``SN`` subfield of the member at ``start``, or
    None when it has none (or the header is cut short)."""
    if len(buf) - start < 12 or buf[start] != 0x1F or buf[start + 1] != 0x8B:
        return None
    if buf[start + 2] != 8 or buf[start + 3] & 0xE0 or not buf[start + 3] & _FEXTRA:
        return None
    xlen = struct.unpack_from("<H", buf, start + 10)[0]
    pos, end = start + 12, start + 12 + xlen
    if end > len(buf):
        return None
    while pos + 4 <= end:
        sid, n = bytes(buf[pos:pos + 2]), struct.unpack_from("<H", buf, pos + 2)[0]
        if sid == _SUBFIELD and n == 8 and pos + 12 <= end:
            return struct.unpack_from("<II", buf, pos + 4)
        pos += 4 + n
    return None


def member_table(path):
    """Every member of ``path`` as ``(start, stop, text size, text offset)``, when each
    member carries the ``SN`` subfield, its length fits the file, its ISIZE agrees and its
    text is at most :data:`MAX_MEMBER_BYTES` and 1032 times its length (deflate's largest
    ratio); else None (also for a file that cannot be walked: the streaming reader reports
    what is wrong with it). A member declaring no text is a row too: the sizes are checked
    again when a member is decompressed, zero included.
    """
    table, pos, offset = [], 0, 0
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            n = len(m)
            while pos < n:
                extent = _extent(m, pos)
                if extent is None:
                    return None
                length, text = extent
                stop = pos + length
                if (length < _HEADER.size + 8 or stop > n or text > MAX_MEMBER_BYTES
                        or text > _MAX_RATIO * length):
                    return None
                if struct.unpack_from("<I", m, stop - 4)[0] != text:
                    return None
                table.append((pos, stop, text, offset))
                offset += text
                pos = stop
    except (OSError, ValueError):
        return None
    return tuple(table) if table else None


def decode_into(zlib_module, member, out):
    """Decompress one whole member (a buffer holding exactly it) into ``out``, a writable
    buffer of its declared text size (zero included); its CRC-32 and ISIZE are checked.
    Raises EOFError when the member holds less than it declares, ValueError when more
    (decoding at most one byte more), ``zlib_module.error`` for corrupt data. The
    decompressor releases the GIL.

    >>> import gzip, zlib
    >>> out = bytearray(6)
    >>> decode_into(zlib, gzip.compress(b'1 0:1\\n'), out)
    >>> bytes(out)
    b'1 0:1\\n'
    """
    inflate_into(zlib_module.decompressobj(wbits=31), member, out, "gzip member")


def decode_head(zlib_module, fd, start, stop, limit):
    """The decompressed bytes of the member in bytes ``[start, stop)`` of file descriptor
    ``fd``, up to and including its first newline, decoding no further than needed and
    never more than ``limit`` bytes, and whether there is a newline among them (without,
    the whole text, or ``limit`` bytes).

    >>> import gzip, os, tempfile, zlib
    >>> p = os.path.join(tempfile.mkdtemp(), 'h.gz')
    >>> n = open(p, 'wb').write(gzip.compress(b'1:2 3\\n4 5\\n'))
    >>> with open(p, 'rb') as f:
    ...     decode_head(zlib, f.fileno(), 0, n, 99)
    (b'1:2 3\\n', True)
    """
    return inflate_head(zlib_module.decompressobj(wbits=31), FileWindow(fd, start, stop),
                        limit)

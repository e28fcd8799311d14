"""Compressed LibSVM files: the suffix picks the format, the fastest installed codec serves it.

=========  ==========  ===========================================  ==================
suffix     format      codec                                        ``compresslevel``
=========  ==========  ===========================================  ==================
``.gz``    gzip        ISA-L (``isal``), else the standard library  0-9, default 2
``.zst``   Zstandard   ``zstandard``, else ``compression.zstd``      1-22, default 1
``.xz``    xz          the standard library (``lzma``)               0-9, default 1
``.bz2``   bzip2       the standard library (``bz2``)                1-9, default 9
=========  ==========  ===========================================  ==================

gzip levels 0-3 are written by ISA-L (several times zlib's speed; the files are
standard gzip); levels 4-9, which ISA-L lacks, by zlib. Without ``isal`` the
standard library reads and writes gzip, with one :class:`CompressionFallbackWarning`.
Without a Zstandard codec, ``.zst`` raises :class:`CompressionUnavailableError`
naming the package to install. Multi-frame ``.zst`` and multi-member ``.gz``
files are read whole, in bounded memory whatever the compression ratio, and every
frame or member that declares its size is checked against it, zero included.
sparsenet writes ``.gz`` and ``.zst`` as one member or frame per 4 MiB of text
that says where it ends (:mod:`~sparsenet.io.libsvm.gzip_members`,
:mod:`~sparsenet.io.libsvm.zstd_frames`): :func:`frame_table` finds them, and the
parsing threads decompress them in parallel (:func:`frame_codec`). A file whose content does not match its suffix, or a
truncated or corrupt archive, raises :class:`CompressedFileError` naming the path.

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), 'x.svm.zst')
>>> with open_write(p, p + '.tmp') as f:
...     _ = f.write(b'1 0:1\\n')
>>> os.replace(p + '.tmp', p)
>>> with open_read(p, compression_of(p)) as f:
...     f.read()
b'1 0:1\\n'
"""
import bz2
import functools
import gzip
import importlib
import lzma
import os
import threading
import warnings
import zlib
from typing import NamedTuple

from ...base import InvalidArgumentError, SparsenetError
from . import framing, gzip_members, zstd_frames

__all__ = ["compression_of", "open_read", "open_write", "check_write", "text_size_hint",
           "frame_table", "frame_codec", "FrameCodec", "CompressedFileError",
           "CompressionUnavailableError", "CompressionFallbackWarning", "SUFFIXES"]


class CompressedFileError(SparsenetError, ValueError):
    """A compressed file is truncated, corrupt, or not in the format its suffix names.

    Attributes
    ----------
    path : str
    """

    def __init__(self, message, path=None):
        super().__init__(message)
        self.path = path


class CompressionUnavailableError(SparsenetError, ImportError):
    """No installed package can read or write a compression format."""


class CompressionFallbackWarning(UserWarning):
    """A slower codec serves a format because the fast one cannot be imported."""


class _Format(NamedTuple):
    name: str
    magic: tuple
    default_level: int
    levels: range


_FORMATS = {
    "gzip": _Format("gzip", (b"\x1f\x8b",), 2, range(0, 10)),
    "zstd": _Format("zstd", (b"\x28\xb5\x2f\xfd",) + tuple(
        bytes([m, 0x2a, 0x4d, 0x18]) for m in range(0x50, 0x60)), 1, range(1, 23)),
    "xz": _Format("xz", (b"\xfd7zXZ\x00",), 1, range(0, 10)),
    "bz2": _Format("bz2", (b"BZh",), 9, range(1, 10)),
}
#: Suffix (lower case) -> format name.
SUFFIXES = {".gz": "gzip", ".zst": "zstd", ".xz": "xz", ".bz2": "bz2"}
_ZSTD_HINT = "install the 'zstandard' package (pip install zstandard) to read and write .zst"


def compression_of(path):
    """The format a file name's suffix names ('gzip', 'zstd', 'xz', 'bz2'), or None.

    >>> compression_of('day_0.svm.ZST'), compression_of('a.svm')
    ('zstd', None)
    """
    low = str(path).lower()
    for suffix, name in SUFFIXES.items():
        if low.endswith(suffix):
            return name
    return None


_warned = set()
_warn_lock = threading.Lock()


def _warn_once(key, message):
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(message, CompressionFallbackWarning, stacklevel=4)


def _isal(name="igzip_threaded"):
    """The ``isal`` module ``name`` (``igzip_threaded``, whose reader decompresses in its own
    thread, or ``isal_zlib``), or None (with one warning) when ``isal`` cannot be imported."""
    try:  # optional: imported when a .gz is met
        return importlib.import_module(f"isal.{name}")
    except ImportError:
        _warn_once("isal", "the 'isal' package cannot be imported: gzip files are read and "
                           "written by the standard library, 2-3x (reading) and 10x or more "
                           "(writing) slower; pip install isal")
        return None


def _zlib():
    """``isal.isal_zlib`` when it imports, else the standard library's ``zlib``."""
    mod = _isal("isal_zlib")
    return zlib if mod is None else mod


def _zstd_module():
    """('zstandard', module) or ('stdlib', compression.zstd); raise when neither imports."""
    try:
        import zstandard  # optional: imported when a .zst file is met
        return "zstandard", zstandard
    except ImportError:
        pass
    try:
        from compression import zstd  # Python >= 3.14
        return "stdlib", zstd
    except ImportError:
        raise CompressionUnavailableError(f"cannot read or write Zstandard (.zst) files: "
                                          f"{_ZSTD_HINT}") from None


class _Checked:
    """A decompressing reader whose codec errors (``errors``) name the file."""

    def __init__(self, inner, path, fmt, errors=()):
        self._inner, self.path, self._fmt = inner, path, fmt
        self._errors = (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error) + errors

    def read(self, n=-1):
        try:
            return self._inner.read(n)
        except (FileNotFoundError, PermissionError):
            raise
        except self._errors as e:
            raise CompressedFileError(f"{self.path}: truncated or corrupt {self._fmt} data "
                                      f"({e})", self.path) from None

    def close(self):
        self._inner.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _check_magic(path, fmt):
    with open(path, "rb") as f:
        head = f.read(6)
    if not head:
        return False  # an empty file holds no rows, whatever its suffix
    if not any(head.startswith(m) for m in _FORMATS[fmt].magic):
        raise CompressedFileError(f"{path}: the suffix names {fmt} but the file does not start "
                                  f"like {fmt} data (first bytes {head[:4]!r}); rename the file "
                                  f"to match its content", path)
    return True


class _Empty:
    def read(self, n=-1):
        return b""

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


def open_read(path, fmt):
    """A binary reader of the decompressed bytes of ``path`` (``fmt`` from :func:`compression_of`).

    gzip through ISA-L decompresses in a thread of its own, ahead of the reads. Every
    reader decompresses a bounded number of bytes per step (``read(n)`` holds about ``n``
    bytes, whatever the compression ratio), and every frame or member that declares its
    size is checked against it, zero included.

    Raises
    ------
    CompressedFileError
        The content does not match the format (now), or is truncated/corrupt (when read).
    CompressionUnavailableError
        ``.zst`` without a Zstandard package.
    """
    if fmt == "zstd":
        kind, mod = _zstd_module()
    if not _check_magic(path, fmt):
        return _Empty()
    errors = ()
    if fmt == "gzip":
        isal = _isal()
        if isal is not None:
            from isal.igzip_lib import IsalError  # optional package, present on this path
            inner, errors = isal.open(path, "rb", threads=1), (IsalError,)
        else:
            inner = gzip.open(path, "rb")
    elif fmt == "zstd":
        # frames that declare their size (sparsenet writes such files): in parallel
        table = frame_table(path, fmt) if kind == "zstandard" else None  # remembered
        if table:
            inner, errors = zstd_frames.FramedReader(mod, path, table), (mod.ZstdError,)
        elif kind == "zstandard":
            inner, errors = zstd_frames.StreamReader(mod, path), (mod.ZstdError,)
        else:
            inner, errors = mod.open(path, "rb"), (mod.ZstdError,)
    elif fmt == "xz":
        inner = lzma.open(path, "rb")
    else:
        inner = bz2.open(path, "rb")
    return _Checked(inner, path, fmt, errors)


class FrameCodec(NamedTuple):
    """How the parsing threads decompress the frames or members of one format.

    ``decode_into(piece, out)`` decompresses one whole frame (a buffer) into ``out``, of its
    declared size (zero included), and checks that it holds exactly that;
    ``decode_head(fd, start, stop, limit)`` the start of one, up to its first newline and
    at most ``limit`` bytes; a codec error is one of ``errors`` (or EOFError/ValueError)."""
    decode_into: object
    decode_head: object
    errors: tuple


def frame_table(path, fmt):
    """The frames (``.zst``) or members (``.gz``) of ``path`` that the parsing threads can
    decompress one by one, as ``(start, stop, text size, text offset)`` rows, or None: the
    format has none, a piece does not say where it ends or how much text it holds (files
    that sparsenet did not write), or the file cannot be walked (the streaming reader then reads it, or reports what is wrong
    with it). Remembered for the file's size and modification time.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), 'x.svm.zst')
    >>> with open_write(p, p + '.tmp') as f:
    ...     _ = f.write(b'1 0:1\\n')
    >>> os.replace(p + '.tmp', p)
    >>> [row[2:] for row in frame_table(p, 'zstd')]  # (text size, text offset) of each frame
    [(6, 0)]
    """
    if fmt not in ("gzip", "zstd"):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _frame_table(os.path.abspath(path), fmt, st.st_size, st.st_mtime_ns, st.st_ino)


@functools.lru_cache(maxsize=64)
def _frame_table(path, fmt, size, mtime_ns, inode):
    if fmt == "gzip":
        return gzip_members.member_table(path)
    return zstd_frames.frame_table(path)


def frame_codec(fmt):
    """The :class:`FrameCodec` of ``fmt`` ('gzip' or 'zstd') for the rows of
    :func:`frame_table`: ISA-L's zlib interface (else the standard library's), or
    ``zstandard`` (else ``compression.zstd``). The rows depend on the file alone, so workers
    with different codecs installed agree on how parts share a file.

    >>> import gzip
    >>> out = bytearray(6)
    >>> frame_codec('gzip').decode_into(gzip.compress(b'1 0:1\\n'), out)
    >>> bytes(out)
    b'1 0:1\\n'
    """
    if fmt == "gzip":
        mod = _zlib()
        return FrameCodec(functools.partial(gzip_members.decode_into, mod),
                          functools.partial(gzip_members.decode_head, mod), (mod.error,))
    kind, mod = _zstd_module()
    if kind == "zstandard":
        return FrameCodec(functools.partial(zstd_frames.decode_into, mod),
                          functools.partial(zstd_frames.decode_head, mod), (mod.ZstdError,))
    return FrameCodec(  # compression.zstd: decompressor objects as zlib's
        lambda piece, out: framing.inflate_into(mod.ZstdDecompressor(), piece, out,
                                                "Zstandard frame"),
        lambda fd, start, stop, limit: framing.inflate_head(
            mod.ZstdDecompressor(), framing.FileWindow(fd, start, stop), limit),
        (mod.ZstdError,))


_MAX_RATIO = 1032


def text_size_hint(path, fmt, size):
    """A cheap guess of the decompressed size of a ``size``-byte file (for preallocation).

    A file with a :func:`frame_table`: the sum of its pieces' text; other gzip: the last
    member's size field (modulo 4 GiB, so raised past ``size``); otherwise three times
    ``size``. Never above 1032 times ``size`` (deflate's largest ratio), so a forged header
    cannot make readers reserve absurd amounts of memory.

    >>> import gzip, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), 'h.gz')
    >>> _ = open(p, 'wb').write(gzip.compress(b'1 0:1\\n' * 1000))
    >>> text_size_hint(p, 'gzip', os.path.getsize(p))
    6000
    """
    guess = 3 * size
    table = frame_table(path, fmt)
    if table:
        return min(table[-1][2] + table[-1][3], _MAX_RATIO * size)
    if fmt != "gzip" or size < 18:
        return guess
    try:
        with open(path, "rb") as f:
            f.seek(size - 4)
            isize = int.from_bytes(f.read(4), "little")
    except OSError:  # a hint only: the reader reports what is wrong with the file
        return guess
    while isize < size:
        isize += 1 << 32
    return min(isize, _MAX_RATIO * size)


def _level(fmt, compresslevel):
    spec = _FORMATS[fmt]
    if compresslevel is None:
        return spec.default_level
    if (not isinstance(compresslevel, int) or isinstance(compresslevel, bool)
            or compresslevel not in spec.levels):
        raise InvalidArgumentError(
            f"save_libsvm: compresslevel for {fmt} must be an int in "
            f"[{spec.levels.start}, {spec.levels.stop - 1}], got {compresslevel!r}")
    return compresslevel


def check_write(path, compresslevel=None):
    """The (format, level) that :func:`open_write` uses for ``path``; raise if it cannot.

    Raises
    ------
    ValueError
        ``compresslevel`` outside the format's range (or given for a plain file).
    CompressionUnavailableError
        ``.zst`` without a Zstandard package.

    >>> check_write('x.svm.gz'), check_write('x.svm')
    (('gzip', 2), (None, None))
    """
    fmt = compression_of(path)
    if fmt is None:
        if compresslevel is not None:
            raise InvalidArgumentError(
                f"save_libsvm: compresslevel={compresslevel!r} needs a compressed "
                f"path (.gz, .zst, .xz or .bz2), got {path!r}")
        return None, None
    if fmt == "zstd":
        _zstd_module()
    return fmt, _level(fmt, compresslevel)


def open_write(path, tmp, compresslevel=None):
    """A binary writer into ``tmp`` in the format ``path``'s suffix names (plain if none).

    Raises what :func:`check_write` raises.
    """
    fmt, level = check_write(path, compresslevel)
    if fmt is None:
        return open(tmp, "wb")
    if fmt == "gzip":
        mod = _zlib() if level <= 3 else zlib  # ISA-L has levels 0-3
        return gzip_members.MemberWriter(tmp, level, mod)
    if fmt == "zstd":
        kind, mod = _zstd_module()
        if kind == "zstandard":
            return zstd_frames.FramedWriter(mod, tmp, level)
        return mod.open(tmp, "wb", level=level)
    if fmt == "xz":
        return lzma.open(tmp, "wb", preset=level)
    return bz2.open(tmp, "wb", compresslevel=level)

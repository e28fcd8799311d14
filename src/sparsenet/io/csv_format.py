"""Dense CSV text to arrays, validated: every problem raises :class:`CSVFormatError`.

A row is a line of ``width`` comma-separated numbers; spaces and tabs around a
number, one trailing comma, blank lines and ``\\r\\n`` endings are accepted (as
MXNet's CSVIter accepts them). Anything else (a header, an empty field, a
number that does not fit the dtype, a row of the wrong length) is an error
that names ``path:line:column``, what was expected and what was found.

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), 'x.csv')
>>> with open(p, 'w') as f:
...     _ = f.write('1,2,3\\n4,5,6\\n')
>>> read_csv(p, 3, 'float32').tolist()
[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
>>> with open(p, 'w') as f:
...     _ = f.write('1,2,3\\n4,x,6\\n')
>>> try:
...     read_csv(p, 3, 'float32')
... except CSVFormatError as e:
...     print(str(e).split(': ', 1)[1])
invalid number 'x' (expected a number such as 1, -2.5 or 3e-4)
"""
import io
import os
import re
import warnings

import numpy as np
import torch

from ..base import FileFormatError
from .libsvm.compression import open_read
from .libsvm.source import list_files

__all__ = ["CSVFormatError", "read_csv", "DTYPES"]

#: dtype name -> (numpy dtype, whether integer)
DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64}

_LINES_PER_CHUNK = 1 << 16
_FLOAT_BYTES = b"0123456789+-.eE,\t \r\nnaifty"  # 'nan', 'inf', 'infinity', any case
_FLOAT_BYTES += _FLOAT_BYTES.upper()
_INT_BYTES = b"0123456789+-,\t \r\n"
_FLOAT = re.compile(rb"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                    rb"|(?i:nan|inf(?:inity)?))")
_NONFINITE = re.compile(rb"[+-]?(?i:nan|inf(?:inity)?)")
_INT = re.compile(rb"[+-]?[0-9]+")
_BLANK = b" \t"


class CSVFormatError(FileFormatError):
    """A CSV file holds something that is not a row of numbers of the expected length and dtype.

    A ``ValueError`` and an ``MXNetError``.

    Attributes
    ----------
    path : str
    line : int
        1-based line number (blank lines counted).
    column : int
        1-based byte column of the offending field (or of the line's end).
    token : str
        The offending field as text ('' at a line's end).
    """

    def __init__(self, message, path=None, line=None, column=None, token=None):
        super().__init__(message)
        self.path, self.line, self.column, self.token = path, line, column, token


def _text(b):
    """Printable ASCII as is, any other byte as ``\\xNN``."""
    return "".join(chr(c) if 0x20 <= c < 0x7F else f"\\x{c:02x}" for c in b)


def _fields(line):
    """``(column, stripped field)`` of each comma-separated field of ``line`` (1-based columns)."""
    out, start = [], 0
    for part in line.split(b","):
        lead = len(part) - len(part.lstrip(_BLANK))
        out.append((start + lead + 1, part.strip(_BLANK)))
        start += len(part) + 1
    return out


def _field_problem(tok, dtype, allow_nonfinite):
    """Why ``tok`` is not a valid value of ``dtype`` (None when it is)."""
    name = np.dtype(dtype).name
    if not tok:
        return "empty field (expected a number)"
    if np.issubdtype(dtype, np.integer):
        if not _INT.fullmatch(tok):
            return (f"invalid integer '{_text(tok)}' (dtype {name} needs whole numbers such as "
                    f"3 or -2; use dtype='float32' for other numbers)")
        info = np.iinfo(dtype)
        if not info.min <= int(tok) <= info.max:
            return f"value '{_text(tok)}' is out of {name} range [{info.min}, {info.max}]"
        return None
    if not _FLOAT.fullmatch(tok):
        return f"invalid number '{_text(tok)}' (expected a number such as 1, -2.5 or 3e-4)"
    if _NONFINITE.fullmatch(tok):
        if allow_nonfinite:
            return None
        return (f"non-finite value '{_text(tok)}' (pass allow_nonfinite=True to accept NaN and "
                f"infinity)")
    with np.errstate(over="ignore"):
        if not np.isfinite(np.asarray(float(tok), dtype=dtype)):
            return f"value '{_text(tok)}' is out of {name} range"
    return None


def _line_problem(line, width, dtype, allow_nonfinite, shape_text):
    """``(column, token, message)`` for the first problem of a non-blank ``line``, or None."""
    fields = _fields(line)
    if len(fields) == width + 1 and not fields[-1][1]:
        fields = fields[:-1]  # one trailing comma, as MXNet accepts
    for col, tok in fields[:width]:
        why = _field_problem(tok, dtype, allow_nonfinite)
        if why is not None:
            if col == 1 and not _FLOAT.fullmatch(tok) and tok[:1].isalpha():
                why += "; CSVIter reads numbers only (is this a header line? remove it)"
            elif any(sep in tok for sep in (b";", b"\t", b" ", b"|")):
                why += "; fields must be separated by commas"
            return col, tok, why
    if len(fields) != width:
        col, tok = (fields[width] if len(fields) > width
                    else (len(line.rstrip(b"\r\n")) + 1, b""))
        return col, tok, (f"expected {width} value{'s' if width > 1 else ''} per row "
                          f"({shape_text}), found {len(fields)}")
    return None


class _Reader:
    """Parse the rows of one file in chunks of lines; on any problem, locate it exactly."""

    def __init__(self, path, width, dtype, allow_nonfinite, shape_text):
        self.path, self.width, self.dtype = path, width, np.dtype(dtype).type
        self.allow_nonfinite, self.shape_text = allow_nonfinite, shape_text
        self.is_int = np.issubdtype(self.dtype, np.integer)
        self.allowed = _INT_BYTES if self.is_int else _FLOAT_BYTES

    def error(self, lineno, line):
        col, tok, why = _line_problem(line, self.width, self.dtype, self.allow_nonfinite,
                                      self.shape_text)
        return CSVFormatError(f"{self.path}:{lineno}:{col}: {why}", path=self.path,
                              line=lineno, column=col, token=_text(tok))

    def first_error(self, lines, first_lineno):
        """The error of the first bad line among ``lines`` (numbered from ``first_lineno``)."""
        for k, line in enumerate(lines):
            if line.strip(_BLANK) and _line_problem(line, self.width, self.dtype,
                                                    self.allow_nonfinite,
                                                    self.shape_text) is not None:
                return self.error(first_lineno + k, line)
        # builtin: internal invariant, not reachable from a caller's input
        raise AssertionError("no problem found in lines the fast path rejected")  # pragma: no cover

    def parse(self, buf):
        """All rows of the file's bytes ``buf`` as a ``(rows, width)`` array."""
        rows = self._fast(buf)
        return rows if rows is not None else self._by_lines(buf)

    def _fast(self, buf):
        """NumPy's C reader on a clean file (no trailing commas, valid, in range), else None."""
        if buf.translate(None, self.allowed):
            return None  # some byte no number has: the line reader says where
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "input contained no data"
                arr = np.loadtxt(io.BytesIO(buf), delimiter=",", comments=None, ndmin=2,
                                 dtype=np.int64 if self.is_int else np.float64)
        except (ValueError, OverflowError):
            return None
        if arr.shape[1] != self.width or arr.shape[0] == 0:
            return None
        flat = arr.reshape(-1)
        if self._out_of_range(flat, None) is not None:
            return None
        return arr.astype(self.dtype)

    def _by_lines(self, buf):
        """Python's line-by-line reader: trailing commas, and the exact place of a problem."""
        lines = buf.splitlines()
        chunks = []
        for a in range(0, len(lines), _LINES_PER_CHUNK):
            chunks.append(self._chunk(lines[a:a + _LINES_PER_CHUNK], a + 1))
        if not chunks:
            return np.zeros((0, self.width), dtype=self.dtype)
        return np.concatenate(chunks)

    def _chunk(self, lines, first_lineno):
        w = self.width
        toks, rows = [], []
        for k, line in enumerate(lines):
            parts = line.split(b",")
            n = len(parts)
            if n == 1 and not line.strip(_BLANK):
                continue  # blank line
            if n != w:
                if n != w + 1 or parts[-1].strip(_BLANK):  # an earlier line may be bad too
                    raise self.first_error(lines[:k + 1], first_lineno)
                parts.pop()  # one trailing comma
            toks.extend(parts)
            rows.append(k)
        if not rows:
            return np.zeros((0, w), dtype=self.dtype)
        joined = b"".join(toks)
        if joined.translate(None, self.allowed):
            raise self.first_error(lines, first_lineno)
        try:
            arr = np.array(toks).astype(np.int64 if self.is_int else np.float64)
        except (ValueError, OverflowError):
            raise self.first_error(lines, first_lineno) from None
        bad = self._out_of_range(arr, toks)
        if bad is not None:
            k = rows[bad // w]
            raise self.error(first_lineno + k, lines[k])
        return arr.astype(self.dtype).reshape(len(rows), w)

    def _out_of_range(self, arr, toks):
        """The flat index of the first value the dtype cannot hold (or non-finite), or None.

        ``toks``: the fields, to tell a written ``nan``/``inf`` (accepted with
        ``allow_nonfinite``) from an overflow; None: every non-finite value counts.
        """
        if self.is_int:
            info = np.iinfo(self.dtype)
            ok = (arr >= info.min) & (arr <= info.max)
        else:
            with np.errstate(over="ignore"):
                ok = np.isfinite(arr.astype(self.dtype))
            if self.allow_nonfinite and toks is not None and not ok.all():
                for i in np.flatnonzero(~np.isfinite(arr)):  # 'nan'/'inf' written as such
                    ok[i] = _NONFINITE.fullmatch(toks[i].strip(_BLANK)) is not None
        if ok.all():
            return None
        return int(np.argmin(ok))


def read_csv(path, width, dtype, *, allow_nonfinite=False, what="data_csv", shape_text=None):
    """Read the rows of a CSV file (or of every file of a directory, in name order).

    Parameters
    ----------
    path : str or os.PathLike
        A file, or a directory (hidden files and subdirectories skipped).
        ``.gz``, ``.bz2``, ``.xz`` and ``.zst`` files are decompressed.
    width : int
        Values per row.
    dtype : {'float32', 'float64', 'int32', 'int64'}
    allow_nonfinite : bool
        Accept ``nan``/``inf`` (float dtypes).
    what : str
        The argument name, for messages about the path.
    shape_text : str, optional
        How the width was given, for messages (default ``'width N'``).

    Returns
    -------
    numpy.ndarray
        ``(rows, width)`` of ``dtype``.

    Raises
    ------
    CSVFormatError
        The first problem, as ``path:line:column: problem``.
    FileNotFoundError
        ``path`` does not exist, or is a directory without files.
    """
    shape_text = shape_text or f"width {width}"
    parts = []
    for f in list_files(path, what):
        with (open(f.path, "rb") if f.compression is None
              else open_read(f.path, f.compression)) as src:
            buf = src.read()
        reader = _Reader(os.fspath(f.path), width, DTYPES[np.dtype(dtype).name],
                         allow_nonfinite, shape_text)
        parts.append(reader.parse(buf))
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def as_tensor(rows):
    """``rows`` (a NumPy array from :func:`read_csv`) as a torch tensor sharing its memory."""
    return torch.from_numpy(np.ascontiguousarray(rows))

"""LibSVM format errors: the kernels report a code and a byte offset; this module words them.

Every message has the form ``path:line:column: problem 'token'``; line and
column are 1-based, the column counts bytes and points at the token.

>>> err = LibSVMFormatError("bad", path="data.svm", line=17, column=9, token="3:abc")
>>> (err.path, err.line, err.column, err.token, isinstance(err, ValueError))
('data.svm', 17, 9, '3:abc', True)
"""
import math
import re
from typing import NamedTuple

from ...base import SparsenetError

__all__ = ["LibSVMFormatError", "KernelError", "describe"]

# codes returned by both kernels (keep in sync with _native.c)
E_LABEL = 1
E_LABEL_NONFINITE = 2
E_LABEL_RANGE = 3
E_MULTILABEL = 4
E_QID = 5
E_NO_COLON = 6
E_INDEX = 7
E_INDEX_NEG = 8
E_INDEX_ZERO = 9
E_INDEX_RANGE = 10
E_VALUE = 11
E_VALUE_NONFINITE = 12
E_VALUE_RANGE = 13
E_UNSORTED = 14
E_DUPLICATE = 15  # offset is the line start, extra the 0-based index
E_SUM_RANGE = 16  # offset is the line start, extra the 0-based index
E_WEIGHT = 18  # (17 is the native kernel's out-of-memory code)
E_WEIGHT_NONFINITE = 19
E_WEIGHT_RANGE = 20
E_WEIGHT_NEG = 21

_NONFINITE_HINT = "pass allow_nonfinite=True to accept NaN and infinity"
_TOKEN = re.compile(rb"[^ \t\r\v\f\n#]+")
_NUMBER = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


class LibSVMFormatError(SparsenetError, ValueError):
    """A LibSVM file holds something that is not valid LibSVM text.

    Attributes
    ----------
    path : str
        The file.
    line : int
        1-based line number (physical lines, blank ones included).
    column : int
        1-based byte column of the offending token.
    token : str
        The offending token as text.
    """

    def __init__(self, message, path=None, line=None, column=None, token=None):
        super().__init__(message)
        self.path, self.line, self.column, self.token = path, line, column, token


class KernelError(NamedTuple):
    """What a kernel returns for the first problem: code, byte offset, extra integer."""

    code: int
    offset: int
    extra: int


def _text(b):
    """Printable ASCII as is, any other byte as ``\\xNN``."""
    return "".join(chr(c) if 0x20 <= c < 0x7F else f"\\x{c:02x}" for c in b)


def _token_at(buf, off):
    m = _TOKEN.match(buf, off)
    return m.group() if m else b""


def _line_tokens(buf, start):
    """(offset, token) of the tokens of the line starting at ``start``, comment excluded."""
    end = buf.find(b"\n", start)
    end = len(buf) if end < 0 else end
    return [(m.start(), m.group()) for m in _TOKEN.finditer(buf, start, end)]


def _feature_tokens(buf, start, opts):
    toks = _line_tokens(buf, start)
    if toks and not (opts.multilabel and b":" in toks[0][1]):
        toks = toks[1:]  # the label
    if toks and toks[0][1].startswith(b"qid:"):
        toks = toks[1:]
    return toks


def _raw_index(tok):
    return int(tok.split(b":", 1)[0])


def _binary_byte(tok):
    """The first byte of ``tok`` outside printable ASCII, or None."""
    for i, b in enumerate(tok):
        if b < 0x20 or b > 0x7E:
            return i, b
    return None


def is_class_id(v):
    """Whether the float ``v`` is a multi-label class id: a non-negative integer below 2**53
    (inf and NaN are not; both kernels apply this rule)."""
    return 0 <= v < 2.0 ** 53 and v == math.floor(v)


def _multilabel_reason(tok, opts):
    seen = set()
    for part in tok.split(b","):
        v = float(part) if _NUMBER.fullmatch(part) else None
        if v is None:
            return f"'{_text(part)}' is not a number"
        if not is_class_id(v):
            return f"'{_text(part)}' is not a non-negative integer class id"
        if int(v) >= opts.label_limit:
            return f"class {int(v)} is out of range [0, {opts.label_limit}) (num_labels)"
        if int(v) in seen:
            return f"class {int(v)} appears twice"
        seen.add(int(v))
    return "invalid list"  # pragma: no cover - the kernels only flag invalid lists


def describe(err, buf, opts, base_offset=0):
    """Return ``(offset, token, message)`` for a :class:`KernelError` found in ``buf``.

    ``offset`` is where the column points (the token's first byte);
    ``base_offset`` is the file offset of ``buf`` (for byte offsets in messages).

    >>> from sparsenet.io.libsvm.options import ParseOptions
    >>> describe(KernelError(E_VALUE, 2, 0), b"1 3:abc\\n", ParseOptions())
    (2, b'3:abc', "invalid feature value 'abc' in token '3:abc'")
    """
    buf = bytes(buf) if not isinstance(buf, bytes) else buf
    code, off = err.code, err.offset
    shift = 0 if opts.zero_based else 1
    dtype = opts.dtype.name
    if code in (E_DUPLICATE, E_SUM_RANGE):
        raw = err.extra + shift
        hits = [(o, t) for o, t in _feature_tokens(buf, off, opts) if _raw_index(t) == raw]
        off, tok = hits[1] if len(hits) > 1 else hits[0]
        if code == E_DUPLICATE:
            return off, tok, (f"duplicate feature index {raw} in token '{_text(tok)}' "
                              f"(pass duplicates='sum' to add the values of repeated indices)")
        return off, tok, (f"the sum of the values of repeated feature index {raw} overflows "
                          f"{dtype} in token '{_text(tok)}'")
    tok = _token_at(buf, off)
    t = _text(tok)
    bad = _binary_byte(tok)
    if bad is not None:
        i, b = bad
        return off, tok, (f"unexpected byte 0x{b:02x} at byte offset {base_offset + off + i} in "
                          f"token '{t}': the file holds binary or non-ASCII data outside comments")
    if code == E_LABEL:
        if b":" in tok and not opts.weights:
            why = ("a line must start with its label (is the label missing? a 'label:weight' "
                   "token needs weights=True)")
        elif b":" in tok:
            why = "expected label:weight with a number such as 1, -1 or 0.5 before the colon"
        elif b"," in tok:
            why = "a list of labels needs multilabel=True"
        else:
            why = "expected a number such as 1, -1 or 0.5"
        return off, tok, f"invalid label '{t}': {why}"
    if code == E_LABEL_NONFINITE:
        return off, tok, f"non-finite label '{t}' ({_NONFINITE_HINT})"
    if code == E_LABEL_RANGE:
        return off, tok, f"label '{t}' is out of {dtype} range"
    if code in (E_WEIGHT, E_WEIGHT_NONFINITE, E_WEIGHT_RANGE, E_WEIGHT_NEG):
        w = _text(tok.partition(b":")[2])
        why = {E_WEIGHT: "expected a number such as 1 or 0.5",
               E_WEIGHT_NONFINITE: _NONFINITE_HINT,
               E_WEIGHT_RANGE: f"out of {dtype} range",
               E_WEIGHT_NEG: "weights must be >= 0"}[code]
        return off, tok, f"invalid instance weight '{w}' in token '{t}': {why}"
    if code == E_MULTILABEL:
        return off, tok, f"invalid multi-label '{t}': {_multilabel_reason(tok, opts)}"
    if code == E_QID:
        return off, tok, (f"invalid qid '{_text(tok[4:])}' in token '{t}': expected a "
                          f"non-negative integer")
    if code == E_NO_COLON:
        return off, tok, f"expected index:value, got token '{t}'"
    ipart, _, vpart = tok.partition(b":")
    i, v = _text(ipart), _text(vpart)
    if code == E_INDEX:
        if ipart == b"qid":
            return off, tok, f"'qid:' must come right after the label, got token '{t}'"
        return off, tok, (f"invalid feature index '{i}' in token '{t}': expected a "
                          f"non-negative integer")
    if code == E_INDEX_NEG:
        return off, tok, f"negative feature index {i} in token '{t}'"
    if code == E_INDEX_ZERO:
        return off, tok, (f"feature index 0 in a 1-based file (zero_based=False) in token "
                          f"'{t}'; pass zero_based=True if the file counts features from 0")
    if code == E_INDEX_RANGE:
        raw = int(ipart)
        if opts.num_features is not None:
            rng = (f"[0, {opts.num_features})" if opts.zero_based
                   else f"[1, {opts.num_features}] (zero_based=False)")
            return off, tok, f"feature index {raw} out of range {rng} in token '{t}'"
        return off, tok, (f"feature index {raw} too large in token '{t}': the limit is "
                          f"{opts.max_num_features - 1 + shift}; pass num_features, or raise "
                          f"max_num_features if the file really is that wide")
    if code == E_VALUE:
        return off, tok, f"invalid feature value '{v}' in token '{t}'"
    if code == E_VALUE_NONFINITE:
        return off, tok, f"non-finite feature value '{v}' in token '{t}' ({_NONFINITE_HINT})"
    if code == E_VALUE_RANGE:
        return off, tok, f"feature value '{v}' is out of {dtype} range in token '{t}'"
    if code == E_UNSORTED:
        prev = [p for p in _feature_tokens(buf, buf.rfind(b"\n", 0, off) + 1, opts) if p[0] < off]
        before = _raw_index(prev[-1][1]) if prev else None
        return off, tok, (f"feature index {int(ipart)} comes after {before} in token '{t}': "
                          f"indices must increase within a line (strict_order=True)")
    # builtin: internal invariant, not reachable from a caller's input
    raise AssertionError(f"unknown kernel error code {code}")  # pragma: no cover


def make_error(err, buf, opts, path, base_offset, lines_before):
    """Build the :class:`LibSVMFormatError` for ``err`` found in ``buf``.

    ``base_offset`` is the file offset of ``buf``; ``lines_before`` the number of
    lines in the file before ``buf`` starts (or a callable returning it, called
    only here).
    """
    buf = bytes(buf) if not isinstance(buf, bytes) else buf
    off, tok, msg = describe(err, buf, opts, base_offset)
    line_start = buf.rfind(b"\n", 0, off) + 1
    before = lines_before() if callable(lines_before) else lines_before
    line = before + buf.count(b"\n", 0, line_start) + 1
    column = off - line_start + 1
    return LibSVMFormatError(f"{path}:{line}:{column}: {msg}", path=str(path), line=line,
                             column=column, token=_text(tok))

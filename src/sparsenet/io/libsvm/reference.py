"""The pure-Python LibSVM kernel: the readable specification of the native one.

:func:`parse` has the contract of ``libsvm._native.parse``: it takes a buffer of
complete lines and returns the CSR parts, or ``(code, offset, extra)`` for the
first problem, found in the same order with the same offsets. The test suite
runs every case through both kernels and requires identical answers. sparsenet
uses this kernel when the native one is not built (it is about 100x slower).

>>> from sparsenet.io.libsvm.options import ParseOptions
>>> out = parse(b"1 0:2.5 3:1\\n0 1:-1\\n", ParseOptions())
>>> out.indptr.tolist(), out.indices.tolist(), out.values.tolist(), out.labels.tolist()
([0, 2, 3], [0, 3, 1], [2.5, 1.0, -1.0], [1.0, 0.0])
>>> parse(b"1 3:abc\\n", ParseOptions())
KernelError(code=11, offset=2, extra=0)
"""
import math
import re
from typing import NamedTuple

import numpy as np

from .errors import (is_class_id, E_DUPLICATE, E_INDEX, E_INDEX_NEG, E_INDEX_RANGE, E_INDEX_ZERO,
                            E_LABEL, E_LABEL_NONFINITE, E_LABEL_RANGE, E_MULTILABEL, E_NO_COLON,
                            E_QID, E_SUM_RANGE, E_UNSORTED, E_VALUE, E_VALUE_NONFINITE,
                            E_VALUE_RANGE, E_WEIGHT, E_WEIGHT_NEG, E_WEIGHT_NONFINITE,
                            E_WEIGHT_RANGE, KernelError)

__all__ = ["Parsed", "parse", "count_rows"]

_TOKEN = re.compile(rb"[^ \t\r\v\f]+")
_NUMBER = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_NONFINITE = re.compile(rb"[+-]?(?:infinity|inf|nan)\Z", re.IGNORECASE)
_DIGITS_COLON = re.compile(rb"[0-9]+:")
_QID = re.compile(rb"qid:([0-9]+)\Z")
_F32_OVERFLOW = float.fromhex("0x1.ffffffp+127")  # |x| >= this rounds to inf in float32
_INT64_MAX = 2 ** 63 - 1


class Parsed(NamedTuple):
    """CSR parts of the parsed lines (arrays are numpy; unused ones are None)."""

    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    labels: object
    label_indptr: object
    label_ids: object
    qids: object
    nrows: int
    max_index: int
    max_label: int
    nlines: int
    weights: object = None


def _number(text):
    """``(value, is_nan_or_inf_literal)`` or None when ``text`` is not a number."""
    if _NUMBER.match(text):
        return float(text), False
    if _NONFINITE.match(text):
        return float(text), True
    return None


def _overflows(value, f64):
    return math.isinf(value) or (not f64 and abs(value) >= _F32_OVERFLOW)


def _checked(text, opts, bad, nonfinite, out_of_range):
    """``(value, None)`` when ``text`` is a number ``opts`` accepts, else ``(None, code)``
    with the code for not a number, a refused nan/inf, or out of the dtype's range."""
    num = _number(text)
    if num is None:
        return None, bad
    if num[1] and not opts.allow_nonfinite:
        return None, nonfinite
    if not num[1] and _overflows(num[0], opts.f64):
        return None, out_of_range
    return num[0], None


def _multilabel(tok, opts):
    """Sorted class ids, or None when the list is invalid."""
    ids = []
    for part in tok.split(b","):
        num = _number(part)
        if num is None or num[1]:
            return None
        v = num[0]
        if not is_class_id(v) or int(v) >= opts.label_limit:
            return None
        ids.append(int(v))
    ids.sort()
    if any(a == b for a, b in zip(ids, ids[1:])):
        return None
    return ids


def _feature_error(tok):
    """The error code of a feature token that is not ``digits:...``."""
    colon = tok.find(b":")
    if colon < 0:
        return E_NO_COLON
    if tok[:1] == b"-" and colon > 1 and tok[1:colon].isdigit():
        return E_INDEX_NEG
    return E_INDEX


class _Row:
    __slots__ = ("indices", "values", "dups", "unsorted")

    def __init__(self):
        self.indices, self.values, self.dups, self.unsorted = [], [], False, False


def _finish_row(row, line_start, opts, dtype):
    """Sort, check duplicates and sum them like the native kernel; KernelError or None."""
    idx, vals = row.indices, row.values
    if row.unsorted:
        order = sorted(range(len(idx)), key=idx.__getitem__)  # stable
        idx[:] = [idx[k] for k in order]
        vals[:] = [vals[k] for k in order]
        for a, b in zip(idx, idx[1:]):
            if a == b:
                if opts.duplicates != "sum":
                    return KernelError(E_DUPLICATE, line_start, b)
                row.dups = True
                break
    if row.dups:
        out_i, out_v = [], []
        with np.errstate(over="ignore", invalid="ignore"):
            for i, v in zip(idx, vals):
                if out_i and out_i[-1] == i:
                    a, b = dtype.type(out_v[-1]), dtype.type(v)
                    s = a + b
                    if np.isinf(s) and not np.isinf(a) and not np.isinf(b):
                        return KernelError(E_SUM_RANGE, line_start, i)
                    out_v[-1] = s
                else:
                    out_i.append(i)
                    out_v.append(dtype.type(v))
        idx[:], vals[:] = out_i, out_v
    return None


def parse(buf, opts):
    """Parse complete LibSVM lines; :class:`Parsed` or :class:`KernelError`."""
    buf = bytes(buf)
    dtype = opts.dtype
    shift = 0 if opts.zero_based else 1
    max_raw = opts.limit - 1 + shift
    indptr, indices, values, labels, qids, weights = [0], [], [], [], [], []
    lab_indptr, lab_ids = [0], []
    max_index = max_label = -1
    pos, n = 0, len(buf)
    while pos < n:
        nl = buf.find(b"\n", pos)
        end = nl if nl >= 0 else n
        line_start = pos
        hash_at = buf.find(b"#", pos, end)
        stop = hash_at if hash_at >= 0 else end
        toks = [(m.start(), m.group()) for m in _TOKEN.finditer(buf, pos, stop)]
        pos = end + 1
        if not toks:
            continue
        k = 0
        off, tok = toks[0]
        if opts.multilabel:
            if b":" not in tok:
                ids = _multilabel(tok, opts)
                if ids is None:
                    return KernelError(E_MULTILABEL, off, 0)
                lab_ids.extend(ids)
                if ids:
                    max_label = max(max_label, ids[-1])
                k = 1
            lab_indptr.append(len(lab_ids))
        else:
            label_text, colon, weight_text = tok.partition(b":") if opts.weights else (tok, b"", b"")
            label, code = _checked(label_text, opts, E_LABEL, E_LABEL_NONFINITE, E_LABEL_RANGE)
            if code is not None:
                return KernelError(code, off, 0)
            labels.append(label)
            if opts.weights:
                w, code = (_checked(weight_text, opts, E_WEIGHT, E_WEIGHT_NONFINITE,
                                    E_WEIGHT_RANGE) if colon else (1.0, None))
                if code is None and w < 0:
                    code = E_WEIGHT_NEG
                if code is not None:
                    return KernelError(code, off, 0)
                weights.append(w)
            k = 1
        qid = 0
        if k < len(toks) and toks[k][1].startswith(b"qid:"):
            m = _QID.match(toks[k][1])
            if m is None or int(m.group(1)) > _INT64_MAX:
                return KernelError(E_QID, toks[k][0], 0)
            qid = int(m.group(1))
            k += 1
        if opts.query_id:
            qids.append(qid)
        row, prev = _Row(), -1
        for off, tok in toks[k:]:
            if not _DIGITS_COLON.match(tok):
                return KernelError(_feature_error(tok), off, 0)
            colon = tok.index(b":")
            raw = int(tok[:colon])
            if raw > max_raw:
                return KernelError(E_INDEX_RANGE, off, 0)
            if raw < shift:
                return KernelError(E_INDEX_ZERO, off, 0)
            idx = raw - shift
            value, code = _checked(tok[colon + 1:], opts, E_VALUE, E_VALUE_NONFINITE,
                                   E_VALUE_RANGE)
            if code is not None:
                return KernelError(code, off, 0)
            if idx <= prev:
                if idx == prev:
                    if opts.duplicates != "sum":
                        return KernelError(E_DUPLICATE, line_start, idx)
                    row.dups = True
                else:
                    if opts.strict_order:
                        return KernelError(E_UNSORTED, off, 0)
                    row.unsorted = True
            prev = idx
            row.indices.append(idx)
            row.values.append(value)
            max_index = max(max_index, idx)
        err = _finish_row(row, line_start, opts, dtype)
        if err is not None:
            return err
        indices.extend(row.indices)
        values.extend(row.values)
        indptr.append(len(indices))
    with np.errstate(over="ignore"):
        vals = np.array(values, dtype=np.float64).astype(dtype)
    return Parsed(
        indptr=np.array(indptr, dtype=np.int64),
        indices=np.array(indices, dtype=np.int64),
        values=vals,
        labels=None if opts.multilabel else np.array(labels, dtype=np.float64).astype(dtype),
        label_indptr=np.array(lab_indptr, dtype=np.int64) if opts.multilabel else None,
        label_ids=np.array(lab_ids, dtype=np.int64) if opts.multilabel else None,
        qids=np.array(qids, dtype=np.int64) if opts.query_id else None,
        nrows=len(indptr) - 1, max_index=max_index, max_label=max_label,
        nlines=buf.count(b"\n"),
        weights=np.array(weights, dtype=np.float64).astype(dtype) if opts.weights else None)


def count_rows(buf):
    """Number of lines holding a row (not blank, not only a comment).

    >>> count_rows(b"1 0:1\\n\\n  # note\\n0\\n")
    2
    """
    rows = 0
    for line in bytes(buf).split(b"\n"):
        s = line.lstrip(b" \t\r\v\f")
        if s and not s.startswith(b"#"):
            rows += 1
    return rows

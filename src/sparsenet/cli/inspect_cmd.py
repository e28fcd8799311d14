"""``sparsenet inspect``: what a LibSVM file holds, in one streaming pass.

The file (or every file of a directory; ``.gz``, ``.zst``, ``.xz`` and ``.bz2``
are decompressed on the fly) is read chunk by chunk with the library's LibSVM
parser, so memory stays bounded by a chunk plus one int64 per distinct feature
index and one counter per distinct row length. The report gives the rows, the
distinct feature indices seen, the largest index, the stored values per row
(min / median / max), the label distribution, whether ``qid:`` appears, and
the index base: declared with ``--index-base 0|1``, or with ``auto`` (the
default) *detected* from the evidence and reported as such (the readers never
guess it: pass it to them explicitly).

A model directory (one written by ``sparsenet train --out DIR``, with its
``model.json``) is summarised instead: the model, its sizes and labels, how it was
trained, its last epoch's metrics and its files (:mod:`sparsenet.cli.inspect_model`).
A path that does not exist is reported as every command reports it
(:func:`check_inputs`, :func:`sparsenet.cli.paths.require_paths`).

Malformed input: counting stops at the first malformed line. The statistics
cover every line before it, the report ends with ``first malformed line:
path:line:col: problem``, and the command exits with status 1 (the same message
on stderr as ``sparsenet: error: ...``).

>>> import os, tempfile
>>> from sparsenet.cli.main import main
>>> p = os.path.join(tempfile.mkdtemp(), "d.svm")
>>> with open(p, "w") as f:
...     _ = f.write("1 1:0.5 4:2\\n0 2:1\\n1 1:1 2:1 3:1\\n")
>>> main(["inspect", p])  # doctest: +ELLIPSIS
file: ...d.svm
rows: 3
features seen (distinct indices): 4
min index: 1
max index: 4
stored values per row: min 1, median 2, max 3 (total 6)
labels: 2 distinct: 0: 1, 1: 2
index base: detected 1-based: no index 0 seen (smallest index 1); read it with --index-base 1
qid: absent
malformed lines: none
0
"""
import argparse
import os
import re
import sys

import numpy as np

from ..io.libsvm import kernel
from ._plotting import pyplot
from ..io.libsvm.errors import KernelError, make_error
from ..io.libsvm.options import ParseOptions
from ..io.libsvm.source import iter_chunks, list_files
from .paths import require_paths

__all__ = ["add_parser", "check_inputs", "run", "DataStats", "scan"]

#: At most this many distinct labels are listed with their counts; more, and only a summary.
MAX_LISTED_LABELS = 20

#: Distinct feature indices are marked in a bitmap (one byte per index) while the largest
#: index is below this (128 MiB), else kept as a sorted array of the indices seen.
BITMAP_LIMIT = 1 << 27

_QID = re.compile(rb"(?m)^[^#\n]*?[ \t]qid:")

_DESCRIPTION = """\
Report what a LibSVM file holds, in one streaming pass (bounded memory; .gz/.zst/.xz/.bz2
are decompressed on the fly): rows, distinct feature indices, largest index, stored values
per row (min/median/max), label distribution, qid, and the index base (declared with
--index-base, or detected from the evidence with 'auto' and reported as detected).
Given a model directory (written by 'sparsenet train --out DIR'), summarise the model.
Counting stops at the first malformed line; its path:line:col and problem are reported
and the exit status is 1."""


class DataStats:
    """Running statistics of parsed LibSVM chunks (bounded memory).

    >>> from sparsenet.io.libsvm.kernel import parse
    >>> s = DataStats()
    >>> s.add(parse(b"1 0:1 5:2\\n-1 5:3\\n", ParseOptions()), b"")
    >>> s.rows, s.features_seen, s.min_index, s.max_index, s.nnz_median()
    (2, 2, 0, 5, 1.5)
    """

    def __init__(self):
        self.rows = 0
        self.nnz = 0
        self._bits = np.zeros(0, np.bool_)  # the bitmap of indices seen, or None
        self._sorted = None  # sorted distinct indices, once an index passes BITMAP_LIMIT
        self.nnz_hist = np.zeros(0, np.int64)  # nnz_hist[k]: rows with k stored values
        self.label_counts = {}  # up to MAX_LISTED_LABELS + 1 distinct labels
        self.label_sum = 0.0
        self.label_sumsq = 0.0
        self.label_min = np.inf
        self.label_max = -np.inf
        self.qid = False
        self.multilabel = False
        self.weight_count, self.weight_sum = 0, 0.0
        self.weight_min, self.weight_max = np.inf, -np.inf

    def add(self, parsed, text):
        """Count the rows of ``parsed`` (a kernel result); ``text`` is their LibSVM text."""
        n = parsed.nrows
        if n == 0:
            return
        self.rows += n
        self.nnz += int(parsed.indices.shape[0])
        self._mark(parsed.indices)
        per_row = np.bincount(np.diff(parsed.indptr))
        if per_row.shape[0] > self.nnz_hist.shape[0]:
            per_row[:self.nnz_hist.shape[0]] += self.nnz_hist
            self.nnz_hist = per_row
        else:
            self.nnz_hist[:per_row.shape[0]] += per_row
        if parsed.labels is not None:
            labels = parsed.labels.astype(np.float64)
        else:  # multi-label lines: the distribution of the class ids
            self.multilabel = True
            labels = parsed.label_ids.astype(np.float64)
        if parsed.weights is not None and parsed.weights.shape[0]:
            w = parsed.weights.astype(np.float64)
            self.weight_count += w.shape[0]
            self.weight_sum += float(w.sum())
            self.weight_min = min(self.weight_min, float(w.min()))
            self.weight_max = max(self.weight_max, float(w.max()))
        if not labels.shape[0]:
            return
        self.label_sum += float(labels.sum())
        self.label_sumsq += float((labels * labels).sum())
        self.label_min = min(self.label_min, float(labels.min()))
        self.label_max = max(self.label_max, float(labels.max()))
        if len(self.label_counts) <= MAX_LISTED_LABELS:
            values, counts = np.unique(labels, return_counts=True)
            for v, c in zip(values.tolist(), counts.tolist()):
                self.label_counts[v] = self.label_counts.get(v, 0) + c
        self.qid = (self.qid or bool(np.any(parsed.qids))
                    or (b"qid:" in text and _QID.search(text) is not None))

    def _mark(self, indices):
        if not indices.shape[0]:
            return
        top = int(indices.max())
        if self._sorted is None and top < BITMAP_LIMIT:
            if top >= self._bits.shape[0]:
                grown = np.zeros(max(top + 1, 2 * self._bits.shape[0]), np.bool_)
                grown[:self._bits.shape[0]] = self._bits
                self._bits = grown
            self._bits[indices] = True
            return
        if self._sorted is None:
            self._sorted, self._bits = np.flatnonzero(self._bits), None
        both = np.concatenate([self._sorted, indices])
        both.sort(kind="stable")  # two runs: the kept sorted array and the new indices
        keep = np.ones(both.shape[0], np.bool_)
        keep[1:] = both[1:] != both[:-1]
        self._sorted = both[keep]

    @property
    def seen(self):
        """The distinct feature indices, sorted."""
        return np.flatnonzero(self._bits) if self._sorted is None else self._sorted

    @property
    def features_seen(self):
        """Number of distinct feature indices."""
        if self._sorted is None:
            return int(np.count_nonzero(self._bits))
        return int(self._sorted.shape[0])

    @property
    def min_index(self):
        seen = self.seen
        return int(seen[0]) if seen.shape[0] else None

    @property
    def max_index(self):
        seen = self.seen
        return int(seen[-1]) if seen.shape[0] else None

    def nnz_median(self):
        """The median number of stored values per row (the mean of the two middle rows when
        the count is even), from the histogram."""
        cum = np.cumsum(self.nnz_hist)
        lo = int(np.searchsorted(cum, (self.rows - 1) // 2 + 1))
        hi = int(np.searchsorted(cum, self.rows // 2 + 1))
        return lo if lo == hi else (lo + hi) / 2

    def label_report(self):
        """The label distribution: counts per label, or a summary when there are many."""
        if not self.rows:
            return "none"
        if len(self.label_counts) <= MAX_LISTED_LABELS:
            items = ", ".join(f"{_num(v)}: {c}" for v, c in sorted(self.label_counts.items()))
            return f"{len(self.label_counts)} distinct: {items}"
        count = sum(self.label_counts.values()) if self.multilabel else self.rows
        mean = self.label_sum / max(count, 1)
        std = max(self.label_sumsq / max(count, 1) - mean * mean, 0.0) ** 0.5
        return (f"more than {MAX_LISTED_LABELS} distinct: min {_num(self.label_min)}, "
                f"mean {mean:.6g}, std {std:.6g}, max {_num(self.label_max)}")


def _num(v):
    return str(int(v)) if float(v).is_integer() and abs(v) < 2 ** 53 else f"{v:.6g}"


def _parse_or_error(text, opts, path, offset, lines_before, stats):
    """Parse ``text`` into ``stats``; return the LibSVMFormatError of its first bad line or None.

    The lines before the bad one are counted too (parsed again without it).
    """
    out = kernel.parse(text, opts)
    if not isinstance(out, KernelError):
        stats.add(out, text)
        return None
    err = make_error(out, text, opts, path, offset, lines_before)
    text = bytes(text)
    head = text[:text.rfind(b"\n", 0, out.offset) + 1]  # the lines before the bad one
    if head:
        stats.add(kernel.parse(head, opts), head)
    return err


def scan(path, index_base="auto", chunk_size=4 << 20, multilabel=False, weights=False):
    """Stream ``path``; return ``(DataStats, first LibSVMFormatError or None)``.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "d.svm")
    >>> with open(p, "w") as f:
    ...     _ = f.write("1 0:1\\n0 3:x\\n1 2:2\\n")
    >>> stats, err = scan(p)
    >>> stats.rows, str(err).split(": ", 1)[1]
    (1, "invalid feature value 'x' in token '3:x'")
    """
    opts = ParseOptions(zero_based=index_base != "1", query_id=True, multilabel=multilabel,
                        weights=weights)
    stats = DataStats()
    lines_before, current = 0, None
    for chunk in iter_chunks(list_files(path, "inspect"), chunk_size=chunk_size):
        if chunk.file.path != current:
            lines_before, current = 0, chunk.file.path
        text = chunk.data
        err = _parse_or_error(text, opts, chunk.file.path, chunk.offset, lines_before, stats)
        if err is not None:
            return stats, err
        lines_before += bytes(text).count(b"\n")
    return stats, None


def _index_base_report(stats, index_base):
    if index_base != "auto":
        return f"{index_base}-based (declared)"
    if stats.min_index is None:
        return "unknown: no feature index seen"
    if stats.min_index == 0:
        return "detected 0-based: index 0 seen"
    return (f"detected 1-based: no index 0 seen (smallest index {stats.min_index}); "
            "read it with --index-base 1")


def report(path, stats, err, index_base):
    """The report's lines."""
    shift = 1 if index_base == "1" else 0  # indices as written in the file
    lines = [f"file: {path}", f"rows: {stats.rows}",
             f"features seen (distinct indices): {stats.features_seen}"]
    if stats.features_seen:
        lines += [f"min index: {stats.min_index + shift}", f"max index: {stats.max_index + shift}"]
    if stats.rows:
        nz = np.flatnonzero(stats.nnz_hist)
        lines.append(f"stored values per row: min {int(nz[0])}, median "
                     f"{_num(stats.nnz_median())}, max {int(nz[-1])} (total {stats.nnz})")
    what = "class ids (multi-label)" if stats.multilabel else "labels"
    lines += [f"{what}: {stats.label_report()}"]
    if stats.weight_count:
        lines.append(f"instance weights: min {_num(stats.weight_min)}, mean "
                     f"{stats.weight_sum / stats.weight_count:.6g}, max "
                     f"{_num(stats.weight_max)}")
    lines += [
              f"index base: {_index_base_report(stats, index_base)}",
              f"qid: {'present' if stats.qid else 'absent'}",
              "malformed lines: none" if err is None else
              f"first malformed line: {err} (counting stopped there)"]
    return lines


def plot_nnz(stats, png):
    """Write a PNG histogram of the stored values per row (matplotlib, Agg backend)."""
    plt = pyplot("--plot")
    fig, ax = plt.subplots(figsize=(6, 4))
    counts = np.arange(stats.nnz_hist.shape[0])
    ax.bar(counts, stats.nnz_hist, width=1.0)
    ax.set_xlabel("stored values per row")
    ax.set_ylabel("rows")
    ax.set_title(f"{stats.rows} rows")
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


def add_parser(subparsers):
    """Add the ``inspect`` subparser to ``subparsers`` and return it.

    >>> sub = argparse.ArgumentParser().add_subparsers()
    >>> add_parser(sub).parse_args(["d.svm", "--index-base", "1"]).index_base
    '1'
    """
    parser = subparsers.add_parser(
        "inspect", help="report what a LibSVM file holds (rows, features, labels, index base)",
        description=_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", metavar="DATA",
                        help="a LibSVM file or directory (.gz/.zst/.xz/.bz2 decompressed), "
                             "or a model directory")
    parser.add_argument("--index-base", choices=("0", "1", "auto"), default="auto",
                        help="feature indices count from 0 or 1 (declared), or 'auto': read "
                             "them as written and report the base the evidence shows "
                             "(default: auto)")
    parser.add_argument("--multilabel", action="store_true",
                        help="labels are comma-separated class ids (1,3 0:1 ...)")
    parser.add_argument("--weights", action="store_true",
                        help="labels carry an instance weight (label:weight 0:1 ...)")
    parser.add_argument("--plot", metavar="PNG", default=None,
                        help="write a histogram of the stored values per row to this PNG "
                             "(needs matplotlib)")
    return parser


def check_inputs(args):
    """Raise ``FileNotFoundError`` when DATA is missing (:func:`sparsenet.cli.main.main`
    calls it first)."""
    require_paths(args.data)


def run(args):
    """Scan ``args.data`` and print the report; 0, or 1 after a malformed line."""
    from .inspect_model import is_model_dir, model_report  # on first use (start-up)

    if is_model_dir(args.data):
        print("\n".join(model_report(args.data)))
        return 0
    stats, err = scan(args.data, args.index_base, multilabel=args.multilabel,
                      weights=args.weights)
    print("\n".join(report(args.data, stats, err, args.index_base)))
    sys.stdout.flush()
    if args.plot is not None:
        plot_nnz(stats, args.plot)
        print(f"wrote {os.fspath(args.plot)}")
    if err is not None:
        raise err
    return 0

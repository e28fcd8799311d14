"""One streaming pass over a LibSVM file before ``sparsenet train``: what the data says.

``sparsenet train`` scans its data first when it has something to infer: the number
of features when ``--features`` is not given (the largest index + 1, as
scikit-learn's ``load_svmlight_file`` does, the index base considered), the label
set of a multiclass model when ``--classes`` is not given (the distinct labels,
sorted, mapped to class indices 0, 1, ...), and with ``--scale`` each feature's
largest absolute value. The pass also counts the rows (the progress bar's total)
and sees whether index 0 ever appears (a 0-based reading of a 1-based file). Memory
stays bounded by a chunk of the file, the distinct labels (at most
``label_limit + 1`` kept) and, with ``per_feature``, one float64 per feature.

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "d.svm")
>>> with open(p, "w") as f:
...     _ = f.write("4 1:0.5 30:-7\\n1 2:1\\n")
>>> s = scan_data(p, index_base=0)
>>> s.rows, s.min_index, s.max_index, s.labels.tolist(), s.max_abs
(2, 1, 30, [1.0, 4.0], 7.0)
"""
import numpy as np

from ..base import InvalidArgumentError
from ..io.libsvm import kernel
from ..io.libsvm.errors import KernelError, make_error
from ..io.libsvm.options import ParseOptions
from ..io.libsvm.source import iter_chunks, list_files

__all__ = ["DataSummary", "scan_data"]


class DataSummary:
    """What :func:`scan_data` found.

    Attributes
    ----------
    rows : int
        Lines with a label.
    min_index, max_index : int or None
        The smallest and largest feature index, 0-based (a 1-based file's indices less
        one); None without any stored value.
    labels : numpy.ndarray or None
        The distinct labels, sorted (float64); None when there were more than the limit.
    max_abs : float
        The largest absolute stored value (0.0 without any).
    col_max_abs : numpy.ndarray or None
        Per feature (0-based column), the largest absolute value (with ``per_feature``).
    """

    def __init__(self):
        self.rows = 0
        self.min_index = self.max_index = None
        self.labels = np.zeros(0, np.float64)
        self.max_abs = 0.0
        self.col_max_abs = None

    def add(self, parsed, label_limit, per_feature):
        """Count the rows of ``parsed`` (a kernel result)."""
        if parsed.nrows == 0:
            return
        self.rows += int(parsed.nrows)
        indices, values = parsed.indices, np.abs(parsed.values.astype(np.float64))
        if indices.shape[0]:
            lo, hi = int(indices.min()), int(indices.max())
            self.min_index = lo if self.min_index is None else min(self.min_index, lo)
            self.max_index = hi if self.max_index is None else max(self.max_index, hi)
            self.max_abs = max(self.max_abs, float(values.max()))
            if per_feature:
                self._col_max(indices, values, hi)
        if self.labels is not None and parsed.labels is not None:
            self.labels = np.union1d(self.labels, parsed.labels.astype(np.float64))
            if self.labels.shape[0] > label_limit:
                self.labels = None

    def _col_max(self, indices, values, hi):
        if self.col_max_abs is None or self.col_max_abs.shape[0] <= hi:
            try:
                grown = np.zeros(hi + 1, np.float64)
            except MemoryError:
                raise InvalidArgumentError(
                    f"--scale: the data has feature index {hi}, too many features to hold "
                    f"one divisor per feature ({8 * (hi + 1)} bytes) in memory") from None
            if self.col_max_abs is not None:
                grown[:self.col_max_abs.shape[0]] = self.col_max_abs
            self.col_max_abs = grown
        np.maximum.at(self.col_max_abs, indices, values)


def scan_data(path, index_base=0, label_limit=10000, per_feature=False, what="DATA"):
    """Stream the LibSVM file (or folder) ``path`` once; return its :class:`DataSummary`.

    Raises
    ------
    sparsenet.io.LibSVMFormatError
        At the first malformed line (``path:line:col: problem``).
    FileNotFoundError
        ``path`` does not exist.
    """
    opts = ParseOptions(zero_based=index_base == 0, query_id=True)
    summary = DataSummary()
    lines_before, current = 0, None
    for chunk in iter_chunks(list_files(path, what)):
        if chunk.file.path != current:
            lines_before, current = 0, chunk.file.path
        out = kernel.parse(chunk.data, opts)
        if isinstance(out, KernelError):
            raise make_error(out, chunk.data, opts, chunk.file.path, chunk.offset, lines_before)
        summary.add(out, label_limit, per_feature)
        lines_before += bytes(chunk.data).count(b"\n")
    return summary

"""``load_libsvm``: a whole LibSVM file (or directory) as a CSRNDArray and labels."""
import sys

import numpy as np
import torch

from ...context import as_context
from ...ndarray.csr import CSRNDArray
from ...ndarray.ndarray import NDArray
from .options import DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_NUM_FEATURES, ParseOptions
from .rows import Growable
from .compression import text_size_hint
from .source import DEFAULT_CHUNK_SIZE, check_part, list_files
from .stream import ChunkStream, num_threads

__all__ = ["load_libsvm", "progress_bar", "Accumulator"]


def progress_bar(progress, total, desc):
    """A tqdm bar over bytes, or None. ``progress=None`` shows it when stderr is a terminal."""
    enabled = sys.stderr.isatty() if progress is None else bool(progress)
    if not enabled:
        return None
    from tqdm import tqdm  # on first use: importing tqdm takes ~60 ms
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc,
                leave=False, file=sys.stderr)


class Accumulator:
    """Collect parsed chunks into whole arrays, copying each chunk once.

    ``size_hint`` (bytes of text expected) sizes the buffers after the first
    chunk, so they rarely grow; a single chunk is kept without any copy.
    """

    def __init__(self, opts, size_hint=None):
        self.opts = opts
        self.size_hint = size_hint
        self.first = None
        self.grow = None
        self.max_index = -1
        self.max_label = -1
        self.nrows = 0

    def _start(self, p, nbytes):
        # scale the first chunk's counts to the expected size, never past the upper
        # bounds (a value takes >= 4 bytes of text, a row >= 2)
        hint = self.size_hint or nbytes
        scale = 1.1 * max(1.0, hint / max(nbytes, 1))
        bound = hint // 2 + 16

        def cap(n):
            return min(int(n * scale) + 16, bound)
        g = {"indptr": Growable(np.int64, cap(p.nrows + 1)),
             "indices": Growable(np.int64, cap(p.indices.shape[0])),
             "values": Growable(self.opts.dtype, cap(p.indices.shape[0]))}
        if p.labels is not None:
            g["labels"] = Growable(self.opts.dtype, cap(p.nrows))
        if p.label_indptr is not None:
            g["label_indptr"] = Growable(np.int64, cap(p.nrows + 1))
            g["label_ids"] = Growable(np.int64, cap(p.label_ids.shape[0]))
        if p.qids is not None:
            g["qids"] = Growable(np.int64, cap(p.nrows))
        if p.weights is not None:
            g["weights"] = Growable(self.opts.dtype, cap(p.nrows))
        g["indptr"].append(np.zeros(1, np.int64))
        if "label_indptr" in g:
            g["label_indptr"].append(np.zeros(1, np.int64))
        self.grow = g
        self._append(self.first)

    def _append(self, p):
        g = self.grow
        g["indptr"].append_shifted(p.indptr[1:], g["indices"].n)
        if "label_indptr" in g:
            g["label_indptr"].append_shifted(p.label_indptr[1:], g["label_ids"].n)
            g["label_ids"].append(p.label_ids)
        g["indices"].append(p.indices)
        g["values"].append(p.values)
        if "labels" in g:
            g["labels"].append(p.labels)
        if "qids" in g:
            g["qids"].append(p.qids)
        if "weights" in g:
            g["weights"].append(p.weights)

    def add(self, parsed, nbytes):
        self.max_index = max(self.max_index, parsed.max_index)
        self.max_label = max(self.max_label, parsed.max_label)
        self.nrows += parsed.nrows
        if self.first is None and self.grow is None:
            self.first, self.first_nbytes = parsed, nbytes
            return
        if self.grow is None:
            self._start(self.first, self.first_nbytes)
            self.first = None
        self._append(parsed)

    def arrays(self):
        """dict of tensors: indptr, indices, values and labels / label_indptr+label_ids / qids /
        weights."""
        if self.grow is None:
            p = self.first
            if p is None:
                return None
            out = {"indptr": p.indptr, "indices": p.indices, "values": p.values,
                   "labels": p.labels, "label_indptr": p.label_indptr,
                   "label_ids": p.label_ids, "qids": p.qids, "weights": p.weights}
            return {k: torch.from_numpy(v) for k, v in out.items() if v is not None}
        return {k: g.tensor() for k, g in self.grow.items()}

    def arrays_or_empty(self):
        """:meth:`arrays`, or every array empty (0 rows) when nothing was parsed."""
        arrays = self.arrays()
        if arrays is not None:
            return arrays
        vdt = torch.float64 if self.opts.f64 else torch.float32
        return {"indptr": torch.zeros(1, dtype=torch.int64),
                "indices": torch.zeros(0, dtype=torch.int64), "values": torch.zeros(0, dtype=vdt),
                "labels": torch.zeros(0, dtype=vdt),
                "label_indptr": torch.zeros(1, dtype=torch.int64),
                "label_ids": torch.zeros(0, dtype=torch.int64),
                "qids": torch.zeros(0, dtype=torch.int64), "weights": torch.zeros(0, dtype=vdt)}


def load_libsvm(path, num_features=None, *, dtype="float32", zero_based=True, multilabel=False,
                num_labels=None, query_id=False, weights=False, duplicates="error",
                strict_order=False,
                allow_nonfinite=False, max_num_features=DEFAULT_MAX_NUM_FEATURES, num_parts=1,
                part_index=0, ctx=None, progress=None, chunk_size=DEFAULT_CHUNK_SIZE,
                max_line_bytes=DEFAULT_MAX_LINE_BYTES):
    """Read a LibSVM file, or every file of a directory, into memory.

    Lines are ``label [qid:q] index:value ...`` with optional ``# comments``;
    blank lines, CRLF, tabs and a last line without newline are fine; ``.gz``,
    ``.zst``, ``.xz`` and ``.bz2`` files are decompressed (in a thread of their
    own, while the parsing threads work; see
    :mod:`~sparsenet.io.libsvm.compression`). Every problem raises
    :class:`~sparsenet.io.LibSVMFormatError` naming ``path:line:column`` and the
    token: nothing is skipped or guessed. Parsing runs on all cores.

    Parameters
    ----------
    path : str, os.PathLike, or a list of them
        A file or a directory (its files in name order, hidden ones skipped).
    num_features : int, optional
        The number of columns; an index at or above it is an error. Default:
        the largest index + 1.
    dtype : {'float32', 'float64'}
        Values and labels.
    zero_based : bool
        ``True`` (MXNet's and this function's default): index 0 is the first
        column. ``False``: the file counts from 1 (index 0 is an error). Never
        guessed.
    multilabel : bool
        Labels are comma-separated class ids (``1,3``); the label is then a
        CSRNDArray ``(rows, num_labels)`` with 1 at each class.
    num_labels : int, optional
        With ``multilabel``: the number of classes (default: the largest id + 1).
    query_id : bool
        Also return the ``qid:`` of every line (0 where a line has none).
    weights : bool
        Labels may carry an instance weight, ``label:weight`` (XGBoost's text
        format; 1 where a line has none); also return the weights. Without it a
        ``label:weight`` token is an error.
    duplicates : {'error', 'sum'}
        A feature index repeated within a line: an error, or the values are added.
    strict_order : bool
        Indices must increase within a line (else lines are sorted).
    allow_nonfinite : bool
        Accept ``nan``/``inf``/``infinity`` values and labels.
    max_num_features : int
        Without ``num_features``, indices must be below this (default 2**40).
    num_parts, part_index : int
        Read only this shard (every line belongs to exactly one part). With at
        least as many compressed files as parts, a part owns whole files and
        decompresses only those (see :mod:`~sparsenet.io.libsvm.source`).
    ctx : Context, optional
        Where the arrays go (default: CPU).
    progress : bool, optional
        Show a progress bar (default: when stderr is a terminal).
    chunk_size : int
        Bytes of text per parsing task.
    max_line_bytes : int
        The longest line a compressed file may hold (decompressed; default 128 MiB); a
        longer one raises :class:`LibSVMFormatError` naming the file and line.

    Returns
    -------
    data : CSRNDArray
        ``(rows, num_features)``, sorted unique column indices.
    label : NDArray or CSRNDArray
        ``(rows,)`` labels, or the ``(rows, num_labels)`` multi-label matrix.
    weight : NDArray
        ``(rows,)`` instance weights, only when ``weights=True``.
    qid : NDArray
        int64 ``(rows,)``, only when ``query_id=True`` (after ``weight`` when both).

    Examples
    --------
    >>> import os, tempfile
    >>> import sparsenet as mx
    >>> p = os.path.join(tempfile.mkdtemp(), 'd.svm')
    >>> with open(p, 'w') as f:
    ...     _ = f.write('1 0:0.5 3:2\\n0 1:-1\\n')
    >>> data, label = mx.io.load_libsvm(p, num_features=4)
    >>> data.asnumpy()
    array([[ 0.5,  0. ,  0. ,  2. ],
           [ 0. , -1. ,  0. ,  0. ]], dtype=float32)
    >>> label.asnumpy()
    array([1., 0.], dtype=float32)
    >>> with open(p, 'w') as f:
    ...     _ = f.write('1:0.5 0:0.5 3:2\\n0 1:-1\\n')
    >>> data, label, weight = mx.io.load_libsvm(p, num_features=4, weights=True)
    >>> weight.asnumpy()
    array([0.5, 1. ], dtype=float32)
    >>> with open(p, 'w') as f:
    ...     _ = f.write('1 0:0.5 3:abc\\n')
    >>> mx.io.load_libsvm(p)
    Traceback (most recent call last):
    ...
    sparsenet.io.LibSVMFormatError: ...d.svm:1:9: invalid feature value 'abc' in token '3:abc'
    """
    opts = ParseOptions(zero_based=zero_based, duplicates=duplicates, strict_order=strict_order,
                        allow_nonfinite=allow_nonfinite, dtype=dtype, multilabel=multilabel,
                        num_features=num_features, max_num_features=max_num_features,
                        num_labels=num_labels, query_id=query_id, weights=weights,
                        max_line_bytes=max_line_bytes)
    check_part(num_parts, part_index)
    files = list_files(path, "load_libsvm")
    size_hint = sum(f.size if f.compression is None
                    else text_size_hint(f.path, f.compression, f.size)
                    for f in files) // num_parts + 1
    desc = str(path) if not isinstance(path, (list, tuple)) else f"{len(path)} paths"
    exact = all(f.compression is None for f in files)
    bar = progress_bar(progress, size_hint if exact else None, desc)
    acc = Accumulator(opts, size_hint)
    stream = ChunkStream(files, opts, num_parts, part_index, chunk_size,
                         ahead=2 * num_threads())
    try:
        for chunk in stream:
            acc.add(chunk.parsed, chunk.nbytes)
            if bar is not None:
                bar.update(chunk.nbytes)
    finally:
        stream.close()
        if bar is not None:
            bar.close()
    arrays = acc.arrays_or_empty()
    vdt = arrays["values"].dtype
    width = num_features if num_features is not None else acc.max_index + 1
    device = as_context(ctx).torch_device if ctx is not None else torch.device("cpu")
    to = (lambda t: t.to(device)) if device.type != "cpu" else (lambda t: t)  # noqa: E731
    n = acc.nrows
    data = CSRNDArray._from_parts(to(arrays["values"]), to(arrays["indices"]),
                                  to(arrays["indptr"]), (n, max(width, 0)))
    if multilabel:
        ids = arrays["label_ids"]
        nl = num_labels if num_labels is not None else acc.max_label + 1
        label = CSRNDArray._from_parts(to(torch.ones(ids.numel(), dtype=vdt)), to(ids),
                                       to(arrays["label_indptr"]), (n, max(nl, 0)))
    else:
        label = NDArray(to(arrays["labels"]))
    out = (data, label)
    if weights:
        out += (NDArray(to(arrays["weights"])),)
    if query_id:
        out += (NDArray(to(arrays["qids"])),)
    return out

"""``save_libsvm``: write arrays as LibSVM text, vectorised, atomically, round-tripping exactly."""
import os
import tempfile

import numpy as np
import torch

from ...base import InvalidArgumentError, InvalidArgumentTypeError, ShapeError, StorageTypeError
from ...ndarray.base_sparse import BaseSparseNDArray
from ...ndarray.creation import _issparse
from ...ndarray.csr import CSRNDArray
from ...ndarray.ndarray import NDArray
from .compression import check_write, open_write
from .kernel import _native, native_available

__all__ = ["save_libsvm"]

_S = np.dtypes.StringDType()
_BLOCK_NNZ = 1 << 18


def _as_csr_parts(data):
    """(indptr, indices, values, n_rows) as numpy, canonical (sorted, no duplicates)."""
    if isinstance(data, CSRNDArray):
        val, ind, ip = (t.detach().cpu().numpy() for t in data._parts())
        return ip, ind, val, data.shape[0]
    if isinstance(data, BaseSparseNDArray):
        raise StorageTypeError(f"save_libsvm: data must be CSR or dense, got a {data.stype} array; "
                               f"convert it with .tostype('csr')")
    if isinstance(data, NDArray):
        data = data.asnumpy()
    elif isinstance(data, torch.Tensor):
        data = data.detach().cpu().numpy()
    import scipy.sparse as sp  # on first use (start-up: reading never needs SciPy)

    if sp.issparse(data):
        m = sp.csr_matrix(data, copy=True)
        m.sum_duplicates()
        m.sort_indices()
    else:
        arr = np.asarray(data)
        if arr.ndim != 2:
            raise ShapeError(f"save_libsvm: data must be 2-D (rows, features), got shape "
                             f"{arr.shape}")
        if arr.dtype.kind not in "fiub":
            raise InvalidArgumentTypeError(
                f"save_libsvm: data must be numeric, got dtype {arr.dtype}")
        m = sp.csr_matrix(arr)
    return (m.indptr.astype(np.int64), m.indices.astype(np.int64), m.data, m.shape[0])


def _as_numpy(x):
    if isinstance(x, NDArray) and not isinstance(x, BaseSparseNDArray):
        return x.asnumpy()
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _numbers(a):
    """Shortest strings that read back to the same values (float32 stays float32)."""
    if a.dtype == np.bool_:
        a = a.astype(np.int64)
    return a.astype(_S)


def _label_strings(label, n, multilabel, allow_nonfinite):
    if multilabel:
        if isinstance(label, CSRNDArray) or _issparse(label):
            import scipy.sparse as sp  # on first use (start-up: reading never needs SciPy)

            m = label.asscipy() if isinstance(label, CSRNDArray) else sp.csr_matrix(label)
            m = sp.csr_matrix(m)
            m.eliminate_zeros()
            m.sort_indices()
            rows = [m.indices[m.indptr[i]:m.indptr[i + 1]] for i in range(m.shape[0])]
        elif isinstance(label, (NDArray, np.ndarray, torch.Tensor)):
            arr = _as_numpy(label)
            if arr.ndim != 2:
                raise ShapeError(f"save_libsvm: a multi-label indicator must be 2-D, got shape "
                                 f"{arr.shape}")
            rows = [np.flatnonzero(r) for r in arr]
        else:
            rows = [np.sort(np.asarray(list(r), dtype=np.int64)) for r in label]
        if len(rows) != n:
            raise ShapeError(f"save_libsvm: label has {len(rows)} rows but data has {n}")
        for i, r in enumerate(rows):
            if r.size and (r.min() < 0 or np.any(r != np.floor(r))):
                raise InvalidArgumentError(
                    f"save_libsvm: multi-label row {i} holds {r.tolist()}; class "
                    f"ids must be non-negative integers")
        return np.array([",".join(str(int(c)) for c in r) for r in rows], dtype=_S)
    if isinstance(label, BaseSparseNDArray) or _issparse(label):
        raise StorageTypeError(
            "save_libsvm: a sparse label needs multilabel=True (it is written as "
            "class-id lists)")
    arr = _as_numpy(label)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ShapeError(f"save_libsvm: label must have shape (rows,) or (rows, 1), got "
                         f"{arr.shape}; pass multilabel=True for class-id lists")
    if arr.shape[0] != n:
        raise ShapeError(f"save_libsvm: label has {arr.shape[0]} rows but data has {n}")
    _check_finite_labels(arr, allow_nonfinite)
    return _numbers(arr)


def _check_finite_labels(arr, allow_nonfinite):
    if arr.dtype.kind == "f" and not allow_nonfinite and not np.all(np.isfinite(arr)):
        raise InvalidArgumentError(
            "save_libsvm: label holds NaN or infinity, which load_libsvm rejects "
            "by default; pass allow_nonfinite=True to write them anyway")


def save_libsvm(path, data, label, *, zero_based=True, multilabel=False, query_id=None,
                weight=None, comment=None, allow_nonfinite=False, compresslevel=None):
    """Write ``data`` and ``label`` as a LibSVM file (vectorised; replaces ``path`` atomically).

    Values are written with the shortest text that reads back to the same
    number in their own dtype (float32 stays float32; float32 data with float32
    labels is formatted by the native kernel, several million values per
    second), so
    ``load_libsvm(path)`` returns exactly ``data`` and ``label``; explicit
    zeros stored in a CSR array are kept. A ``.gz``, ``.zst``, ``.xz`` or
    ``.bz2`` suffix compresses the file (standard formats: ``gzip -d``,
    ``zstd -d`` and the standard library read them). The file is written to a
    temporary name in the same directory and renamed into place, so a crash
    never leaves half a file.

    Parameters
    ----------
    path : str or os.PathLike
    data : CSRNDArray, NDArray, numpy array, torch tensor or scipy.sparse matrix
        ``(rows, features)``; dense input is written by its non-zero entries.
    label : array-like ``(rows,)`` or ``(rows, 1)``
        With ``multilabel=True``: a CSR/dense indicator ``(rows, classes)`` or a
        list of class-id sequences, written as ``1,3``.
    zero_based : bool
        Write column 0 as index 0 (default, MXNet's convention) or as 1.
    multilabel : bool
    query_id : array-like of int, optional
        Written as ``qid:`` after each label.
    weight : array-like ``(rows,)``, optional
        Instance weights (>= 0), written as ``label:weight``; read them back with
        ``load_libsvm(..., weights=True)``.
    comment : str, optional
        Written at the top, each line prefixed by ``#`` and a space.
    allow_nonfinite : bool
        Write NaN and infinity (read them back with ``allow_nonfinite=True``).
    compresslevel : int, optional
        The compression level on the format's own scale; the defaults are fast:
        gzip 2 (0-9; levels 0-3 are written by ISA-L at several hundred MB/s,
        4-9 by zlib, much slower), zstd 1 (1-22; on LibSVM text level 1 compresses
        as well as 3, at twice the speed, and decompresses faster), xz 1 (0-9), bz2 9
        (1-9). Only for a compressed ``path``.

    Examples
    --------
    >>> import os, tempfile
    >>> import sparsenet as mx
    >>> x = mx.nd.sparse.csr_matrix(([0.1, 2.5, -3.0], [1, 4, 0], [0, 2, 3]), shape=(2, 5))
    >>> p = os.path.join(tempfile.mkdtemp(), 'x.svm')
    >>> mx.io.save_libsvm(p, x, mx.nd.array([1, 0]))
    >>> print(open(p).read(), end='')
    1.0 1:0.1 4:2.5
    0.0 0:-3.0
    >>> y, lab = mx.io.load_libsvm(p, num_features=5)
    >>> bool((y.asnumpy() == x.asnumpy()).all())
    True
    """
    path = os.fspath(path)
    check_write(path, compresslevel)  # a bad level or a missing codec fails before any work
    indptr, indices, values, n = _as_csr_parts(data)
    if values.dtype.kind == "f" and not allow_nonfinite and not np.all(np.isfinite(values)):
        bad = int(np.flatnonzero(~np.isfinite(values))[0])
        row = int(np.searchsorted(indptr, bad, side="right")) - 1
        raise InvalidArgumentError(
            f"save_libsvm: data holds a non-finite value ({values[bad]}) in row "
            f"{row}, which load_libsvm rejects by default; pass "
            f"allow_nonfinite=True to write it anyway")
    # float32 values and labels (the usual case) are formatted by the native kernel
    fast = None
    if (native_available() and values.dtype == np.float32 and not multilabel
            and query_id is None and weight is None):
        lab = _as_numpy(label) if not (isinstance(label, BaseSparseNDArray)
                                       or _issparse(label)) else None
        if lab is not None and lab.dtype == np.float32 and lab.shape in ((n,), (n, 1)):
            fast = np.ascontiguousarray(lab.reshape(n))
            _check_finite_labels(fast, allow_nonfinite)
    labels = None if fast is not None else _label_strings(label, n, multilabel, allow_nonfinite)
    if weight is not None:
        if multilabel:
            raise InvalidArgumentError(
                "save_libsvm: weight cannot be combined with multilabel=True")
        w = _as_numpy(weight).reshape(-1)
        if w.shape[0] != n:
            raise ShapeError(f"save_libsvm: weight has {w.shape[0]} entries but data has {n} "
                             f"rows")
        if w.dtype.kind != "f":
            w = w.astype(np.float64)
        if not allow_nonfinite and not np.all(np.isfinite(w)):
            raise InvalidArgumentError(
                "save_libsvm: weight holds NaN or infinity, which load_libsvm "
                "rejects by default; pass allow_nonfinite=True to write them anyway")
        if np.any(w < 0):
            raise InvalidArgumentError(
                f"save_libsvm: weights must be >= 0, got {w[w < 0][0]} in row "
                f"{int(np.flatnonzero(w < 0)[0])}")
        labels = np.strings.add(np.strings.add(labels, ":"), _numbers(w))
    if query_id is not None:
        q = _as_numpy(query_id).astype(np.int64).reshape(-1)
        if q.shape[0] != n:
            raise ShapeError(f"save_libsvm: query_id has {q.shape[0]} entries but data has {n} "
                             f"rows")
        if q.size and q.min() < 0:
            raise InvalidArgumentError("save_libsvm: query ids must be non-negative")
        labels = np.strings.add(np.strings.add(labels, " qid:"), q.astype(_S))
    shift = 0 if zero_based else 1
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                               dir=directory)
    os.close(fd)
    try:
        with open_write(path, tmp, compresslevel) as f:
            if comment:
                f.write("".join(f"# {line}\n" for line in str(comment).splitlines()).encode())
            r0 = 0
            while r0 < n:
                # rows holding about _BLOCK_NNZ values per write
                r1 = int(np.searchsorted(indptr, indptr[r0] + _BLOCK_NNZ, side="right"))
                r1 = min(max(r1, r0 + 1), n)
                if fast is not None:
                    ip = indptr[r0:r1 + 1]
                    lo, hi = int(ip[0]), int(ip[-1])
                    f.write(_native.format_rows_f32(
                        np.ascontiguousarray(ip - lo, dtype=np.int64),
                        np.ascontiguousarray(indices[lo:hi], dtype=np.int64),
                        np.ascontiguousarray(values[lo:hi]), fast[r0:r1], shift))
                else:
                    f.write(_block_text(indptr, indices, values, labels, r0, r1,
                                        shift).encode("ascii"))
                r0 = r1
        mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else None
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _block_text(indptr, indices, values, labels, r0, r1, shift):
    """The text of rows ``[r0, r1)``."""
    ip = indptr[r0:r1 + 1]
    lo, hi = int(ip[0]), int(ip[-1])
    rows = r1 - r0
    tok = np.strings.add(np.strings.add(" ", (indices[lo:hi] + shift).astype(_S)), ":")
    tok = np.strings.add(tok, _numbers(values[lo:hi]))
    pieces = np.empty(rows + (hi - lo), dtype=_S)
    starts = (ip[:-1] - lo) + np.arange(rows)
    ends = (ip[1:] - lo) + np.arange(rows)  # position of each row's last piece
    is_tok = np.ones(pieces.shape[0], dtype=bool)
    is_tok[starts] = False
    pieces[starts] = labels[r0:r1]
    pieces[is_tok] = tok
    pieces[ends] = np.strings.add(pieces[ends], "\n")
    return "".join(pieces.tolist())

"""Checked SciPy input for ``sparsenet convert``: ``.npz`` files and in-memory matrices.

A SciPy ``.npz`` is a zip of plain arrays, so a crafted one may declare anything: column
indices past its shape, an ``indptr`` that runs backwards, complex values. SciPy's own
``load_npz`` checks none of that, and its routines (``toarray``, ``tocsr``,
``sum_duplicates``) then read and write outside their buffers. Here every array is read
with ``allow_pickle=False`` and checked with NumPy comparisons only (the invariants of
:func:`sparsenet.ndarray.stype.check_csr`: lengths, ``indptr`` starting at 0, ending at the
number of stored values and never decreasing, every index inside the shape) before any
SciPy routine sees it. Repeated or unsorted entries keep SciPy's meaning (they are summed).

Values become float32: real numbers only (float, integer, bool); complex, text or date
values, and finite values that float32 cannot hold, are refused.

>>> import io, numpy as np
>>> buf = io.BytesIO()
>>> np.savez(buf, data=np.ones(1), indices=np.array([7]), indptr=np.array([0, 1]),
...          shape=np.array([1, 3]), format=b"csr")
>>> _ = buf.seek(0)
>>> read_npz(buf, "x.npz")
Traceback (most recent call last):
...
sparsenet.base.FileFormatError: x.npz: 'indices': column index 7 at position 0 is out of range [0, 3)
"""
import zipfile

import numpy as np
import scipy.sparse

from ..base import FileFormatError, InvalidArgumentTypeError, SparseFormatError

__all__ = ["read_npz", "checked_csr", "checked_labels", "float32_values"]

#: sparse formats the reader takes (what ``scipy.sparse.save_npz`` writes for them)
FORMATS = ("csr", "csc", "coo")
_F32_MAX = float(np.finfo(np.float32).max)
_I64_MAX = np.iinfo(np.int64).max


def _fail(error, where, key, problem):
    raise error(f"{where}: {key!r}: {problem}" if key else f"{where}: {problem}")


def float32_values(values, where, key, error=FileFormatError):
    """``values`` (1-D or 2-D real numbers) as float32, or ``error`` naming ``key``.

    >>> float32_values(np.array([1e300]), "x.npz", "data")
    Traceback (most recent call last):
    ...
    sparsenet.base.FileFormatError: x.npz: 'data': the value 1e+300 at position 0 is too large for float32 (largest 3.4028235e+38)
    """
    values = np.asarray(values)
    if values.dtype.kind not in "fiub":
        _fail(error, where, key, f"expected real numbers (float, integer or bool), got dtype "
                                 f"{values.dtype}")
    if values.dtype.kind == "f" and values.dtype.itemsize > 4 and values.size:
        big = np.isfinite(values) & (np.abs(values) > _F32_MAX)
        if big.any():
            p = int(np.flatnonzero(big.reshape(-1))[0])
            _fail(error, where, key, f"the value {values.reshape(-1)[p]:.6g} at position {p} "
                                     f"is too large for float32 (largest {_F32_MAX:.8g})")
    return values.astype(np.float32)


def _index_array(a, where, key, error):
    """``a`` as a 1-D int64 array (integers only), or ``error`` naming ``key``."""
    if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype.kind not in "iu":
        what = (f"a {a.ndim}-D array of {a.dtype}" if isinstance(a, np.ndarray)
                else type(a).__name__)
        _fail(error, where, key, f"expected a 1-D array of integers, got {what}")
    if a.dtype.kind == "u" and a.dtype.itemsize == 8 and a.size and int(a.max()) > _I64_MAX:
        _fail(error, where, key, f"the index {int(a.max())} does not fit in int64")
    return a.astype(np.int64)  # a copy: summing duplicates later never touches the caller's


def _shape(shape, where, error, key="shape"):
    a = np.asarray(shape)
    if a.shape != (2,) or a.dtype.kind not in "iu":
        _fail(error, where, key, f"expected two integers (rows, columns), got {a.tolist()!r} "
                                 f"of dtype {a.dtype}")
    rows, cols = (int(v) for v in a)
    if rows < 0 or cols < 0 or rows > _I64_MAX - 1 or cols > _I64_MAX:
        _fail(error, where, key, f"expected two non-negative integers, got ({rows}, {cols})")
    return rows, cols


def _check_range(indices, bound, where, key, what, error):
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= bound):
        p = int(np.flatnonzero((indices < 0) | (indices >= bound))[0])
        _fail(error, where, key, f"{what} index {int(indices[p])} at position {p} is out of "
                                 f"range [0, {bound})")


def _compressed(data, indices, indptr, major, minor, names, where, error):
    """Checked ``(data, indices, indptr)`` of a CSR (major = rows) or CSC (major = columns)
    matrix, pruned to ``indptr[-1]`` stored values as SciPy does."""
    d_key, i_key, p_key, minor_name = names
    indices = _index_array(indices, where, i_key, error)
    indptr = _index_array(indptr, where, p_key, error)
    if indptr.size != major + 1:
        _fail(error, where, p_key, f"has {indptr.size} entries; the shape needs {major + 1}")
    if np.ndim(data) != 1 or np.shape(data)[0] != indices.size:
        _fail(error, where, d_key, f"has shape {np.shape(data)}; expected ({indices.size},), "
                                   f"one value per index")
    if int(indptr[0]) != 0:
        _fail(error, where, p_key, f"must start at 0, got {int(indptr[0])}")
    steps = np.diff(indptr)
    if (steps < 0).any():
        r = int(np.flatnonzero(steps < 0)[0])
        _fail(error, where, p_key, f"must never decrease: entry {r} is {int(indptr[r])}, "
                                   f"entry {r + 1} is {int(indptr[r + 1])}")
    nnz = int(indptr[-1])
    if nnz > indices.size:
        _fail(error, where, p_key, f"ends at {nnz}, past the {indices.size} stored indices")
    indices = indices[:nnz]
    _check_range(indices, minor, where, i_key, minor_name, error)
    return float32_values(np.asarray(data)[:nnz], where, d_key, error), indices, indptr


def _coo(data, row, col, rows, cols, names, where, error):
    d_key, r_key, c_key = names
    row = _index_array(row, where, r_key, error)
    col = _index_array(col, where, c_key, error)
    if row.size != col.size or np.ndim(data) != 1 or np.shape(data)[0] != row.size:
        _fail(error, where, d_key, f"{np.shape(data)} values for {row.size} row and "
                                   f"{col.size} column indices; expected one value per entry")
    _check_range(row, rows, where, r_key, "row", error)
    _check_range(col, cols, where, c_key, "column", error)
    return scipy.sparse.coo_matrix((float32_values(data, where, d_key, error), (row, col)),
                                   shape=(rows, cols)).tocsr()


def _canonical(csr):
    """``csr`` with repeated entries summed and each row's indices sorted (SciPy's meaning)."""
    csr.sum_duplicates()
    return csr


def checked_csr(matrix, where="csr", error=SparseFormatError):
    """A valid float32 ``scipy.sparse.csr_matrix`` of ``matrix`` (a SciPy CSR, CSC or COO
    matrix or array, or a 2-D table of real numbers), its parts checked before any SciPy
    routine reads them; ``error`` names ``where`` otherwise (another SciPy format raises
    :class:`~sparsenet.base.InvalidArgumentTypeError`).

    >>> checked_csr(scipy.sparse.csr_matrix(np.eye(2))).nnz
    2
    """
    if not scipy.sparse.issparse(matrix):
        table = np.asarray(matrix)
        if table.ndim != 2:
            _fail(error, where, None, f"expected a 2-D table, got {table.ndim}-D")
        return scipy.sparse.csr_matrix(float32_values(table, where, None, error))
    fmt = matrix.format
    if fmt not in FORMATS:
        raise InvalidArgumentTypeError(f"{where}: a SciPy {fmt} matrix; expected one of "
                                       f"{', '.join(FORMATS)} (convert it with .tocsr())")
    rows, cols = _shape(matrix.shape, where, error)
    if fmt == "coo":
        return _canonical(_coo(matrix.data, matrix.row, matrix.col, rows, cols,
                               ("data", "row", "col"), where, error))
    if fmt == "csr":
        parts = _compressed(matrix.data, matrix.indices, matrix.indptr, rows, cols,
                            ("data", "indices", "indptr", "column"), where, error)
        return _canonical(scipy.sparse.csr_matrix(parts, shape=(rows, cols)))
    parts = _compressed(matrix.data, matrix.indices, matrix.indptr, cols, rows,
                        ("data", "indices", "indptr", "row"), where, error)
    return _canonical(scipy.sparse.csc_matrix(parts, shape=(rows, cols)).tocsr())


def checked_labels(label, rows, where, key="label", error=FileFormatError):
    """``label`` as float32 of shape ``(rows,)`` (real numbers), or ``error`` naming ``key``."""
    label = np.asarray(label)
    if label.shape != (rows,):
        _fail(error, where, key, f"has shape {label.shape}, expected ({rows},), one label per "
                                 f"row")
    return float32_values(label, where, key, error)


def _format(f, where):
    fmt = f["format"]
    if fmt.shape != () or fmt.dtype.kind not in "SU":
        _fail(FileFormatError, where, "format", f"expected a string, got {fmt.dtype} of shape "
                                                f"{fmt.shape}")
    fmt = fmt.item()
    if isinstance(fmt, bytes):
        fmt = fmt.decode("ascii", "replace")
    if fmt not in FORMATS:
        _fail(FileFormatError, where, "format", f"the sparse format {fmt[:20]!r} is not one of "
                                                f"{', '.join(FORMATS)}")
    return fmt


def _need(f, keys, where):
    missing = [k for k in keys if k not in f.files]
    if missing:
        raise FileFormatError(f"{where}: not a scipy.sparse .npz file: no {missing[0]!r} array "
                              f"(it holds {', '.join(map(repr, f.files[:8])) or 'nothing'})")


def _matrix(f, where):
    _need(f, ("format", "shape", "data"), where)
    fmt = _format(f, where)
    rows, cols = _shape(f["shape"], where, FileFormatError)
    if fmt == "coo":
        if "coords" in f.files:
            coords = f["coords"]
            if coords.ndim != 2 or coords.shape[0] != 2:
                _fail(FileFormatError, where, "coords", f"has shape {coords.shape}; a matrix "
                                                        f"needs (2, entries)")
            row, col, names = coords[0], coords[1], ("data", "coords", "coords")
        else:
            _need(f, ("row", "col"), where)
            row, col, names = f["row"], f["col"], ("data", "row", "col")
        return _canonical(_coo(f["data"], row, col, rows, cols, names, where, FileFormatError))
    _need(f, ("indices", "indptr"), where)
    major, minor = (rows, cols) if fmt == "csr" else (cols, rows)
    parts = _compressed(f["data"], f["indices"], f["indptr"], major, minor,
                        ("data", "indices", "indptr", "column" if fmt == "csr" else "row"),
                        where, FileFormatError)
    if fmt == "csr":
        return _canonical(scipy.sparse.csr_matrix(parts, shape=(rows, cols)))
    return _canonical(scipy.sparse.csc_matrix(parts, shape=(rows, cols)).tocsr())


def read_npz(file, where):
    """``(csr float32, labels float32 or None)`` of a SciPy ``.npz`` (a path or a file
    object), every array checked first; :class:`~sparsenet.base.FileFormatError` naming
    ``where`` and the key otherwise (``FileNotFoundError`` for a missing file)."""
    try:
        f = np.load(file, allow_pickle=False)
        if not isinstance(f, np.lib.npyio.NpzFile):
            raise FileFormatError(f"{where}: not a scipy.sparse .npz file: a single NumPy "
                                  f"array, not a zip of named arrays")
        with f:
            csr = _matrix(f, where)
            label = checked_labels(f["label"], csr.shape[0], where) if "label" in f.files \
                else None
    except FileNotFoundError:
        raise
    except (ValueError, KeyError, OSError, EOFError, zipfile.BadZipFile) as exc:
        if isinstance(exc, FileFormatError):
            raise
        raise FileFormatError(f"{where}: not a scipy.sparse .npz file: "
                              f"{type(exc).__name__}: {exc}") from None
    return csr, label

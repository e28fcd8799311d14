"""Array creation: dense (``array``, ``zeros``, ``arange``...) and sparse (``csr_matrix``...).

Sparse constructors validate their parts by default (sorted unique in-range
indices, monotone ``indptr``, matching lengths) and raise
:class:`~sparsenet.base.SparseFormatError` naming the broken invariant. Pass
``validate=False`` only for parts you know are valid (e.g. produced by
sparsenet itself): a kernel given invalid parts computes garbage.

>>> import sparsenet as mx
>>> mx.nd.sparse.csr_matrix(([1.0], [5], [0, 1]), shape=(1, 3))
Traceback (most recent call last):
...
sparsenet.base.SparseFormatError: invalid CSR array: column index 5 at position 0 (row 0) is out of range [0, 3)
"""
import sys

import numpy as np
import torch

from ..base import (IndexOutOfRangeError, InvalidArgumentError, InvalidArgumentTypeError,
                    ShapeError, SparseFormatError, as_shape, mx_real_t, numpy_dtype, torch_dtype)
from ..context import as_context, place
from . import memory
from .cast_storage import dense_to_csr, dense_to_row_sparse
from .csr import CSRNDArray
from .ndarray import NDArray
from .row_sparse import RowSparseNDArray
from .stype import CSR, DEFAULT, ROW_SPARSE, check_csr, check_stype

__all__ = ["array", "zeros", "ones", "full", "empty", "arange", "linspace", "eye",
           "csr_matrix", "row_sparse_array", "sparse_zeros", "sparse_empty", "sparse_array",
           "from_numpy", "from_torch", "from_dlpack", "from_scipy"]


def _device(ctx):
    ctx = as_context(ctx)
    ctx.check_available()
    return ctx.torch_device


def _context(ctx):
    """The checked :class:`~sparsenet.Context` of ``ctx`` (None: the current one), resolved
    once for both the tensor's device and the array's placement."""
    ctx = as_context(ctx)
    ctx.check_available()
    return ctx


def _on(array, ctx):
    """``array`` placed on ``ctx`` (None: the current context); see
    :func:`~sparsenet.context.place`."""
    return place(array, as_context(ctx))


def _widened(dtype, what):
    """The supported dtype values of NumPy ``dtype`` are stored in (float64 for other
    floats, int64 for other integers); complex, string and date values raise."""
    if dtype.kind == "f":
        return np.float64
    if dtype.kind in "iu":
        return np.int64
    raise InvalidArgumentTypeError(f"cannot make an array from {what} of dtype {dtype}: "
                                   f"expected real numbers (float, int or bool)")


def _to_tensor(value, dtype=None, device=None):
    """Tensor copy of an array-like; ``dtype`` None keeps the source's dtype."""
    if isinstance(value, NDArray):
        t = value._dense_tensor().detach()
    elif isinstance(value, torch.Tensor):
        t = value.detach()
    else:
        a = np.asarray(value)
        if a.dtype == object:
            raise InvalidArgumentTypeError(f"cannot make an array from {type(value).__name__} with "
                                           f"irregular or non-numeric content")
        if a.dtype.kind in "US" and dtype is not None:  # MXNet: np.array(strings, dtype)
            try:
                a = a.astype(numpy_dtype(dtype))
            except ValueError as e:
                raise InvalidArgumentTypeError(f"cannot make a {dtype} array from the strings "
                                               f"of {type(value).__name__}: {e}") from None
        if a.dtype not in (np.float16, np.float32, np.float64, np.int8, np.uint8, np.int16,
                           np.int32, np.int64, np.bool_):
            a = a.astype(_widened(a.dtype, type(value).__name__))
        t = torch.from_numpy(np.ascontiguousarray(a))
    out = t.to(device=device if device is not None else t.device,
               dtype=torch_dtype(dtype) if dtype is not None else t.dtype)
    return out.clone() if out is t or out.data_ptr() == t.data_ptr() else out


def array(source_array, ctx=None, dtype=None):
    """Create an array from any array-like (list, NumPy, NDArray, SciPy CSR, torch tensor).

    A CSR/row_sparse source (or a SciPy sparse matrix) gives a sparse array of
    the same storage type. The dtype defaults to the source's for arrays and
    tensors and to float32 for lists and NumPy arrays (as MXNet).

    Parameters
    ----------
    source_array : array_like
    ctx : Context, optional
    dtype : str or numpy dtype, optional

    Examples
    --------
    >>> import sparsenet as mx
    >>> mx.nd.array([[1, 2], [3, 4]]).dtype
    dtype('float32')
    >>> mx.nd.array(mx.nd.ones((2,)).tostype('row_sparse'), dtype='float16').stype
    'row_sparse'
    """
    if isinstance(source_array, NDArray) and source_array.stype != DEFAULT:
        return sparse_array(source_array, ctx=ctx, dtype=dtype)
    if _issparse(source_array):
        return csr_matrix(source_array, ctx=ctx, dtype=dtype)
    if dtype is None and not isinstance(source_array, (NDArray, torch.Tensor)):
        dtype = mx_real_t
    if ctx is None and isinstance(source_array, NDArray):
        ctx = source_array.context
    ctx = _context(ctx)
    return place(NDArray(_to_tensor(source_array, dtype, ctx.torch_device)), ctx)


def from_numpy(ndarray, zero_copy=True):
    """Wrap a NumPy array (sharing memory when ``zero_copy`` and it is C-contiguous).

    >>> import numpy as np, sparsenet as mx
    >>> mx.nd.from_numpy(np.arange(3.0)).dtype
    dtype('float64')
    """
    if zero_copy and ndarray.flags.c_contiguous:
        return NDArray(torch.from_numpy(ndarray))
    return NDArray(torch.from_numpy(np.ascontiguousarray(ndarray)).clone())


def from_torch(tensor):
    """Wrap a torch tensor without copying: dense -> NDArray, sparse CSR -> CSRNDArray,
    sparse COO with ``sparse_dim=1`` -> RowSparseNDArray, 2-D COO -> CSRNDArray.

    >>> import torch, sparsenet as mx
    >>> mx.nd.from_torch(torch.ones(2, 2).to_sparse_csr()).stype
    'csr'
    """
    if tensor.layout == torch.sparse_csr:
        return CSRNDArray(tensor.values(), tensor.col_indices().to(torch.int64),
                          tensor.crow_indices().to(torch.int64), tuple(tensor.shape))
    if tensor.layout == torch.sparse_coo:
        _check_coo_ids(tensor)  # before coalesce: torch trusts them (memory errors otherwise)
        if tensor.sparse_dim() == 1:
            return RowSparseNDArray._from_coo(tensor, tuple(tensor.shape))
        if tensor.sparse_dim() == 2 and tensor.dim() == 2:
            return from_torch(tensor.coalesce().to_sparse_csr())
        raise SparseFormatError(
            f"cannot convert a COO tensor with sparse_dim={tensor.sparse_dim()} "
            f"and {tensor.dim()} dims; expected sparse_dim 1 (row_sparse) or a "
            f"2-D matrix (csr)")
    if tensor.layout != torch.strided:
        raise InvalidArgumentError(f"unsupported torch layout {tensor.layout}")
    return NDArray(tensor)


def _check_coo_ids(tensor):
    """Raise :class:`IndexOutOfRangeError` naming the first id of the COO ``tensor`` outside
    its shape (torch does not check them unless asked)."""
    ids = tensor._indices()
    for d in range(ids.shape[0]):
        bound = tensor.shape[d]
        bad = (ids[d] < 0) | (ids[d] >= bound)
        if bool(bad.any()):
            pos = int(bad.nonzero()[0, 0])
            raise IndexOutOfRangeError(
                f"from_torch: COO index {int(ids[d, pos])} of dimension {d} (entry {pos}) is "
                f"out of range for shape {tuple(tensor.shape)} (expected 0 <= index < {bound})")


def from_dlpack(capsule):
    """Create a dense NDArray sharing memory with a DLPack capsule or producer.

    >>> import torch, sparsenet as mx
    >>> mx.nd.from_dlpack(torch.ones(2)).asnumpy()
    array([1., 1.], dtype=float32)
    """
    return NDArray(torch.utils.dlpack.from_dlpack(capsule))


def zeros(shape, ctx=None, dtype=None, stype=None, **kwargs):
    """Array of zeros; ``stype`` 'csr' or 'row_sparse' gives an empty sparse array.

    >>> import sparsenet as mx
    >>> mx.nd.zeros((2, 3)).asnumpy()
    array([[0., 0., 0.],
           [0., 0., 0.]], dtype=float32)
    >>> mx.nd.zeros((4, 2), stype='row_sparse').indices.shape
    (0,)
    """
    if stype is not None and stype != DEFAULT:
        return sparse_zeros(stype, shape, ctx=ctx, dtype=dtype)
    ctx = _context(ctx)
    t = memory.zeros(as_shape(shape), dtype=torch_dtype(dtype), device=ctx.torch_device)
    return place(NDArray(t), ctx)


def ones(shape, ctx=None, dtype=None, **kwargs):
    """Array of ones.

    >>> import sparsenet as mx
    >>> mx.nd.ones((2,)).asnumpy()
    array([1., 1.], dtype=float32)
    """
    ctx = _context(ctx)
    t = memory.full(as_shape(shape), 1, dtype=torch_dtype(dtype), device=ctx.torch_device)
    return place(NDArray(t), ctx)


def full(shape, val, ctx=None, dtype=None, **kwargs):
    """Array filled with ``val``.

    >>> import sparsenet as mx
    >>> mx.nd.full((2,), 7).asnumpy()
    array([7., 7.], dtype=float32)
    """
    ctx = _context(ctx)
    t = memory.full(as_shape(shape), val, dtype=torch_dtype(dtype), device=ctx.torch_device)
    return place(NDArray(t), ctx)


def empty(shape, ctx=None, dtype=None, stype=None):
    """Uninitialised dense array (or an empty sparse array for a sparse ``stype``).

    >>> import sparsenet as mx
    >>> mx.nd.empty((2, 3)).shape
    (2, 3)
    """
    if stype is not None and stype != DEFAULT:
        return sparse_empty(stype, shape, ctx=ctx, dtype=dtype)
    ctx = _context(ctx)
    t = memory.empty(as_shape(shape), dtype=torch_dtype(dtype), device=ctx.torch_device)
    return place(NDArray(t), ctx)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, ctx=None, dtype=None):
    """Evenly spaced values in ``[start, stop)``, each repeated ``repeat`` times.

    >>> import sparsenet as mx
    >>> mx.nd.arange(3).asnumpy()
    array([0., 1., 2.], dtype=float32)
    >>> mx.nd.arange(0, 2, repeat=2).asnumpy()
    array([0., 0., 1., 1.], dtype=float32)
    """
    if stop is None:
        start, stop = 0, start
    n = int(np.ceil((stop - start) / step))
    values = start + step * torch.arange(max(n, 0), dtype=torch.float64)
    if repeat > 1:
        values = values.repeat_interleave(repeat)
    return _on(NDArray(values.to(dtype=torch_dtype(dtype), device=_device(ctx))), ctx)


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=None):
    """``num`` evenly spaced values from ``start`` to ``stop``.

    >>> import sparsenet as mx
    >>> mx.nd.linspace(0, 1, 3).asnumpy()
    array([0. , 0.5, 1. ], dtype=float32)
    """
    values = np.linspace(start, stop, num, endpoint=endpoint)
    t = torch.from_numpy(values).to(dtype=torch_dtype(dtype), device=_device(ctx))
    return _on(NDArray(t), ctx)


def eye(N, M=0, k=0, ctx=None, dtype=None):  # noqa: N803 - MXNet's names
    """2-D array with ones on the ``k``-th diagonal.

    >>> import sparsenet as mx
    >>> mx.nd.eye(2).asnumpy()
    array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    values = np.eye(N, M or N, k)
    t = torch.from_numpy(values).to(dtype=torch_dtype(dtype), device=_device(ctx))
    return _on(NDArray(t), ctx)


# ---------------------------------------------------------------------- sparse
def _is_shape(arg):
    return isinstance(arg, tuple) and len(arg) > 0 and all(
        isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in arg)


def _values(data, dtype, device):
    """Value tensor: lists default to float32, arrays keep their dtype (MXNet rules)."""
    if dtype is None and not isinstance(data, (np.ndarray, NDArray, torch.Tensor)):
        dtype = mx_real_t
    return _to_tensor(data, dtype, device)


def _index(idx, device, what):
    t = _to_tensor(idx, None, device)
    if t.dtype.is_floating_point:
        if t.numel() and not bool((t == t.round()).all()):
            raise SparseFormatError(f"{what} must be integers, got non-integral values")
    if t.dim() != 1:
        raise ShapeError(f"{what} must be 1-D, got shape {tuple(t.shape)}")
    return t.to(torch.int64)


def csr_matrix(arg1, shape=None, ctx=None, dtype=None, validate=True):
    """Create a :class:`CSRNDArray`.

    Parameters
    ----------
    arg1 : tuple, array_like, CSRNDArray, RowSparseNDArray or scipy.sparse matrix
        - ``(data, indices, indptr)``: the CSR parts (validated; the column indices
          of a row may come in any order: they are sorted, their values moving
          along, where MXNet keeps them unsorted);
        - ``(data, (row, col))``: coordinates, duplicates summed (SciPy semantics);
        - ``(M, N)``: an empty array of that shape;
        - a dense array-like: its non-zero entries (zeros dropped);
        - a SciPy sparse matrix or another sparse array: converted.
    shape : tuple of int, optional
        Inferred from the parts when omitted.
    ctx : Context, optional
    dtype : str, optional
        Default: float32 for Python lists, the source's dtype otherwise.
    validate : bool
        Check the parts (default). ``False`` trusts them: only for parts that
        are valid by construction.

    Examples
    --------
    >>> import sparsenet as mx
    >>> a = mx.nd.sparse.csr_matrix(([1, 2, 3], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 3))
    >>> a.asnumpy()
    array([[1., 0., 2.],
           [0., 0., 0.],
           [0., 3., 0.]], dtype=float32)
    >>> mx.nd.sparse.csr_matrix(([1.0, 4.0], ([0, 0], [1, 1])), shape=(1, 2)).asnumpy()
    array([[0., 5.]], dtype=float32)
    """
    device = _device(ctx) if ctx is not None else None
    if isinstance(arg1, CSRNDArray):
        out = sparse_array(arg1, ctx=ctx, dtype=dtype)
    elif isinstance(arg1, RowSparseNDArray):
        out = sparse_array(arg1, ctx=ctx, dtype=dtype).tostype(CSR)
    elif _issparse(arg1):
        out = from_scipy(arg1, ctx=ctx, dtype=dtype)
    elif _is_shape(arg1) and len(arg1) == 2:
        out = sparse_zeros(CSR, arg1, ctx=ctx, dtype=dtype)
    elif isinstance(arg1, tuple) and len(arg1) == 3:
        data = _values(arg1[0], dtype, device)
        dev = data.device
        indices = _index(arg1[1], dev, "indices")
        indptr = _index(arg1[2], dev, "indptr")
        if shape is None:
            if not indices.numel():  # MXNet 1.9.1 raises too: the width is unknown
                raise InvalidArgumentError("csr_matrix: cannot infer the shape of CSR parts "
                                           "with no stored values; pass shape=(rows, cols)")
            shape = (indptr.numel() - 1, int(indices.max()) + 1)
        shape = as_shape(shape)
        if validate:
            data, indices = _sorted_columns(data, indices, indptr, shape)
        return _on(CSRNDArray(data, indices, indptr, shape, validate=validate), ctx)
    elif isinstance(arg1, tuple) and len(arg1) == 2 and isinstance(arg1[1], (tuple, list)) \
            and len(arg1[1]) == 2:
        data = np.asarray(arg1[0].asnumpy() if isinstance(arg1[0], NDArray) else arg1[0])
        row = np.asarray(arg1[1][0].asnumpy() if isinstance(arg1[1][0], NDArray) else arg1[1][0])
        col = np.asarray(arg1[1][1].asnumpy() if isinstance(arg1[1][1], NDArray) else arg1[1][1])
        if dtype is None and not isinstance(arg1[0], (np.ndarray, NDArray)):
            dtype = mx_real_t
        _check_coo(row, col, shape)
        import scipy.sparse as sp  # on first use (start-up: training never needs SciPy)

        coo = sp.coo_matrix((data, (row.astype(np.int64), col.astype(np.int64))), shape=shape)
        out = from_scipy(coo, ctx=ctx, dtype=dtype)
    elif isinstance(arg1, tuple) and len(arg1) == 2:
        raise InvalidArgumentError(
            "csr_matrix: a 2-tuple must be a shape (M, N) or (data, (row, col)); "
            "use (data, indices, indptr) for CSR parts")
    else:
        if dtype is None and not isinstance(arg1, (np.ndarray, NDArray, torch.Tensor)):
            dtype = mx_real_t
        t = _to_tensor(arg1, dtype, device)
        out = dense_to_csr(t)
    if shape is not None and tuple(out.shape) != as_shape(shape):
        raise ShapeError(f"csr_matrix: shape {tuple(shape)} does not match the source's shape "
                         f"{out.shape}")
    return _on(out, ctx)


def _sorted_columns(data, indices, indptr, shape):
    """``(data, indices)`` with the column indices of each row in ascending order.

    MXNet accepts unsorted columns within a row and keeps them, which its sparse
    kernels then misread; sparsenet sorts them (stably, values moving along). Parts
    that are not a CSR structure are returned as they are, for the validation to
    name the problem.
    """
    nnz = indices.numel()
    rows, cols = shape
    if nnz < 2 or indptr.numel() != rows + 1 or int(indptr[0]) != 0 or int(indptr[-1]) != nnz \
            or data.numel() != nnz or bool((indptr[1:] < indptr[:-1]).any()) \
            or bool((indices < 0).any()) or bool((indices >= cols).any()):
        return data, indices
    row = torch.repeat_interleave(torch.arange(rows, device=indices.device),
                                  indptr[1:] - indptr[:-1])
    key = row * max(cols, 1) + indices
    if bool((key[1:] >= key[:-1]).all()):
        return data, indices  # already in order (duplicates are left to the validation)
    order = torch.sort(key, stable=True).indices
    return data[order], indices[order]


def _check_coo(row, col, shape):
    for name, v in (("row", row), ("col", col)):
        if v.size and (v.dtype.kind == "f" and not np.all(v == np.round(v))):
            raise SparseFormatError(f"csr_matrix: {name} indices must be integers")
        if v.size and v.min() < 0:
            raise SparseFormatError(f"csr_matrix: negative {name} index {int(v.min())}")
    if shape is not None:
        if row.size and row.max() >= shape[0]:
            raise SparseFormatError(f"csr_matrix: row index {int(row.max())} is out of range "
                                    f"[0, {shape[0]})")
        if col.size and col.max() >= shape[1]:
            raise SparseFormatError(f"csr_matrix: column index {int(col.max())} is out of range "
                                    f"[0, {shape[1]})")


def _check_scipy_parts(indices, indptr, shape):
    """The CSR invariants a SciPy matrix may break (SciPy itself allows unsorted and
    repeated columns, which are summed and sorted afterwards)."""
    check_csr(torch.zeros(indices.numel()), indices, indptr, shape, full=False)
    if indptr.numel() > 1 and bool((indptr[1:] < indptr[:-1]).any()):
        row = int(torch.nonzero(indptr[1:] < indptr[:-1])[0])
        raise SparseFormatError(f"invalid CSR array: indptr decreases at row {row} "
                                f"({int(indptr[row])} then {int(indptr[row + 1])})")
    bad = (indices < 0) | (indices >= shape[1])
    if bool(bad.any()):
        pos = int(torch.nonzero(bad)[0])
        raise SparseFormatError(f"invalid CSR array: column index {int(indices[pos])} at "
                                f"position {pos} is out of range [0, {shape[1]})")


def _issparse(obj):
    """``scipy.sparse.issparse(obj)`` without importing SciPy: only a program that has
    loaded ``scipy.sparse`` can hold one of its matrices (``sparsenet train`` never loads it,
    which saves a third of a second at start-up)."""
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and sp.issparse(obj)


def from_scipy(matrix, ctx=None, dtype=None, validate=True):
    """Convert any SciPy sparse matrix to a :class:`CSRNDArray` (duplicates summed).

    The parts are checked as every constructor checks them (column indices in
    range, ``indptr`` non-decreasing...; a :class:`~sparsenet.base.SparseFormatError`
    otherwise); ``validate=False`` skips that for parts valid by construction.

    >>> import scipy.sparse as sp, sparsenet as mx
    >>> mx.nd.sparse.csr_matrix(sp.identity(2, format='coo')).indptr.asnumpy()
    array([0, 1, 2])
    """
    import scipy.sparse as sp  # on first use (start-up: training never needs SciPy)

    m = sp.csr_matrix(matrix, copy=True)
    shape = as_shape(m.shape)
    indices = torch.from_numpy(m.indices.astype(np.int64))
    indptr = torch.from_numpy(m.indptr.astype(np.int64))
    if validate:  # before SciPy's own passes, which trust the parts
        _check_scipy_parts(indices, indptr, shape)
    if not m.has_canonical_format:  # repeated or unsorted columns: summed and sorted
        m.sum_duplicates()
        m.sort_indices()
        indices = torch.from_numpy(m.indices.astype(np.int64))
        indptr = torch.from_numpy(m.indptr.astype(np.int64))
    device = _device(ctx)
    values = m.data
    if dtype is None and values.dtype not in (np.float16, np.float32, np.float64, np.int32,
                                              np.int64, np.int8, np.uint8, np.bool_):
        values = values.astype(_widened(values.dtype, "a SciPy sparse matrix"))
    data = torch.from_numpy(np.ascontiguousarray(values))
    if dtype is not None:
        data = data.to(torch_dtype(dtype))
    return _on(CSRNDArray._from_parts(data.to(device), indices.to(device), indptr.to(device),
                                      shape), ctx)


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None, validate=True):
    """Create a :class:`RowSparseNDArray`.

    Parameters
    ----------
    arg1 : tuple, array_like, RowSparseNDArray or CSRNDArray
        - ``(data, indices)``: stored rows and their sorted unique row ids;
        - ``(D0, D1, ...)``: an empty array of that shape;
        - a dense array-like: its non-zero rows (all-zero rows dropped);
        - another sparse array: converted.
    shape : tuple of int, optional
        Inferred as ``(max(indices) + 1,) + data.shape[1:]`` when omitted.
    ctx : Context, optional
    dtype : str, optional
        Default: float32 for Python lists, the source's dtype otherwise.
    validate : bool
        Check the parts (default).

    Examples
    --------
    >>> import sparsenet as mx
    >>> a = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 4]), shape=(6, 2))
    >>> a.asnumpy()[[1, 4]]
    array([[1., 2.],
           [3., 4.]], dtype=float32)
    >>> mx.nd.sparse.row_sparse_array(([[1, 2]], [3]), shape=(2, 2))
    Traceback (most recent call last):
    ...
    sparsenet.base.SparseFormatError: invalid row_sparse array: row index 3 at position 0 is out of range [0, 2)
    """
    device = _device(ctx) if ctx is not None else None
    if isinstance(arg1, RowSparseNDArray):
        out = sparse_array(arg1, ctx=ctx, dtype=dtype)
    elif isinstance(arg1, CSRNDArray):
        out = sparse_array(arg1, ctx=ctx, dtype=dtype).tostype(ROW_SPARSE)
    elif _is_shape(arg1):
        out = sparse_zeros(ROW_SPARSE, arg1, ctx=ctx, dtype=dtype)
    elif isinstance(arg1, tuple) and len(arg1) == 2:
        data = _values(arg1[0], dtype, device)
        indices = _index(arg1[1], data.device, "indices")
        if data.dim() == 0:
            raise ShapeError("row_sparse_array: data must have at least one dimension")
        if shape is None:
            if not indices.numel():  # MXNet 1.9.1 raises too: the number of rows is unknown
                raise InvalidArgumentError("row_sparse_array: cannot infer the shape of parts "
                                           "with no stored rows; pass shape=")
            shape = (int(indices.max()) + 1,) + tuple(data.shape[1:])
        return _on(RowSparseNDArray(data, indices, as_shape(shape), validate=validate), ctx)
    else:
        if dtype is None and not isinstance(arg1, (np.ndarray, NDArray, torch.Tensor)):
            dtype = mx_real_t
        t = _to_tensor(arg1, dtype, device)
        out = dense_to_row_sparse(t)
    if shape is not None and tuple(out.shape) != as_shape(shape):
        raise ShapeError(f"row_sparse_array: shape {tuple(shape)} does not match the source's "
                         f"shape {out.shape}")
    return _on(out, ctx)


def sparse_zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """Empty sparse array (no stored values) of storage type ``stype``; 'default' -> dense zeros.

    >>> import sparsenet as mx
    >>> mx.nd.sparse.zeros('csr', (2, 3)).indptr.asnumpy()
    array([0, 0, 0])
    """
    check_stype(stype)
    shape = as_shape(shape)
    if stype == DEFAULT:
        return zeros(shape, ctx=ctx, dtype=dtype)
    device = _device(ctx)
    tdt = torch_dtype(dtype)
    if stype == CSR:
        if len(shape) != 2:
            raise ShapeError(f"a CSR array is 2-D, got shape {shape}")
        return _on(CSRNDArray._from_parts(
            torch.zeros(0, dtype=tdt, device=device), torch.zeros(0, dtype=torch.int64,
                                                                  device=device),
            torch.zeros(shape[0] + 1, dtype=torch.int64, device=device), shape), ctx)
    return _on(RowSparseNDArray._from_parts(
        torch.zeros((0,) + shape[1:], dtype=tdt, device=device),
        torch.zeros(0, dtype=torch.int64, device=device), shape), ctx)


def sparse_empty(stype, shape, ctx=None, dtype=None):
    """Same as :func:`sparse_zeros` (a sparse array with nothing stored).

    >>> import sparsenet as mx
    >>> mx.nd.sparse.empty('row_sparse', (3, 2)).stype
    'row_sparse'
    """
    return sparse_zeros(stype, shape, ctx=ctx, dtype=dtype)


def sparse_array(source_array, ctx=None, dtype=None):
    """Copy a sparse array (or a SciPy sparse matrix) keeping its storage type.

    NumPy arrays are refused (use :func:`array` or ``tostype``), as in MXNet.

    >>> import sparsenet as mx
    >>> a = mx.nd.sparse.array(mx.nd.sparse.zeros('row_sparse', (2, 2)), dtype='float64')
    >>> a.stype, a.dtype
    ('row_sparse', dtype('float64'))
    """
    if _issparse(source_array):
        return from_scipy(source_array, ctx=ctx, dtype=dtype)
    if not isinstance(source_array, NDArray) or source_array.stype == DEFAULT:
        raise InvalidArgumentError(
            f"mx.nd.sparse.array expects a CSRNDArray, RowSparseNDArray or SciPy "
            f"sparse matrix, got {type(source_array).__name__}; use mx.nd.array() "
            f"for dense data or .tostype() to convert")
    device = _device(ctx) if ctx is not None else source_array.device
    parts = [p.detach().to(device) for p in source_array._parts()]
    parts = [q.clone() if q.data_ptr() == p.data_ptr() else q
             for p, q in zip(source_array._parts(), parts)]
    if dtype is not None:
        parts[0] = parts[0].to(torch_dtype(dtype))
    return _on(type(source_array)._from_parts(*parts, source_array.shape),
               ctx if ctx is not None else source_array.context)

"""``mx.test_utils``: random arrays of every storage type and tolerant comparisons.

Random generators use NumPy's global generator (``np.random.seed`` reproduces
them, ``mx.random.seed`` does not), as MXNet's do; CSR arrays come from
``scipy.sparse.random`` so a seeded NumPy gives the same matrix as MXNet.

>>> import numpy as np, sparsenet as mx
>>> np.random.seed(0)
>>> a = mx.test_utils.rand_ndarray((100, 50), stype='csr', density=0.1)
>>> a.stype, a.nnz
('csr', 500)
>>> mx.test_utils.assert_almost_equal(a, a.tostype('default'))
"""
import contextlib
import os

import numpy as np
import scipy.sparse as sp

from .base import numpy_dtype
from .context import as_context, current_context, num_gpus
from .ndarray.creation import array, csr_matrix, row_sparse_array, sparse_zeros
from .ndarray.ndarray import NDArray

__all__ = ["rand_ndarray", "rand_sparse_ndarray", "rand_shape_2d", "rand_shape_3d",
           "rand_shape_nd", "random_arrays", "assert_almost_equal", "almost_equal", "same",
           "default_context", "set_default_context", "list_gpus", "environment",
           "assert_exception", "default_dtype", "get_rtol", "get_atol"]

_default_ctx = None


def default_dtype():
    """float32, the default element type."""
    return np.float32


def default_context():
    """The context tests run on (``set_default_context`` changes it).

    >>> default_context()
    cpu(0)
    """
    return _default_ctx if _default_ctx is not None else current_context()


def set_default_context(ctx):
    """Set the context :func:`default_context` returns."""
    global _default_ctx
    _default_ctx = as_context(ctx)


def list_gpus():
    """Indices of the visible CUDA devices (empty without CUDA).

    >>> isinstance(list_gpus(), range)
    True
    """
    return range(num_gpus())


@contextlib.contextmanager
def environment(*args):
    """Temporarily set environment variables: ``environment('VAR', '1')`` or a dict.

    A value of None unsets the variable.

    >>> with environment('SPARSENET_DEMO_VAR', '1'):
    ...     os.environ['SPARSENET_DEMO_VAR']
    '1'
    >>> 'SPARSENET_DEMO_VAR' in os.environ
    False
    """
    if len(args) == 2:
        changes = {args[0]: args[1]}
    elif len(args) == 1 and isinstance(args[0], dict):
        changes = dict(args[0])
    else:
        raise ValueError("environment() takes (name, value) or a dict {name: value}")
    old = {k: os.environ.get(k) for k in changes}
    try:
        for k, v in changes.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def random_arrays(*shapes):
    """Standard-normal float32 NumPy arrays of the given shapes (one array if one shape).

    >>> random_arrays((2, 3)).shape
    (2, 3)
    """
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """Random 2-D shape with sizes in ``[1, dim]`` (``[0, dim]`` if zero sizes are allowed).

    >>> len(rand_shape_2d())
    2
    """
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """Random 3-D shape.

    >>> len(rand_shape_3d())
    3
    """
    low = 0 if allow_zero_size else 1
    return (np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1),
            np.random.randint(low, dim2 + 1))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """Random ``num_dim``-D shape with sizes up to ``dim``.

    >>> len(rand_shape_nd(4))
    4
    """
    low = 0 if allow_zero_size else 1
    return tuple(np.random.randint(low, dim + 1, size=num_dim))


def _uniform_csr(rows, cols, density, dtype):
    """Exactly ``round(density * rows * cols)`` positions drawn uniformly without replacement.

    Rejection sampling on random linear positions: O(nnz) time and memory even
    for a 1000 x 1,000,000 matrix (SciPy's sampler permutes all positions there).
    """
    total = rows * cols
    k = int(round(density * total))
    pos = np.zeros(0, dtype=np.int64)
    while pos.size < k:
        draw = np.random.randint(0, total, size=k - pos.size, dtype=np.int64)
        pos = np.union1d(pos, draw)
    if pos.size > k:
        pos = np.sort(np.random.choice(pos, size=k, replace=False))
    values = np.random.uniform(size=k).astype(dtype)
    r, c = np.divmod(pos, cols) if cols else (pos, pos)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=rows), out=indptr[1:])
    return sp.csr_matrix((values, c, indptr), shape=(rows, cols))


def _powerlaw_csr(rows, cols, density, dtype):
    """Row ``i`` holds about ``2**(i+1)`` values (every row at least one), ``density*rows*cols`` in all."""
    budget = max(int(rows * cols * density), 0)
    dense = np.zeros((rows, cols), dtype=dtype)
    for r in range(rows):
        if budget <= 0:
            break
        dense[r, 0] = 1 + np.random.uniform(0.001, 2)
        budget -= 1
    width = 2
    for r in range(rows):
        if budget <= 0:
            break
        limit = min(cols, width)
        take = min(limit - 1, budget)
        if take > 0:
            dense[r, 1:1 + take] = 1 + np.random.uniform(0.001, 2, size=take)
            budget -= take
        width *= 2
    return sp.csr_matrix(dense)


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """Random sparse array and its NumPy parts.

    Parameters
    ----------
    shape : tuple
    stype : {'csr', 'row_sparse'}
    density : float, optional
        CSR: fraction of stored values (exactly ``round(density * size)`` with the
        uniform distribution). row_sparse: probability that a row is stored.
        Random when None.
    dtype : optional
        float32 by default.
    distribution : {'uniform', 'powerlaw'}, optional
        CSR only; 'powerlaw' doubles the row length from row to row.
    data_init : float, optional
        Value of every stored element instead of U[0, 1).
    rsp_indices : list of int, optional
        The rows a row_sparse array stores.
    modifier_func : callable, optional
        Applied to the stored values.
    shuffle_csr_indices : bool
        Shuffle the column indices inside each row: the result is an *invalid*
        CSR, for testing ``check_format`` and validation.
    ctx : Context, optional

    Returns
    -------
    (array, parts)
        ``parts`` is ``(data, indices, indptr)`` for CSR, ``(data, indices)`` for row_sparse.

    Examples
    --------
    >>> import numpy as np
    >>> np.random.seed(1)
    >>> arr, (data, idx) = rand_sparse_ndarray((10, 3), 'row_sparse', density=0.5)
    >>> arr.stype, idx.dtype
    ('row_sparse', dtype('int64'))
    """
    dtype = numpy_dtype(dtype if dtype is not None else default_dtype())
    density = np.random.rand() if density is None else density
    if not 0 <= density <= 1:
        raise ValueError(f"density must be in [0, 1], got {density}")
    ctx = as_context(ctx) if ctx is not None else None
    if stype == "row_sparse":
        if distribution not in (None, "uniform"):
            raise ValueError(f"distribution {distribution!r} is for CSR only")
        if rsp_indices is not None:
            indices = np.unique(np.asarray(rsp_indices, dtype=np.int64))
        else:
            indices = np.nonzero(np.random.rand(shape[0]) < density)[0].astype(np.int64)
        if indices.size == 0:
            return sparse_zeros("row_sparse", shape, ctx=ctx, dtype=dtype), (
                np.zeros((0,) + tuple(shape[1:]), dtype=dtype), indices)
        dshape = (indices.size,) + tuple(shape[1:])
        data = (np.full(dshape, data_init) if data_init is not None
                else np.random.uniform(size=dshape)).astype(dtype)
        if modifier_func is not None:
            data = np.vectorize(modifier_func)(data).astype(dtype)
        arr = row_sparse_array((data, indices), shape=shape, ctx=ctx, dtype=dtype)
        return arr, (data, indices)
    if stype != "csr":
        raise ValueError(f"stype must be 'csr' or 'row_sparse', got {stype!r}")
    if len(shape) != 2:
        raise ValueError(f"a CSR array is 2-D, got shape {tuple(shape)}")
    if distribution in (None, "uniform"):
        m = _uniform_csr(shape[0], shape[1], density, dtype)
        if data_init is not None:
            m.data.fill(data_init)
    elif distribution == "powerlaw":
        m = _powerlaw_csr(shape[0], shape[1], density, dtype)
    else:
        raise ValueError(f"distribution must be 'uniform' or 'powerlaw', got {distribution!r}")
    m.sort_indices()
    if modifier_func is not None and m.nnz:
        m.data = np.vectorize(modifier_func)(m.data).astype(dtype)
    data, indices, indptr = m.data, m.indices.astype(np.int64), m.indptr.astype(np.int64)
    if shuffle_csr_indices:
        for r in range(shape[0]):
            seg = slice(indptr[r], indptr[r + 1])
            perm = np.random.permutation(indptr[r + 1] - indptr[r])
            indices[seg] = indices[seg][perm]
            data[seg] = data[seg][perm]
    arr = csr_matrix((data, indices, indptr), shape=shape, ctx=ctx, dtype=dtype,
                     validate=not shuffle_csr_indices)
    return arr, (data, indices, indptr)


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """Random array of storage type ``stype`` (dense values are standard normal).

    >>> import numpy as np
    >>> np.random.seed(0)
    >>> rand_ndarray((1000, 1000000), stype='csr', density=0.00001).nnz
    10000
    """
    if stype == "default":
        return array(random_arrays(tuple(shape)), ctx=ctx, dtype=dtype)
    arr, _ = rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                                 distribution=distribution, modifier_func=modifier_func,
                                 shuffle_csr_indices=shuffle_csr_indices, ctx=ctx)
    return arr


def _as_numpy(x):
    if isinstance(x, NDArray):
        return x.asnumpy()
    if sp.issparse(x):
        return x.toarray()
    return np.asarray(x)


_RTOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5}
_ATOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20}


def get_rtol(rtol=None, dtype=np.float32):
    """Relative tolerance: the given one, or a default for ``dtype``."""
    return rtol if rtol is not None else _RTOL.get(np.dtype(dtype), 1e-4)


def get_atol(atol=None, dtype=np.float32):
    """Absolute tolerance: the given one, or a default for ``dtype``."""
    return atol if atol is not None else _ATOL.get(np.dtype(dtype), 1e-3)


def _tolerances(a, b, rtol, atol):
    dts = [d for d in (a.dtype, b.dtype) if d.kind == "f"]
    dt = min(dts, key=lambda d: d.itemsize) if dts else np.dtype(np.float64)
    return get_rtol(rtol, dt), get_atol(atol, dt)


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False):
    """True if ``a`` and ``b`` (arrays of any storage type or NumPy) are close.

    >>> import sparsenet as mx
    >>> almost_equal(mx.nd.ones((2,)), np.ones(2) + 1e-7)
    True
    """
    a, b = _as_numpy(a), _as_numpy(b)
    if a.shape != b.shape:
        return False
    rtol, atol = _tolerances(a, b, rtol, atol)
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Raise AssertionError, with the worst mismatches, unless ``a`` and ``b`` are close.

    >>> import sparsenet as mx
    >>> assert_almost_equal(mx.nd.ones((2,)), np.zeros(2))
    Traceback (most recent call last):
    ...
    AssertionError: Items are not equal: a and b differ at 2 of 2 positions ...
    """
    a, b = _as_numpy(a), _as_numpy(b)
    if a.shape != b.shape:
        if not use_broadcast:
            raise AssertionError(f"shapes differ: {names[0]} {a.shape} vs {names[1]} {b.shape}")
        try:
            a, b = np.broadcast_arrays(a, b)
        except ValueError:
            raise AssertionError(f"shapes differ: {names[0]} {a.shape} vs {names[1]} "
                                 f"{b.shape}") from None
    rtol, atol = _tolerances(a, b, rtol, atol)
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    bad = np.argwhere(~close)
    af, bf = a.astype(np.float64), b.astype(np.float64)
    err = np.abs(af - bf) / (atol + rtol * np.abs(bf))
    order = sorted((tuple(i) for i in bad), key=lambda i: -np.nan_to_num(err[i], nan=np.inf))
    shown = ", ".join(f"{i}: {names[0]}={a[i]!r} {names[1]}={b[i]!r}" for i in order[:mismatches[0]])
    raise AssertionError(f"Items are not equal: {names[0]} and {names[1]} differ at {len(bad)} "
                         f"of {a.size} positions (rtol={rtol}, atol={atol}); worst: {shown}")


def same(a, b):
    """True if ``a`` and ``b`` have exactly equal values.

    >>> import sparsenet as mx
    >>> same(mx.nd.array([1.0, 2.0]), np.array([1.0, 2.0]))
    True
    """
    return bool(np.array_equal(_as_numpy(a), _as_numpy(b)))


def assert_exception(f, exception_type, *args, **kwargs):
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type``.

    >>> assert_exception(int, ValueError, 'x')
    """
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise {exception_type.__name__}")

"""Random test data: arrays of every storage type, shapes, samples.

Every generator draws from NumPy's global generator (``np.random.seed``
reproduces it, ``mx.random.seed`` does not), in the order MXNet 1.9.1 draws,
so a seeded row_sparse array, powerlaw CSR matrix or dense array equals
MXNet's. Uniform CSR matrices use sparsenet's own O(nnz) sampler (see
``docs/differences.md``).

>>> import numpy as np
>>> np.random.seed(0)
>>> a = rand_ndarray((100, 50), stype='csr', density=0.1)
>>> a.stype, a.nnz
('csr', 500)
"""
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp

from ..base import InvalidArgumentError, numpy_dtype
from ..context import as_context
from ..ndarray.creation import array, csr_matrix, row_sparse_array, sparse_zeros
from .devices import default_context
from .tolerances import default_dtype

__all__ = ["random_arrays", "random_uniform_arrays", "random_sample", "assign_each",
           "assign_each2", "shuffle_csr_column_indices", "rand_sparse_ndarray", "rand_ndarray",
           "create_sparse_array", "create_sparse_array_zd", "rand_shape_2d", "rand_shape_3d",
           "rand_shape_nd", "rand_coord_2d"]


def random_arrays(*shapes):
    """Standard-normal float32 NumPy arrays of the given shapes (one array if one shape).

    >>> random_arrays((2, 3)).shape
    (2, 3)
    >>> [a.shape for a in random_arrays((2,), ())]
    [(2,), ()]
    """
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=None):
    """A list of NumPy arrays drawn from U[low, high), one per shape (float32 by default).

    >>> [a.shape for a in random_uniform_arrays((2,), (1, 2), low=-1.0)]
    [(2,), (1, 2)]
    """
    dtype = default_dtype() if dtype is None else dtype
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """``k`` elements of the sequence ``population`` in random order (the input is not changed).

    >>> np.random.seed(0)
    >>> random_sample([1, 2, 3, 4, 5], 3)
    [3, 1, 2]
    """
    if not 0 <= k <= len(population):
        raise InvalidArgumentError(f"random_sample: k must be in [0, {len(population)}] (the "
                                   f"population size), got {k}")
    chosen = population[:]
    np.random.shuffle(chosen)
    return chosen[:k]


def assign_each(the_input, function):
    """``function`` applied to each element of a NumPy array (float64 result); a copy if None.

    >>> assign_each(np.array([1, 2]), lambda v: v * 2.5)
    array([2.5, 5. ])
    """
    if function is None:
        return np.array(the_input)
    the_input = np.asarray(the_input)
    out = np.zeros(the_input.shape)
    flat = out.reshape(-1)
    for i, v in enumerate(the_input.reshape(-1)):
        flat[i] = function(v)
    return out


def assign_each2(input1, input2, function):
    """``function(x, y)`` over two arrays of one shape (float64); a copy of ``input1`` if None.

    >>> assign_each2(np.array([1., 2.]), np.array([3., 4.]), lambda x, y: x * y)
    array([3., 8.])
    """
    if function is None:
        return np.array(input1)
    input1, input2 = np.asarray(input1), np.asarray(input2)
    if input1.shape != input2.shape:
        raise InvalidArgumentError(f"assign_each2: the inputs must have one shape, got "
                                   f"{input1.shape} and {input2.shape}")
    out = np.zeros(input1.shape)
    flat = out.reshape(-1)
    for i, (x, y) in enumerate(zip(input1.reshape(-1), input2.reshape(-1))):
        flat[i] = function(x, y)
    return out


def shuffle_csr_column_indices(csr):
    """Shuffle the column indices inside each row of a CSR matrix, in place.

    The values stay where they are, so the matrix changes and its indices are
    no longer sorted: an input for testing validation.

    Parameters
    ----------
    csr : scipy.sparse.csr_matrix or an object with NumPy ``indptr``/``indices``

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> m = sp.csr_matrix(np.ones((1, 6)))
    >>> np.random.seed(1)
    >>> shuffle_csr_column_indices(m)
    >>> sorted(m.indices.tolist()), m.has_sorted_indices
    ([0, 1, 2, 3, 4, 5], False)
    """
    indptr, indices = csr.indptr, csr.indices
    for row in range(len(indptr) - 1):
        seg = np.array(indices[indptr[row]:indptr[row + 1]])
        np.random.shuffle(seg)
        indices[indptr[row]:indptr[row + 1]] = seg
    if sp.issparse(csr):
        csr.has_sorted_indices = False


def _check_density(density):
    if not 0 <= density <= 1:
        raise InvalidArgumentError(f"density must be in [0, 1], got {density}")


def _uniform_positions(total, k):
    """``k`` sorted distinct positions of ``range(total)``, each ``k``-subset equally likely.

    Rejection sampling while ``k`` is at most half of ``total`` (each round keeps at
    least half of what it draws, so a few rounds suffice); above half, the
    ``total - k`` positions left out are drawn that way instead. Drawing ``k``
    close to ``total`` by rejection is a coupon collector's problem: a dense
    ``200 x 200`` matrix took ~10^5 rounds.
    """
    if k > total // 2:
        left_out = _uniform_positions(total, total - k)
        keep = np.ones(total, dtype=bool)
        keep[left_out] = False
        return np.flatnonzero(keep).astype(np.int64)
    pos = np.zeros(0, dtype=np.int64)
    while pos.size < k:
        need = k - pos.size
        draw = np.random.randint(0, total, size=need + need // 4 + 1, dtype=np.int64)
        pos = np.union1d(pos, draw)
    if pos.size > k:
        pos = np.sort(np.random.choice(pos, size=k, replace=False))
    return pos


def _uniform_csr(rows, cols, density, dtype):
    """Exactly ``round(density * rows * cols)`` positions drawn uniformly without replacement.

    Rejection sampling on random linear positions: O(nnz) time and memory even
    for a 1000 x 1,000,000 matrix (SciPy's sampler permutes all positions there).
    """
    total = rows * cols
    k = int(round(density * total))
    pos = _uniform_positions(total, k)
    values = np.random.uniform(size=k).astype(dtype)
    r, c = np.divmod(pos, cols) if cols else (pos, pos)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=rows), out=indptr[1:])
    return sp.csr_matrix((values, c, indptr), shape=(rows, cols))


def _powerlaw_csr(rows, cols, density, dtype):
    """MXNet's powerlaw matrix: a value per row, then row ``i`` fills ``2**(i+1)`` columns.

    ``int(density * rows * cols)`` values in all, each ``1 + U[0.001, 2)``,
    drawn in MXNet's order; a row that would exceed the width is filled whole
    with one value.
    """
    total = int(rows * cols * density)
    if rows <= 0 or cols <= 0:
        raise InvalidArgumentError(f"a powerlaw CSR matrix needs rows and columns, got shape "
                                   f"({rows}, {cols})")
    if total < 2 * rows:
        raise InvalidArgumentError(f"powerlaw needs density * rows * cols >= 2 * rows; density "
                                   f"{density} gives {total} values for shape ({rows}, {cols})")
    dense = np.zeros((rows, cols), dtype=dtype)
    dense[:, 0] = 1 + np.random.uniform(0.001, 2, size=rows)
    unused = total - rows
    width = 2
    for row in range(rows):
        limit = min(cols, width)
        if limit == cols and unused > limit:
            dense[row] = 1 + np.random.uniform(0.001, 2)
            unused -= limit - 1
            continue
        take = min(limit - 1, unused)
        dense[row, 1:1 + take] = 1 + np.random.uniform(0.001, 2, size=take)
        unused -= take
        if unused <= 0:
            break
        width *= 2
    if unused > 0:
        raise InvalidArgumentError(f"powerlaw cannot place {total} values in shape "
                                   f"({rows}, {cols}) (density {density}); lower the density")
    return sp.csr_matrix(dense)


def _rand_row_sparse(shape, density, dtype, data_init, rsp_indices, modifier_func, ctx):
    if rsp_indices is not None:
        indices = np.unique(np.asarray(rsp_indices, dtype=np.int64))
        if indices.size and (indices[0] < 0 or indices[-1] >= shape[0]):
            raise InvalidArgumentError(f"rsp_indices must be in [0, {shape[0]}), got "
                                       f"{list(np.asarray(rsp_indices))}")
    else:
        indices = np.nonzero(np.random.rand(shape[0]) < density)[0].astype(np.int64)
    if indices.size == 0:
        return sparse_zeros("row_sparse", shape, ctx=ctx, dtype=dtype), (
            np.zeros((0,) + tuple(shape[1:]), dtype=dtype), indices)
    data = np.random.rand(indices.size, *shape[1:]).astype(dtype)
    if data_init is not None:
        data.fill(data_init)
    if modifier_func is not None:
        data = assign_each(data, modifier_func).astype(dtype)
    arr = row_sparse_array((data, indices), shape=shape, ctx=ctx, dtype=dtype)
    return arr, (data, indices)


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """A random sparse array and its parts.

    Parameters
    ----------
    shape : tuple
    stype : {'csr', 'row_sparse'}
    density : float, optional
        CSR: fraction of stored values (exactly ``round(density * size)`` with
        the uniform distribution). row_sparse: probability that a row is
        stored. Drawn from U[0, 1) when None.
    dtype : optional
        float32 by default.
    distribution : {'uniform', 'powerlaw'}, optional
        CSR only; 'powerlaw' doubles the row length from row to row.
    data_init : float, optional
        Value of every stored element instead of U[0, 1).
    rsp_indices : list of int, optional
        The rows a row_sparse array stores (sorted and de-duplicated).
    modifier_func : callable, optional
        Applied to each stored value.
    shuffle_csr_indices : bool
        Shuffle the column indices inside each row: the result is an
        *invalid* (unsorted) CSR array, for testing ``check_format``.
    ctx : Context, optional
        :func:`default_context` when None.

    Returns
    -------
    (array, parts)
        CSR: ``parts = (indptr, indices, data)``, NDArrays (MXNet's order).
        row_sparse: ``parts = (data, indices)``, NumPy arrays.

    Examples
    --------
    >>> np.random.seed(1)
    >>> arr, (data, idx) = rand_sparse_ndarray((10, 3), 'row_sparse', density=0.5)
    >>> arr.stype, idx.dtype, data.shape[1:]
    ('row_sparse', dtype('int64'), (3,))
    >>> csr, (indptr, indices, values) = rand_sparse_ndarray((4, 5), 'csr', density=0.5)
    >>> indptr.asnumpy()[-1] == values.shape[0] == 10
    True
    """
    ctx = as_context(ctx) if ctx else default_context()
    density = np.random.rand() if density is None else density
    if density < 0:
        raise InvalidArgumentError(f"density must be >= 0, got {density}")
    dtype = numpy_dtype(default_dtype() if dtype is None else dtype)
    distribution = "uniform" if distribution is None else distribution
    if distribution not in ("uniform", "powerlaw"):
        raise InvalidArgumentError(f"distribution must be 'uniform' or 'powerlaw', got "
                                   f"{distribution!r}")
    if stype == "row_sparse":
        if distribution != "uniform":
            raise InvalidArgumentError(f"distribution {distribution!r} is for CSR only; "
                                       f"row_sparse rows are drawn uniformly")
        return _rand_row_sparse(tuple(shape), density, dtype, data_init, rsp_indices,
                                modifier_func, ctx)
    if stype != "csr":
        raise InvalidArgumentError(f"stype must be 'csr' or 'row_sparse', got {stype!r}")
    _check_density(density)  # MXNet 1.9.1: CSR only; a row_sparse density over 1 keeps every row
    if len(shape) != 2:
        raise InvalidArgumentError(f"a CSR array is 2-D, got shape {tuple(shape)}")
    rows, cols = shape
    if distribution == "uniform":
        m = _uniform_csr(rows, cols, density, dtype)
    else:
        m = _powerlaw_csr(rows, cols, density, dtype)
    m.sort_indices()
    if data_init is not None:
        m.data.fill(data_init)
    if modifier_func is not None and m.nnz:
        m.data = assign_each(m.data, modifier_func).astype(dtype)
    indices, indptr = m.indices.astype(np.int64), m.indptr.astype(np.int64)
    if shuffle_csr_indices:
        shuffle_csr_column_indices(SimpleNamespace(indptr=indptr, indices=indices))
    arr = csr_matrix((m.data.astype(dtype), indices, indptr), shape=(rows, cols), ctx=ctx,
                     dtype=dtype, validate=not shuffle_csr_indices)
    return arr, (arr.indptr, arr.indices, arr.data)


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random array of storage type ``stype``.

    Dense values are standard normal; sparse ones as in
    :func:`rand_sparse_ndarray`. ``modifier_func`` is applied to every value
    of a dense array and to the stored values of a sparse one.

    Examples
    --------
    >>> np.random.seed(0)
    >>> rand_ndarray((1000, 1000000), stype='csr', density=0.00001).nnz
    10000
    >>> rand_ndarray((2, 3), dtype='float64').dtype
    dtype('float64')
    """
    ctx = as_context(ctx) if ctx else default_context()
    if stype == "default":
        values = random_arrays(tuple(shape))
        if modifier_func is not None:
            values = assign_each(values, modifier_func).astype(values.dtype)
        return array(values, ctx=ctx, dtype=dtype)
    arr, _ = rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                                 distribution=distribution, modifier_func=modifier_func,
                                 shuffle_csr_indices=shuffle_csr_indices, ctx=ctx)
    return arr


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=.5, shuffle_csr_indices=False):
    """A random sparse array (density 0.5 by default) without its parts.

    >>> a = create_sparse_array((5, 3), 'row_sparse', rsp_indices=[4, 1], data_init=3.0)
    >>> a.indices.asnumpy()
    array([1, 4])
    """
    if stype == "row_sparse":
        arr, _ = rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                     rsp_indices=rsp_indices, dtype=dtype,
                                     modifier_func=modifier_func)
    elif stype == "csr":
        arr, _ = rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                     dtype=dtype, modifier_func=modifier_func,
                                     shuffle_csr_indices=shuffle_csr_indices)
    else:
        raise InvalidArgumentError(f"create_sparse_array: stype must be 'csr' or "
                                   f"'row_sparse', got {stype!r}")
    return arr


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None,
                           dtype=None, modifier_func=None, shuffle_csr_indices=False):
    """:func:`create_sparse_array`; a row_sparse array stores exactly ``rsp_indices`` (or none).

    >>> create_sparse_array_zd((5, 3), 'row_sparse', density=0.9).nnz
    0
    """
    if stype == "row_sparse":
        density = 0.0
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """A random 2-D shape with sizes in ``[1, dim]`` (``[0, dim]`` when zero sizes are allowed).

    >>> len(rand_shape_2d())
    2
    """
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """A random 3-D shape.

    >>> len(rand_shape_3d())
    3
    """
    low = 0 if allow_zero_size else 1
    return (np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1),
            np.random.randint(low, dim2 + 1))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random ``num_dim``-D shape with sizes up to ``dim``.

    >>> len(rand_shape_nd(4))
    4
    """
    low = 0 if allow_zero_size else 1
    return tuple(np.random.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random int64 point ``(x, y)``, ``x`` in ``[x_low, x_high)``, ``y`` in ``[y_low, y_high)``.

    >>> np.random.seed(0)
    >>> [int(v) for v in rand_coord_2d(0, 10, 5, 9)]
    [5, 5]
    """
    x = np.random.randint(x_low, x_high, dtype=np.int64)
    y = np.random.randint(y_low, y_high, dtype=np.int64)
    return x, y

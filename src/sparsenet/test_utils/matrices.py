"""Structured test matrices and NumPy reference reductions.

>>> create_2d_tensor(2, 3).asnumpy()
array([[0, 0, 0],
       [1, 1, 1]])
>>> collapse_sum_like(np.ones((2, 3, 4)), (3, 1)).ravel()
array([8., 8., 8.])
"""
import numpy as np

from ..base import InvalidArgumentError
from ..ndarray.creation import arange, array, zeros
from ..ops.shape import broadcast_to

__all__ = ["create_2d_tensor", "create_vector", "get_identity_mat", "get_identity_mat_batch",
           "new_matrix_with_real_eigvals_2d", "new_matrix_with_real_eigvals_nd",
           "new_orthonormal_matrix_2d", "new_sym_matrix_with_real_eigvals_2d",
           "new_sym_matrix_with_real_eigvals_nd", "np_reduce", "collapse_sum_like"]


def create_2d_tensor(rows, columns, dtype=np.int64):
    """A ``rows x columns`` NDArray whose row ``i`` holds ``i`` (for large-tensor tests).

    >>> create_2d_tensor(2, 2, dtype='float32').dtype
    dtype('float32')
    """
    col = arange(0, rows, dtype=dtype).reshape(rows, 1)
    return broadcast_to(col, shape=(rows, columns))


def create_vector(size, dtype=np.int64):
    """The NDArray ``[0, 1, ..., size-1]`` (int64 by default).

    >>> create_vector(3).asnumpy()
    array([0, 1, 2])
    """
    return arange(0, size, dtype=dtype)


def get_identity_mat(size):
    """The ``size x size`` float32 identity NDArray.

    >>> get_identity_mat(2).asnumpy()
    array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    mat = zeros((size, size))
    for i in range(size):
        mat[i, i] = 1
    return mat


def get_identity_mat_batch(size):
    """Two stacked ``size x size`` identity matrices, shape ``(2, size, size)``.

    >>> get_identity_mat_batch(3).shape
    (2, 3, 3)
    """
    eye = get_identity_mat(size).asnumpy()
    return array(np.stack([eye, eye]))


def new_matrix_with_real_eigvals_2d(n):
    """A well-conditioned ``n x n`` matrix with real eigenvalues in [-10, 10].

    ``Q^-1 D Q`` with ``Q`` a Householder reflection times a diagonal
    matrix of condition number below 3.

    >>> np.random.seed(0)
    >>> m = new_matrix_with_real_eigvals_2d(3)
    >>> bool(np.all(np.abs(np.linalg.eigvals(m).imag) < 1e-8))
    True
    """
    while True:
        d = np.diag(np.random.uniform(-1.0, 1.0, n))
        v = np.random.uniform(-1.0, 1.0, n).reshape(n, 1)
        v = v / np.linalg.norm(v, axis=-2, keepdims=True)
        q = np.matmul(np.eye(n) - 2 * np.matmul(v, v.T), d)
        if np.linalg.cond(q, 2) < 3:
            break
    eig = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(np.linalg.inv(q), eig), q)


def new_matrix_with_real_eigvals_nd(shape):
    """A batch of :func:`new_matrix_with_real_eigvals_2d` matrices of shape ``shape``.

    >>> new_matrix_with_real_eigvals_nd((2, 3, 3)).shape
    (2, 3, 3)
    """
    count = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1])
                     for _ in range(count)]).reshape(shape)


def new_orthonormal_matrix_2d(n):
    """A random ``n x n`` orthonormal matrix (the Q of a QR decomposition).

    >>> q = new_orthonormal_matrix_2d(4)
    >>> bool(np.allclose(q.T @ q, np.eye(4)))
    True
    """
    x = np.random.randn(n, n)
    return np.linalg.qr(np.matmul(x.T, x))[0]


def new_sym_matrix_with_real_eigvals_2d(n):
    """A symmetric ``n x n`` matrix ``Q^T D Q`` with eigenvalues in [-10, 10].

    >>> m = new_sym_matrix_with_real_eigvals_2d(3)
    >>> bool(np.allclose(m, m.T))
    True
    """
    q = new_orthonormal_matrix_2d(n)
    eig = np.diag(np.random.uniform(-10.0, 10.0, n))
    return np.matmul(np.matmul(q.T, eig), q)


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A batch of :func:`new_sym_matrix_with_real_eigvals_2d` matrices of shape ``shape``.

    >>> new_sym_matrix_with_real_eigvals_nd((2, 2, 2)).shape
    (2, 2, 2)
    """
    count = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1])
                     for _ in range(count)]).reshape(shape)


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce ``dat`` over ``axis`` (int, sequence or None), one axis at a time.

    >>> np_reduce(np.arange(6.).reshape(2, 3), (0, 1), True, np.sum)
    array([[15.]])
    """
    if isinstance(axis, int):
        axes = [axis]
    else:
        axes = list(axis) if axis is not None else list(range(dat.ndim))
    axes = [a % dat.ndim if dat.ndim else a for a in axes]
    ret = dat
    for a in sorted(axes, reverse=True):
        ret = numpy_reduce_func(ret, axis=a)
    if keepdims:
        kept = list(dat.shape)
        for a in axes:
            kept[a] = 1
        ret = ret.reshape(tuple(kept))
    return ret


def collapse_sum_like(a, shape):
    """Sum ``a`` over the axes along which ``shape`` broadcasts to ``a.shape``.

    >>> collapse_sum_like(np.ones((2, 3)), (1, 3))
    array([[2., 2., 2.]])
    """
    shape = tuple(shape)
    if len(a.shape) < len(shape):
        raise InvalidArgumentError(f"collapse_sum_like: shape {shape} has more dimensions "
                                   f"than the array {a.shape}")
    if int(np.prod(shape)) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = len(a.shape) - len(shape)
    axes = list(range(lead))
    for i, s in enumerate(shape):
        if s != a.shape[lead + i]:
            if s != 1:
                raise InvalidArgumentError(f"collapse_sum_like: shape {shape} does not "
                                           f"broadcast to {a.shape}")
            axes.append(lead + i)
    return np.sum(a, axis=tuple(axes)).reshape(shape)

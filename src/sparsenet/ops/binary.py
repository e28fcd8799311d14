"""Elementwise binary operators between arrays, ``add_n`` and ``where``.

``elemwise_*`` need equal shapes; ``broadcast_*`` broadcast NumPy-style and,
for equal shapes, follow the same storage-type rows as ``elemwise_*``. The
Python operators and ``mx.nd.add/subtract/multiply/divide`` use ``elemwise_*``
for equal shapes and ``broadcast_*`` otherwise, so ``a * b`` and
``mx.nd.elemwise_mul(a, b)`` always agree (they do not in MXNet 1.9.1, see
``docs/differences.md``).

>>> import sparsenet as mx
>>> a = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 1], [0, 1, 2]), shape=(2, 2))
>>> (a + a).stype, (a * mx.nd.ones((2, 2))).stype, (mx.nd.ones((2, 2)) * a).stype
('csr', 'csr', 'csr')
>>> (a + mx.nd.ones((2, 2))).asnumpy()
array([[2., 1.],
       [1., 3.]], dtype=float32)
"""
import torch

from ..ndarray.ndarray import NDArray
from .kernels import (csr_gather_dense, csr_intersection, csr_union, rsp_intersection,
                      rsp_union, scatter_add_dense)
from ..ndarray.cast_storage import to_dense_tensor
from .registry import CSR, DEFAULT, ROW_SPARSE, Many, defop, rule

__all__ = ["elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "broadcast_add",
    "broadcast_plus", "broadcast_sub", "broadcast_minus", "broadcast_mul", "broadcast_div",
    "broadcast_mod", "broadcast_power", "broadcast_maximum", "broadcast_minimum",
    "broadcast_equal", "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
    "broadcast_lesser", "broadcast_lesser_equal", "broadcast_logical_and",
    "broadcast_logical_or", "broadcast_logical_xor", "broadcast_hypot", "add_n",
    "ElementWiseSum", "where"]


def _same_shape(name, lhs, rhs):
    if lhs.shape != rhs.shape:
        raise ValueError(f"{name}: shapes must be equal, got {tuple(lhs.shape)} and "
                         f"{tuple(rhs.shape)}; use broadcast_* to broadcast")


def _promote(lhs, rhs):
    return lhs.dtype if lhs.dtype == rhs.dtype else torch.promote_types(lhs.dtype, rhs.dtype)


# ---------------------------------------------------------------------- dense definitions
@defop
def elemwise_add(lhs, rhs):
    """``lhs + rhs`` for arrays of equal shape.

    >>> import sparsenet as mx
    >>> mx.nd.elemwise_add(mx.nd.ones((2,)), mx.nd.ones((2,))).asnumpy()
    array([2., 2.], dtype=float32)
    """
    _same_shape("elemwise_add", lhs, rhs)
    return lhs + rhs


@defop
def elemwise_sub(lhs, rhs):
    """``lhs - rhs`` for arrays of equal shape.

    >>> import sparsenet as mx
    >>> mx.nd.elemwise_sub(mx.nd.ones((2,)), mx.nd.ones((2,))).asnumpy()
    array([0., 0.], dtype=float32)
    """
    _same_shape("elemwise_sub", lhs, rhs)
    return lhs - rhs


@defop
def elemwise_mul(lhs, rhs):
    """``lhs * rhs`` for arrays of equal shape.

    >>> import sparsenet as mx
    >>> mx.nd.elemwise_mul(mx.nd.array([2.0]), mx.nd.array([3.0])).asnumpy()
    array([6.], dtype=float32)
    """
    _same_shape("elemwise_mul", lhs, rhs)
    return lhs * rhs


@defop
def elemwise_div(lhs, rhs):
    """``lhs / rhs`` for arrays of equal shape.

    >>> import sparsenet as mx
    >>> mx.nd.elemwise_div(mx.nd.array([3.0]), mx.nd.array([2.0])).asnumpy()
    array([1.5], dtype=float32)
    """
    _same_shape("elemwise_div", lhs, rhs)
    return _div(lhs, rhs)


def _div(lhs, rhs):
    if not lhs.dtype.is_floating_point and not rhs.dtype.is_floating_point:
        return torch.div(lhs, rhs, rounding_mode="trunc")
    return lhs / rhs


def broadcast_shape(a, b):
    """The NumPy broadcast of shapes ``a`` and ``b``, or None when they do not broadcast.

    (A plain loop: ``torch.broadcast_shapes`` is a Python reference implementation
    that costs about 0.1 ms a call.)

    >>> broadcast_shape((4, 1), (3,)), broadcast_shape((2,), (3,))
    ((4, 3), None)
    """
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def _bcast(lhs, rhs, name):
    if broadcast_shape(lhs.shape, rhs.shape) is None:
        raise ValueError(f"{name}: shapes {tuple(lhs.shape)} and {tuple(rhs.shape)} cannot be "
                         f"broadcast together")


@defop
def broadcast_add(lhs, rhs):
    """``lhs + rhs`` with NumPy broadcasting.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_add(mx.nd.ones((2, 2)), mx.nd.array([1.0, 2.0])).asnumpy()
    array([[2., 3.],
           [2., 3.]], dtype=float32)
    """
    try:  # the shapes are checked when torch refuses them (the hot path pays nothing)
        return lhs + rhs
    except RuntimeError:
        _bcast(lhs, rhs, "broadcast_add")
        raise


broadcast_plus = broadcast_add


@defop
def broadcast_sub(lhs, rhs):
    """``lhs - rhs`` with broadcasting (alias ``broadcast_minus``).

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_sub(mx.nd.ones((2, 2)), mx.nd.array([1.0, 2.0])).asnumpy()
    array([[ 0., -1.],
           [ 0., -1.]], dtype=float32)
    """
    try:  # the shapes are checked when torch refuses them (the hot path pays nothing)
        return lhs - rhs
    except RuntimeError:
        _bcast(lhs, rhs, "broadcast_sub")
        raise


broadcast_minus = broadcast_sub


@defop
def broadcast_mul(lhs, rhs):
    """``lhs * rhs`` with broadcasting.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_mul(mx.nd.ones((2, 2)), mx.nd.array([[2.0], [3.0]])).asnumpy()
    array([[2., 2.],
           [3., 3.]], dtype=float32)
    """
    try:  # the shapes are checked when torch refuses them (the hot path pays nothing)
        return lhs * rhs
    except RuntimeError:
        _bcast(lhs, rhs, "broadcast_mul")
        raise


@defop
def broadcast_div(lhs, rhs):
    """``lhs / rhs`` with broadcasting.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_div(mx.nd.ones((1, 2)), mx.nd.array([[2.0], [4.0]])).asnumpy()
    array([[0.5 , 0.5 ],
           [0.25, 0.25]], dtype=float32)
    """
    try:  # the shapes are checked when torch refuses them (the hot path pays nothing)
        return _div(lhs, rhs)
    except RuntimeError:
        _bcast(lhs, rhs, "broadcast_div")
        raise


@defop
def broadcast_mod(lhs, rhs):
    """``lhs % rhs`` with broadcasting.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_mod(mx.nd.array([5.0, 7.0]), mx.nd.array([3.0])).asnumpy()
    array([2., 1.], dtype=float32)
    """
    _bcast(lhs, rhs, "broadcast_mod")
    return torch.remainder(lhs, rhs)


@defop
def broadcast_power(lhs, rhs):
    """``lhs ** rhs`` with broadcasting.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_power(mx.nd.array([2.0, 3.0]), mx.nd.array([2.0])).asnumpy()
    array([4., 9.], dtype=float32)
    """
    _bcast(lhs, rhs, "broadcast_power")
    return torch.pow(lhs, rhs)


@defop
def broadcast_maximum(lhs, rhs):
    """Elementwise maximum with broadcasting.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_maximum(mx.nd.array([1.0, 5.0]), mx.nd.array([3.0])).asnumpy()
    array([3., 5.], dtype=float32)
    """
    _bcast(lhs, rhs, "broadcast_maximum")
    return torch.maximum(lhs, rhs.to(lhs.dtype))


@defop
def broadcast_minimum(lhs, rhs):
    """Elementwise minimum with broadcasting.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_minimum(mx.nd.array([1.0, 5.0]), mx.nd.array([3.0])).asnumpy()
    array([1., 3.], dtype=float32)
    """
    _bcast(lhs, rhs, "broadcast_minimum")
    return torch.minimum(lhs, rhs.to(lhs.dtype))


def _compare(fn, name):
    def compare(lhs, rhs):
        _bcast(lhs, rhs, name)
        return fn(lhs, rhs).to(_promote(lhs, rhs))
    return compare


@defop
def broadcast_equal(lhs, rhs):
    """``1`` where ``lhs == rhs`` (with broadcasting), else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_equal(mx.nd.array([1.0, 2.0]), mx.nd.array([2.0])).asnumpy()
    array([0., 1.], dtype=float32)
    """
    return _compare(torch.eq, "broadcast_equal")(lhs, rhs)


@defop
def broadcast_not_equal(lhs, rhs):
    """``1`` where ``lhs != rhs`` (with broadcasting), else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_not_equal(mx.nd.array([1.0, 2.0]), mx.nd.array([2.0])).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return _compare(torch.ne, "broadcast_not_equal")(lhs, rhs)


@defop
def broadcast_greater(lhs, rhs):
    """``1`` where ``lhs > rhs`` (with broadcasting), else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_greater(mx.nd.array([1.0, 3.0]), mx.nd.array([2.0])).asnumpy()
    array([0., 1.], dtype=float32)
    """
    return _compare(torch.gt, "broadcast_greater")(lhs, rhs)


@defop
def broadcast_greater_equal(lhs, rhs):
    """``1`` where ``lhs >= rhs`` (with broadcasting), else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_greater_equal(mx.nd.array([1.0, 2.0]), mx.nd.array([2.0])).asnumpy()
    array([0., 1.], dtype=float32)
    """
    return _compare(torch.ge, "broadcast_greater_equal")(lhs, rhs)


@defop
def broadcast_lesser(lhs, rhs):
    """``1`` where ``lhs < rhs`` (with broadcasting), else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_lesser(mx.nd.array([1.0, 3.0]), mx.nd.array([2.0])).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return _compare(torch.lt, "broadcast_lesser")(lhs, rhs)


@defop
def broadcast_lesser_equal(lhs, rhs):
    """``1`` where ``lhs <= rhs`` (with broadcasting), else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_lesser_equal(mx.nd.array([2.0, 3.0]), mx.nd.array([2.0])).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return _compare(torch.le, "broadcast_lesser_equal")(lhs, rhs)


@defop
def broadcast_logical_and(lhs, rhs):
    """``1`` where both are non-zero (with broadcasting).

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_logical_and(mx.nd.array([1.0, 0.0]), mx.nd.array([2.0])).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return _compare(lambda a, b: (a != 0) & (b != 0), "broadcast_logical_and")(lhs, rhs)


@defop
def broadcast_logical_or(lhs, rhs):
    """``1`` where either is non-zero (with broadcasting).

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_logical_or(mx.nd.array([1.0, 0.0]), mx.nd.array([0.0])).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return _compare(lambda a, b: (a != 0) | (b != 0), "broadcast_logical_or")(lhs, rhs)


@defop
def broadcast_logical_xor(lhs, rhs):
    """``1`` where exactly one is non-zero (with broadcasting).

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_logical_xor(mx.nd.array([1.0, 0.0]), mx.nd.array([1.0])).asnumpy()
    array([0., 1.], dtype=float32)
    """
    return _compare(lambda a, b: (a != 0) ^ (b != 0), "broadcast_logical_xor")(lhs, rhs)


@defop
def broadcast_hypot(lhs, rhs):
    """``sqrt(lhs**2 + rhs**2)`` with broadcasting.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_hypot(mx.nd.array([3.0]), mx.nd.array([4.0])).asnumpy()
    array([5.], dtype=float32)
    """
    _bcast(lhs, rhs, "broadcast_hypot")
    return torch.hypot(lhs, rhs)


@defop
def add_n(*args):
    """Sum of all inputs (equal shapes); alias ``ElementWiseSum``.

    All row_sparse inputs give row_sparse, all CSR give CSR, and any dense input
    gives a dense result computed without densifying the sparse ones.

    >>> import sparsenet as mx
    >>> r = mx.nd.sparse.row_sparse_array(([[1.0]], [0]), shape=(2, 1))
    >>> mx.nd.add_n(r, r, r).stype
    'row_sparse'
    """
    if not args:
        raise ValueError("add_n needs at least one input")
    out = args[0]
    for a in args[1:]:
        _same_shape("add_n", out, a)
        out = out + a
    return out.clone() if len(args) == 1 else out


ElementWiseSum = add_n


@defop
def where(condition, x, y):
    """``x`` where ``condition`` is non-zero, else ``y``.

    ``condition`` may also be a vector selecting whole rows (MXNet semantics).

    >>> import sparsenet as mx
    >>> mx.nd.where(mx.nd.array([1.0, 0.0]), mx.nd.array([1.0, 2.0]),
    ...             mx.nd.array([5.0, 6.0])).asnumpy()
    array([1., 6.], dtype=float32)
    """
    if x.shape != y.shape:
        raise ValueError(f"where: x and y must have one shape, got {tuple(x.shape)} and "
                         f"{tuple(y.shape)}")
    c = condition
    if c.shape != x.shape:
        if c.dim() == 1 and c.shape[0] == x.shape[0]:
            c = c.reshape((-1,) + (1,) * (x.dim() - 1))
        else:
            raise ValueError(f"where: condition shape {tuple(c.shape)} must equal x's "
                             f"{tuple(x.shape)} or be ({x.shape[0]},)")
    return torch.where(c != 0, x, y)


# ---------------------------------------------------------------------- sparse kernels
def _check(name, lhs, rhs):
    if lhs.shape != rhs.shape:
        raise ValueError(f"{name}: shapes must be equal, got {lhs.shape} and {rhs.shape}")


def _sparse_add(sign):
    def kernel(lhs, rhs):
        if lhs.shape != rhs.shape:
            return NotImplemented
        if lhs.stype == CSR:
            return csr_union(lhs, rhs, sign)
        return rsp_union(lhs, rhs, sign)
    return kernel


def _sparse_dense_add(sign):
    def kernel(lhs, rhs):  # lhs sparse, rhs dense
        d = rhs._t if rhs.shape == lhs.shape else rhs._t.expand(lhs.shape)
        base = d if sign == 1.0 else -d
        return NDArray(scatter_add_dense(lhs, base))
    return kernel


def _dense_sparse_add(sign):
    def kernel(lhs, rhs):  # lhs dense, rhs sparse
        d = lhs._t if lhs.shape == rhs.shape else lhs._t.expand(rhs.shape)
        return NDArray(scatter_add_dense(rhs, d, sign))
    return kernel


def _sparse_sparse_mul(lhs, rhs):
    if lhs.shape != rhs.shape:
        return NotImplemented
    if lhs.stype == CSR:
        return csr_intersection(lhs, rhs, torch.mul)
    return rsp_intersection(lhs, rhs, torch.mul)


def _sparse_dense_mul(sparse, dense, fn):
    if broadcast_shape(tuple(dense.shape), sparse.shape) != tuple(sparse.shape):
        return NotImplemented
    d = dense._t
    if sparse.stype == CSR:
        return sparse._with_data(fn(sparse._data, csr_gather_dense(sparse, d)))
    d = d.expand(sparse.shape)
    return sparse._with_data(fn(sparse._data, d.index_select(0, sparse._indices)))


def _csr_dns_mul(lhs, rhs):
    return _sparse_dense_mul(lhs, rhs, torch.mul)


def _dns_csr_mul(lhs, rhs):
    return _sparse_dense_mul(rhs, lhs, torch.mul)


def _sparse_dns_div(lhs, rhs):
    return _sparse_dense_mul(lhs, rhs, _div)


def _densified(fn):
    """Kernel for rows whose result is dense because one input is dense anyway."""
    def kernel(lhs, rhs):
        return NDArray(fn(to_dense_tensor(lhs), to_dense_tensor(rhs)))
    return kernel


_dense_div = _densified(_div)

# elementwise add/sub: sparse+sparse keeps the type, anything with a dense input is dense
for _op, _sign in ((elemwise_add, 1.0), (elemwise_sub, -1.0),
                   (broadcast_add, 1.0), (broadcast_sub, -1.0)):
    rule(_op, CSR, CSR, out=CSR)(_sparse_add(_sign))
    rule(_op, ROW_SPARSE, ROW_SPARSE, out=ROW_SPARSE)(_sparse_add(_sign))
    rule(_op, CSR, DEFAULT, out=DEFAULT)(_sparse_dense_add(_sign))
    rule(_op, DEFAULT, CSR, out=DEFAULT)(_dense_sparse_add(_sign))
    rule(_op, ROW_SPARSE, DEFAULT, out=DEFAULT)(_sparse_dense_add(_sign))
    rule(_op, DEFAULT, ROW_SPARSE, out=DEFAULT)(_dense_sparse_add(_sign))

# elementwise multiply: a sparse operand keeps its type (zeros stay zeros)
for _op in (elemwise_mul, broadcast_mul):
    rule(_op, CSR, CSR, out=CSR)(_sparse_sparse_mul)
    rule(_op, ROW_SPARSE, ROW_SPARSE, out=ROW_SPARSE)(_sparse_sparse_mul)
    rule(_op, CSR, DEFAULT, out=CSR)(_csr_dns_mul)
    rule(_op, DEFAULT, CSR, out=CSR)(_dns_csr_mul)
    rule(_op, ROW_SPARSE, DEFAULT, out=ROW_SPARSE)(_csr_dns_mul)
    rule(_op, DEFAULT, ROW_SPARSE, out=ROW_SPARSE)(_dns_csr_mul)

# elementwise divide: 0 / 0 is NaN, so only a sparse numerator over a dense
# denominator of broadcast shape keeps CSR (MXNet's csr / vector); else dense
rule(broadcast_div, CSR, DEFAULT, out=CSR)(_sparse_dns_div)
for _a, _b in ((CSR, DEFAULT), (DEFAULT, CSR), (ROW_SPARSE, DEFAULT), (DEFAULT, ROW_SPARSE),
               (ROW_SPARSE, ROW_SPARSE)):
    rule(elemwise_div, _a, _b, out=DEFAULT)(_dense_div)


# add_n: homogeneous sparse inputs keep the type; a dense input makes it dense
def _add_n_sparse(*args):
    out = args[0]
    union = csr_union if out.stype == CSR else rsp_union
    for a in args[1:]:
        _check("add_n", out, a)
        out = union(out, a)
    if len(args) == 1:
        out = type(out)._from_parts(*[t.clone() for t in out._parts()], out.shape)
    return out


def _add_n_dense(*args):
    dense = [a for a in args if a.stype == DEFAULT]
    out = dense[0]._t.clone()
    for a in dense[1:]:
        _check("add_n", dense[0], a)
        out = out + a._t
    for a in args:
        if a.stype != DEFAULT:
            _check("add_n", dense[0], a)
            out = scatter_add_dense(a, out)
    return NDArray(out)


rule(add_n, Many(ROW_SPARSE), out=ROW_SPARSE)(_add_n_sparse)
rule(add_n, Many(CSR), out=CSR)(_add_n_sparse)
rule(add_n, Many(DEFAULT, CSR, ROW_SPARSE, needs=DEFAULT), out=DEFAULT)(_add_n_dense)


@rule(where, CSR, DEFAULT, DEFAULT, out=DEFAULT)
def _where_csr_cond(condition, x, y):
    c = to_dense_tensor(condition)
    return NDArray(where.fn(c, x._t, y._t))

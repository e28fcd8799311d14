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

from ..base import InvalidArgumentError, ShapeError
from ..ndarray.ndarray import NDArray
from .kernels import (csr_from_keys, csr_gather_dense, csr_intersection, csr_keys, csr_union,
                      rsp_intersection, rsp_union, scatter_add_dense, zero_quotient_keys)
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
        raise ShapeError(f"{name}: shapes must be equal, got {tuple(lhs.shape)} and "
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
    if lhs.shape != rhs.shape:  # _same_shape, inline: the per-call path
        _same_shape("elemwise_add", lhs, rhs)
    return lhs + rhs


@defop
def elemwise_sub(lhs, rhs):
    """``lhs - rhs`` for arrays of equal shape.

    >>> import sparsenet as mx
    >>> mx.nd.elemwise_sub(mx.nd.ones((2,)), mx.nd.ones((2,))).asnumpy()
    array([0., 0.], dtype=float32)
    """
    if lhs.shape != rhs.shape:  # _same_shape, inline: the per-call path
        _same_shape("elemwise_sub", lhs, rhs)
    return lhs - rhs


@defop
def elemwise_mul(lhs, rhs):
    """``lhs * rhs`` for arrays of equal shape.

    >>> import sparsenet as mx
    >>> mx.nd.elemwise_mul(mx.nd.array([2.0]), mx.nd.array([3.0])).asnumpy()
    array([6.], dtype=float32)
    """
    if lhs.shape != rhs.shape:  # _same_shape, inline: the per-call path
        _same_shape("elemwise_mul", lhs, rhs)
    return lhs * rhs


@defop
def elemwise_div(lhs, rhs):
    """``lhs / rhs`` for arrays of equal shape.

    >>> import sparsenet as mx
    >>> mx.nd.elemwise_div(mx.nd.array([3.0]), mx.nd.array([2.0])).asnumpy()
    array([1.5], dtype=float32)
    """
    if lhs.shape != rhs.shape:  # _same_shape, inline: the per-call path
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
        raise ShapeError(f"{name}: shapes {tuple(lhs.shape)} and {tuple(rhs.shape)} cannot be "
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


def select_max(lhs, rhs):
    """``max(lhs, rhs)`` (NaN propagates); the gradient goes to ``lhs`` where ``lhs >= rhs``
    and to ``rhs`` elsewhere, as MXNet's (torch.maximum splits it on ties)."""
    rhs = rhs.to(lhs.dtype)
    return torch.where((lhs >= rhs) | torch.isnan(lhs), lhs, rhs)


def select_min(lhs, rhs):
    """``min(lhs, rhs)`` (NaN propagates); the gradient goes to ``lhs`` where ``lhs <= rhs``."""
    rhs = rhs.to(lhs.dtype)
    return torch.where((lhs <= rhs) | torch.isnan(lhs), lhs, rhs)


@defop
def broadcast_maximum(lhs, rhs):
    """Elementwise maximum with broadcasting.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_maximum(mx.nd.array([1.0, 5.0]), mx.nd.array([3.0])).asnumpy()
    array([3., 5.], dtype=float32)
    """
    _bcast(lhs, rhs, "broadcast_maximum")
    return select_max(lhs, rhs)


@defop
def broadcast_minimum(lhs, rhs):
    """Elementwise minimum with broadcasting.

    >>> import sparsenet as mx
    >>> mx.nd.broadcast_minimum(mx.nd.array([1.0, 5.0]), mx.nd.array([3.0])).asnumpy()
    array([1., 3.], dtype=float32)
    """
    _bcast(lhs, rhs, "broadcast_minimum")
    return select_min(lhs, rhs)


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
        raise InvalidArgumentError("add_n needs at least one input, got none")
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
        raise ShapeError(f"where: x and y must have one shape, got {tuple(x.shape)} and "
                         f"{tuple(y.shape)}")
    c = condition
    if c.shape != x.shape:
        if c.dim() == 1 and c.shape[0] == x.shape[0]:
            c = c.reshape((-1,) + (1,) * (x.dim() - 1))
        else:
            raise ShapeError(f"where: condition shape {tuple(c.shape)} must equal x's "
                             f"{tuple(x.shape)} or be ({x.shape[0]},)")
    return torch.where(c != 0, x, y)


# ---------------------------------------------------------------------- sparse kernels
def _check(name, lhs, rhs):
    if lhs.shape != rhs.shape:
        raise ShapeError(f"{name}: shapes must be equal, got {lhs.shape} and {rhs.shape}")


def _result_shape(name, lhs, rhs, broadcast):
    """Shape of ``name(lhs, rhs)``; raises ShapeError when the shapes do not fit."""
    if lhs.shape == rhs.shape:
        return lhs.shape
    if not broadcast:
        _same_shape(name, lhs, rhs)
    shape = broadcast_shape(lhs.shape, rhs.shape)
    if shape is None:
        _bcast(lhs, rhs, name)
    return shape


def _sparse_add(name, sign, broadcast):
    def kernel(lhs, rhs):
        if lhs.shape != rhs.shape:
            _result_shape(name, lhs, rhs, broadcast)  # raises unless the shapes broadcast
            return NotImplemented  # a broadcast between two sparse arrays: dense fallback
        if lhs.stype == CSR:
            return csr_union(lhs, rhs, sign)
        return rsp_union(lhs, rhs, sign)
    return kernel


def _mixed_add(name, sign, broadcast, sparse_first):
    """Kernel of ``lhs + sign * rhs`` with one sparse and one dense operand: dense result.

    The dense operand broadcast to the result is added to the sparse values; a
    sparse operand smaller than the result (a row or column vector being
    broadcast) is densified first, its size bounded by the result's.
    """
    def kernel(lhs, rhs):
        shape = _result_shape(name, lhs, rhs, broadcast)
        sparse, dense = (lhs, rhs) if sparse_first else (rhs, lhs)
        if sparse.shape != shape:  # the sparse operand is broadcast
            a, b = to_dense_tensor(lhs), to_dense_tensor(rhs)
            return NDArray(a + b if sign == 1.0 else a - b)
        d = dense._t if dense.shape == shape else dense._t.expand(shape)
        if sparse_first:  # sparse + sign * dense
            return NDArray(scatter_add_dense(sparse, d if sign == 1.0 else -d))
        return NDArray(scatter_add_dense(sparse, d, sign))
    return kernel


def _sparse_sparse_mul(name, broadcast):
    def kernel(lhs, rhs):
        if lhs.shape != rhs.shape:
            _result_shape(name, lhs, rhs, broadcast)  # raises unless the shapes broadcast
            return NotImplemented  # a broadcast between two sparse arrays: dense fallback
        if lhs.stype == CSR:
            return csr_intersection(lhs, rhs, torch.mul)
        return rsp_intersection(lhs, rhs, torch.mul)
    return kernel


def _sparse_dense_mul(sparse, dense, fn):
    """``fn(stored values, dense values there)``: ``dense`` broadcasts to ``sparse``'s shape."""
    d = dense._t
    if sparse.stype == CSR:
        return sparse._with_data(fn(sparse._data, csr_gather_dense(sparse, d)))
    d = d.expand(sparse.shape)
    return sparse._with_data(fn(sparse._data, d.index_select(0, sparse._indices)))


def _mixed_mul(name, broadcast, sparse_first, fn=torch.mul):
    """Kernel of ``fn(lhs, rhs)`` (``fn(0, x) == 0``) with one sparse and one dense operand."""
    def kernel(lhs, rhs):
        sparse, dense = (lhs, rhs) if sparse_first else (rhs, lhs)
        if _result_shape(name, lhs, rhs, broadcast) != sparse.shape:
            return NotImplemented  # the sparse operand is broadcast: dense fallback
        return _sparse_dense_mul(sparse, dense, fn)
    return kernel


_csr_dns_quotient = _mixed_mul("broadcast_div", True, True, _div)


def _csr_dns_div(lhs, rhs):
    out = _csr_dns_quotient(lhs, rhs)
    if out is NotImplemented or lhs.shape != rhs.shape:  # a vector: MXNet's stored-only rule
        return out
    nan_keys = zero_quotient_keys(lhs, rhs._t)  # 0 / 0 at positions lhs does not store
    if nan_keys is None:
        return out
    if not out._data.dtype.is_floating_point:
        _div(lhs._data.new_zeros(1), lhs._data.new_zeros(1))  # raises, as the dense division
    keys = torch.cat([csr_keys(out), nan_keys])
    values = torch.cat([out._data, out._data.new_full((nan_keys.numel(),), float("nan"))])
    order = torch.argsort(keys)
    return csr_from_keys(keys[order], values[order], lhs.shape)


def _densified(fn):
    """Kernel for rows whose result is dense because one input is dense anyway."""
    def kernel(lhs, rhs):
        return NDArray(fn(to_dense_tensor(lhs), to_dense_tensor(rhs)))
    return kernel


_dense_div = _densified(elemwise_div.fn)  # the definition checks the shapes

# elementwise add/sub: sparse+sparse keeps the type, anything with a dense input is dense
for _op, _sign, _broadcast in ((elemwise_add, 1.0, False), (elemwise_sub, -1.0, False),
                               (broadcast_add, 1.0, True), (broadcast_sub, -1.0, True)):
    rule(_op, CSR, CSR, out=CSR)(_sparse_add(_op.name, _sign, _broadcast))
    rule(_op, ROW_SPARSE, ROW_SPARSE, out=ROW_SPARSE)(_sparse_add(_op.name, _sign, _broadcast))
    for _sparse in (CSR, ROW_SPARSE):
        rule(_op, _sparse, DEFAULT, out=DEFAULT)(_mixed_add(_op.name, _sign, _broadcast, True))
        rule(_op, DEFAULT, _sparse, out=DEFAULT)(_mixed_add(_op.name, _sign, _broadcast, False))

# elementwise multiply: a sparse operand keeps its type (zeros stay zeros)
for _op in (elemwise_mul, broadcast_mul):
    _broadcast = _op is broadcast_mul
    rule(_op, CSR, CSR, out=CSR)(_sparse_sparse_mul(_op.name, _broadcast))
    rule(_op, ROW_SPARSE, ROW_SPARSE, out=ROW_SPARSE)(_sparse_sparse_mul(_op.name, _broadcast))
    for _sparse in (CSR, ROW_SPARSE):
        rule(_op, _sparse, DEFAULT, out=_sparse)(_mixed_mul(_op.name, _broadcast, True))
        rule(_op, DEFAULT, _sparse, out=_sparse)(_mixed_mul(_op.name, _broadcast, False))

# elementwise divide: a CSR numerator over a dense row or column vector stays CSR and
# divides the stored values only (MXNet's csr / vector); over a dense denominator of its
# shape (MXNet 1.9.1 raises) it stays CSR and also stores the NaNs of 0 / 0 and 0 / NaN
rule(broadcast_div, CSR, DEFAULT, out=CSR)(_csr_dns_div)
for _a, _b in ((CSR, DEFAULT), (DEFAULT, CSR), (ROW_SPARSE, DEFAULT), (DEFAULT, ROW_SPARSE),
               (ROW_SPARSE, ROW_SPARSE)):
    rule(elemwise_div, _a, _b, out=DEFAULT)(_dense_div)


# elementwise: inputs and output have one shape (symbolic inference runs it both ways)
for _op in (elemwise_add, elemwise_sub, elemwise_mul, elemwise_div, add_n):
    _op.same_shape = True

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

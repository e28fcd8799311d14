"""Array-with-scalar operators (``x * 2``, ``x + 1``, ``x > 0`` ...).

A sparse input keeps its storage type when the operation maps zero to zero for
the given scalar (``x * s``, ``x / s`` with ``s != 0``, ``x + 0``, ``x ** 2``,
``x > 0``, ``maximum(x, 0)``...). ``x + s`` and ``x - s`` with ``s != 0`` give a
dense result through a kernel that fills ``s`` and adds the stored values (as
MXNet). Every other case falls back to dense.

>>> import sparsenet as mx
>>> r = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2))
>>> (r * 2).stype, (r + 1).stype
('row_sparse', 'default')
>>> (r + 1).asnumpy()
array([[1., 1.],
       [2., 3.],
       [1., 1.]], dtype=float32)
"""
import torch

from ..ndarray.ndarray import NDArray
from .kernels import scatter_add_dense, values_map
from .registry import CSR, DEFAULT, ROW_SPARSE, defop, rule

__all__ = ["plus_scalar", "minus_scalar", "rminus_scalar", "mul_scalar", "div_scalar",
           "rdiv_scalar", "mod_scalar", "rmod_scalar", "power_scalar", "rpower_scalar",
           "maximum_scalar", "minimum_scalar", "equal_scalar", "not_equal_scalar",
           "greater_scalar", "greater_equal_scalar", "lesser_scalar", "lesser_equal_scalar",
           "hypot_scalar", "logical_and_scalar", "logical_or_scalar", "logical_xor_scalar",
           "SCALAR_OPS"]


def _keep(data, out):
    """Arithmetic with a Python scalar keeps the array's dtype (as MXNet)."""
    return out if out.dtype == data.dtype else out.to(data.dtype)


def _cmp(data, out):
    return out.to(data.dtype)


@defop(name="_plus_scalar")
def plus_scalar(data, *, scalar=0.0):
    """``data + scalar``.

    >>> import sparsenet as mx
    >>> mx.nd.ones((2,)).__add__(1).asnumpy()
    array([2., 2.], dtype=float32)
    """
    return _keep(data, data + scalar)


@defop(name="_minus_scalar")
def minus_scalar(data, *, scalar=0.0):
    """``data - scalar``.

    >>> import sparsenet as mx
    >>> (mx.nd.ones((2,)) - 3).asnumpy()
    array([-2., -2.], dtype=float32)
    """
    return _keep(data, data - scalar)


@defop(name="_rminus_scalar")
def rminus_scalar(data, *, scalar=0.0):
    """``scalar - data``.

    >>> import sparsenet as mx
    >>> (3 - mx.nd.ones((2,))).asnumpy()
    array([2., 2.], dtype=float32)
    """
    return _keep(data, scalar - data)


@defop(name="_mul_scalar")
def mul_scalar(data, *, scalar=1.0):
    """``data * scalar``.

    >>> import sparsenet as mx
    >>> (mx.nd.ones((2,)) * 4).asnumpy()
    array([4., 4.], dtype=float32)
    """
    return _keep(data, data * scalar)


@defop(name="_div_scalar")
def div_scalar(data, *, scalar=1.0):
    """``data / scalar``.

    >>> import sparsenet as mx
    >>> (mx.nd.ones((2,)) / 4).asnumpy()
    array([0.25, 0.25], dtype=float32)
    """
    if not data.dtype.is_floating_point:
        return torch.div(data, scalar, rounding_mode="trunc").to(data.dtype)
    return _keep(data, data / scalar)


@defop(name="_rdiv_scalar")
def rdiv_scalar(data, *, scalar=1.0):
    """``scalar / data``.

    >>> import sparsenet as mx
    >>> (1 / mx.nd.array([4.0])).asnumpy()
    array([0.25], dtype=float32)
    """
    if not data.dtype.is_floating_point:
        return torch.div(scalar, data, rounding_mode="trunc").to(data.dtype)
    return _keep(data, scalar / data)


@defop(name="_mod_scalar")
def mod_scalar(data, *, scalar=1.0):
    """``data % scalar`` (sign of the divisor, as NumPy).

    >>> import sparsenet as mx
    >>> (mx.nd.array([5.0, -1.0]) % 3).asnumpy()
    array([2., 2.], dtype=float32)
    """
    return _keep(data, torch.remainder(data, scalar))


@defop(name="_rmod_scalar")
def rmod_scalar(data, *, scalar=1.0):
    """``scalar % data``.

    >>> import sparsenet as mx
    >>> (7 % mx.nd.array([4.0])).asnumpy()
    array([3.], dtype=float32)
    """
    return _keep(data, torch.remainder(torch.full_like(data, scalar), data))


@defop(name="_power_scalar")
def power_scalar(data, *, scalar=1.0):
    """``data ** scalar``.

    >>> import sparsenet as mx
    >>> (mx.nd.array([3.0]) ** 2).asnumpy()
    array([9.], dtype=float32)
    """
    return _keep(data, torch.pow(data, scalar))


@defop(name="_rpower_scalar")
def rpower_scalar(data, *, scalar=1.0):
    """``scalar ** data``.

    >>> import sparsenet as mx
    >>> (2 ** mx.nd.array([3.0])).asnumpy()
    array([8.], dtype=float32)
    """
    return _keep(data, torch.pow(scalar, data))


@defop(name="_maximum_scalar")
def maximum_scalar(data, *, scalar=0.0):
    """``max(data, scalar)``.

    >>> import sparsenet as mx
    >>> mx.nd.maximum(mx.nd.array([-1.0, 2.0]), 0).asnumpy()
    array([0., 2.], dtype=float32)
    """
    return _keep(data, torch.clamp(data, min=scalar))


@defop(name="_minimum_scalar")
def minimum_scalar(data, *, scalar=0.0):
    """``min(data, scalar)``.

    >>> import sparsenet as mx
    >>> mx.nd.minimum(mx.nd.array([-1.0, 2.0]), 0).asnumpy()
    array([-1.,  0.], dtype=float32)
    """
    return _keep(data, torch.clamp(data, max=scalar))


@defop(name="_equal_scalar")
def equal_scalar(data, *, scalar=0.0):
    """``1`` where ``data == scalar`` else ``0``.

    >>> import sparsenet as mx
    >>> (mx.nd.array([1.0, 2.0]) == 2).asnumpy()
    array([0., 1.], dtype=float32)
    """
    return _cmp(data, torch.eq(data, scalar))  # (== with a non-number gives a bool)


@defop(name="_not_equal_scalar")
def not_equal_scalar(data, *, scalar=0.0):
    """``1`` where ``data != scalar`` else ``0``.

    >>> import sparsenet as mx
    >>> (mx.nd.array([1.0, 2.0]) != 2).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return _cmp(data, torch.ne(data, scalar))


@defop(name="_greater_scalar")
def greater_scalar(data, *, scalar=0.0):
    """``1`` where ``data > scalar`` else ``0``.

    >>> import sparsenet as mx
    >>> (mx.nd.array([1.0, 2.0]) > 1).asnumpy()
    array([0., 1.], dtype=float32)
    """
    return _cmp(data, data > scalar)


@defop(name="_greater_equal_scalar")
def greater_equal_scalar(data, *, scalar=0.0):
    """``1`` where ``data >= scalar`` else ``0``.

    >>> import sparsenet as mx
    >>> (mx.nd.array([1.0, 2.0]) >= 2).asnumpy()
    array([0., 1.], dtype=float32)
    """
    return _cmp(data, data >= scalar)


@defop(name="_lesser_scalar")
def lesser_scalar(data, *, scalar=0.0):
    """``1`` where ``data < scalar`` else ``0``.

    >>> import sparsenet as mx
    >>> (mx.nd.array([1.0, 2.0]) < 2).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return _cmp(data, data < scalar)


@defop(name="_lesser_equal_scalar")
def lesser_equal_scalar(data, *, scalar=0.0):
    """``1`` where ``data <= scalar`` else ``0``.

    >>> import sparsenet as mx
    >>> (mx.nd.array([1.0, 2.0]) <= 1).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return _cmp(data, data <= scalar)


@defop(name="_hypot_scalar")
def hypot_scalar(data, *, scalar=0.0):
    """``sqrt(data**2 + scalar**2)``.

    >>> import sparsenet as mx
    >>> mx.nd.hypot(mx.nd.array([3.0, 0.0]), 4).asnumpy()
    array([5., 4.], dtype=float32)
    """
    return _keep(data, torch.hypot(data, torch.full_like(data, scalar)))


@defop(name="_logical_and_scalar")
def logical_and_scalar(data, *, scalar=0.0):
    """``1`` where both ``data`` and ``scalar`` are non-zero, else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.logical_and(mx.nd.array([0.0, 2.0]), 3).asnumpy()
    array([0., 1.], dtype=float32)
    """
    return _cmp(data, (data != 0) & bool(scalar))


@defop(name="_logical_or_scalar")
def logical_or_scalar(data, *, scalar=0.0):
    """``1`` where ``data`` or ``scalar`` is non-zero, else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.logical_or(mx.nd.array([0.0, 2.0]), 0).asnumpy()
    array([0., 1.], dtype=float32)
    """
    return _cmp(data, (data != 0) | bool(scalar))


@defop(name="_logical_xor_scalar")
def logical_xor_scalar(data, *, scalar=0.0):
    """``1`` where exactly one of ``data`` and ``scalar`` is non-zero, else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.logical_xor(mx.nd.array([0.0, 2.0]), 3).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return _cmp(data, (data != 0) ^ bool(scalar))


SCALAR_OPS = {
    "plus_scalar": plus_scalar, "minus_scalar": minus_scalar, "rminus_scalar": rminus_scalar,
    "mul_scalar": mul_scalar, "div_scalar": div_scalar, "rdiv_scalar": rdiv_scalar,
    "mod_scalar": mod_scalar, "rmod_scalar": rmod_scalar, "power_scalar": power_scalar,
    "rpower_scalar": rpower_scalar, "maximum_scalar": maximum_scalar,
    "minimum_scalar": minimum_scalar, "equal_scalar": equal_scalar,
    "not_equal_scalar": not_equal_scalar, "greater_scalar": greater_scalar,
    "greater_equal_scalar": greater_equal_scalar, "lesser_scalar": lesser_scalar,
    "lesser_equal_scalar": lesser_equal_scalar, "hypot_scalar": hypot_scalar,
    "logical_and_scalar": logical_and_scalar, "logical_or_scalar": logical_or_scalar,
    "logical_xor_scalar": logical_xor_scalar,
}


# ---------------------------------------------------------------------- rule rows
def _maps_zero_to_zero(op):
    def when(p):
        return bool(op.fn(torch.zeros(1, dtype=torch.float64), **p)[0] == 0)
    when.__doc__ = "f(0) == 0 for this scalar"
    return when


def _on_values(op):
    def kernel(data, **params):
        return values_map(data, lambda v: op.fn(v, **params))
    kernel.__name__ = f"_{op.name}_on_values"
    return kernel


def _nonzero_scalar(p):
    """scalar != 0"""
    return p["scalar"] != 0


def _fill_plus(sign):
    def kernel(data, *, scalar):
        base = torch.full(data.shape, sign * scalar, dtype=data._data.dtype, device=data.device)
        return NDArray(scatter_add_dense(data, base))
    return kernel


# s / x, s % x and s ** x never map 0 to 0: those operators have no sparse row
for _op in (o for o in SCALAR_OPS.values() if o not in (rdiv_scalar, rmod_scalar, rpower_scalar)):
    _when = _maps_zero_to_zero(_op)
    rule(_op, CSR, out=CSR, when=_when)(_on_values(_op))
    rule(_op, ROW_SPARSE, out=ROW_SPARSE, when=_when)(_on_values(_op))
for _op, _sign in ((plus_scalar, 1.0), (minus_scalar, -1.0)):
    rule(_op, CSR, out=DEFAULT, when=_nonzero_scalar)(_fill_plus(_sign))
    rule(_op, ROW_SPARSE, out=DEFAULT, when=_nonzero_scalar)(_fill_plus(_sign))

# elementwise: input and output have one shape (symbolic inference runs it both ways)
for _op in SCALAR_OPS.values():
    _op.same_shape = True

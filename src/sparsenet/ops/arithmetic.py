"""Binary arithmetic on arrays and scalars: ``mx.nd.add``, ``subtract``, ... and the Python operators.

Equal shapes use the ``elemwise_*`` operators, other shapes ``broadcast_*``, and a
scalar operand the ``*_scalar`` operator, so ``a * b`` and the named operators
always follow the same storage-type rows (:mod:`sparsenet.ops.binary`,
:mod:`sparsenet.ops.scalar`).

>>> import sparsenet as mx
>>> mx.nd.multiply(mx.nd.ones((2, 2)), 3).asnumpy()
array([[3., 3.],
       [3., 3.]], dtype=float32)
"""
import math
import numbers
import operator

import numpy as np
import torch

from ..base import InvalidArgumentTypeError
from ..ndarray.ndarray import NDArray, copy_into
from . import minmax as _minmax
from . import scalar as _scalar
from .binary import (broadcast_add, broadcast_div, broadcast_equal, broadcast_greater,
                     broadcast_greater_equal, broadcast_hypot, broadcast_lesser,
                     broadcast_lesser_equal, broadcast_logical_and, broadcast_logical_or,
                     broadcast_logical_xor, broadcast_maximum, broadcast_minimum, broadcast_mod,
                     broadcast_mul, broadcast_not_equal, broadcast_power, broadcast_sub,
                     elemwise_add, elemwise_div, elemwise_mul, elemwise_sub)
from .kernels import scatter_add_dense
from .registry import DEFAULT

__all__ = ["add", "subtract", "multiply", "divide", "modulo", "power", "maximum", "minimum",
           "equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
           "logical_and", "logical_or", "logical_xor", "hypot", "binary", "add_into"]

_ARRAY_OPS = {
    "add": (elemwise_add, broadcast_add), "subtract": (elemwise_sub, broadcast_sub),
    "multiply": (elemwise_mul, broadcast_mul), "divide": (elemwise_div, broadcast_div),
    "modulo": (broadcast_mod, broadcast_mod), "power": (broadcast_power, broadcast_power),
    "maximum": (_minmax.maximum, broadcast_maximum),
    "minimum": (_minmax.minimum, broadcast_minimum),
    "equal": (broadcast_equal, broadcast_equal), "not_equal": (broadcast_not_equal,) * 2,
    "greater": (broadcast_greater,) * 2, "greater_equal": (broadcast_greater_equal,) * 2,
    "lesser": (broadcast_lesser,) * 2, "lesser_equal": (broadcast_lesser_equal,) * 2,
    "logical_and": (broadcast_logical_and,) * 2, "logical_or": (broadcast_logical_or,) * 2,
    "logical_xor": (broadcast_logical_xor,) * 2, "hypot": (_minmax.hypot, broadcast_hypot),
}
# scalar on the left of a non-commutative operator
_REVERSED_SCALAR = {"subtract": "rminus_scalar", "divide": "rdiv_scalar", "modulo": "rmod_scalar",
                    "power": "rpower_scalar", "greater": "lesser_scalar",
                    "greater_equal": "lesser_equal_scalar", "lesser": "greater_scalar",
                    "lesser_equal": "greater_equal_scalar"}
_SCALAR_FOR = {"add": "plus_scalar", "subtract": "minus_scalar", "multiply": "mul_scalar",
               "divide": "div_scalar", "modulo": "mod_scalar", "power": "power_scalar",
               "maximum": "maximum_scalar", "minimum": "minimum_scalar",
               "equal": "equal_scalar", "not_equal": "not_equal_scalar",
               "greater": "greater_scalar", "greater_equal": "greater_equal_scalar",
               "lesser": "lesser_scalar", "lesser_equal": "lesser_equal_scalar",
               "hypot": "hypot_scalar", "logical_and": "logical_and_scalar",
               "logical_or": "logical_or_scalar", "logical_xor": "logical_xor_scalar"}


def _py_maximum(x, y):
    return x if x > y else y


def _py_minimum(x, y):
    return x if x < y else y


def _py_flag(test):
    def flag(x, y):
        return 1 if test(x, y) else 0
    return flag


# both operands plain numbers: a Python number, as MXNet returns (``nd.power(0.9, 3)``
# is 0.729, ``nd.maximum(2.0, 3)`` is 3, ``nd.equal(2, 2)`` is 1)
_NUMBER_FNS = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "divide": operator.truediv, "modulo": operator.mod, "power": operator.pow,
    "maximum": _py_maximum, "minimum": _py_minimum, "hypot": math.hypot,
    "equal": _py_flag(operator.eq), "not_equal": _py_flag(operator.ne),
    "greater": _py_flag(operator.gt), "greater_equal": _py_flag(operator.ge),
    "lesser": _py_flag(operator.lt), "lesser_equal": _py_flag(operator.le),
    "logical_and": _py_flag(lambda x, y: bool(x) and bool(y)),
    "logical_or": _py_flag(lambda x, y: bool(x) or bool(y)),
    "logical_xor": _py_flag(lambda x, y: bool(x) != bool(y)),
}


def _is_scalar(x):
    return isinstance(x, (numbers.Number, np.generic))


def binary(lhs, rhs, name, scalar_name=None, reverse=False):
    """Apply binary operator ``name`` ('add', 'multiply', ...) to arrays and/or scalars.

    Equal shapes use ``elemwise_*`` rows, other shapes ``broadcast_*``; a scalar
    operand uses the ``*_scalar`` operator. With ``reverse`` the operands swap
    (``rhs op lhs``), as for ``__rsub__``.
    """
    if isinstance(rhs, NDArray):  # the common case first
        if reverse:
            lhs, rhs = rhs, lhs
        same, bcast = _ARRAY_OPS[name]
        return (same if lhs.shape == rhs.shape else bcast)(lhs, rhs)
    if _is_scalar(rhs):
        if _is_scalar(lhs):
            raise InvalidArgumentTypeError(f"{name}: at least one operand must be an NDArray")
        if reverse:
            sname = scalar_name if scalar_name else _REVERSED_SCALAR.get(name, _SCALAR_FOR[name])
        else:
            sname = scalar_name or _SCALAR_FOR[name]
        return _scalar.SCALAR_OPS[sname](lhs, scalar=rhs)
    if isinstance(rhs, (np.ndarray, list, tuple)):
        rhs = NDArray(torch.as_tensor(np.asarray(rhs), device=lhs.device))
    if not isinstance(rhs, NDArray):
        return NotImplemented
    if reverse:
        lhs, rhs = rhs, lhs
    same, bcast = _ARRAY_OPS[name]
    return (same if lhs.shape == rhs.shape else bcast)(lhs, rhs)


def add(lhs, rhs):
    """``lhs + rhs`` for arrays or scalars, with broadcasting.

    >>> import sparsenet as mx
    >>> mx.nd.add(mx.nd.ones((2,)), 2).asnumpy()
    array([3., 3.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "add")


def subtract(lhs, rhs):
    """``lhs - rhs`` for arrays or scalars, with broadcasting.

    >>> import sparsenet as mx
    >>> mx.nd.subtract(5, mx.nd.ones((2,))).asnumpy()
    array([4., 4.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "subtract")


def multiply(lhs, rhs):
    """``lhs * rhs`` for arrays or scalars, with broadcasting.

    >>> import sparsenet as mx
    >>> mx.nd.multiply(mx.nd.ones((2,)), mx.nd.array([3.0, 4.0])).asnumpy()
    array([3., 4.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "multiply")


def divide(lhs, rhs):
    """``lhs / rhs`` for arrays or scalars, with broadcasting.

    >>> import sparsenet as mx
    >>> mx.nd.divide(mx.nd.array([3.0]), 2).asnumpy()
    array([1.5], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "divide")


def modulo(lhs, rhs):
    """``lhs % rhs`` for arrays or scalars.

    >>> import sparsenet as mx
    >>> mx.nd.modulo(mx.nd.array([7.0]), 4).asnumpy()
    array([3.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "modulo")


def power(base, exp):
    """``base ** exp`` for arrays or scalars (two numbers give a Python number, as MXNet).

    >>> import sparsenet as mx
    >>> mx.nd.power(mx.nd.array([3.0]), 2).asnumpy()
    array([9.], dtype=float32)
    >>> mx.nd.power(2, 3)
    8
    """
    return _dispatch2(base, exp, "power")


def maximum(lhs, rhs):
    """Elementwise maximum of arrays or scalars (of two numbers: the larger one, as MXNet).

    >>> import sparsenet as mx
    >>> mx.nd.maximum(mx.nd.array([1.0, 4.0]), 2).asnumpy()
    array([2., 4.], dtype=float32)
    >>> mx.nd.maximum(2.0, 3)
    3
    """
    return _dispatch2(lhs, rhs, "maximum")


def minimum(lhs, rhs):
    """Elementwise minimum of arrays or scalars.

    >>> import sparsenet as mx
    >>> mx.nd.minimum(mx.nd.array([1.0, 4.0]), 2).asnumpy()
    array([1., 2.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "minimum")


def equal(lhs, rhs):
    """``1`` where equal, else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.equal(mx.nd.array([1.0, 2.0]), 2).asnumpy()
    array([0., 1.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "equal")


def not_equal(lhs, rhs):
    """``1`` where not equal, else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.not_equal(mx.nd.array([1.0, 2.0]), 2).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "not_equal")


def greater(lhs, rhs):
    """``1`` where ``lhs > rhs``, else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.greater(mx.nd.array([1.0, 3.0]), 2).asnumpy()
    array([0., 1.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "greater")


def greater_equal(lhs, rhs):
    """``1`` where ``lhs >= rhs``, else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.greater_equal(mx.nd.array([1.0, 2.0]), 2).asnumpy()
    array([0., 1.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "greater_equal")


def lesser(lhs, rhs):
    """``1`` where ``lhs < rhs``, else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.lesser(mx.nd.array([1.0, 3.0]), 2).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "lesser")


def lesser_equal(lhs, rhs):
    """``1`` where ``lhs <= rhs``, else ``0``.

    >>> import sparsenet as mx
    >>> mx.nd.lesser_equal(mx.nd.array([2.0, 3.0]), 2).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "lesser_equal")


def logical_and(lhs, rhs):
    """``1`` where both are non-zero.

    >>> import sparsenet as mx
    >>> mx.nd.logical_and(mx.nd.array([1.0, 0.0]), mx.nd.array([1.0, 1.0])).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "logical_and")


def logical_or(lhs, rhs):
    """``1`` where either is non-zero.

    >>> import sparsenet as mx
    >>> mx.nd.logical_or(mx.nd.array([1.0, 0.0]), mx.nd.array([0.0, 0.0])).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "logical_or")


def logical_xor(lhs, rhs):
    """``1`` where exactly one is non-zero.

    >>> import sparsenet as mx
    >>> mx.nd.logical_xor(mx.nd.array([1.0, 0.0]), mx.nd.array([1.0, 1.0])).asnumpy()
    array([0., 1.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "logical_xor")


def hypot(lhs, rhs):
    """``sqrt(lhs**2 + rhs**2)``.

    >>> import sparsenet as mx
    >>> mx.nd.hypot(mx.nd.array([3.0]), mx.nd.array([4.0])).asnumpy()
    array([5.], dtype=float32)
    """
    return _dispatch2(lhs, rhs, "hypot")


def _dispatch2(lhs, rhs, name):
    if isinstance(lhs, NDArray):
        return binary(lhs, rhs, name)
    if isinstance(rhs, NDArray):
        if _is_scalar(lhs) and name in ("add", "multiply", "maximum", "minimum", "equal",
                                        "not_equal", "hypot", "logical_and", "logical_or",
                                        "logical_xor"):
            return binary(rhs, lhs, name)
        return binary(rhs, lhs, name, reverse=True)
    if _is_scalar(lhs) and _is_scalar(rhs):
        return _NUMBER_FNS[name](lhs, rhs)
    raise InvalidArgumentTypeError(f"{name}: expected at least one NDArray operand, got "
                                   f"{type(lhs).__name__} and {type(rhs).__name__}")


def add_into(dst, src):
    """``dst += src`` in place, keeping ``dst``'s storage type (used for ``grad_req='add'``)."""
    if dst.stype == DEFAULT and src.stype != DEFAULT:
        with torch.no_grad():
            dst._t.copy_(scatter_add_dense(src, dst._t))
        return dst
    if dst.stype == DEFAULT:
        with torch.no_grad():
            dst._t.add_(src._t)
        return dst
    copy_into(elemwise_add(dst, src), dst)
    return dst

"""The Python operators of the arrays: ``a + b``, ``2 * a``, ``-a``, ``a == b``, ``a += b``.

A binary operator forwards to :func:`sparsenet.ops.arithmetic.binary`, which picks
the ``elemwise_*`` operator for equal shapes, ``broadcast_*`` for others and the
``*_scalar`` operator for a number, so ``a * b`` follows the same storage-type rows
as ``mx.nd.elemwise_mul(a, b)``. In-place operators compute ``a op b`` and copy the
result into ``a``, keeping ``a``'s storage type (as MXNet does).

>>> import sparsenet as mx
>>> a = mx.nd.array([1.0, 2.0])
>>> (1 - a).asnumpy(), (a ** 2).asnumpy(), (a >= 2).asnumpy()
(array([ 0., -1.], dtype=float32), array([1., 4.], dtype=float32), array([0., 1.], dtype=float32))
>>> r = mx.nd.array([[0.0, 1.0], [0.0, 0.0]]).tostype('row_sparse')
>>> r *= 3
>>> r.stype, r.asnumpy().tolist()
('row_sparse', [[0.0, 3.0], [0.0, 0.0]])
"""
from ...ndarray.ndarray import copy_into
from ..arithmetic import binary
from ..unary import abs as _abs
from ..unary import negative as _negative

__all__ = ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
           "__rtruediv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__neg__", "__abs__",
           "__eq__", "__ne__", "__gt__", "__ge__", "__lt__", "__le__", "__iadd__", "__isub__",
           "__imul__", "__itruediv__", "__imod__"]


def __add__(self, other):
    """``self + other`` (:func:`sparsenet.nd.add`)."""
    return binary(self, other, "add", "plus_scalar")


def __radd__(self, other):
    """``other + self``."""
    return binary(self, other, "add", "plus_scalar")


def __sub__(self, other):
    """``self - other`` (:func:`sparsenet.nd.subtract`)."""
    return binary(self, other, "subtract", "minus_scalar")


def __rsub__(self, other):
    """``other - self``."""
    return binary(self, other, "subtract", "rminus_scalar", reverse=True)


def __mul__(self, other):
    """``self * other`` (:func:`sparsenet.nd.multiply`)."""
    return binary(self, other, "multiply", "mul_scalar")


def __rmul__(self, other):
    """``other * self``."""
    return binary(self, other, "multiply", "mul_scalar")


def __truediv__(self, other):
    """``self / other`` (:func:`sparsenet.nd.divide`)."""
    return binary(self, other, "divide", "div_scalar")


def __rtruediv__(self, other):
    """``other / self``."""
    return binary(self, other, "divide", "rdiv_scalar", reverse=True)


def __mod__(self, other):
    """``self % other`` (:func:`sparsenet.nd.modulo`)."""
    return binary(self, other, "modulo", "mod_scalar")


def __rmod__(self, other):
    """``other % self``."""
    return binary(self, other, "modulo", "rmod_scalar", reverse=True)


def __pow__(self, other):
    """``self ** other`` (:func:`sparsenet.nd.power`)."""
    return binary(self, other, "power", "power_scalar")


def __rpow__(self, other):
    """``other ** self``."""
    return binary(self, other, "power", "rpower_scalar", reverse=True)


def __neg__(self):
    """``-self`` (:func:`sparsenet.nd.negative`)."""
    return _negative(self)


def __abs__(self):
    """``abs(self)`` (:func:`sparsenet.nd.abs`)."""
    return _abs(self)


def __eq__(self, other):
    """``self == other``: 1 where equal, else 0 (:func:`sparsenet.nd.equal`)."""
    return binary(self, other, "equal", "equal_scalar")


def __ne__(self, other):
    """``self != other`` (:func:`sparsenet.nd.not_equal`)."""
    return binary(self, other, "not_equal", "not_equal_scalar")


def __gt__(self, other):
    """``self > other`` (:func:`sparsenet.nd.greater`)."""
    return binary(self, other, "greater", "greater_scalar")


def __ge__(self, other):
    """``self >= other`` (:func:`sparsenet.nd.greater_equal`)."""
    return binary(self, other, "greater_equal", "greater_equal_scalar")


def __lt__(self, other):
    """``self < other`` (:func:`sparsenet.nd.lesser`)."""
    return binary(self, other, "lesser", "lesser_scalar")


def __le__(self, other):
    """``self <= other`` (:func:`sparsenet.nd.lesser_equal`)."""
    return binary(self, other, "lesser_equal", "lesser_equal_scalar")


def __iadd__(self, other):
    """``self += other``: ``(self + other)`` copied into ``self`` (storage type kept)."""
    copy_into(binary(self, other, "add", "plus_scalar"), self)
    return self


def __isub__(self, other):
    """``self -= other`` (storage type kept)."""
    copy_into(binary(self, other, "subtract", "minus_scalar"), self)
    return self


def __imul__(self, other):
    """``self *= other`` (storage type kept)."""
    copy_into(binary(self, other, "multiply", "mul_scalar"), self)
    return self


def __itruediv__(self, other):
    """``self /= other`` (storage type kept)."""
    copy_into(binary(self, other, "divide", "div_scalar"), self)
    return self


def __imod__(self, other):
    """``self %= other`` (storage type kept)."""
    copy_into(binary(self, other, "modulo", "mod_scalar"), self)
    return self

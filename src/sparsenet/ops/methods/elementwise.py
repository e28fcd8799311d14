"""Elementwise methods of the arrays: ``x.exp()`` is ``mx.nd.exp(x)``, and so on.

Each method forwards to its operator in :mod:`sparsenet.ops.unary` (or
:mod:`sparsenet.ops.softmax`), so the operator's storage-type rows apply: a
row_sparse ``x.sqrt()`` stays row_sparse, a CSR ``x.exp()`` falls back to dense.

>>> import sparsenet as mx
>>> x = mx.nd.array([[0.0, 1.0, 2.0]])
>>> x.degrees().asnumpy()
array([[  0.     ,  57.29578, 114.59156]], dtype=float32)
>>> x.tostype('row_sparse').sqrt().stype
'row_sparse'
"""
from .. import softmax as _softmax
from .. import unary

__all__ = ["abs", "sign", "sqrt", "rsqrt", "square", "exp", "expm1", "log", "log1p", "log10",
           "log2", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
           "arcsinh", "arccosh", "arctanh", "degrees", "radians", "sigmoid", "relu", "round",
           "rint", "fix", "floor", "ceil", "trunc", "cbrt", "rcbrt", "reciprocal", "zeros_like",
           "ones_like", "clip", "softmax", "log_softmax", "softmin"]


def abs(self, *args, **kwargs):
    """Absolute value (``mx.nd.abs(self, ...)``)."""
    return unary.abs(self, *args, **kwargs)


def sign(self, *args, **kwargs):
    """Sign: -1, 0 or 1 (``mx.nd.sign(self, ...)``)."""
    return unary.sign(self, *args, **kwargs)


def sqrt(self, *args, **kwargs):
    """Square root (``mx.nd.sqrt(self, ...)``)."""
    return unary.sqrt(self, *args, **kwargs)


def rsqrt(self, *args, **kwargs):
    """``1 / sqrt(self)`` (``mx.nd.rsqrt(self, ...)``)."""
    return unary.rsqrt(self, *args, **kwargs)


def square(self, *args, **kwargs):
    """Square (``mx.nd.square(self, ...)``)."""
    return unary.square(self, *args, **kwargs)


def exp(self, *args, **kwargs):
    """Exponential (``mx.nd.exp(self, ...)``)."""
    return unary.exp(self, *args, **kwargs)


def expm1(self, *args, **kwargs):
    """``exp(self) - 1``, accurate near 0 (``mx.nd.expm1(self, ...)``)."""
    return unary.expm1(self, *args, **kwargs)


def log(self, *args, **kwargs):
    """Natural logarithm (``mx.nd.log(self, ...)``)."""
    return unary.log(self, *args, **kwargs)


def log1p(self, *args, **kwargs):
    """``log(1 + self)``, accurate near 0 (``mx.nd.log1p(self, ...)``)."""
    return unary.log1p(self, *args, **kwargs)


def log10(self, *args, **kwargs):
    """Base-10 logarithm (``mx.nd.log10(self, ...)``)."""
    return unary.log10(self, *args, **kwargs)


def log2(self, *args, **kwargs):
    """Base-2 logarithm (``mx.nd.log2(self, ...)``)."""
    return unary.log2(self, *args, **kwargs)


def sin(self, *args, **kwargs):
    """Sine (``mx.nd.sin(self, ...)``)."""
    return unary.sin(self, *args, **kwargs)


def cos(self, *args, **kwargs):
    """Cosine (``mx.nd.cos(self, ...)``)."""
    return unary.cos(self, *args, **kwargs)


def tan(self, *args, **kwargs):
    """Tangent (``mx.nd.tan(self, ...)``)."""
    return unary.tan(self, *args, **kwargs)


def arcsin(self, *args, **kwargs):
    """Inverse sine (``mx.nd.arcsin(self, ...)``)."""
    return unary.arcsin(self, *args, **kwargs)


def arccos(self, *args, **kwargs):
    """Inverse cosine (``mx.nd.arccos(self, ...)``)."""
    return unary.arccos(self, *args, **kwargs)


def arctan(self, *args, **kwargs):
    """Inverse tangent (``mx.nd.arctan(self, ...)``)."""
    return unary.arctan(self, *args, **kwargs)


def sinh(self, *args, **kwargs):
    """Hyperbolic sine (``mx.nd.sinh(self, ...)``)."""
    return unary.sinh(self, *args, **kwargs)


def cosh(self, *args, **kwargs):
    """Hyperbolic cosine (``mx.nd.cosh(self, ...)``)."""
    return unary.cosh(self, *args, **kwargs)


def tanh(self, *args, **kwargs):
    """Hyperbolic tangent (``mx.nd.tanh(self, ...)``)."""
    return unary.tanh(self, *args, **kwargs)


def arcsinh(self, *args, **kwargs):
    """Inverse hyperbolic sine (``mx.nd.arcsinh(self, ...)``)."""
    return unary.arcsinh(self, *args, **kwargs)


def arccosh(self, *args, **kwargs):
    """Inverse hyperbolic cosine (``mx.nd.arccosh(self, ...)``)."""
    return unary.arccosh(self, *args, **kwargs)


def arctanh(self, *args, **kwargs):
    """Inverse hyperbolic tangent (``mx.nd.arctanh(self, ...)``)."""
    return unary.arctanh(self, *args, **kwargs)


def degrees(self, *args, **kwargs):
    """Radians to degrees (``mx.nd.degrees(self, ...)``)."""
    return unary.degrees(self, *args, **kwargs)


def radians(self, *args, **kwargs):
    """Degrees to radians (``mx.nd.radians(self, ...)``)."""
    return unary.radians(self, *args, **kwargs)


def sigmoid(self, *args, **kwargs):
    """Logistic sigmoid ``1 / (1 + exp(-self))`` (``mx.nd.sigmoid(self, ...)``)."""
    return unary.sigmoid(self, *args, **kwargs)


def relu(self, *args, **kwargs):
    """Rectified linear unit ``max(self, 0)`` (``mx.nd.relu(self, ...)``)."""
    return unary.relu(self, *args, **kwargs)


def round(self, *args, **kwargs):
    """Round half away from zero (``mx.nd.round(self, ...)``)."""
    return unary.round(self, *args, **kwargs)


def rint(self, *args, **kwargs):
    """Round to the nearest integer, halves downwards (``mx.nd.rint(self, ...)``)."""
    return unary.rint(self, *args, **kwargs)


def fix(self, *args, **kwargs):
    """Round towards zero (``mx.nd.fix(self, ...)``)."""
    return unary.fix(self, *args, **kwargs)


def floor(self, *args, **kwargs):
    """Round down (``mx.nd.floor(self, ...)``)."""
    return unary.floor(self, *args, **kwargs)


def ceil(self, *args, **kwargs):
    """Round up (``mx.nd.ceil(self, ...)``)."""
    return unary.ceil(self, *args, **kwargs)


def trunc(self, *args, **kwargs):
    """Drop the fractional part (``mx.nd.trunc(self, ...)``)."""
    return unary.trunc(self, *args, **kwargs)


def cbrt(self, *args, **kwargs):
    """Cube root (``mx.nd.cbrt(self, ...)``)."""
    return unary.cbrt(self, *args, **kwargs)


def rcbrt(self, *args, **kwargs):
    """``1 / cbrt(self)`` (``mx.nd.rcbrt(self, ...)``)."""
    return unary.rcbrt(self, *args, **kwargs)


def reciprocal(self, *args, **kwargs):
    """``1 / self`` (``mx.nd.reciprocal(self, ...)``)."""
    return unary.reciprocal(self, *args, **kwargs)


def zeros_like(self, *args, **kwargs):
    """Zeros of the same shape, dtype and storage type (``mx.nd.zeros_like(self, ...)``)."""
    return unary.zeros_like(self, *args, **kwargs)


def ones_like(self, *args, **kwargs):
    """Ones of the same shape and dtype, dense (``mx.nd.ones_like(self, ...)``)."""
    return unary.ones_like(self, *args, **kwargs)


def clip(self, *args, **kwargs):
    """Values limited to ``[a_min, a_max]`` (``mx.nd.clip(self, ...)``)."""
    return unary.clip(self, *args, **kwargs)


def softmax(self, *args, **kwargs):
    """Softmax along an axis (``mx.nd.softmax(self, axis=-1, ...)``)."""
    return _softmax.softmax(self, *args, **kwargs)


def log_softmax(self, *args, **kwargs):
    """Log of the softmax along an axis (``mx.nd.log_softmax(self, axis=-1, ...)``)."""
    return _softmax.log_softmax(self, *args, **kwargs)


def softmin(self, *args, **kwargs):
    """Softmin along an axis (``mx.nd.softmin(self, axis=-1, ...)``)."""
    return _softmax.softmin(self, *args, **kwargs)

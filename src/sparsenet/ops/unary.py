"""Elementwise unary operators.

Zero-preserving operators (``f(0) == 0``) keep the storage type of a CSR or
row_sparse input and apply ``f`` to the stored values only (explicit zeros are
kept). The others have no sparse kernel: a sparse input falls back to dense.
The rule rows are the two tables at the end of this file.

>>> import sparsenet as mx
>>> a = mx.nd.sparse.csr_matrix(([4.0, 9.0], [0, 1], [0, 1, 2]), shape=(2, 2))
>>> mx.nd.sqrt(a).stype
'csr'
>>> mx.nd.sqrt(a).asnumpy()
array([[2., 0.],
       [0., 3.]], dtype=float32)
"""
import math

import torch

from ..base import InvalidArgumentError, torch_dtype
from . import special
from .kernels import empty_csr, empty_rsp, values_map
from .registry import CSR, ROW_SPARSE, defop, rule

__all__ = [
    "abs", "sign", "round", "rint", "ceil", "floor", "trunc", "fix", "square", "sqrt", "cbrt",
    "expm1", "log1p", "sin", "sinh", "tan", "tanh", "arcsin", "arcsinh", "arctan", "arctanh",
    "degrees", "radians", "relu", "negative", "erf", "erfinv", "stop_gradient", "BlockGrad",
    "copy", "identity", "cast", "Cast", "clip",
    "exp", "log", "log10", "log2", "sigmoid", "cos", "cosh", "arccos", "arccosh", "rsqrt",
    "rcbrt", "reciprocal", "gamma", "gammaln", "softsign",
    "logical_not", "isnan", "isinf", "isfinite", "zeros_like", "ones_like",
]


def _float(x):
    return x if x.dtype.is_floating_point else x.to(torch.float32)


# ---------------------------------------------------------------------- zero-preserving
@defop(name="abs")
def abs(data):  # noqa: A001 - MXNet's name
    """Absolute value, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.abs(mx.nd.array([-1.5, 2.0])).asnumpy()
    array([1.5, 2. ], dtype=float32)
    """
    return torch.abs(data)


@defop
def sign(data):
    """Sign (-1, 0 or 1), elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.sign(mx.nd.array([-3.0, 0.0, 2.0])).asnumpy()
    array([-1.,  0.,  1.], dtype=float32)
    """
    return torch.sign(data)


@defop(name="round")
def round(data):  # noqa: A001
    """Round half away from zero, elementwise (MXNet's ``round``).

    >>> import sparsenet as mx
    >>> mx.nd.round(mx.nd.array([-2.5, 0.5, 1.4])).asnumpy()
    array([-3.,  1.,  1.], dtype=float32)
    """
    if not data.dtype.is_floating_point:  # integers are already round (and keep their dtype)
        return data.clone()
    return torch.sign(data) * torch.floor(torch.abs(data) + 0.5)


@defop
def rint(data):
    """Round to the nearest integer, halves downwards, elementwise (MXNet's ``rint``).

    ``n.5`` gives ``n`` and ``-n.5`` gives ``-n-1`` (``round`` gives ``n+1``
    and ``-n-1``), as MXNet documents and computes.

    >>> import sparsenet as mx
    >>> mx.nd.rint(mx.nd.array([0.5, 1.5, 2.4, -0.5])).asnumpy()
    array([ 0.,  1.,  2., -1.], dtype=float32)
    """
    if not data.dtype.is_floating_point:
        return data.clone()
    low = torch.floor(data)
    return torch.where(data - low <= 0.5, low, torch.ceil(data))


@defop
def ceil(data):
    """Ceiling, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.ceil(mx.nd.array([0.2, -0.7])).asnumpy()
    array([ 1., -0.], dtype=float32)
    """
    return torch.ceil(data)


@defop
def floor(data):
    """Floor, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.floor(mx.nd.array([0.7, -0.2])).asnumpy()
    array([ 0., -1.], dtype=float32)
    """
    return torch.floor(data)


@defop
def trunc(data):
    """Truncate towards zero, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.trunc(mx.nd.array([1.7, -1.7])).asnumpy()
    array([ 1., -1.], dtype=float32)
    """
    return torch.trunc(data)


@defop
def fix(data):
    """Round towards zero, elementwise (same as ``trunc``).

    >>> import sparsenet as mx
    >>> mx.nd.fix(mx.nd.array([2.9, -2.9])).asnumpy()
    array([ 2., -2.], dtype=float32)
    """
    return torch.trunc(data)


@defop
def square(data):
    """Square, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.square(mx.nd.array([3.0, -2.0])).asnumpy()
    array([9., 4.], dtype=float32)
    """
    return data * data


@defop
def sqrt(data):
    """Square root, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.sqrt(mx.nd.array([4.0, 9.0])).asnumpy()
    array([2., 3.], dtype=float32)
    """
    return torch.sqrt(data)


@defop
def cbrt(data):
    """Cube root, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.cbrt(mx.nd.array([8.0, -27.0])).asnumpy()
    array([ 2., -3.], dtype=float32)
    """
    return special.cbrt(data)


@defop
def expm1(data):
    """``exp(x) - 1``, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.expm1(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.expm1(data)


@defop
def log1p(data):
    """``log(1 + x)``, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.log1p(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.log1p(data)


@defop
def sin(data):
    """Sine, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.sin(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.sin(data)


@defop
def sinh(data):
    """Hyperbolic sine, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.sinh(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.sinh(data)


@defop
def tan(data):
    """Tangent, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.tan(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.tan(data)


@defop
def tanh(data):
    """Hyperbolic tangent, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.tanh(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.tanh(data)


@defop
def arcsin(data):
    """Inverse sine, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.arcsin(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.asin(data)


@defop
def arcsinh(data):
    """Inverse hyperbolic sine, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.arcsinh(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.asinh(data)


@defop
def arctan(data):
    """Inverse tangent, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.arctan(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.atan(data)


@defop
def arctanh(data):
    """Inverse hyperbolic tangent, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.arctanh(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.atanh(data)


@defop
def degrees(data):
    """Radians to degrees, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.degrees(mx.nd.array([math.pi])).asnumpy()
    array([180.], dtype=float32)
    """
    return data * (180.0 / math.pi)


@defop
def radians(data):
    """Degrees to radians, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.radians(mx.nd.array([180.0])).asnumpy()
    array([3.1415927], dtype=float32)
    """
    return data * (math.pi / 180.0)


@defop
def relu(data):
    """Rectified linear unit ``max(x, 0)``, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.relu(mx.nd.array([-1.0, 2.0])).asnumpy()
    array([0., 2.], dtype=float32)
    """
    return torch.relu(data)


@defop
def negative(data):
    """Numerical negative, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.negative(mx.nd.array([1.0, -2.0])).asnumpy()
    array([-1.,  2.], dtype=float32)
    """
    return torch.neg(data)


@defop
def erf(data):
    """Gauss error function, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.erf(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.erf(data)


@defop
def erfinv(data):
    """Inverse error function, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.erfinv(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.erfinv(data)


@defop(name="BlockGrad")
def stop_gradient(data):
    """Identity whose gradient is zero (``BlockGrad``): a copy cut from autograd.

    >>> import sparsenet as mx
    >>> mx.nd.stop_gradient(mx.nd.array([1.0])).asnumpy()
    array([1.], dtype=float32)
    """
    return data.detach().clone()


BlockGrad = stop_gradient


@defop(name="_copy")
def copy(data):
    """A copy of the input (``identity``).

    >>> import sparsenet as mx
    >>> mx.nd.identity(mx.nd.array([1.0])).asnumpy()
    array([1.], dtype=float32)
    """
    return data.clone()


identity = copy


@defop(name="Cast")
def cast(data, *, dtype="float32"):
    """Convert the elements to ``dtype``; sparse inputs keep their storage type.

    >>> import sparsenet as mx
    >>> mx.nd.cast(mx.nd.array([1.7]), dtype='int32').asnumpy()
    array([1], dtype=int32)
    """
    return data.to(torch_dtype(dtype))


Cast = cast


@defop
def clip(data, *, a_min=None, a_max=None):
    """Clip the values to ``[a_min, a_max]``.

    A sparse input keeps its storage type when ``a_min <= 0 <= a_max`` (zero is
    unchanged); otherwise it falls back to dense.

    >>> import sparsenet as mx
    >>> mx.nd.clip(mx.nd.array([-2.0, 0.5, 3.0]), -1, 1).asnumpy()
    array([-1. ,  0.5,  1. ], dtype=float32)
    """
    if a_min is None and a_max is None:
        raise InvalidArgumentError("clip() needs a_min or a_max")
    return torch.clamp(data, min=a_min, max=a_max)


# ---------------------------------------------------------------------- densifying
@defop
def exp(data):
    """Exponential, elementwise (``exp(0) = 1``: sparse inputs fall back to dense).

    >>> import sparsenet as mx
    >>> mx.nd.exp(mx.nd.array([0.0])).asnumpy()
    array([1.], dtype=float32)
    """
    return torch.exp(_float(data))


@defop
def log(data):
    """Natural logarithm, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.log(mx.nd.array([1.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.log(_float(data))


@defop
def log10(data):
    """Base-10 logarithm, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.log10(mx.nd.array([100.0])).asnumpy()
    array([2.], dtype=float32)
    """
    return torch.log10(_float(data))


@defop
def log2(data):
    """Base-2 logarithm, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.log2(mx.nd.array([8.0])).asnumpy()
    array([3.], dtype=float32)
    """
    return torch.log2(_float(data))


@defop
def sigmoid(data):
    """Logistic sigmoid ``1 / (1 + exp(-x))``, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.sigmoid(mx.nd.array([0.0])).asnumpy()
    array([0.5], dtype=float32)
    """
    return torch.sigmoid(data)


@defop
def cos(data):
    """Cosine, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.cos(mx.nd.array([0.0])).asnumpy()
    array([1.], dtype=float32)
    """
    return torch.cos(data)


@defop
def cosh(data):
    """Hyperbolic cosine, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.cosh(mx.nd.array([0.0])).asnumpy()
    array([1.], dtype=float32)
    """
    return torch.cosh(data)


@defop
def arccos(data):
    """Inverse cosine, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.arccos(mx.nd.array([1.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.acos(data)


@defop
def arccosh(data):
    """Inverse hyperbolic cosine, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.arccosh(mx.nd.array([1.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return torch.acosh(data)


@defop
def rsqrt(data):
    """``1 / sqrt(x)``, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.rsqrt(mx.nd.array([4.0])).asnumpy()
    array([0.5], dtype=float32)
    """
    return torch.rsqrt(data)


@defop
def rcbrt(data):
    """``1 / cbrt(x)``, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.rcbrt(mx.nd.array([8.0])).asnumpy()
    array([0.5], dtype=float32)
    """
    return special.rcbrt(data)


@defop
def reciprocal(data):
    """``1 / x``, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.reciprocal(mx.nd.array([4.0])).asnumpy()
    array([0.25], dtype=float32)
    """
    return torch.reciprocal(_float(data))


@defop
def gamma(data):
    """Gamma function, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.gamma(mx.nd.array([5.0])).asnumpy()
    array([24.], dtype=float32)
    """
    return special.gamma(data)


@defop
def gammaln(data):
    """Log of the absolute gamma function, elementwise (gradient ``+inf`` at 0, -1, ...).

    >>> import sparsenet as mx
    >>> mx.nd.gammaln(mx.nd.array([1.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return special.gammaln(data)


@defop
def softsign(data):
    """``x / (1 + |x|)``, elementwise.

    >>> import sparsenet as mx
    >>> mx.nd.softsign(mx.nd.array([1.0])).asnumpy()
    array([0.5], dtype=float32)
    """
    return data / (1 + torch.abs(data))


@defop
def logical_not(data):
    """``1`` where the input is zero, else ``0`` (input dtype).

    >>> import sparsenet as mx
    >>> mx.nd.logical_not(mx.nd.array([0.0, 2.0])).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return (data == 0).to(data.dtype)


@defop
def isnan(data):
    """``1`` where the input is NaN.

    >>> import sparsenet as mx
    >>> mx.nd.isnan(mx.nd.array([float('nan'), 1.0])).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return torch.isnan(data).to(data.dtype)


@defop
def isinf(data):
    """``1`` where the input is infinite.

    >>> import sparsenet as mx
    >>> mx.nd.isinf(mx.nd.array([float('inf'), 1.0])).asnumpy()
    array([1., 0.], dtype=float32)
    """
    return torch.isinf(data).to(data.dtype)


@defop
def isfinite(data):
    """``1`` where the input is finite.

    >>> import sparsenet as mx
    >>> mx.nd.isfinite(mx.nd.array([float('inf'), 1.0])).asnumpy()
    array([0., 1.], dtype=float32)
    """
    return torch.isfinite(data).to(data.dtype)


# ---------------------------------------------------------------------- rule rows
def _on_values(op):
    def kernel(data, **params):
        return values_map(data, lambda v: op.fn(v, **params))
    kernel.__name__ = f"_{op.name}_on_values"
    return kernel


def _zero_inside_clip(p):
    """a_min <= 0 <= a_max"""
    lo, hi = p["a_min"], p["a_max"]
    return (lo is None or lo <= 0) and (hi is None or hi >= 0)


# f(0) == 0: the storage type is kept, f runs on the stored values
ZERO_PRESERVING = (
    abs, sign, round, rint, ceil, floor, trunc, fix, square, sqrt, cbrt, expm1, log1p, sin,
    sinh, tan, tanh, arcsin, arcsinh, arctan, arctanh, degrees, radians, relu, negative, erf,
    erfinv, stop_gradient, copy, cast,
)
for _op in ZERO_PRESERVING:
    rule(_op, CSR, out=CSR)(_on_values(_op))
    rule(_op, ROW_SPARSE, out=ROW_SPARSE)(_on_values(_op))
rule(clip, CSR, out=CSR, when=_zero_inside_clip)(_on_values(clip))
rule(clip, ROW_SPARSE, out=ROW_SPARSE, when=_zero_inside_clip)(_on_values(clip))


# ---------------------------------------------------------------------- *_like
@defop
def zeros_like(data):
    """Zeros of the input's shape and dtype; a sparse input gives an empty sparse array.

    >>> import sparsenet as mx
    >>> mx.nd.zeros_like(mx.nd.ones((2,))).asnumpy()
    array([0., 0.], dtype=float32)
    """
    return torch.zeros_like(data)


@defop
def ones_like(data):
    """Ones of the input's shape and dtype (dense).

    >>> import sparsenet as mx
    >>> mx.nd.ones_like(mx.nd.zeros((2,))).asnumpy()
    array([1., 1.], dtype=float32)
    """
    return torch.ones_like(data)


@rule(zeros_like, CSR, out=CSR)
@rule(zeros_like, ROW_SPARSE, out=ROW_SPARSE)
def _zeros_like_sparse(data):
    make = empty_csr if data.stype == CSR else empty_rsp
    return make(data.shape, data._data.dtype, data.device)


# elementwise: input and output have one shape (symbolic inference runs it both ways)
for _name in __all__:
    globals()[_name].same_shape = True

"""Torch functions for ``cbrt``, ``rcbrt``, ``gamma`` and ``gammaln`` with MXNet's values at poles.

The operators in :mod:`sparsenet.ops.unary` call these. Written as
``torch.autograd.Function``\\ s because the gradients autograd derives from the
plain formulas are NaN exactly where MXNet 1.9.1 returns an infinity:

============  ====================  =============================================
function      at                    value and gradient (as MXNet 1.9.1)
============  ====================  =============================================
``cbrt``      ``x = ±0``            ``±0``; gradient ``+inf``
``rcbrt``     ``x = ±0``            ``±inf``; gradient ``-inf``
``gamma``     ``x = ±0``            ``±inf``; gradient ``±inf``
``gamma``     ``x = -1, -2, ...``   NaN; gradient NaN
``gammaln``   ``x = 0, -1, ...``    ``+inf``; gradient ``+inf``
============  ====================  =============================================

``gamma`` is computed in float64 (``exp(lgamma(x))`` with the sign of Γ) and
rounded to the input's dtype, so ``gamma(8) == 5040`` exactly in float32.

>>> import torch
>>> x = torch.tensor([0.0, 8.0], requires_grad=True)
>>> y = cbrt(x); y.sum().backward()
>>> y.tolist(), x.grad.tolist()
([0.0, 2.0], [inf, 0.0833333358168602])
>>> gamma(torch.tensor([-0.5, -1.0, 8.0])).tolist()
[-3.544907808303833, nan, 5040.0]
"""
import math

import torch

__all__ = ["cbrt", "rcbrt", "gamma", "gammaln"]

_INF = math.inf


def _float(x):
    return x if x.dtype.is_floating_point else x.to(torch.float32)


def _cube_root(x):
    """Real cube root that keeps the sign of zero (``cbrt(-0.0) == -0.0``)."""
    return torch.copysign(x.abs().pow(1.0 / 3.0), x)


def _poles(x):
    """True at the non-positive integers (the poles of Γ)."""
    return (x <= 0) & (x == torch.floor(x))


class _Cbrt(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = _cube_root(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g / (3.0 * y * y)  # 1 / (3 cbrt(x)^2): +inf at 0


class _Rcbrt(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        c = _cube_root(x)
        ctx.save_for_backward(x, c)
        return 1.0 / c

    @staticmethod
    def backward(ctx, g):
        x, c = ctx.saved_tensors
        return -g / (3.0 * x * c)  # -1 / (3 x cbrt(x)): -inf at 0


def _gamma_values(x):
    x64 = x.to(torch.float64)
    y = torch.exp(torch.lgamma(x64))
    negative = (x64 < 0) & (torch.floor(x64).remainder(2) == 1)  # Γ < 0 on (-1, 0), (-3, -2), ...
    y = torch.where(negative, -y, y)
    at_zero = torch.copysign(torch.full_like(x64, _INF), x64)
    y = torch.where(_poles(x64), torch.where(x64 == 0, at_zero, torch.nan), y)
    return y.to(x.dtype)


def _digamma(x):
    """ψ(x) with +inf at the poles (MXNet's value there)."""
    return torch.where(_poles(x), _INF, torch.digamma(x))


class _Gamma(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = _gamma_values(x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y * _digamma(x)  # Γ'(x) = Γ(x) ψ(x)


class _Gammaln(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.lgamma(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * _digamma(x)


def cbrt(x):
    """Cube root of a tensor (gradient ``+inf`` at zero)."""
    return _Cbrt.apply(_float(x))


def rcbrt(x):
    """``1 / cbrt(x)`` of a tensor (``±inf`` at ``±0``, gradient ``-inf`` there)."""
    return _Rcbrt.apply(_float(x))


def gamma(x):
    """Γ(x) of a tensor: ``±inf`` at ``±0``, NaN at the negative integers."""
    return _Gamma.apply(_float(x))


def gammaln(x):
    """``log|Γ(x)|`` of a tensor: gradient ψ(x), ``+inf`` at the poles."""
    return _Gammaln.apply(_float(x))

"""Straight-through estimators: ``contrib.round_ste`` and ``contrib.sign_ste``.

The forward pass rounds (``round``: halves away from zero) or takes the sign;
the backward pass lets the head gradient through unchanged, as if the operator
were the identity (the gradient of ``round`` and ``sign`` is zero almost
everywhere). Both map zero to zero, so CSR and row_sparse inputs keep their
storage type, the function applied to the stored values.

>>> import sparsenet as mx
>>> x = mx.nd.array([-1.5, 0.4, 2.7]); x.attach_grad()
>>> with mx.autograd.record():
...     y = mx.nd.contrib.round_ste(x)
>>> y.backward()
>>> y.asnumpy(), x.grad.asnumpy()
(array([-2.,  0.,  3.], dtype=float32), array([1., 1., 1.], dtype=float32))
"""
import torch

from .kernels import values_map
from .registry import CSR, ROW_SPARSE, defop, rule
from .unary import round as _round
from .unary import sign as _sign

__all__ = ["round_ste", "sign_ste"]


class _StraightThrough(torch.autograd.Function):
    """``fn(data)`` forward, the head gradient unchanged backward."""

    @staticmethod
    def forward(ctx, data, fn):
        return fn(data)

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None


@defop(name="_contrib_round_ste")
def round_ste(data):
    """Round half away from zero, with the identity's gradient (straight-through estimator).

    >>> import sparsenet as mx
    >>> mx.nd.contrib.round_ste(mx.nd.array([-2.5, -0.4, 0.5, 1.9])).asnumpy()
    array([-3., -0.,  1.,  2.], dtype=float32)
    """
    if not data.requires_grad:
        return _round.fn(data)
    return _StraightThrough.apply(data, _round.fn)


@defop(name="_contrib_sign_ste")
def sign_ste(data):
    """Sign (-1, 0 or 1), with the identity's gradient (straight-through estimator).

    >>> import sparsenet as mx
    >>> mx.nd.contrib.sign_ste(mx.nd.array([-0.5, 0.0, 3.0])).asnumpy()
    array([-1.,  0.,  1.], dtype=float32)
    """
    if not data.requires_grad:
        return _sign.fn(data)
    return _StraightThrough.apply(data, _sign.fn)


def _on_values(op):
    def kernel(data):
        return values_map(data, op.fn)
    return kernel


for _op in (round_ste, sign_ste):
    rule(_op, CSR, out=CSR)(_on_values(_op))
    rule(_op, ROW_SPARSE, out=ROW_SPARSE)(_on_values(_op))

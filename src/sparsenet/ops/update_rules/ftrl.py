"""The follow-the-leader family's update operators: FTRL-proximal and FTML (generic rows).

>>> import sparsenet as mx
>>> w, z, n = mx.nd.ones((2,)), mx.nd.zeros((2,)), mx.nd.zeros((2,))
>>> mx.nd.ftrl_update(w, mx.nd.array([1.0, 0.0]), z, n, lr=0.1, lamda1=0.01).asnumpy()
array([0.4495, 0.    ], dtype=float32)
"""
import torch

from ...base import InvalidArgumentError
from .core import grad_plus_wd, need_lr, rescale_clip, update_op

__all__ = ["ftrl_update", "ftml_update", "ftrl_weight", "ftml_d"]


def _positive_lr(lr, opname):
    lr = need_lr(lr, opname)
    if lr <= 0:
        raise InvalidArgumentError(
            f"{opname}: the learning rate must be > 0 (the rule divides by it), "
            f"got lr={lr}; check the lr_scheduler's final_lr")
    return lr


def ftrl_weight(z, n, lr, lamda1, beta, wd):
    """FTRL's weight from its accumulators:
    ``(sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd)`` where ``|z| > lamda1``, else 0."""
    w = (torch.sign(z) * lamda1 - z) / ((beta + n.sqrt()) / lr + wd)
    return w.masked_fill_(z.abs() <= lamda1, 0.0)


@update_op(num_states=2)
def ftrl_update(weight, grad, z, n, *, lr=None, lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0,
                clip_gradient=-1.0, lazy_update=True):
    """FTRL-proximal::

        g = clip(rescale_grad*grad, clip_gradient)
        z += g - (sqrt(n + g**2) - sqrt(n)) * weight / lr;  n += g**2
        weight = (sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd) * (|z| > lamda1)

    Lazily only the gradient's rows are recomputed; the standard rule recomputes
    every row from its ``z`` and ``n`` (rows never touched become 0).

    >>> import sparsenet as mx
    >>> w, z, n = mx.nd.ones((2,)), mx.nd.zeros((2,)), mx.nd.zeros((2,))
    >>> mx.nd.ftrl_update(w, mx.nd.array([1.0, 0.0]), z, n, lr=0.1, lamda1=0.01).asnumpy()
    array([0.4495, 0.    ], dtype=float32)
    """
    lr = _positive_lr(lr, "ftrl_update")
    if grad is not None:
        g = rescale_clip(grad, rescale_grad, clip_gradient)
        sq = n.sqrt()
        n.addcmul_(g, g)
        z.add_(g).sub_((n.sqrt() - sq).mul_(weight), alpha=1.0 / lr)
    weight.copy_(ftrl_weight(z, n, lr, lamda1, beta, wd))
    return weight


def ftml_d(v, lr, beta1, beta2, epsilon, t):
    """FTML's ``d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon)``."""
    return (v / (1.0 - beta2 ** t)).sqrt_().add_(epsilon).mul_((1.0 - beta1 ** t) / lr)


@update_op(num_states=3)
def ftml_update(weight, grad, d, v, z, *, lr=None, beta1=0.6, beta2=0.999, epsilon=1e-8, t=1,
                wd=0.0, rescale_grad=1.0, clip_grad=-1.0, lazy_update=True):
    """FTML (Follow the Moving Leader) at update ``t``::

        g = clip(rescale_grad*grad + wd*weight, clip_grad)
        v = beta2*v + (1-beta2)*g**2
        d_t = (1-beta1**t)/lr * (sqrt(v/(1-beta2**t)) + epsilon)
        z = beta1*z + (1-beta1)*g - (d_t - beta1*d)*weight;  d = d_t
        weight = -z / d_t

    >>> import sparsenet as mx
    >>> w, d, v, z = mx.nd.zeros((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,))
    >>> mx.nd.ftml_update(w, mx.nd.array([1.0]), d, v, z, lr=0.1, t=1).asnumpy()
    array([-0.1], dtype=float32)
    """
    lr = _positive_lr(lr, "ftml_update")
    g = grad_plus_wd(grad, weight, rescale_grad, wd, clip_grad)
    v.mul_(beta2)
    if g is not None:
        v.addcmul_(g, g, value=1.0 - beta2)
    d_t = ftml_d(v, lr, beta1, beta2, epsilon, t)
    z.mul_(beta1).sub_((d_t - d * beta1).mul_(weight))
    if g is not None:
        z.add_(g, alpha=1.0 - beta1)
    d.copy_(d_t)
    weight.copy_(-z / d_t)
    return weight

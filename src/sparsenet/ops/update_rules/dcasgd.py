"""DCASGD's update operators, without and with momentum (generic rows).

>>> import sparsenet as mx
>>> w = mx.nd.ones((1,)); prev = w.copy()
>>> mx.nd.dcasgd_update(w, mx.nd.ones((1,)), prev, lr=0.1).asnumpy()
array([0.9], dtype=float32)
"""
import torch

from .core import need_lr, rescale_clip, update_op

__all__ = ["dcasgd_update", "dcasgd_mom_update"]


def _dcasgd_step(weight, grad, prev, lr, lamda, wd, rescale_grad, clip_gradient):
    step = weight * wd if wd else torch.zeros_like(weight)
    if grad is not None:
        g = rescale_clip(grad, rescale_grad, clip_gradient)
        step.add_(g).add_(g * g * (weight - prev), alpha=lamda)
    return step.mul_(-lr)


@update_op(num_states=1)
def dcasgd_update(weight, grad, prev_weight, *, lr=None, lamda=0.04, wd=0.0, rescale_grad=1.0,
                  clip_gradient=-1.0, lazy_update=True):
    """Delay-compensated async SGD without momentum:
    ``d = -lr*(g' + wd*w + lamda*g'*g'*(w - prev))``; ``prev = w``; ``w += d``.

    >>> import sparsenet as mx
    >>> w = mx.nd.ones((1,)); prev = w.copy()
    >>> mx.nd.dcasgd_update(w, mx.nd.ones((1,)), prev, lr=0.1).asnumpy()
    array([0.9], dtype=float32)
    """
    lr = need_lr(lr, "dcasgd_update")
    d = _dcasgd_step(weight, grad, prev_weight, lr, lamda, wd, rescale_grad, clip_gradient)
    prev_weight.copy_(weight)
    weight.add_(d)
    return weight


@update_op(num_states=2)
def dcasgd_mom_update(weight, grad, mom, prev_weight, *, lr=None, momentum=0.0, lamda=0.04,
                      wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """Delay-compensated async SGD with momentum:
    ``mom = momentum*mom - lr*(g' + wd*w + lamda*g'*g'*(w - prev))``; ``prev = w``; ``w += mom``.

    >>> import sparsenet as mx
    >>> w = mx.nd.ones((1,)); prev = w.copy(); m = mx.nd.zeros((1,))
    >>> _ = mx.nd.dcasgd_mom_update(w, mx.nd.ones((1,)), m, prev, lr=0.1, momentum=0.9, out=w)
    >>> w.asnumpy()
    array([0.9], dtype=float32)
    """
    lr = need_lr(lr, "dcasgd_mom_update")
    d = _dcasgd_step(weight, grad, prev_weight, lr, lamda, wd, rescale_grad, clip_gradient)
    mom.mul_(momentum).add_(d)
    prev_weight.copy_(weight)
    weight.add_(mom)
    return weight

"""Sign methods' update operators: SignSGD and Signum (generic rows).

>>> import sparsenet as mx
>>> mx.nd.signsgd_update(mx.nd.zeros((2,)), mx.nd.array([3.0, -0.5]), lr=0.1).asnumpy()
array([-0.1,  0.1], dtype=float32)
"""
import torch

from .core import need_lr, rescale_clip, update_op

__all__ = ["signsgd_update", "signum_update"]


@update_op(num_states=0)
def signsgd_update(weight, grad, *, lr=None, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                   lazy_update=True):
    """SignSGD: ``weight = (1 - lr*wd) * weight - lr * sign(grad)``.

    >>> import sparsenet as mx
    >>> w = mx.nd.zeros((2,))
    >>> mx.nd.signsgd_update(w, mx.nd.array([3.0, -0.5]), lr=0.1).asnumpy()
    array([-0.1,  0.1], dtype=float32)
    """
    lr = need_lr(lr, "signsgd_update")
    if wd:
        weight.mul_(1.0 - lr * wd)
    if grad is not None:
        weight.add_(torch.sign(grad), alpha=-lr)
    return weight


@update_op(num_states=1)
def signum_update(weight, grad, mom, *, lr=None, momentum=0.0, wd=0.0, rescale_grad=1.0,
                  clip_gradient=-1.0, wd_lh=0.0, lazy_update=True):
    """Signum: ``mom = momentum*mom - (1-momentum)*(wd*weight + g')``;
    ``weight = (1 - lr*wd_lh)*weight + lr*sign(mom)``.

    >>> import sparsenet as mx
    >>> w, m = mx.nd.zeros((2,)), mx.nd.zeros((2,))
    >>> _ = mx.nd.signum_update(w, mx.nd.array([3.0, -0.5]), m, lr=0.1, momentum=0.9, out=w)
    >>> w.asnumpy()
    array([-0.1,  0.1], dtype=float32)
    """
    lr = need_lr(lr, "signum_update")
    mom.mul_(momentum)
    if wd:
        mom.add_(weight, alpha=-(1.0 - momentum) * wd)
    if grad is not None:
        mom.add_(rescale_clip(grad, rescale_grad, clip_gradient), alpha=-(1.0 - momentum))
    if wd_lh:
        weight.mul_(1.0 - lr * wd_lh)
    weight.add_(torch.sign(mom), alpha=lr)
    return weight

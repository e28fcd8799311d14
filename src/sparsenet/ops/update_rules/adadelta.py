"""AdaDelta's update operator (generic rows).

>>> import sparsenet as mx
>>> w, a, d = mx.nd.ones((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,))
>>> mx.nd.adadelta_update(w, mx.nd.array([1.0]), a, d, rho=0.5, epsilon=1.0).asnumpy()
array([0.18...], dtype=float32)
"""
from .core import rescale_clip, update_op

__all__ = ["adadelta_update"]


@update_op(num_states=2)
def adadelta_update(weight, grad, acc_g, acc_delta, *, rho=0.9, epsilon=1e-5, wd=0.0,
                    rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """AdaDelta step (no learning rate, as in MXNet)::

        g = clip(rescale_grad*grad, clip_gradient)
        acc_g = rho*acc_g + (1-rho)*g**2
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g
        acc_delta = rho*acc_delta + (1-rho)*delta**2
        weight -= delta + wd*weight

    >>> import sparsenet as mx
    >>> w, a, d = mx.nd.ones((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,))
    >>> mx.nd.adadelta_update(w, mx.nd.array([1.0]), a, d, rho=0.5, epsilon=1.0).asnumpy()
    array([0.18...], dtype=float32)
    """
    step = weight * wd if wd else None
    acc_g.mul_(rho)
    delta = None
    if grad is not None:
        g = rescale_clip(grad, rescale_grad, clip_gradient)
        acc_g.addcmul_(g, g, value=1.0 - rho)
        delta = (acc_delta + epsilon).sqrt_().div_((acc_g + epsilon).sqrt_()).mul_(g)
    acc_delta.mul_(rho)
    if delta is not None:
        acc_delta.addcmul_(delta, delta, value=1.0 - rho)
        step = delta if step is None else step.add_(delta)
    if step is not None:
        weight.sub_(step)
    return weight

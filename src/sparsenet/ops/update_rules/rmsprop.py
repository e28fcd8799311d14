"""RMSProp's update operators, plain (Tieleman & Hinton) and centered (Graves); generic rows.

>>> import sparsenet as mx
>>> w, n = mx.nd.ones((1,)), mx.nd.zeros((1,))
>>> mx.nd.rmsprop_update(w, mx.nd.array([1.0]), n, lr=0.1, gamma1=0.75, epsilon=0.0).asnumpy()
array([0.8], dtype=float32)
"""
from .core import grad_plus_wd, need_lr, update_op

__all__ = ["rmsprop_update", "rmspropalex_update"]


def _clip_weights(weight, clip_weights):
    if clip_weights is not None and clip_weights >= 0:
        weight.clamp_(-clip_weights, clip_weights)


@update_op(num_states=1)
def rmsprop_update(weight, grad, n, *, lr=None, gamma1=0.95, epsilon=1e-8, wd=0.0,
                   rescale_grad=1.0, clip_gradient=-1.0, clip_weights=-1.0, lazy_update=True):
    """RMSProp (Tieleman & Hinton)::

        g = clip(rescale_grad*grad + wd*weight, clip_gradient)
        n = gamma1*n + (1-gamma1)*g**2
        weight = clip(weight - lr * g / sqrt(n + epsilon), clip_weights)

    >>> import sparsenet as mx
    >>> w, n = mx.nd.ones((1,)), mx.nd.zeros((1,))
    >>> mx.nd.rmsprop_update(w, mx.nd.array([1.0]), n, lr=0.1, gamma1=0.75, epsilon=0.0).asnumpy()
    array([0.8], dtype=float32)
    """
    lr = need_lr(lr, "rmsprop_update")
    g = grad_plus_wd(grad, weight, rescale_grad, wd, clip_gradient)
    n.mul_(gamma1)
    if g is not None:
        n.addcmul_(g, g, value=1.0 - gamma1)
        weight.addcdiv_(g, (n + epsilon).sqrt_(), value=-lr)
    _clip_weights(weight, clip_weights)
    return weight


@update_op(num_states=3)
def rmspropalex_update(weight, grad, n, g, delta, *, lr=None, gamma1=0.95, gamma2=0.9,
                       epsilon=1e-8, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                       clip_weights=-1.0, lazy_update=True):
    """Centered RMSProp (Graves)::

        gr = clip(rescale_grad*grad + wd*weight, clip_gradient)
        n = gamma1*n + (1-gamma1)*gr**2;  g = gamma1*g + (1-gamma1)*gr
        delta = gamma2*delta - lr * gr / sqrt(n - g**2 + epsilon)
        weight = clip(weight + delta, clip_weights)

    >>> import sparsenet as mx
    >>> w, n, g, d = mx.nd.ones((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,))
    >>> _ = mx.nd.rmspropalex_update(w, mx.nd.array([1.0]), n, g, d, lr=0.1, gamma1=0.5,
    ...                              epsilon=0.0, out=w)
    >>> w.asnumpy()
    array([0.8], dtype=float32)
    """
    lr = need_lr(lr, "rmspropalex_update")
    gr = grad_plus_wd(grad, weight, rescale_grad, wd, clip_gradient)
    n.mul_(gamma1)
    g.mul_(gamma1)
    delta.mul_(gamma2)
    if gr is not None:
        n.addcmul_(gr, gr, value=1.0 - gamma1)
        g.add_(gr, alpha=1.0 - gamma1)
        delta.addcdiv_(gr, (n - g * g).add_(epsilon).sqrt_(), value=-lr)
    weight.add_(delta)
    _clip_weights(weight, clip_weights)
    return weight

"""NAG's update operators (Nesterov momentum, plain and multi-precision).

Their rows are the generic ones of :func:`~sparsenet.ops.update_rules.core.register_update_rules`:
the definition on the gradient's rows (lazy), on every row (dense and standard).

>>> import sparsenet as mx
>>> w, m = mx.nd.ones((1,)), mx.nd.zeros((1,))
>>> _ = mx.nd.nag_mom_update(w, mx.nd.ones((1,)), m, lr=0.1, momentum=0.9, out=w)
>>> w.asnumpy()
array([0.81], dtype=float32)
"""
from .core import need_lr, rescale_clip, update_op

__all__ = ["nag_mom_update", "mp_nag_mom_update"]


@update_op(num_states=1)
def nag_mom_update(weight, grad, mom, *, lr=None, momentum=0.0, wd=0.0, rescale_grad=1.0,
                   clip_gradient=-1.0, lazy_update=True):
    """Nesterov momentum: ``g' = clip(rescale_grad*grad) + wd*weight``;
    ``mom = momentum*mom - lr*g'``; ``weight += momentum*mom - lr*g'``.

    The momentum uses the weight from before the step (MXNet 1.9.1 reads the
    already-updated weight when ``out=weight``; see docs/differences.md).

    >>> import sparsenet as mx
    >>> w, m = mx.nd.ones((1,)), mx.nd.zeros((1,))
    >>> _ = mx.nd.nag_mom_update(w, mx.nd.ones((1,)), m, lr=0.1, momentum=0.9, out=w)
    >>> w.asnumpy()
    array([0.81], dtype=float32)
    """
    lr = need_lr(lr, "nag_mom_update")
    g = rescale_clip(grad, rescale_grad, clip_gradient) if grad is not None else None
    if wd:
        g = weight * wd if g is None else g.add_(weight, alpha=wd)
    mom.mul_(momentum)
    if g is not None:
        mom.add_(g, alpha=-lr)
        weight.add_(g, alpha=-lr)
    weight.add_(mom, alpha=momentum)
    return weight


@update_op(num_states=2)
def mp_nag_mom_update(weight, grad, mom, weight32, *, lr=None, momentum=0.0, wd=0.0,
                      rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """Multi-precision Nesterov momentum (float32 ``mom`` and master ``weight32``).

    >>> import sparsenet as mx
    >>> w = mx.nd.ones((1,), dtype='float16'); w32 = w.astype('float32'); m = mx.nd.zeros((1,))
    >>> _ = mx.nd.mp_nag_mom_update(w, mx.nd.ones((1,), dtype='float16'), m, w32, lr=0.1,
    ...                             momentum=0.9, out=w)
    >>> float(w32.asnumpy()[0])
    0.81...
    """
    g = None if grad is None else grad.to(weight32.dtype)
    nag_mom_update.fn(weight32, g, mom, lr=lr, momentum=momentum, wd=wd,
                      rescale_grad=rescale_grad, clip_gradient=clip_gradient)
    weight.copy_(weight32)
    return weight

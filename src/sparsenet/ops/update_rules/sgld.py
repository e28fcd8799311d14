"""SGLD's update operator (generic rows; the noise is ``mx.random.normal``'s stream).

>>> import sparsenet as mx
>>> mx.nd.sgld_update(mx.nd.zeros((1,)), mx.nd.zeros((1,)), lr=0.0).asnumpy()
array([0.], dtype=float32)
"""

from ..sampling import standard_normal
from .core import need_lr, rescale_clip, update_op

__all__ = ["sgld_update"]


@update_op(num_states=0)
def sgld_update(weight, grad, *, lr=None, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                lazy_update=True):
    """Stochastic gradient Langevin dynamics:
    ``weight += -lr/2 * (g' + wd*weight) + N(0, lr)``; the noise is drawn as
    ``mx.random.normal(0, sqrt(lr), shape=weight.shape, dtype=weight.dtype)`` draws it, so a
    seeded run repeats a reference that adds that sample (MXNet's test_sgld).

    Lazily (row_sparse gradient, ``lazy_update=True``) only the gradient's rows
    move and receive noise; otherwise every row receives noise.

    >>> import sparsenet as mx
    >>> mx.random.seed(0)
    >>> mx.nd.sgld_update(mx.nd.zeros((2, 3)), mx.nd.zeros((2, 3)), lr=0.0).asnumpy()
    array([[0., 0., 0.],
           [0., 0., 0.]], dtype=float32)
    """
    lr = need_lr(lr, "sgld_update")
    if wd:
        weight.mul_(1.0 - lr / 2 * wd)
    if grad is not None:
        weight.add_(rescale_clip(grad, rescale_grad, clip_gradient), alpha=-lr / 2)
    weight.add_(standard_normal(weight.shape, weight.device).to(weight.dtype), alpha=lr ** 0.5)
    return weight

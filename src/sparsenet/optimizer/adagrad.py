"""AdaGrad (``mx.optimizer.AdaGrad``)."""
from ..ndarray.creation import zeros
from ..ops.update_rules import adagrad_update
from .optimizer import Optimizer, register

__all__ = ["AdaGrad"]


@register
class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al.)::

        g = clip(rescale_grad * grad, clip_gradient)
        history += g**2
        weight -= lr * (g / sqrt(history + eps) + wd * weight)

    Row_sparse gradients: ``lazy_update=True`` (default) is MXNet's
    ``sparse.adagrad_update`` rule (and torch's ``Adagrad``) on the gradient's
    rows, and unlike MXNet it also accepts ``wd`` (decay on those rows only);
    ``False`` is the standard rule (every row decays by ``1 - lr*wd``);
    ``'exact'`` applies the skipped steps' ``(1 - lr*wd)`` decays in closed form
    (without weight decay a skipped step changes nothing, so all three agree).

    Parameters
    ----------
    eps : float, default 1e-7

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.AdaGrad(learning_rate=0.1)
    >>> w = mx.nd.ones((5, 2)); st = opt.create_state(0, w)
    >>> g = mx.nd.sparse.row_sparse_array(([[1.0, 1.0]] * 2, [1, 3]), shape=(5, 2))
    >>> opt.update(0, w, g, st)
    >>> w.asnumpy()[:, 0]
    array([1. , 0.9, 1. , 0.9, 1. ], dtype=float32)
    """

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context, stype=weight.stype)

    def _step(self, index):
        lr, wd, _ = self._count(index)
        return {"lr": lr, "wd": wd}

    def _fused_args(self, state, step, lazy):
        return adagrad_update, (state,), dict(epsilon=self.float_stable_eps,
                                              **self._grad_kwargs(step, lazy))

    def _skip_map(self, step):
        return [[1.0 - step["lr"] * step["wd"]]]

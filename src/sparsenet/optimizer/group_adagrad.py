"""AdaGrad with one learning rate per row (``mx.optimizer.GroupAdaGrad``)."""
from ..base import InvalidArgumentError, ShapeError
from ..ndarray.creation import zeros
from ..ops.update_rules import group_adagrad_update
from .optimizer import Optimizer, register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """Row-wise AdaGrad for 2-D weights (embeddings): one accumulator per row::

        g = clip(rescale_grad * grad, clip_gradient)
        history += mean(g**2, axis=1, keepdims=True)
        weight -= lr * g / sqrt(history + eps)

    Weight decay is not supported (as in MXNet). A skipped step changes nothing,
    so ``lazy_update`` True, False and ``'exact'`` give the same result; True (the
    default, MXNet's rule) and ``'exact'`` touch only the gradient's rows.

    Parameters
    ----------
    eps : float, default 1e-5

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.GroupAdaGrad(learning_rate=0.1)
    >>> w = mx.nd.ones((3, 2)); st = opt.create_state(0, w)
    >>> st.shape
    (3, 1)
    >>> opt.update(0, w, mx.nd.sparse.row_sparse_array(([[3.0, 4.0]], [2]), shape=(3, 2)), st)
    >>> w.asnumpy()[2].round(4)
    array([0.9151, 0.8869], dtype=float32)
    """

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        if len(weight.shape) != 2:
            raise ShapeError(f"GroupAdaGrad needs a 2-D weight (rows, features), got shape "
                             f"{weight.shape}")
        return zeros((weight.shape[0], 1), weight.context, stype=weight.stype)

    def _update_impl(self, index, weight, grad, state):
        lr, wd, _ = self._count(index)
        if wd != 0:
            raise InvalidArgumentError(
                f"GroupAdaGrad does not support weight decay, got wd={wd} for "
                f"parameter {index!r}; set wd=0 (or its wd_mult to 0)")
        self._apply(weight, grad, state, {"lr": lr, "wd": 0.0})

    def _fused(self, weight, grad, state, step, lazy):
        group_adagrad_update.update(weight, grad, state, lr=step["lr"],
                                    epsilon=self.float_stable_eps,
                                    rescale_grad=self.rescale_grad,
                                    clip_gradient=self.clip_gradient or -1.0,
                                    lazy_update=bool(lazy))

    def _skip_map(self, step):
        return [[1.0]]

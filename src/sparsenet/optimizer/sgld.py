"""Stochastic gradient Langevin dynamics (``mx.optimizer.SGLD``)."""
from ..ops.update_rules import sgld_update
from .optimizer import Optimizer, register

__all__ = ["SGLD"]


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics::

        weight += -lr/2 * (g' + wd * weight) + N(0, lr)

    Row_sparse gradients: ``lazy_update=False`` (default; MXNet's result, MXNet
    densifies the gradient) moves every row and adds noise to every row;
    ``True`` moves and adds noise to the gradient's rows only (row-restricted rule).
    ``lazy_update='exact'`` has no closed form (the noise of each skipped step
    is a fresh draw) and runs as ``lazy_update=False``.

    Parameters
    ----------
    lazy_update : {True, False, 'exact'}, default False
        How a row_sparse gradient is applied (MXNet densifies it: False).

    Examples
    --------
    >>> import sparsenet as mx
    >>> mx.random.seed(1)
    >>> opt = mx.optimizer.SGLD(learning_rate=0.01, lazy_update=True)  # the gradient's rows
    >>> w = mx.nd.zeros((3, 2))
    >>> opt.update(0, w, mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [1]), shape=(3, 2)), None)
    >>> (w.asnumpy() != 0).any(axis=1).tolist()
    [False, True, False]
    """

    def __init__(self, lazy_update=False, **kwargs):
        super().__init__(lazy_update=lazy_update, **kwargs)

    def _update_impl(self, index, weight, grad, state):
        lr, wd, _ = self._count(index)
        self._apply(weight, grad, state, {"lr": lr, "wd": wd})

    def _fused(self, weight, grad, state, step, lazy):
        sgld_update.update(weight, grad, **self._grad_kwargs(step, lazy))

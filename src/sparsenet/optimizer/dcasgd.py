"""Delay-compensated asynchronous SGD (``mx.optimizer.DCASGD``)."""
from ..ndarray.creation import zeros
from ..ops.update_rules import dcasgd_mom_update, dcasgd_update
from .optimizer import Optimizer, register

__all__ = ["DCASGD"]


@register
class DCASGD(Optimizer):
    """DCASGD (Zheng et al. 2016)::

        d = -lr * (g' + wd*weight + lamda * g' * g' * (weight - previous_weight))
        mom = momentum * mom + d          # d itself when momentum == 0
        previous_weight = weight;  weight += mom

    Row_sparse gradients (MXNet raises ValueError): ``lazy_update=False`` (default, as the
    optimizers MXNet densifies) is the standard rule; ``True`` updates the gradient's rows
    only (row-restricted rule); ``'exact'`` applies skipped steps in closed form (a
    zero-gradient step is linear in ``(weight, mom, previous_weight)``).

    Parameters
    ----------
    momentum : float, default 0.0
    lamda : float, default 0.04
    lazy_update : {True, False, 'exact'}, default False
        How a row_sparse gradient is applied (MXNet densifies it: False).

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.DCASGD(learning_rate=0.1)
    >>> w = mx.nd.ones((2, 1)); st = opt.create_state(0, w)
    >>> opt.update(0, w, mx.nd.sparse.row_sparse_array(([[1.0]], [0]), shape=(2, 1)), st)
    >>> w.asnumpy().ravel()
    array([0.9, 1. ], dtype=float32)
    """

    def __init__(self, momentum=0.0, lamda=0.04, lazy_update=False, **kwargs):
        super().__init__(lazy_update=lazy_update, **kwargs)
        self.momentum = momentum
        self.lamda = lamda

    def create_state(self, index, weight):
        mom = None
        if self.momentum != 0.0:
            mom = zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype)
        return (mom, weight.copy())

    def _update_impl(self, index, weight, grad, state):
        lr, wd, _ = self._count(index)
        self._apply(weight, grad, state, {"lr": lr, "wd": wd})

    def _fused(self, weight, grad, state, step, lazy):
        mom, previous = state
        kwargs = self._grad_kwargs(step, lazy)
        if mom is None:
            dcasgd_update.update(weight, grad, previous, lamda=self.lamda, **kwargs)
        else:
            dcasgd_mom_update.update(weight, grad, mom, previous, momentum=self.momentum,
                                     lamda=self.lamda, **kwargs)

    def _skip_map(self, step):
        c = step["lr"] * step["wd"]
        if self.momentum == 0.0:
            return [[1.0 - c, 0.0], [1.0, 0.0]]
        mu = self.momentum
        return [[1.0 - c, mu, 0.0], [-c, mu, 0.0], [1.0, 0.0, 0.0]]

    def _exact_arrays(self, weight, state):
        mom, previous = state
        return [weight, previous] if mom is None else [weight, mom, previous]

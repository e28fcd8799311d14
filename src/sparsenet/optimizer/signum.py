"""Signum / SignSGD (``mx.optimizer.Signum``)."""
import torch

from ..ndarray.creation import zeros
from ..ops.update_rules import signsgd_update, signum_update
from .optimizer import Optimizer, register

__all__ = ["Signum"]


@register
class Signum(Optimizer):
    """Signum: the sign of a momentum of the gradient (SignSGD when ``momentum=0``)::

        mom = momentum * mom - (1 - momentum) * (wd * weight + g')
        weight = (1 - lr * wd_lh) * weight + lr * sign(mom)
        # momentum == 0:  weight = (1 - lr * wd) * weight - lr * sign(g')

    Row_sparse gradients: ``lazy_update=False`` (default; MXNet's result, MXNet
    densifies the gradient) is the standard rule; ``True`` updates the gradient's
    rows only (row-restricted rule);
    ``'exact'`` has a closed form when ``wd == 0`` (the momentum's sign does not
    change while it decays, so each skipped step is
    ``w <- (1 - lr*wd_lh) w + lr*sign(mom)``, ``mom <- momentum*mom``) and for SignSGD;
    with ``wd != 0`` and momentum it runs as ``lazy_update=False``.

    Parameters
    ----------
    learning_rate : float, default 0.01
    momentum : float, default 0.9
    wd_lh : float, default 0.0
        Decoupled weight decay.
    lazy_update : {True, False, 'exact'}, default False
        How a row_sparse gradient is applied (MXNet densifies it: False).

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.Signum(learning_rate=0.1)
    >>> w = mx.nd.zeros((2, 1)); st = opt.create_state(0, w)
    >>> opt.update(0, w, mx.nd.sparse.row_sparse_array(([[-3.0]], [0]), shape=(2, 1)), st)
    >>> w.asnumpy().ravel()
    array([0.1, 0. ], dtype=float32)
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, lazy_update=False, **kwargs):
        super().__init__(lazy_update=lazy_update, learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        return zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype)

    def _update_impl(self, index, weight, grad, state):
        lr, wd, _ = self._count(index)
        self._apply(weight, grad, state, {"lr": lr, "wd": wd})

    def _fused(self, weight, grad, state, step, lazy):
        if state is None:
            signsgd_update.update(weight, grad, **self._grad_kwargs(step, lazy))
        else:
            signum_update.update(weight, grad, state, momentum=self.momentum,
                                 wd_lh=self.wd_lh, **self._grad_kwargs(step, lazy))

    def _skip_map(self, step):
        lr = step["lr"]
        if self.momentum == 0.0:
            return [[1.0 - lr * step["wd"]]]
        if step["wd"]:
            return None
        return [[1.0 - lr * self.wd_lh, 0.0, lr], [0.0, self.momentum, 0.0], [0.0, 0.0, 1.0]]

    def _exact_arrays(self, weight, state):
        return [weight] if state is None else [weight, state]

    def _exact_encode(self, rows, window):
        return rows if len(rows) == 1 else rows + [torch.sign(rows[1])]

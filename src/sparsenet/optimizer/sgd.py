"""SGD with momentum and weight decay (``mx.optimizer.SGD``)."""
from ..ndarray.creation import zeros
from ..ops.optimizer_ops import sgd_mom_update, sgd_update
from .optimizer import Optimizer, register

__all__ = ["SGD", "ccSGD"]


@register
class SGD(Optimizer):
    """Stochastic gradient descent with momentum and weight decay.

    With ``g' = clip(rescale_grad * grad, clip_gradient)`` (clipping after
    rescaling, as MXNet 1.9.1 does), a step is::

        mom = momentum * mom - lr * wd * weight - lr * g'     # momentum > 0
        weight = weight + mom
        weight = (1 - lr * wd) * weight - lr * g'             # momentum == 0

    Row_sparse gradients (on a dense or row_sparse weight):

    * ``lazy_update=True`` (default): MXNet's lazy rule: only the rows in
      ``grad.indices`` change, weight decay included; the other rows' momentum is
      frozen, not decayed.
    * ``lazy_update=False``: the standard rule on every row (every row decays and
      moves with its momentum).
    * ``lazy_update='exact'``: the lazy cost with the standard result; a row that
      skipped ``k`` steps gets, in closed form, ``(1 - lr*wd)`` decay per skipped
      step (with momentum: the 2x2 linear recurrence of ``(weight, mom)``), with
      each skipped step's learning rate.

    Parameters
    ----------
    momentum : float, default 0.0
    lazy_update : {True, False, 'exact'}, default True
    **kwargs
        See :class:`Optimizer` (``learning_rate``, ``wd``, ``rescale_grad``,
        ``clip_gradient``, ``lr_scheduler``, ``multi_precision``...).

    Examples
    --------
    >>> import sparsenet as mx
    >>> sgd = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.1)
    >>> w = mx.nd.ones((5, 2)); mom = sgd.create_state(0, w)
    >>> g = mx.nd.sparse.row_sparse_array(([[1.0, 1.0]] * 2, [1, 3]), shape=(5, 2))
    >>> sgd.update(0, w, g, mom)
    >>> w.asnumpy()[:, 0]
    array([1.  , 0.89, 1.  , 0.89, 1.  ], dtype=float32)
    """

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(lazy_update=lazy_update, **kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        stype = weight.stype if self.lazy_update else "default"
        return zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype)

    def _mp_state(self, master, inner):
        return (inner, master)

    def _mp_split(self, state):
        return state[1], state[0]

    def _update_impl(self, index, weight, grad, state):
        self._update_count(index)
        self._apply(weight, grad, state, {"lr": self._get_lr(index), "wd": self._get_wd(index)})

    def _fused(self, weight, grad, state, step, lazy):
        if state is None:
            sgd_update(weight, grad, out=weight, **self._grad_kwargs(step, lazy))
        else:
            sgd_mom_update(weight, grad, state, out=weight, momentum=self.momentum,
                           **self._grad_kwargs(step, lazy))

    def _skip_map(self, step):
        c = step["lr"] * step["wd"]
        if self.momentum == 0.0:
            return [[1.0 - c]]
        mu = self.momentum
        return [[1.0 - c, mu], [-c, mu]]

    def _exact_arrays(self, weight, state):
        return [weight] if state is None else [weight, state]


@register
class ccSGD(SGD):
    """Deprecated alias of :class:`SGD` (kept for MXNet compatibility).

    >>> import sparsenet as mx
    >>> isinstance(mx.optimizer.ccSGD(), mx.optimizer.SGD)
    True
    """

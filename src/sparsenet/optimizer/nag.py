"""Nesterov accelerated gradient (``mx.optimizer.NAG``)."""
from ..ndarray.creation import zeros
from ..ops.update_rules import nag_mom_update, sgd_update
from .optimizer import Optimizer, register

__all__ = ["NAG"]


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient (MXNet's ``nag_mom_update`` rule)::

        g = clip(rescale_grad * grad, clip_gradient) + wd * weight
        mom = momentum * mom - lr * g
        weight = weight + momentum * mom - lr * g

    ``momentum=0`` is plain SGD. Row_sparse gradients: ``lazy_update=False``
    (default; MXNet's result, MXNet densifies the gradient) is the standard rule
    on every row; ``True`` updates the gradient's rows only (row-restricted rule);
    ``'exact'`` applies skipped steps in closed form (the 2x2 linear recurrence of
    ``(weight, mom)``: ``w <- (1 - lr*wd*(1+momentum)) w + momentum^2 mom``,
    ``mom <- momentum mom - lr*wd w`` per skipped step).

    Parameters
    ----------
    momentum : float, default 0.0
    lazy_update : {True, False, 'exact'}, default False
        How a row_sparse gradient is applied (MXNet densifies it: False).
    **kwargs
        See :class:`Optimizer`.

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.NAG(learning_rate=0.1, momentum=0.9)
    >>> w = mx.nd.ones((3, 1)); st = opt.create_state(0, w)
    >>> opt.update(0, w, mx.nd.sparse.row_sparse_array(([[1.0]], [1]), shape=(3, 1)), st)
    >>> w.asnumpy().ravel()
    array([1.  , 0.81, 1.  ], dtype=float32)
    """

    def __init__(self, momentum=0.0, lazy_update=False, **kwargs):
        super().__init__(lazy_update=lazy_update, **kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        return zeros(weight.shape, weight.context, dtype=weight.dtype)

    def _mp_state(self, master, inner):
        return (inner, master)

    def _mp_split(self, state):
        return state[1], state[0]

    def _update_impl(self, index, weight, grad, state):
        lr, wd, _ = self._count(index)
        self._apply(weight, grad, state, {"lr": lr, "wd": wd})

    def _fused(self, weight, grad, state, step, lazy):
        if state is None:
            sgd_update.update(weight, grad, **self._grad_kwargs(step, lazy))
        else:
            nag_mom_update.update(weight, grad, state, momentum=self.momentum,
                                  **self._grad_kwargs(step, lazy))

    def _skip_map(self, step):
        c = step["lr"] * step["wd"]
        mu = self.momentum
        if mu == 0.0:
            return [[1.0 - c]]
        return [[1.0 - c * (1.0 + mu), mu * mu], [-c, mu]]

    def _exact_arrays(self, weight, state):
        return [weight] if state is None else [weight, state]

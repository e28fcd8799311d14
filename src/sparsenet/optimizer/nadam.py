"""Nadam: Adam with Nesterov momentum (``mx.optimizer.Nadam``)."""
import math

from ..ndarray.creation import zeros
from ..ops.update_rules import nadam_momentum, nadam_update
from . import moments
from .optimizer import Optimizer, register

__all__ = ["Nadam"]


@register
class Nadam(Optimizer):
    """Nadam (Dozat 2016) with MXNet's warming momentum schedule::

        mu_t = beta1 * (1 - 0.5 * 0.96**(t * schedule_decay)),  M_t = mu_1 * ... * mu_t
        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * g;   v = beta2 * v + (1 - beta2) * g**2
        m_bar = (1 - mu_t) * g / (1 - M_t) + mu_{t+1} * m / (1 - M_t * mu_{t+1})
        weight -= lr * m_bar / (sqrt(v / (1 - beta2**t)) + epsilon)

    ``M_t`` is kept per parameter (MXNet multiplies one shared schedule at every
    parameter's update, so it advances once per parameter per step).
    Row_sparse gradients: ``lazy_update=False`` (default; MXNet's result, MXNet
    densifies the gradient) is the standard rule; ``True`` updates the gradient's
    rows only (row-restricted rule);
    ``'exact'`` has a closed form with ``wd == 0`` (as :class:`Adam`, with the
    schedule's per-step factors) and runs as ``lazy_update=False`` otherwise.

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    epsilon : float, default 1e-8
    schedule_decay : float, default 0.004
    lazy_update : {True, False, 'exact'}, default False
        How a row_sparse gradient is applied (MXNet densifies it: False).

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.Nadam(learning_rate=0.1)
    >>> w = mx.nd.ones((2, 1)); st = opt.create_state(0, w)
    >>> opt.update(0, w, mx.nd.sparse.row_sparse_array(([[1.0]], [0]), shape=(2, 1)), st)
    >>> w.asnumpy().ravel().round(4)
    array([0.8944, 1.    ], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, lazy_update=False, **kwargs):
        super().__init__(lazy_update=lazy_update, learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self._m_schedule = {}

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype),
                zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype))

    def _schedule(self, index, t):
        """``M_t`` of parameter ``index`` (cached; recomputed after a jump in ``t``)."""
        last_t, value = self._m_schedule.get(index, (0, 1.0))
        if last_t != t - 1:
            last_t, value = 0, 1.0
        for i in range(last_t + 1, t + 1):
            value *= nadam_momentum(i, self.beta1, self.schedule_decay)
        self._m_schedule[index] = (t, value)
        return value

    def _update_impl(self, index, weight, grad, state):
        lr, wd, t = self._count(index)
        m_schedule = self._schedule(index, t)
        mu_next = nadam_momentum(t + 1, self.beta1, self.schedule_decay)
        bias2 = math.sqrt(1.0 - self.beta2 ** t)
        self._apply(weight, grad, state, {
            "lr": lr, "wd": wd, "t": t, "m_schedule": m_schedule,
            "L": lr * mu_next * bias2 / (1.0 - m_schedule * mu_next), "c": 0.0,
            "e": self.epsilon * bias2, "ratio": bias2})

    def _fused(self, weight, grad, state, step, lazy):
        mean, var = state
        nadam_update.update(weight, grad, mean, var, beta1=self.beta1, beta2=self.beta2,
                            epsilon=self.epsilon, t=step["t"], schedule_decay=self.schedule_decay,
                            m_schedule=step["m_schedule"], **self._grad_kwargs(step, lazy))

    def _skip_map(self, step):
        if step["wd"]:
            return None
        return moments.skip_map(self.beta1, self.beta2, step["L"], 0.0, step["ratio"])

    def _exact_arrays(self, weight, state):
        return [weight, state[0], state[1]]

    def _exact_apply(self, maps, rows, window):
        return moments.catch_up(maps, rows, window, self.beta1, self.beta2, self.epsilon)

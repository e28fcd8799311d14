"""AdamW: Adam with decoupled weight decay (``mx.optimizer.AdamW``)."""
import math

from ..ops.update_rules import adamw_update
from . import moments
from .optimizer import Optimizer, register

__all__ = ["AdamW"]


@register
class AdamW(Optimizer):
    """AdamW (Loshchilov & Hutter): Adam whose weight decay is decoupled from the gradient::

        g = clip(rescale_grad * grad, clip_gradient)
        m = beta1 * m + (1 - beta1) * g;   v = beta2 * v + (1 - beta2) * g**2
        weight -= lr_t * m / (sqrt(v) + epsilon) + lr * wd * weight

    with ``lr_t = lr * sqrt(1 - beta2**t) / (1 - beta1**t)`` when
    ``correct_bias`` (else ``lr``). MXNet 1.9.1 has the fused operator
    (``contrib.adamw_update``) but no optimizer class; this one follows MXNet 2's
    defaults (``epsilon=1e-6``) and scales the decay by the learning rate as torch
    does. Row_sparse gradients: ``lazy_update=False`` (default; MXNet's
    ``contrib.adamw_update`` densifies the gradient) is the standard rule, every row
    decays; ``True`` updates the gradient's rows only (decay included); ``'exact'`` applies
    skipped steps in closed form for any ``wd`` (decay ``(1 - lr*wd)`` per skipped
    step plus the momentum drift, see :mod:`sparsenet.optimizer.moments`).

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    epsilon : float, default 1e-6
    correct_bias : bool, default True
    lazy_update : {True, False, 'exact'}, default False
        How a row_sparse gradient is applied (MXNet densifies it: False).

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.AdamW(learning_rate=0.1, wd=0.5)
    >>> w = mx.nd.ones((2, 1)); st = opt.create_state(0, w)
    >>> opt.update(0, w, mx.nd.sparse.row_sparse_array(([[1.0]], [0]), shape=(2, 1)), st)
    >>> w.asnumpy().ravel().round(4)  # row 1 has no gradient: it only decays
    array([0.85, 0.95], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 correct_bias=True, lazy_update=False, **kwargs):
        super().__init__(lazy_update=lazy_update, learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.correct_bias = correct_bias

    def create_state(self, index, weight):
        return self._zero_state(weight), self._zero_state(weight)

    def _update_impl(self, index, weight, grad, state):
        lr, wd, t = self._count(index)
        lr_t = lr
        if self.correct_bias:
            lr_t = lr * math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t)
        self._apply(weight, grad, state, {"lr": lr_t, "wd": lr * wd, "L": lr_t, "c": lr * wd,
                                          "e": self.epsilon})

    def _fused(self, weight, grad, state, step, lazy):
        mean, var = state
        adamw_update.update(weight, grad, mean, var, eta=1.0, beta1=self.beta1,
                            beta2=self.beta2, epsilon=self.epsilon, **self._grad_kwargs(step, lazy))

    def _skip_map(self, step):
        return moments.skip_map(self.beta1, self.beta2, step["L"], step["c"], 1.0)

    def _exact_arrays(self, weight, state):
        return [weight, state[0], state[1]]

    def _exact_apply(self, maps, rows, window):
        return moments.catch_up(maps, rows, window, self.beta1, self.beta2, self.epsilon)

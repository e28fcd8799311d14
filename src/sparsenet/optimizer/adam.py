"""Adam (``mx.optimizer.Adam``)."""
import math

from ..ops.update_rules import adam_update
from . import moments
from .optimizer import Optimizer, register

__all__ = ["Adam"]


@register
class Adam(Optimizer):
    """Adam (Kingma & Ba), MXNet's rule: L2 weight decay inside the gradient, clipped::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * g;   v = beta2 * v + (1 - beta2) * g**2
        weight -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + epsilon)

    ``t`` counts this parameter's updates (not a row's).

    Row_sparse gradients:

    * ``lazy_update=True`` (default): MXNet's lazy rule (and torch's
      ``SparseAdam``): only the gradient's rows update ``m``, ``v`` and the weight.
    * ``lazy_update=False``: the standard rule on every row (moments decay and
      weights move with their momentum).
    * ``lazy_update='exact'``: with ``wd == 0`` a skipped step decays ``m`` by
      ``beta1``, ``v`` by ``beta2`` and moves the weight by
      ``-lr_t * m / (sqrt(v) + epsilon)``; this is applied in closed form with
      each skipped step's ``lr_t`` (see :mod:`sparsenet.optimizer.moments`). With
      ``wd != 0`` the L2 term makes a skipped step non-linear (no closed form):
      it runs as ``lazy_update=False`` (use :class:`AdamW` for decoupled decay
      with an exact mode).

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    epsilon : float, default 1e-8
    lazy_update : {True, False, 'exact'}, default True

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.Adam(learning_rate=0.1, wd=0.1)
    >>> w = mx.nd.ones((5, 2)); st = opt.create_state(0, w)
    >>> g = mx.nd.sparse.row_sparse_array(([[1.0, 1.0]] * 2, [1, 3]), shape=(5, 2))
    >>> opt.update(0, w, g, st)
    >>> w.asnumpy()[:, 0].round(4)
    array([1. , 0.9, 1. , 0.9, 1. ], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, lazy_update=lazy_update, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return self._zero_state(weight), self._zero_state(weight)

    def _step(self, index):
        lr, wd, t = self._count(index)
        lr *= math.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t)
        return {"lr": lr, "wd": wd, "L": lr, "c": 0.0, "e": self.epsilon}

    def _fused_args(self, state, step, lazy):
        return adam_update, state, dict(beta1=self.beta1, beta2=self.beta2,
                                        epsilon=self.epsilon, **self._grad_kwargs(step, lazy))

    def _skip_map(self, step):
        if step["wd"]:
            return None
        return moments.skip_map(self.beta1, self.beta2, step["L"], 0.0, 1.0)

    def _exact_arrays(self, weight, state):
        return [weight, state[0], state[1]]

    def _exact_apply(self, maps, rows, window):
        return moments.catch_up(maps, rows, window, self.beta1, self.beta2, self.epsilon)

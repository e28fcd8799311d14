"""RMSProp, plain and centered (``mx.optimizer.RMSProp``)."""
from ..ndarray.creation import zeros
from ..ops.update_rules import rmsprop_update, rmspropalex_update
from .optimizer import Optimizer, register

__all__ = ["RMSProp"]


@register
class RMSProp(Optimizer):
    """RMSProp: Tieleman & Hinton (``centered=False``) or Graves (``centered=True``)::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        # centered=False
        n = gamma1 * n + (1 - gamma1) * g**2
        weight = clip(weight - lr * g / sqrt(n + epsilon), clip_weights)
        # centered=True
        n = gamma1 * n + (1 - gamma1) * g**2;   gbar = gamma1 * gbar + (1 - gamma1) * g
        delta = gamma2 * delta - lr * g / sqrt(n - gbar**2 + epsilon)
        weight = clip(weight + delta, clip_weights)

    Row_sparse gradients: ``lazy_update=False`` (default; MXNet's result, MXNet
    densifies the gradient) is the standard rule: every row decays with ``wd`` and is
    clipped by ``clip_weights``; ``True`` updates the gradient's rows only
    (row-restricted rule);
    ``'exact'`` has a closed form with ``wd == 0`` (``n`` and ``gbar`` decay by
    ``gamma1``, ``delta`` by ``gamma2`` and the centered weight moves by it;
    for ``centered=True`` also ``clip_weights`` unset) and runs as
    ``lazy_update=False`` otherwise.

    Parameters
    ----------
    learning_rate : float, default 0.001
    gamma1 : float, default 0.9
    gamma2 : float, default 0.9
    epsilon : float, default 1e-8
    centered : bool, default False
    clip_weights : float, optional
    lazy_update : {True, False, 'exact'}, default False
        How a row_sparse gradient is applied (MXNet densifies it: False).

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.RMSProp(learning_rate=0.1, gamma1=0.75, epsilon=0.0)
    >>> w = mx.nd.ones((2, 1)); st = opt.create_state(0, w)
    >>> opt.update(0, w, mx.nd.sparse.row_sparse_array(([[1.0]], [1]), shape=(2, 1)), st)
    >>> w.asnumpy().ravel()
    array([1. , 0.8], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8,
                 centered=False, clip_weights=None, lazy_update=False, **kwargs):
        super().__init__(lazy_update=lazy_update, learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    @property
    def _exact_nonlinear(self):
        return bool(self.clip_weights) and not self.centered

    def create_state(self, index, weight):
        count = 3 if self.centered else 1
        return tuple(zeros(weight.shape, weight.context, stype=weight.stype)
                     for _ in range(count))

    def _update_impl(self, index, weight, grad, state):
        lr, wd, _ = self._count(index)
        self._apply(weight, grad, state, {"lr": lr, "wd": wd})

    def _fused(self, weight, grad, state, step, lazy):
        kwargs = dict(gamma1=self.gamma1, epsilon=self.epsilon,
                      clip_weights=self.clip_weights or -1.0, **self._grad_kwargs(step, lazy))
        if self.centered:
            n, g, delta = state
            rmspropalex_update.update(weight, grad, n, g, delta, gamma2=self.gamma2,
                                      **kwargs)
        else:
            rmsprop_update.update(weight, grad, state[0], **kwargs)

    def _skip_map(self, step):
        if step["wd"]:
            return None
        g1, g2 = self.gamma1, self.gamma2
        if not self.centered:
            return [[1.0, 0.0], [0.0, g1]]
        if self.clip_weights:
            return None
        return [[1.0, 0.0, 0.0, g2], [0.0, g1, 0.0, 0.0], [0.0, 0.0, g1, 0.0],
                [0.0, 0.0, 0.0, g2]]

    def _exact_arrays(self, weight, state):
        return [weight, *state]

    def _exact_decode(self, comps, rows, window):
        if self._exact_nonlinear:
            comps = [comps[0].clamp(-self.clip_weights, self.clip_weights), *comps[1:]]
        return comps[:len(rows)]

"""FTML: Follow the Moving Leader (``mx.optimizer.FTML``)."""
from ..ndarray.creation import zeros
from ..ops.update_rules import ftml_d, ftml_update
from .optimizer import Optimizer, register

__all__ = ["FTML"]


@register
class FTML(Optimizer):
    """FTML (Zheng & Kwok 2017) at this parameter's update ``t``::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        v = beta2 * v + (1 - beta2) * g**2
        d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon)
        z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * weight;   d = d_t
        weight = -z / d_t

    Row_sparse gradients: ``lazy_update=False`` (default; MXNet's result, MXNet
    densifies the gradient) is the standard rule; ``True`` updates the gradient's
    rows only (row-restricted rule);
    ``'exact'``: with ``wd == 0`` a skipped step leaves the weight unchanged,
    decays ``v`` by ``beta2`` and sets ``d = d_t``, ``z = -d_t * weight``, applied
    in closed form; with ``wd != 0`` it runs as ``lazy_update=False``.

    Parameters
    ----------
    beta1 : float, default 0.6
    beta2 : float, default 0.999
    epsilon : float, default 1e-8
    lazy_update : {True, False, 'exact'}, default False
        How a row_sparse gradient is applied (MXNet densifies it: False).

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.FTML(learning_rate=0.1)
    >>> w = mx.nd.zeros((2, 1)); st = opt.create_state(0, w)
    >>> opt.update(0, w, mx.nd.sparse.row_sparse_array(([[1.0]], [0]), shape=(2, 1)), st)
    >>> w.asnumpy().ravel()
    array([-0.1,  0. ], dtype=float32)
    """

    _exact_nonlinear = True

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, lazy_update=False, **kwargs):
        super().__init__(lazy_update=lazy_update, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return tuple(zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype)
                     for _ in range(3))

    def _update_impl(self, index, weight, grad, state):
        lr, wd, t = self._count(index)
        self._apply(weight, grad, state, {"lr": lr, "wd": wd, "t": t})

    def _fused(self, weight, grad, state, step, lazy):
        d, v, z = state
        ftml_update.update(weight, grad, d, v, z, lr=step["lr"], beta1=self.beta1,
                           beta2=self.beta2, epsilon=self.epsilon, t=step["t"], wd=step["wd"],
                           rescale_grad=self.rescale_grad, clip_grad=self.clip_gradient or -1.0,
                           lazy_update=bool(lazy))

    def _skip_map(self, step):
        if step["wd"]:
            return None
        return [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, self.beta2, 0.0],
                [0.0, 0.0, 0.0, 1.0]]

    def _exact_arrays(self, weight, state):
        return [weight, *state]

    def _exact_decode(self, comps, rows, window):
        last = window.steps[-1]
        w, _, v, _ = comps
        d = ftml_d(v, last["lr"], self.beta1, self.beta2, self.epsilon, last["t"])
        return [w, d, v, -d * w]

"""LAMB: layer-wise adaptive moments (``mx.optimizer.LAMB``)."""
import torch

from ..ndarray.creation import zeros
from ..ndarray.ndarray import NDArray
from ..ndarray.stype import ROW_SPARSE
from ..ops.update_rules import lamb_update_phase1, lamb_update_phase2
from ..ops.update_rules.core import full_rows
from .optimizer import Optimizer, register

__all__ = ["LAMB"]


def _norm(t):
    return NDArray(torch.linalg.vector_norm(t.detach().float()).reshape(1))


@register
class LAMB(Optimizer):
    """LAMB (You et al. 2019): Adam's direction scaled by a layer-wise trust ratio::

        g = clip(rescale_grad * grad, clip_gradient)
        m = beta1 * m + (1 - beta1) * g;   v = beta2 * v + (1 - beta2) * g**2
        u = m_hat / (sqrt(v_hat) + epsilon) + wd * weight   (bias-corrected when asked)
        weight -= lr * (|weight| / |u|) * u                 (ratio 1 if a norm is 0)

    with ``|weight|`` bounded by ``lower_bound`` / ``upper_bound`` when given. Row_sparse
    gradients: ``lazy_update=False`` (default; MXNet's result, MXNet densifies the
    gradient) is the standard rule; ``True`` updates the gradient's rows only and takes
    both norms over those rows (row-restricted rule); ``'exact'`` has no closed form (the
    trust ratio needs every row's current value) and runs as ``lazy_update=False``.

    Parameters
    ----------
    learning_rate : float, default 0.001
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    epsilon : float, default 1e-6
    lower_bound, upper_bound : float, optional
    bias_correction : bool, default True
    lazy_update : {True, False, 'exact'}, default False
        How a row_sparse gradient is applied (MXNet densifies it: False).

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.LAMB(learning_rate=0.1)
    >>> w = mx.nd.ones((3, 2)); st = opt.create_state(0, w)
    >>> opt.update(0, w, mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [1]), shape=(3, 2)), st)
    >>> w.asnumpy()[:, 0].round(4)
    array([1. , 0.9, 1. ], dtype=float32)
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, lazy_update=False,
                 **kwargs):
        super().__init__(lazy_update=lazy_update, learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype),
                zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype))

    def _update_impl(self, index, weight, grad, state):
        lr, wd, t = self._count(index)
        self._apply(weight, grad, state, {"lr": lr, "wd": wd, "t": t})

    def _fused(self, weight, grad, state, step, lazy):
        mean, var = state
        g = lamb_update_phase1.update(
            weight, grad, mean, var, beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon,
            t=step["t"], bias_correction=self.bias_correction, wd=step["wd"],
            rescale_grad=self.rescale_grad, clip_gradient=self.clip_gradient or -1.0,
            lazy_update=bool(lazy))
        w = full_rows(weight, "LAMB", "weight")
        if g.stype == ROW_SPARSE:
            r1, r2 = _norm(w.index_select(0, g._indices)), _norm(g._data)
        else:
            r1, r2 = _norm(w), _norm(g._t)
        lamb_update_phase2.update(weight, g, r1, r2, lr=step["lr"],
                                  lower_bound=self.lower_bound if self.lower_bound else -1.0,
                                  upper_bound=self.upper_bound if self.upper_bound else -1.0)

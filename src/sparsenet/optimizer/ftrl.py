"""FTRL-proximal (``mx.optimizer.Ftrl``)."""
from ..ndarray.creation import zeros
from ..ops.update_rules import ftrl_update, ftrl_weight
from .optimizer import Optimizer, register

__all__ = ["Ftrl"]


@register
class Ftrl(Optimizer):
    """FTRL-proximal (McMahan et al., "Ad Click Prediction")::

        g = clip(rescale_grad * grad, clip_gradient)
        z += g - (sqrt(n + g**2) - sqrt(n)) * weight / lr;   n += g**2
        weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)

    Row_sparse gradients: ``lazy_update=True`` (default) is MXNet's rule for a
    row_sparse weight, and the same on a dense weight (where MXNet densifies the
    gradient and recomputes every row from ``z`` and ``n``, resetting untouched
    rows to 0 on the first step); ``False`` is that standard rule; ``'exact'``
    gives the standard result lazily: a row that skipped steps is recomputed from
    its ``z`` and ``n`` with the last skipped step's learning rate.

    Parameters
    ----------
    lamda1 : float, default 0.01
        L1 regularisation.
    learning_rate : float, default 0.1
    beta : float, default 1

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.Ftrl()
    >>> w = mx.nd.ones((5, 2)); st = opt.create_state(0, w)
    >>> g = mx.nd.sparse.row_sparse_array(([[1.0, 1.0]] * 2, [1, 3]), shape=(5, 2))
    >>> opt.update(0, w, g, st)
    >>> w.asnumpy()[:, 0]
    array([1.    , 0.4495, 1.    , 0.4495, 1.    ], dtype=float32)
    """

    _exact_nonlinear = True

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, stype=weight.stype),
                zeros(weight.shape, weight.context, stype=weight.stype))

    def _update_impl(self, index, weight, grad, state):
        lr, wd, _ = self._count(index)
        self._apply(weight, grad, state, {"lr": lr, "wd": wd})

    def _fused(self, weight, grad, state, step, lazy):
        z, n = state
        ftrl_update.update(weight, grad, z, n, lamda1=self.lamda1, beta=self.beta,
                           **self._grad_kwargs(step, lazy))

    def _skip_map(self, step):
        return [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]

    def _exact_arrays(self, weight, state):
        return [weight, state[0], state[1]]

    def _exact_decode(self, comps, rows, window):
        last = window.steps[-1]
        _, z, n = comps
        return [ftrl_weight(z, n, last["lr"], self.lamda1, self.beta, last["wd"]), z, n]

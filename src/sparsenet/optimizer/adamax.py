"""AdaMax (``mx.optimizer.Adamax``)."""
from ..ndarray.creation import zeros
from ..ops.update_rules import adamax_update
from .optimizer import Optimizer, register

__all__ = ["Adamax"]


@register
class Adamax(Optimizer):
    """AdaMax, Adam with the infinity norm (Kingma & Ba, section 7)::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * g;   u = max(beta2 * u, |g|)
        weight -= lr / (1 - beta1**t) * m / u

    Where ``u == 0`` (an element that never had a gradient) the step is 0; MXNet divides 0
    by 0 there and writes NaN into every untouched row of a densified row_sparse gradient.
    Row_sparse gradients: ``lazy_update=False`` (default; MXNet's result, MXNet densifies
    the gradient) is the standard rule; ``True`` updates the gradient's rows only
    (row-restricted rule); ``'exact'`` has a closed form with ``wd == 0`` (``m/u`` decays
    by ``beta1/beta2`` per skipped step and the weight moves by ``-lr_t`` times it) and
    runs as ``lazy_update=False`` otherwise.

    Parameters
    ----------
    learning_rate : float, default 0.002
    beta1 : float, default 0.9
    beta2 : float, default 0.999
    lazy_update : {True, False, 'exact'}, default False
        How a row_sparse gradient is applied (MXNet densifies it: False).

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.Adamax(learning_rate=0.1)
    >>> w = mx.nd.ones((2, 1)); st = opt.create_state(0, w)
    >>> opt.update(0, w, mx.nd.sparse.row_sparse_array(([[2.0]], [1]), shape=(2, 1)), st)
    >>> w.asnumpy().ravel()
    array([1. , 0.9], dtype=float32)
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, lazy_update=False, **kwargs):
        super().__init__(lazy_update=lazy_update, learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype),
                zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype))

    def _update_impl(self, index, weight, grad, state):
        lr, wd, t = self._count(index)
        self._apply(weight, grad, state, {"lr": lr / (1.0 - self.beta1 ** t), "wd": wd})

    def _fused(self, weight, grad, state, step, lazy):
        mean, u = state
        adamax_update.update(weight, grad, mean, u, beta1=self.beta1, beta2=self.beta2,
                             **self._grad_kwargs(step, lazy))

    def _skip_map(self, step):
        if step["wd"]:
            return None
        rho = self.beta1 / self.beta2
        return [[1.0, 0.0, 0.0, -step["lr"] * rho], [0.0, self.beta1, 0.0, 0.0],
                [0.0, 0.0, self.beta2, 0.0], [0.0, 0.0, 0.0, rho]]

    def _exact_arrays(self, weight, state):
        return [weight, state[0], state[1]]

    def _exact_encode(self, rows, window):
        w, m, u = rows
        ratio = (m / u).masked_fill_(u == 0, 0.0)
        return [w, m, u, ratio]

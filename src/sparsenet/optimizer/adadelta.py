"""AdaDelta (``mx.optimizer.AdaDelta``)."""
from ..ndarray.creation import zeros
from ..ops.update_rules import adadelta_update
from .optimizer import Optimizer, register

__all__ = ["AdaDelta"]


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler 2012), MXNet's rule (no learning rate; decay not scaled by one)::

        g = clip(rescale_grad * grad, clip_gradient)
        acc_g = rho * acc_g + (1 - rho) * g**2
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g
        acc_delta = rho * acc_delta + (1 - rho) * delta**2
        weight -= delta + wd * weight

    Unlike MXNet, the caller's gradient is not rescaled in place. Row_sparse
    gradients: ``lazy_update=False`` (default; MXNet's result, MXNet densifies the
    gradient) is the standard rule; ``True`` updates the gradient's rows only
    (row-restricted rule);
    ``'exact'`` applies skipped steps in closed form (``acc_g`` and
    ``acc_delta`` decay by ``rho``, the weight by ``1 - wd``, per skipped step).

    Parameters
    ----------
    rho : float, default 0.9
    epsilon : float, default 1e-5
    lazy_update : {True, False, 'exact'}, default False
        How a row_sparse gradient is applied (MXNet densifies it: False).

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.AdaDelta(rho=0.5, epsilon=1.0)
    >>> w = mx.nd.ones((2, 1)); st = opt.create_state(0, w)
    >>> opt.update(0, w, mx.nd.sparse.row_sparse_array(([[1.0]], [0]), shape=(2, 1)), st)
    >>> w.asnumpy().ravel().round(4)
    array([0.1835, 1.    ], dtype=float32)
    """

    def __init__(self, rho=0.90, epsilon=1e-5, lazy_update=False, **kwargs):
        super().__init__(lazy_update=lazy_update, **kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, stype=weight.stype),
                zeros(weight.shape, weight.context, stype=weight.stype))

    def _update_impl(self, index, weight, grad, state):
        _, wd, _ = self._count(index)
        self._apply(weight, grad, state, {"wd": wd})

    def _fused(self, weight, grad, state, step, lazy):
        acc_g, acc_delta = state
        adadelta_update.update(weight, grad, acc_g, acc_delta, rho=self.rho,
                               epsilon=self.epsilon, wd=step["wd"], rescale_grad=self.rescale_grad,
                               clip_gradient=self.clip_gradient or -1.0, lazy_update=bool(lazy))

    def _skip_map(self, step):
        return [[1.0 - step["wd"], 0.0, 0.0], [0.0, self.rho, 0.0], [0.0, 0.0, self.rho]]

    def _exact_arrays(self, weight, state):
        return [weight, state[0], state[1]]

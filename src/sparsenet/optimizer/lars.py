"""LARS: SGD with layer-wise adaptive learning rates (``mx.optimizer.LARS``)."""
import torch

from ..ndarray.stype import ROW_SPARSE
from ..ops.update_rules import sgd_mom_update, sgd_update
from ..ops.update_rules.core import full_rows
from .optimizer import Optimizer, register

__all__ = ["LARS"]


@register
class LARS(Optimizer):
    """LARS (You et al. 2017): SGD with momentum whose learning rate is scaled per layer::

        lr_layer = lr * eta * |w| / (|g'| + wd * |w| + eps)   (if |w| > 0 and |g'| > 0)

    ``|w|`` is the norm of the whole weight, ``|g'|`` of the rescaled gradient
    (the stored rows of a row_sparse one). Parameters named ``*gamma``,
    ``*beta`` or ``*bias`` keep ``lr``; only names ending with ``_weight`` get
    weight decay by default. With ``momentum_correction`` the momentum is scaled by
    ``lr / previous lr`` when a schedule changes the rate. The step itself is
    :class:`SGD`'s (``sgd_mom_update``), lazily for row_sparse gradients as in
    MXNet. ``lazy_update='exact'`` has no closed form (the layer-wise rate needs
    the up-to-date norm of every row) and runs as ``lazy_update=False``.

    Parameters
    ----------
    momentum : float, default 0.0
    lazy_update : {True, False, 'exact'}, default True
    eta : float, default 0.001
    eps : float, default 0
    momentum_correction : bool, default True

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.LARS(learning_rate=1.0, eta=0.5)
    >>> w = mx.nd.array([[3.0], [4.0]])
    >>> opt.update(0, w, mx.nd.array([[0.0], [1.0]]), None)
    >>> w.asnumpy().ravel()
    array([3. , 1.5], dtype=float32)
    """

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0,
                 momentum_correction=True, **kwargs):
        super().__init__(lazy_update=lazy_update, **kwargs)
        self.momentum = momentum
        self.momentum_correction = momentum_correction
        self.eta = eta
        self.eps = eps
        self.last_lr = None
        self.cur_lr = None

    def _get_lrs(self, indices):
        lr = self.learning_rate
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return [lr * self._mult(i, self.lr_mult, "lr_mult") for i in indices]

    def set_wd_mult(self, args_wd_mult):
        self.wd_mult = {}
        for name in self.idx2name.values():
            if not name.endswith("_weight"):
                self.wd_mult[name] = 0.0
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__wd_mult__" in attr[name]:
                    self.wd_mult[name] = float(attr[name]["__wd_mult__"])
        self.wd_mult.update(args_wd_mult)

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        return self._zero_state(weight)

    def _mp_state(self, master, inner):
        return (inner, master)

    def _mp_split(self, state):
        return state[1], state[0]

    def _layer_lr(self, index, weight, grad, lr, wd):
        name = self.idx2name.get(index, str(index))
        if name.endswith("gamma") or name.endswith("beta") or name.endswith("bias"):
            return lr
        w = full_rows(weight, "LARS", "weight").detach().float()
        g = (grad._data if grad.stype == ROW_SPARSE else grad._t).detach()
        w_norm = float(torch.linalg.vector_norm(w))
        g_norm = float(torch.linalg.vector_norm(g.float() * self.rescale_grad))
        if w_norm > 0.0 and g_norm > 0.0:
            return lr * self.eta * w_norm / (g_norm + wd * w_norm + self.eps)
        return lr

    def _update_impl(self, index, weight, grad, state):
        lr, wd, _ = self._count(index)
        lr = self._layer_lr(index, weight, grad, lr, wd)
        momentum = self.momentum
        if self.momentum_correction and self.last_lr:
            momentum = self.momentum * (self.cur_lr / self.last_lr)
        self._apply(weight, grad, state, {"lr": lr, "wd": wd, "momentum": momentum})

    def _fused(self, weight, grad, state, step, lazy):
        kwargs = dict(lr=step["lr"], wd=step["wd"], rescale_grad=self.rescale_grad,
                      clip_gradient=self.clip_gradient or -1.0, lazy_update=bool(lazy))
        if state is None:
            sgd_update.update(weight, grad, **kwargs)
        else:
            sgd_mom_update.update(weight, grad, state, momentum=step["momentum"], **kwargs)

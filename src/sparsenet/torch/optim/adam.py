"""Adam and AdamW for torch parameters (``torch.optim.Adam``/``AdamW`` semantics)."""
import math

from ...optimizer.adam import Adam as MXAdam
from ...optimizer.adamw import AdamW as MXAdamW
from ...ops.update_rules import adam_update, adamw_update
from ...optimizer import moments
from .base import BridgedOptimizer, check_flag, check_nonneg
from ...base import InvalidArgumentError

__all__ = ["Adam", "AdamW"]


def _torch_step(opt, index, decoupled):
    """One step's hyperparameters with torch's epsilon placement.

    torch divides by ``sqrt(v) / sqrt(1 - beta2**t) + eps``; the update rule divides by
    ``sqrt(v) + epsilon`` after folding the bias corrections into the learning rate, so
    torch's step is the rule's with ``epsilon = eps * sqrt(1 - beta2**t)``.
    """
    lr, wd, t = opt._count(index)
    bias2 = math.sqrt(1.0 - opt.beta2 ** t)
    lr_t = lr * bias2 / (1.0 - opt.beta1 ** t)
    step = {"lr": lr_t, "wd": wd, "L": lr_t, "c": 0.0, "e": opt.epsilon * bias2,
            "ratio": bias2}
    if decoupled:
        step["wd"] = step["c"] = lr * wd
    return step


class _TorchEpsAdam(MXAdam):
    """``mx.optimizer.Adam`` with torch's epsilon (the same ``adam_update`` rule entry)."""

    def _update_impl(self, index, weight, grad, state):
        self._apply(weight, grad, state, _torch_step(self, index, False))

    def _fused(self, weight, grad, state, step, lazy):
        mean, var = state
        adam_update.update(weight, grad, mean, var, beta1=self.beta1, beta2=self.beta2,
                           epsilon=step["e"], **self._grad_kwargs(step, lazy))

    def _skip_map(self, step):
        if step["wd"]:
            return None
        return moments.skip_map(self.beta1, self.beta2, step["L"], 0.0, step["ratio"])


class _TorchEpsAdamW(MXAdamW):
    """``mx.optimizer.AdamW`` with torch's epsilon (the same ``adamw_update`` rule entry)."""

    def _update_impl(self, index, weight, grad, state):
        self._apply(weight, grad, state, _torch_step(self, index, True))

    def _fused(self, weight, grad, state, step, lazy):
        mean, var = state
        adamw_update.update(weight, grad, mean, var, eta=1.0, beta1=self.beta1,
                            beta2=self.beta2, epsilon=step["e"], **self._grad_kwargs(step, lazy))

    def _skip_map(self, step):
        return moments.skip_map(self.beta1, self.beta2, step["L"], step["c"], step["ratio"])


class _AdamBase(BridgedOptimizer):
    state_names = ("exp_avg", "exp_avg_sq")
    _rule_class = None

    def __init__(self, params, lr, betas, eps, weight_decay, amsgrad, lazy_update):
        check_nonneg("learning rate", lr)
        check_nonneg("epsilon value", eps)
        check_nonneg("weight_decay value", weight_decay)
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise InvalidArgumentError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        for i, b in enumerate(betas):
            if not 0.0 <= b < 1.0:
                raise InvalidArgumentError(f"Invalid beta parameter at index {i}: expected "
                                           f"0 <= beta < 1, got {b!r}")
        if check_flag("amsgrad", amsgrad):
            raise InvalidArgumentError("amsgrad=True is not supported (no AMSGrad update rule)")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=False, lazy_update=lazy_update)
        super().__init__(params, defaults)

    def make_rule(self, group):
        beta1, beta2 = group["betas"]
        return self._rule_class(learning_rate=group["lr"], beta1=beta1, beta2=beta2,
                                epsilon=group["eps"], wd=group["weight_decay"],
                                lazy_update=group["lazy_update"])

    def configure(self, rule, group):
        super().configure(rule, group)
        if (rule.beta1, rule.beta2) != tuple(group["betas"]) or rule.epsilon != group["eps"]:
            raise InvalidArgumentError("changing group['betas'] or group['eps'] after the "
                                       "first step is not supported")


class Adam(_AdamBase):
    """``torch.optim.Adam`` through ``mx.optimizer.Adam``'s update rule.

    Dense gradients give ``torch.optim.Adam``'s result (L2 ``weight_decay`` added to
    the gradient, bias corrections, ``eps`` outside the square root). Sparse COO
    gradients by ``lazy_update``: ``True`` (default) updates the gradient's rows only
    (``torch.optim.SparseAdam``'s rule, plus weight decay); ``False`` gives the dense
    result; ``'exact'`` the dense result at lazy cost (skipped moment decays and weight
    drift in closed form; with ``weight_decay != 0`` the skipped step is non-linear and
    the step runs as ``False``). State keys: ``exp_avg``, ``exp_avg_sq``, ``step``
    (as torch's).

    Parameters
    ----------
    params : iterable
    lr : float, default 1e-3
    betas : (float, float), default (0.9, 0.999)
    eps : float, default 1e-8
    weight_decay : float, default 0
    amsgrad : bool, default False
        Only False is supported.
    lazy_update : {True, False, 'exact'}, default True

    Examples
    --------
    >>> import torch
    >>> from sparsenet.torch.optim import Adam
    >>> emb = torch.nn.Embedding(3, 1, sparse=True); _ = torch.nn.init.ones_(emb.weight)
    >>> opt = Adam(emb.parameters(), lr=0.1)
    >>> emb(torch.tensor([2])).sum().backward(); opt.step()
    >>> emb.weight.detach().ravel()
    tensor([1.0000, 1.0000, 0.9000])
    """

    _rule_class = _TorchEpsAdam
    torch_flags = {"decoupled_weight_decay": False}

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, *, lazy_update=True):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, lazy_update)


class AdamW(_AdamBase):
    """``torch.optim.AdamW`` through ``mx.optimizer.AdamW``'s update rule.

    ``w -= lr*wd*w + lr_t * m / (sqrt(v)/sqrt(1-beta2**t) + eps)``, torch's decoupled
    decay. Sparse COO gradients by ``lazy_update``: ``True`` updates (and decays) the
    gradient's rows only; ``False`` (default, as torch's dense result) every row;
    ``'exact'`` the dense result at lazy cost for any ``weight_decay``.

    Parameters
    ----------
    params : iterable
    lr : float, default 1e-3
    betas : (float, float), default (0.9, 0.999)
    eps : float, default 1e-8
    weight_decay : float, default 1e-2
    amsgrad : bool, default False
        Only False is supported.
    lazy_update : {True, False, 'exact'}, default False

    Examples
    --------
    >>> import torch
    >>> from sparsenet.torch.optim import AdamW
    >>> emb = torch.nn.Embedding(2, 1, sparse=True); _ = torch.nn.init.ones_(emb.weight)
    >>> opt = AdamW(emb.parameters(), lr=0.1, weight_decay=0.5)
    >>> emb(torch.tensor([0])).sum().backward(); opt.step()
    >>> emb.weight.detach().ravel()  # row 1: decay only
    tensor([0.8500, 0.9500])
    """

    _rule_class = _TorchEpsAdamW
    torch_flags = {"decoupled_weight_decay": True}

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, lazy_update=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, lazy_update)

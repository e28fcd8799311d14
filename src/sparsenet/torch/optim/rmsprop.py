"""RMSprop for torch parameters (``torch.optim.RMSprop`` semantics)."""
from ...base import InvalidArgumentError
from ...optimizer.rmsprop import RMSProp as MXRMSProp
from .base import BridgedOptimizer, check_flag, check_nonneg

__all__ = ["RMSprop"]


def _times_minus_lr(buf, group):
    """torch.optim's ``momentum_buffer`` as the rule's ``-lr * buffer``."""
    return buf.mul_(-group["lr"])


class RMSprop(BridgedOptimizer):
    """``torch.optim.RMSprop`` through ``mx.optimizer.RMSProp``'s update rules.

    ``g += weight_decay * w``; ``square_avg = alpha * square_avg + (1-alpha) * g**2``;
    ``centered=False``: ``w -= lr * g / sqrt(square_avg + eps**2)``;
    ``centered=True``: ``grad_avg = alpha * grad_avg + (1-alpha) * g``,
    ``delta = momentum * delta - lr * g / sqrt(square_avg - grad_avg**2 + eps**2)``,
    ``w += delta`` (``delta = -lr * buf`` of torch, rescaled when ``group['lr']``
    changes). The rule puts ``epsilon`` inside the square root (given ``eps**2``), torch
    adds ``eps`` outside: they differ by less than ``eps / sqrt(square_avg)`` relatively.

    MXNet's non-centered RMSProp rule has no momentum: ``momentum > 0`` needs
    ``centered=True`` (a ValueError otherwise).

    Sparse COO gradients by ``lazy_update``: ``True`` updates the gradient's rows only;
    ``False`` (default) gives torch's dense result; ``'exact'`` the dense result at
    lazy cost when ``weight_decay == 0`` (runs as ``False`` otherwise).

    Parameters
    ----------
    params : iterable
    lr : float, default 1e-2
    alpha : float, default 0.99
    eps : float, default 1e-8
    weight_decay : float, default 0
    momentum : float, default 0
    centered : bool, default False
    lazy_update : {True, False, 'exact'}, default False

    Examples
    --------
    >>> import torch
    >>> from sparsenet.torch.optim import RMSprop
    >>> emb = torch.nn.Embedding(2, 1, sparse=True); _ = torch.nn.init.ones_(emb.weight)
    >>> opt = RMSprop(emb.parameters(), lr=0.1, alpha=0.75, eps=0.0)
    >>> emb(torch.tensor([1])).sum().backward(); opt.step()
    >>> emb.weight.detach().ravel()
    tensor([1.0000, 0.8000])
    """

    torch_state = {"momentum_buffer": ("delta", _times_minus_lr)}

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                 centered=False, *, lazy_update=False):
        for name, value in (("learning rate", lr), ("epsilon value", eps),
                            ("momentum value", momentum), ("weight_decay value", weight_decay),
                            ("alpha value", alpha)):
            check_nonneg(name, value)
        centered = check_flag("centered", centered)
        if momentum > 0 and not centered:
            raise InvalidArgumentError(
                f"RMSprop with momentum={momentum!r} needs centered=True: MXNet's "
                f"non-centered RMSProp rule has no momentum term")
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                        momentum=momentum, centered=centered, lazy_update=lazy_update)
        super().__init__(params, defaults)

    def state_keys(self, group):
        if group["centered"]:
            return ("square_avg", "grad_avg", "delta")
        return ("square_avg",)

    def make_rule(self, group):
        return MXRMSProp(learning_rate=group["lr"], gamma1=group["alpha"],
                         gamma2=group["momentum"], epsilon=group["eps"] ** 2,
                         centered=group["centered"], wd=group["weight_decay"],
                         lazy_update=group["lazy_update"])

    def configure(self, rule, group):
        old = rule.lr
        super().configure(rule, group)
        if (rule.gamma1, rule.gamma2, rule.centered) != (group["alpha"], group["momentum"],
                                                         group["centered"]):
            raise InvalidArgumentError("changing group['alpha'], ['momentum'] or ['centered'] "
                                       "after the first step is not supported")
        rule.epsilon = group["eps"] ** 2
        if rule.centered and rule.gamma2 and old != rule.lr and old != 0:
            self.rescale_state(rule, group, "delta", rule.lr / old)

"""FTRL-proximal for torch parameters (no ``torch.optim`` counterpart)."""
from ...optimizer.ftrl import Ftrl as MXFtrl
from .base import BridgedOptimizer, check_nonneg

__all__ = ["FTRL"]


class FTRL(BridgedOptimizer):
    """FTRL-proximal (McMahan et al. 2013) through ``mx.optimizer.Ftrl``'s update rule::

        z += g - (sqrt(n + g**2) - sqrt(n)) * w / lr;   n += g**2
        w = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + weight_decay) * (|z| > lamda1)

    Sparse COO gradients by ``lazy_update``: ``True`` (default) recomputes the
    gradient's rows only; ``False`` every row from its ``z`` and ``n``; ``'exact'``
    the same result lazily (a skipped row is recomputed when it reappears, on
    :meth:`sync` and in :meth:`state_dict`).

    Parameters
    ----------
    params : iterable
    lr : float, default 0.1
    lamda1 : float, default 0.01
        L1 strength.
    beta : float, default 1
    weight_decay : float, default 0
        L2 strength.
    lazy_update : {True, False, 'exact'}, default True

    Examples
    --------
    >>> import torch
    >>> from sparsenet.torch.optim import FTRL
    >>> emb = torch.nn.Embedding(3, 1, sparse=True); _ = torch.nn.init.ones_(emb.weight)
    >>> opt = FTRL(emb.parameters())
    >>> emb(torch.tensor([1])).sum().backward(); opt.step()
    >>> emb.weight.detach().ravel()
    tensor([1.0000, 0.4495, 1.0000])
    """

    state_names = ("z", "n")

    def __init__(self, params, lr=0.1, lamda1=0.01, beta=1.0, weight_decay=0.0, *,
                 lazy_update=True):
        for name, value in (("learning rate", lr), ("lamda1", lamda1), ("beta", beta),
                            ("weight_decay value", weight_decay)):
            check_nonneg(name, value)
        defaults = dict(lr=lr, lamda1=lamda1, beta=beta, weight_decay=weight_decay,
                        lazy_update=lazy_update)
        super().__init__(params, defaults)

    def make_rule(self, group):
        return MXFtrl(learning_rate=group["lr"], lamda1=group["lamda1"], beta=group["beta"],
                      wd=group["weight_decay"], lazy_update=group["lazy_update"])

    def configure(self, rule, group):
        super().configure(rule, group)
        rule.lamda1 = group["lamda1"]
        rule.beta = group["beta"]

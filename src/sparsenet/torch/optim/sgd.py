"""SGD with momentum, Nesterov momentum and weight decay for torch parameters."""
from ...base import InvalidArgumentError
from ...optimizer.nag import NAG
from ...optimizer.sgd import SGD as MXSGD
from .base import BridgedOptimizer, check_flag, check_nonneg

__all__ = ["SGD"]


def _times_minus_lr(buf, group):
    """torch.optim's ``momentum_buffer`` as the rule's ``-lr * buffer``."""
    return buf.mul_(-group["lr"])


class SGD(BridgedOptimizer):
    """``torch.optim.SGD`` semantics through ``mx.optimizer.SGD`` / ``mx.optimizer.NAG``.

    Dense gradients give ``torch.optim.SGD``'s result. Sparse COO gradients (from
    ``nn.Embedding``/``nn.EmbeddingBag(sparse=True)``) are applied by ``lazy_update``:

    * ``True`` (default): only the gradient's rows change (their weight decay and
      momentum included); the other rows' momentum is frozen;
    * ``False``: torch's dense result (every row decays and follows its momentum),
      without densifying the gradient;
    * ``'exact'``: the lazy cost with the dense result: skipped steps are applied in
      closed form when a row reappears, on :meth:`sync` and in :meth:`state_dict`.

    The momentum state is MXNet's ``mom = -lr * buf`` (torch's ``momentum_buffer``
    times ``-lr``), kept under ``'mom'``; when ``group['lr']`` changes (a scheduler),
    it is rescaled by ``new_lr / old_lr`` so the result stays torch's.

    Parameters
    ----------
    params : iterable
    lr : float, default 0.001
    momentum : float, default 0
    dampening : float, default 0
        Only 0 is supported (the update rule has no dampening).
    weight_decay : float, default 0
        L2 penalty added to the gradient (as torch).
    nesterov : bool, default False
        Nesterov momentum (``mx.optimizer.NAG``'s rule, equal to torch's).
    lazy_update : {True, False, 'exact'}, default True

    Examples
    --------
    >>> import torch
    >>> from sparsenet.torch.optim import SGD
    >>> emb = torch.nn.EmbeddingBag(5, 2, sparse=True); _ = torch.nn.init.ones_(emb.weight)
    >>> opt = SGD(emb.parameters(), lr=0.1, weight_decay=0.5, lazy_update=True)
    >>> emb(torch.tensor([[1, 3]])).sum().backward(); opt.step()
    >>> emb.weight.detach()[:, 0]  # rows 0, 2, 4 had no gradient: untouched
    tensor([1.0000, 0.9000, 1.0000, 0.9000, 1.0000])
    """

    state_names = ("mom",)
    torch_state = {"momentum_buffer": ("mom", _times_minus_lr)}
    torch_step_optional = True

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *, lazy_update=True):
        check_nonneg("learning rate", lr)
        check_nonneg("momentum value", momentum)
        check_nonneg("weight_decay value", weight_decay)
        nesterov = check_flag("nesterov", nesterov)
        if not isinstance(dampening, (int, float)) or dampening != 0.0:
            raise InvalidArgumentError(f"dampening must be 0 (the update rule has no "
                                       f"dampening), got {dampening!r}")
        if nesterov and momentum <= 0.0:
            raise InvalidArgumentError("Nesterov momentum requires a momentum > 0, got "
                                       f"momentum={momentum!r}")
        defaults = dict(lr=lr, momentum=momentum, dampening=0.0, weight_decay=weight_decay,
                        nesterov=nesterov, lazy_update=lazy_update)
        super().__init__(params, defaults)

    def make_rule(self, group):
        klass = NAG if group["nesterov"] else MXSGD
        return klass(learning_rate=group["lr"], momentum=group["momentum"],
                     wd=group["weight_decay"], lazy_update=group["lazy_update"])

    def configure(self, rule, group):
        old = rule.lr
        super().configure(rule, group)
        if group["momentum"] != rule.momentum:
            raise InvalidArgumentError("changing group['momentum'] after the first step is "
                                       "not supported")
        if rule.momentum and old != rule.lr and old != 0:
            self.rescale_state(rule, group, "mom", rule.lr / old)

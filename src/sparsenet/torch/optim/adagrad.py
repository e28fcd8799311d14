"""Adagrad for torch parameters (``torch.optim.Adagrad`` semantics)."""
from ...optimizer.adagrad import AdaGrad as MXAdaGrad
from ...ndarray.ndarray import NDArray
from ...ndarray.row_sparse import RowSparseNDArray
from .base import BridgedOptimizer, check_nonneg

__all__ = ["Adagrad"]


class Adagrad(BridgedOptimizer):
    """``torch.optim.Adagrad`` through ``mx.optimizer.AdaGrad``'s update rule.

    ``clr = lr / (1 + (t-1) * lr_decay)``; ``g += weight_decay * w`` (L2, as torch: the
    decayed gradient enters the accumulator); ``state_sum += g**2``;
    ``w -= clr * g / sqrt(state_sum + eps**2)``. The last denominator is the rule's
    (``epsilon`` inside the square root, given ``eps**2``); torch's is
    ``sqrt(state_sum) + eps``: the two differ by less than ``eps / sqrt(state_sum)``
    relatively (about ``1e-10 / |g|`` with torch's default ``eps``).

    Sparse COO gradients by ``lazy_update``: with ``weight_decay == 0`` a row without
    gradient does not change, so all three modes give torch's result at lazy cost (as
    torch's own sparse Adagrad). With ``weight_decay != 0``: ``True`` (default) decays
    and updates the gradient's rows only; ``False`` and ``'exact'`` give torch's dense
    result, which changes every row (the L2 term enters the accumulator, a non-linear
    step: there is no closed-form catch-up), so the gradient plus decay is dense.

    Parameters
    ----------
    params : iterable
    lr : float, default 1e-2
    lr_decay : float, default 0
    weight_decay : float, default 0
    initial_accumulator_value : float, default 0
    eps : float, default 1e-10
    lazy_update : {True, False, 'exact'}, default True

    Examples
    --------
    >>> import torch
    >>> from sparsenet.torch.optim import Adagrad
    >>> emb = torch.nn.Embedding(3, 1, sparse=True); _ = torch.nn.init.ones_(emb.weight)
    >>> opt = Adagrad(emb.parameters(), lr=0.1)
    >>> emb(torch.tensor([1])).sum().backward(); opt.step()
    >>> emb.weight.detach().ravel()
    tensor([1.0000, 0.9000, 1.0000])
    """

    state_names = ("sum",)

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0,
                 initial_accumulator_value=0.0, eps=1e-10, *, lazy_update=True):
        for name, value in (("learning rate", lr), ("lr_decay", lr_decay),
                            ("weight_decay value", weight_decay),
                            ("initial_accumulator_value", initial_accumulator_value),
                            ("epsilon value", eps)):
            check_nonneg(name, value)
        defaults = dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, eps=eps,
                        lazy_update=lazy_update)
        super().__init__(params, defaults)

    def make_rule(self, group):
        return MXAdaGrad(learning_rate=group["lr"], eps=group["eps"] ** 2, wd=0.0,
                         lazy_update=group["lazy_update"])

    def configure(self, rule, group):
        rule.lr = group["lr"]
        rule.wd = 0.0  # torch's decay is L2 in the gradient: see prepare()
        rule.float_stable_eps = group["eps"] ** 2

    def init_state(self, group, binding):
        binding.tensors["sum"].fill_(group["initial_accumulator_value"])

    def prepare(self, rule, group, index, binding, grad):
        t = rule._index_update_count.get(index, 0) + 1
        rule.lr = group["lr"] / (1.0 + (t - 1) * group["lr_decay"])
        wd = group["weight_decay"]
        if not wd:
            return grad
        w = binding.weight._t
        if grad.stype == "row_sparse":
            if group["lazy_update"] is True:
                rows = grad._indices
                values = grad._data + wd * w.index_select(0, rows)
                return RowSparseNDArray._from_parts(values, rows, grad.shape)
            return NDArray(grad.to_torch().to_dense().add_(w, alpha=wd))
        return NDArray(grad._t.add(w, alpha=wd))

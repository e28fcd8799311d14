"""Large-batch SGD with warmup (``mx.optimizer.LBSGD``)."""
import math
import numbers

import torch

from ..base import InvalidArgumentError
from ..ndarray.stype import ROW_SPARSE
from ..ops.update_rules import sgd_mom_update, sgd_update
from ..ops.update_rules.core import full_rows
from .optimizer import Optimizer, register

__all__ = ["LBSGD"]

WARMUP_STRATEGIES = ("linear", "power2", "sqrt", "lars")


@register
class LBSGD(Optimizer):
    """Large-batch SGD (MXNet 1.9.1's ``LBSGD``): SGD with momentum on gradients summed
    over ``batch_scale`` calls, with a learning-rate multiplier that warms up.

    Each call adds the gradient to a per-parameter sum. Every ``batch_scale``-th call
    (counting from ``begin_epoch * updates_per_epoch``) runs :class:`SGD`'s step
    (``sgd_update`` / ``sgd_mom_update``: ``mom = momentum*mom - lr*wd*w - lr*g'``,
    ``w += mom``) with the mean gradient and ``lr * mult``, and resets the sum; the
    other calls leave the weight unchanged. With ``n`` the call count,
    ``N = warmup_epochs * updates_per_epoch`` and ``M = batch_scale``, ``mult`` is
    ``M`` once ``n >= N``, else ``1 + (M-1)*n/N`` (``'linear'``),
    ``1 + (M-1)*(n/N)**2`` (``'power2'``), ``1 + (M-1)*sqrt(n/N)`` (``'sqrt'``), or, for
    ``'lars'``, ``sqrt(|w|^2 / (|g|^2 + wd*|w|^2 + 1e-18))`` clipped to ``[0.01, 100]``
    (``g`` the mean gradient before ``rescale_grad``). ``num_epochs`` is accepted and
    unused, as in MXNet.

    Row_sparse gradients are summed as row_sparse and applied as SGD applies them:
    ``lazy_update=True`` (default, MXNet's: its LBSGD calls ``sgd_update`` with its
    default) changes the gradient's rows only; ``False`` is the standard rule;
    ``'exact'`` catches skipped rows up in closed form (SGD's), except with
    ``warmup_strategy='lars'`` (the multiplier needs every row's norm), which runs as
    ``lazy_update=False``.

    Differences from MXNet 1.9.1: an unknown ``warmup_strategy`` or a ``batch_scale``
    that is not a positive integer is refused (MXNet uses a multiplier of 1, or divides
    by zero), and the running sum holds a copy of the gradient, not the caller's array
    (MXNet keeps a reference, so a gradient buffer overwritten in place before the
    ``batch_scale``-th call is counted with its new values).

    Parameters
    ----------
    momentum : float, default 0.0
    multi_precision : bool, default False
        Float16 weights are updated through a float32 master copy (state
        ``(master, momentum)``, MXNet's layout).
    warmup_strategy : {'linear', 'power2', 'sqrt', 'lars'}, default 'linear'
    warmup_epochs : int, default 5
    batch_scale : int, default 1
    updates_per_epoch : int, default 32
    begin_epoch : int, default 0
    num_epochs : int, default 60
    lazy_update : {True, False, 'exact'}, default True

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.create('lbsgd', learning_rate=0.1, batch_scale=2,
    ...                           warmup_epochs=0)
    >>> w = mx.nd.ones((2,)); st = opt.create_state(0, w)
    >>> opt.update(0, w, mx.nd.array([1.0, 3.0]), st); w.asnumpy()
    array([1., 1.], dtype=float32)
    >>> opt.update(0, w, mx.nd.array([3.0, 1.0]), st); w.asnumpy()
    array([0.6, 0.6], dtype=float32)
    """

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy="linear",
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, lazy_update=True, **kwargs):
        super().__init__(multi_precision=multi_precision, lazy_update=lazy_update, **kwargs)
        if warmup_strategy not in WARMUP_STRATEGIES:
            raise InvalidArgumentError(
                f"LBSGD: warmup_strategy must be one of {', '.join(WARMUP_STRATEGIES)}, got "
                f"{warmup_strategy!r}")
        if (isinstance(batch_scale, bool) or not isinstance(batch_scale, numbers.Integral)
                or batch_scale < 1):
            raise InvalidArgumentError(
                f"LBSGD: batch_scale must be a positive integer (the number of calls whose "
                f"gradients make one step), got {batch_scale!r}")
        self.momentum = momentum
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = int(batch_scale)
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.cumgrads = {}

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        return self._zero_state(weight)

    # ------------------------------------------------------------------ schedule
    def _get_lbmult(self, nup):
        """The warmup multiplier after ``nup`` calls (MXNet's schedule).

        >>> import sparsenet as mx
        >>> opt = mx.optimizer.LBSGD(batch_scale=3, warmup_epochs=1, updates_per_epoch=4)
        >>> [opt._get_lbmult(n) for n in (1, 2, 4)]
        [1.5, 2.0, 3.0]
        """
        nwup = self.warmup_epochs * self.updates_per_epoch
        maxmult = float(self.batch_scale)
        if nup >= nwup:
            return maxmult
        if nwup <= 1:
            return 1.0
        if self.warmup_strategy == "linear":
            return 1.0 + (maxmult - 1) * nup / nwup
        if self.warmup_strategy == "power2":
            return 1.0 + (maxmult - 1) * (nup * nup) / (nwup * nwup)
        if self.warmup_strategy == "sqrt":
            return 1.0 + (maxmult - 1) * math.sqrt(float(nup) / nwup)
        return 1.0

    def _get_lars(self, weight, grad, wd):
        """The layer-wise multiplier ``sqrt(|w|^2 / (|g|^2 + wd*|w|^2 + 1e-18))`` in
        ``[0.01, 100]`` (squared norms summed in float64)."""
        w = full_rows(weight, "LBSGD", "weight").detach()
        g = (grad._data if grad.stype == ROW_SPARSE else grad._t).detach()
        weight2 = float(torch.sum(w.double() * w.double()))
        grad2 = float(torch.sum(g.double() * g.double()))
        lars = math.sqrt(weight2 / (grad2 + wd * weight2 + 1e-18))
        return min(max(lars, 0.01), 100.0)

    def _cumulate(self, index, grad):
        """Add ``grad`` to the running sum of ``index``; return ``(sum, calls)``."""
        cum = self.cumgrads.get(index)
        if cum is not None and cum["num_cums"] > 0:
            total = grad if cum["cum_grad"] is None else cum["cum_grad"] + grad
            num_cums = cum["num_cums"] + 1
        else:
            total, num_cums = grad, self.init_updates + 1
        self.cumgrads[index] = {"cum_grad": total, "num_cums": num_cums}
        return total, num_cums

    # ------------------------------------------------------------------ update
    def _update_impl(self, index, weight, grad, state):
        lr, wd = self._get_lr(index), self._get_wd(index)  # MXNet's order: read, then count
        self._update_count(index)
        total, num_cums = self._cumulate(index, grad)
        if num_cums % self.batch_scale:
            if total is grad:  # keep a copy, not the caller's (reusable) gradient buffer
                self.cumgrads[index]["cum_grad"] = grad.copy()
            return  # MXNet's step with lr=0 here changes nothing
        mean = total / self.batch_scale if self.batch_scale != 1 else total
        if self.warmup_strategy == "lars":
            lr *= self._get_lars(weight, mean, wd)
        else:
            lr *= self._get_lbmult(num_cums)
        self.cumgrads[index]["cum_grad"] = None
        self._apply(weight, mean, state, {"lr": lr, "wd": wd})

    def _fused(self, weight, grad, state, step, lazy):
        if state is None:
            sgd_update.update(weight, grad, **self._grad_kwargs(step, lazy))
        else:  # MXNet passes momentum only when it is positive
            sgd_mom_update.update(weight, grad, state, momentum=max(self.momentum, 0.0),
                                  **self._grad_kwargs(step, lazy))

    def _skip_map(self, step):
        if self.warmup_strategy == "lars":
            return None
        c = step["lr"] * step["wd"]
        if self.momentum == 0.0:
            return [[1.0 - c]]
        mu = max(self.momentum, 0.0)
        return [[1.0 - c, mu], [-c, mu]]

    def _exact_arrays(self, weight, state):
        return [weight] if state is None else [weight, state]

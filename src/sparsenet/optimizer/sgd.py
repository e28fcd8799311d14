"""SGD with momentum and weight decay (``mx.optimizer.SGD``)."""
import torch

from ..ops.native_rows import lazy_step, sgd_dense
from ..ops.optimizer_ops import sgd_mom_update, sgd_update
from .optimizer import Optimizer, register

__all__ = ["SGD", "ccSGD"]


@register
class SGD(Optimizer):
    """Stochastic gradient descent with momentum and weight decay.

    With ``g' = clip(rescale_grad * grad, clip_gradient)`` (clipping after
    rescaling, as MXNet 1.9.1 does), a step is::

        mom = momentum * mom - lr * wd * weight - lr * g'     # momentum > 0
        weight = weight + mom
        weight = (1 - lr * wd) * weight - lr * g'             # momentum == 0

    Row_sparse gradients (on a dense or row_sparse weight):

    * ``lazy_update=True`` (default): MXNet's lazy rule: only the rows in
      ``grad.indices`` change, weight decay included; the other rows' momentum is
      frozen, not decayed.
    * ``lazy_update=False``: the standard rule on every row (every row decays and
      moves with its momentum).
    * ``lazy_update='exact'``: the lazy cost with the standard result; a row that
      skipped ``k`` steps gets, in closed form, ``(1 - lr*wd)`` decay per skipped
      step (with momentum: the 2x2 linear recurrence of ``(weight, mom)``), with
      each skipped step's learning rate.

    Parameters
    ----------
    momentum : float, default 0.0
    lazy_update : {True, False, 'exact'}, default True
    **kwargs
        See :class:`Optimizer` (``learning_rate``, ``wd``, ``rescale_grad``,
        ``clip_gradient``, ``lr_scheduler``, ``multi_precision``...).

    Examples
    --------
    >>> import sparsenet as mx
    >>> sgd = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.1)
    >>> w = mx.nd.ones((5, 2)); mom = sgd.create_state(0, w)
    >>> g = mx.nd.sparse.row_sparse_array(([[1.0, 1.0]] * 2, [1, 3]), shape=(5, 2))
    >>> sgd.update(0, w, g, mom)
    >>> w.asnumpy()[:, 0]
    array([1.  , 0.89, 1.  , 0.89, 1.  ], dtype=float32)
    """

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(lazy_update=lazy_update, **kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        return self._zero_state(weight)

    def _mp_state(self, master, inner):
        return (inner, master)

    def _mp_split(self, state):
        return state[1], state[0]

    def _update_impl(self, index, weight, grad, state):
        self._update_count(index)
        self._apply(weight, grad, state, {"lr": self._get_lr(index), "wd": self._get_wd(index)})

    def update_multi_precision(self, index, weight, grad, state):
        """Update a list of weights at once (as MXNet's aggregated ``multi_sgd_update``).

        Plain SGD (no momentum, no clipping) on dense weights is applied to the
        whole list at once (one native call for the small ones, ``torch._foreach_*``
        for the rest), and lazily to row_sparse gradients by the per-weight lazy
        step: the same arithmetic as :func:`~sparsenet.ops.optimizer_ops.sgd_update`,
        without its per-call dispatch. Everything else goes through the per-weight
        path.

        >>> import sparsenet as mx
        >>> sgd = mx.optimizer.SGD(learning_rate=0.5)
        >>> ws = [mx.nd.ones((2,)), mx.nd.ones((3,))]
        >>> sgd.update_multi_precision([0, 1], ws, [mx.nd.ones((2,)), mx.nd.ones((3,))],
        ...                            [None, None])
        >>> ws[1].asnumpy()
        array([0.5, 0.5, 0.5], dtype=float32)
        """
        if (isinstance(index, (list, tuple)) and self.momentum == 0.0
                and self.lazy_update in (True, False)
                and (self.clip_gradient is None or self.clip_gradient < 0)):
            rest = self._update_plain_many(index, weight, grad, state)
            if not rest:
                return
            index, weight, grad, state = (list(x) for x in zip(*rest))
        super().update_multi_precision(index, weight, grad, state)

    def _update_plain_many(self, indices, weights, grads, states):
        """Apply plain SGD to the eligible items; return the others.

        As MXNet's aggregated update, every eligible index is counted first, then the
        learning rates and weight decays are read for all of them.
        """
        rest, take = [], []
        sparse_ok = self.lazy_update is True
        for item in zip(indices, weights, grads, states):
            _, w, g, st = item
            if st is None and w.stype == "default":
                wt = w._t
                if g.stype == "default":
                    gt = g._t
                    if gt.shape == wt.shape and gt.dtype == wt.dtype:
                        take.append(item)
                        continue
                elif (sparse_ok and g.stype == "row_sparse" and g._data.dtype == wt.dtype
                      and g._shape == tuple(wt.shape)):
                    take.append(item)
                    continue
            rest.append(item)
        if not take:
            return rest
        idx = [item[0] for item in take]
        self._update_count(idx)
        dense = {}
        for (_, w, g, _), lr, wd in zip(take, self._get_lrs(idx), self._get_wds(idx)):
            if g.stype == "default":
                dense.setdefault((lr, wd), []).append((w._t, g._t))
            elif not lazy_step("sgd", w._t, (), g._data, g._indices, lr=lr, wd=wd,
                               rescale_grad=self.rescale_grad):
                self._fused(w, g, None, {"lr": lr, "wd": wd}, True)  # the lazy update operator
        for (lr, wd), pairs in dense.items():
            if not wd:
                pairs = sgd_dense([p[0] for p in pairs], [p[1] for p in pairs], lr,
                                  self.rescale_grad)
                if not pairs:
                    continue
            ws, gs = [p[0] for p in pairs], [p[1] for p in pairs]
            with torch.no_grad():
                if wd:
                    torch._foreach_mul_(ws, 1.0 - lr * wd)
                torch._foreach_add_(ws, torch._foreach_mul(gs, self.rescale_grad), alpha=-lr)
        return rest

    def _fused(self, weight, grad, state, step, lazy):
        if self._native_lazy("sgd" if state is None else "sgd_mom", weight, grad,
                             () if state is None else (state,), step, lazy, a=self.momentum):
            return
        if state is None:
            sgd_update(weight, grad, out=weight, **self._grad_kwargs(step, lazy))
        else:
            sgd_mom_update(weight, grad, state, out=weight, momentum=self.momentum,
                           **self._grad_kwargs(step, lazy))

    def _skip_map(self, step):
        c = step["lr"] * step["wd"]
        if self.momentum == 0.0:
            return [[1.0 - c]]
        mu = self.momentum
        return [[1.0 - c, mu], [-c, mu]]

    def _exact_arrays(self, weight, state):
        return [weight] if state is None else [weight, state]


@register
class ccSGD(SGD):
    """Deprecated alias of :class:`SGD` (kept for MXNet compatibility).

    >>> import sparsenet as mx
    >>> isinstance(mx.optimizer.ccSGD(), mx.optimizer.SGD)
    True
    """

"""SGD with momentum and weight decay (``mx.optimizer.SGD``)."""
from ..ops.update_rules import sgd_mom_update, sgd_update
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

    def _step(self, index):
        lr, wd, _ = self._count(index)
        return {"lr": lr, "wd": wd}

    def _fused_args(self, state, step, lazy):
        if state is None:
            return sgd_update, (), self._grad_kwargs(step, lazy)
        params = self._grad_kwargs(step, lazy)
        params["momentum"] = self.momentum
        return sgd_mom_update, (state,), params

    def _update_list(self, index, weight, grad, state):
        """Update a list of weights at once (as MXNet's aggregated ``multi_sgd_update``).

        Every index is counted first, then the learning rates and weight decays are
        read for all of them (MXNet's order), and the list goes to the update
        operator's list entry, where the items whose rule row has a list kernel run
        together (plain SGD on dense weights: one native call for the small ones,
        torch's multi-tensor kernels for the rest). ``lazy_update='exact'`` and
        ``multi_precision`` update one weight at a time.

        >>> import sparsenet as mx
        >>> sgd = mx.optimizer.SGD(learning_rate=0.5)
        >>> ws = [mx.nd.ones((2,)), mx.nd.ones((3,))]
        >>> sgd.update_multi_precision([0, 1], ws, [mx.nd.ones((2,)), mx.nd.ones((3,))],
        ...                            [None, None])
        >>> ws[1].asnumpy()
        array([0.5, 0.5, 0.5], dtype=float32)
        """
        if self.multi_precision:  # float16 weights one at a time, in their turn
            super()._update_list(index, weight, grad, state)
            return
        self._update_count(index)
        self._touched = None
        op, extra = (sgd_update, {}) if self.momentum == 0.0 else (
            sgd_mom_update, {"momentum": self.momentum})
        shared, params = {}, []  # one parameter dict per (lr, wd): the items run together
        for lr, wd in zip(self._get_lrs(index), self._get_wds(index)):
            p = shared.get((lr, wd))
            if p is None:
                p = shared[(lr, wd)] = dict(
                    self._grad_kwargs({"lr": lr, "wd": wd}, self.lazy_update), **extra)
            params.append(p)
        op.update_many(weight, grad, [() if s is None else (s,) for s in state], params)

    def _zero_grad_is_identity(self, index):
        """Plain SGD without weight decay: a zero gradient changes nothing."""
        return (self.momentum == 0.0 and self._get_wd(index) == 0.0
                and not self.multi_precision)

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

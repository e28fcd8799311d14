"""The optimizer base class and the optimizer registry (the Updater: :mod:`.updater`).

Every optimizer updates a weight from its gradient through a fused update
operator (``mx.nd.sgd_update``, ``mx.nd.adam_update``, ...), whose
storage-type rows decide the kernel. A row_sparse gradient is applied in one of
three modes chosen by ``lazy_update``:

``True``
    lazy: only the rows in ``grad.indices`` change; weight decay and state
    decay apply to those rows only (MXNet's rule where MXNet has one); the
    default of the optimizers MXNet updates lazily (SGD, Adam, LARS, AdaGrad,
    GroupAdaGrad, Ftrl) and of this base class;
``False``
    standard: the dense semantics (every row decays), computed without
    densifying the gradient;
``'exact'``
    lazy cost, standard result: every row remembers the step at which it was
    last brought up to date, and the steps it skipped are applied in closed form
    when it appears again, when the optimizer saves or returns its states, and on
    :meth:`Optimizer.sync`. Optimizers (or settings) without a closed form say so
    in their docstring and run as ``lazy_update=False``.

>>> import sparsenet as mx
>>> opt = mx.optimizer.create('sgd', learning_rate=0.1, momentum=0.9, wd=0.1)
>>> w = mx.nd.ones((5, 2))
>>> state = opt.create_state(0, w)
>>> g = mx.nd.sparse.row_sparse_array(([[1.0, 1.0], [1.0, 1.0]], [1, 3]), shape=(5, 2))
>>> opt.update(0, w, g, state)
>>> w.asnumpy()[:, 0]
array([1.  , 0.89, 1.  , 0.89, 1.  ], dtype=float32)
"""
import warnings

import numpy as np
import torch

from ..base import (IndexOutOfRangeError, InvalidArgumentError, InvalidArgumentTypeError,
                    UnsupportedError)
from ..ndarray.creation import zeros
from ..ndarray.ndarray import NDArray
from ..ndarray.stype import ROW_SPARSE
from ..ops.update_rules.core import full_rows
from .exact import ClockTable, apply_linear

__all__ = ["Optimizer", "register", "create", "LAZY_MODES"]

LAZY_MODES = (True, False, "exact")


def _check_lazy(value):
    if value is True or value is False or value == "exact":
        return value
    if isinstance(value, (int, np.bool_)) and value in (0, 1):
        return bool(value)
    raise InvalidArgumentError(f"lazy_update must be True, False or 'exact', got {value!r}")


class Optimizer:
    """Base class of all optimizers.

    Parameters
    ----------
    rescale_grad : float, default 1.0
        The gradient is multiplied by this before anything else (often
        ``1/batch_size``).
    param_idx2name : dict of int to str, optional
        Parameter names by index; parameters whose name does not end with
        ``_weight`` or ``_gamma`` get a weight-decay multiplier of 0.
    wd : float, default 0.0
        Weight decay (L2) coefficient.
    clip_gradient : float, optional
        Clip the *rescaled* gradient to ``[-clip_gradient, clip_gradient]``.
    learning_rate : float, optional
        Learning rate (0.01 when neither this nor ``lr_scheduler`` is given);
        overrides the scheduler's ``base_lr`` when both are given.
    lr_scheduler : LRScheduler, optional
        Gives the learning rate as a function of :attr:`num_update`.
    sym : Symbol, optional
        Reads ``__lr_mult__`` / ``__wd_mult__`` attributes of its arguments.
    begin_num_update : int, default 0
    multi_precision : bool, default False
        Keep a float32 master copy of float16 weights and update that.
    param_dict : dict of int to Parameter, optional
        Gluon parameters whose ``lr_mult`` / ``wd_mult`` take precedence.
    lazy_update : {True, False, 'exact'}, default True
        How a row_sparse gradient is applied (see the module docstring); the
        optimizers MXNet updates densely default to False.

    Examples
    --------
    >>> import sparsenet as mx
    >>> opt = mx.optimizer.SGD(learning_rate=0.5)
    >>> opt.set_lr_mult({0: 0.1})
    >>> opt._get_lr(0), opt._get_lr(1)
    (0.05, 0.5)
    """

    opt_registry = {}
    #: Largest number of steps a row may lag behind in ``lazy_update='exact'``
    #: before every stale row is brought up to date at once.
    exact_window = 1024
    #: The exact-mode guard: None (the default for a bare optimizer, whose caller hands it
    #: gradients), or a sentence telling the caller how to catch rows up before a forward
    #: pass reads them. When set, a row_sparse gradient touching a row that lags behind
    #: raises :class:`~sparsenet.base.StateError` (the forward pass read a stale row)
    #: instead of being applied. ``gluon.Trainer`` and ``sparsenet.torch.optim`` set it.
    exact_guard = None

    def __init__(self, rescale_grad=1.0, param_idx2name=None, wd=0.0, clip_gradient=None,
                 learning_rate=None, lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None, lazy_update=True):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None:
            if lr_scheduler.base_lr != learning_rate:
                warnings.warn("learning rate from ``lr_scheduler`` has been overwritten by "
                              "``learning_rate`` in optimizer.", UserWarning, stacklevel=2)
                lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult = {}
        self.wd_mult = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.lazy_update = _check_lazy(lazy_update)
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise InvalidArgumentTypeError(
                f"param_idx2name must be a dict of parameter indexes to names, got "
                f"{type(param_idx2name).__name__}")
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self._clocks = ClockTable()
        # per device, index -> the update operator's plan (UpdateOperator.update_memo)
        self._all_plans = {0: {}}
        self._plans = self._all_plans[0]
        self._touched = None
        self.set_lr_mult({})
        self.set_wd_mult({})

    # ------------------------------------------------------------------ registry
    @staticmethod
    def register(klass):
        """Register an optimizer class under its lower-cased name (returns the class).

        >>> import sparsenet as mx
        >>> @mx.optimizer.register
        ... class MyDocSGD(mx.optimizer.SGD):
        ...     pass
        >>> type(mx.optimizer.create('mydocsgd')).__name__
        'MyDocSGD'
        """
        if not isinstance(klass, type):
            raise InvalidArgumentTypeError(f"register expects an Optimizer class, got {klass!r}")
        name = klass.__name__.lower()
        old = Optimizer.opt_registry.get(name)
        if old is not None and old is not klass:
            warnings.warn(f"New optimizer {klass.__module__}.{klass.__name__} is overriding "
                          f"existing optimizer {old.__module__}.{old.__name__}", UserWarning,
                          stacklevel=2)
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name, **kwargs):
        """Instantiate the optimizer registered as ``name`` (case-insensitive).

        >>> import sparsenet as mx
        >>> type(mx.optimizer.Optimizer.create_optimizer('SGD')).__name__
        'SGD'
        """
        klass = Optimizer.opt_registry.get(str(name).lower())
        if klass is None:
            raise InvalidArgumentError(f"Cannot find optimizer {name!r}; registered optimizers: "
                                       f"{sorted(Optimizer.opt_registry)}")
        return klass(**kwargs)

    # ------------------------------------------------------------------ learning rate
    @property
    def learning_rate(self):
        """The current learning rate (from the scheduler when there is one)."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    @learning_rate.setter
    def learning_rate(self, lr):
        self.set_learning_rate(lr)

    def set_learning_rate(self, lr):
        """Set the learning rate; not allowed when an ``lr_scheduler`` drives it."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note that "
                              "set_learning_rate can mutate the value of the learning rate of "
                              "the optimizer only when the LRScheduler of the optimizer is "
                              "undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale):
        """Deprecated: use :meth:`set_lr_mult`."""
        raise DeprecationWarning("set_lr_scale is deprecated; use set_lr_mult")

    def set_lr_mult(self, args_lr_mult):
        """Set per-parameter learning-rate multipliers (keys: names or indexes)."""
        self.lr_mult = {}
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__lr_mult__" in attr[name]:
                    self.lr_mult[name] = float(attr[name]["__lr_mult__"])
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Set per-parameter weight-decay multipliers (keys: names or indexes).

        Parameters named in ``param_idx2name`` whose name does not end with
        ``_weight`` or ``_gamma`` default to 0.
        """
        self.wd_mult = {}
        for name in self.idx2name.values():
            if not (name.endswith("_weight") or name.endswith("_gamma")):
                self.wd_mult[name] = 0.0
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and "__wd_mult__" in attr[name]:
                    self.wd_mult[name] = float(attr[name]["__wd_mult__"])
        self.wd_mult.update(args_wd_mult)

    def _set_current_context(self, device_id):
        """Select the per-device update counters (one updater per device shares an optimizer)."""
        self._index_update_count = self._all_index_update_counts.setdefault(device_id, {})
        self._plans = self._all_plans.setdefault(device_id, {})

    def _update_count(self, index):
        """Count one more update of ``index`` (or of each index of a list)."""
        counts, begin, top = self._index_update_count, self.begin_num_update, self.num_update
        for idx in index if isinstance(index, (list, tuple)) else (index,):
            count = counts.get(idx, begin) + 1
            counts[idx] = count
            if count > top:
                top = count
        self.num_update = top

    def _mult(self, index, table, attr):
        if index in self.param_dict:
            return getattr(self.param_dict[index], attr)
        if index in table:
            return table[index]
        if index in self.idx2name:
            return table.get(self.idx2name[index], 1.0)
        return 1.0

    def _get_lrs(self, indices):
        lr, params = self.learning_rate, self.param_dict
        return [lr * (params[i].lr_mult if i in params else self._mult(i, self.lr_mult, "lr_mult"))
                for i in indices]

    def _get_lr(self, index):
        """Learning rate of parameter ``index`` (global rate times its multiplier)."""
        params = self.param_dict  # (read live: cheaper than checking a cached value)
        return self.learning_rate * (params[index].lr_mult if index in params
                                     else self._mult(index, self.lr_mult, "lr_mult"))

    def _get_wds(self, indices):
        wd, params = self.wd, self.param_dict
        return [wd * (params[i].wd_mult if i in params else self._mult(i, self.wd_mult, "wd_mult"))
                for i in indices]

    def _get_wd(self, index):
        """Weight decay of parameter ``index`` (global decay times its multiplier)."""
        params = self.param_dict
        return self.wd * (params[index].wd_mult if index in params
                          else self._mult(index, self.wd_mult, "wd_mult"))

    # ------------------------------------------------------------------ states
    def create_state(self, index, weight):
        """Create the auxiliary state (momentum, moments...) of one weight; None by default."""
        return

    def _zero_state(self, weight):
        """A zero state like ``weight``: its storage type for lazy updates, dense otherwise.

        >>> import sparsenet as mx
        >>> w = mx.nd.zeros((3, 2)).tostype('row_sparse')
        >>> mx.optimizer.Adam(lazy_update=False)._zero_state(w).stype
        'default'
        """
        stype = weight.stype if self.lazy_update else "default"
        return zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype)

    def create_state_multi_precision(self, index, weight):
        """Like :meth:`create_state`, adding a float32 master copy for float16 weights.

        >>> import sparsenet as mx
        >>> opt = mx.optimizer.SGD(multi_precision=True, momentum=0.9)
        >>> mom, master = opt.create_state_multi_precision(0, mx.nd.ones((2,), dtype='float16'))
        >>> master.dtype
        dtype('float32')
        """
        if self.multi_precision and weight.dtype == np.float16:
            master = weight.astype(np.float32)
            return self._mp_state(master, self.create_state(index, master))
        if weight.dtype == np.float16:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or "
                          "slow convergence. Consider using multi_precision=True option of the "
                          f"{type(self).__name__} optimizer", UserWarning, stacklevel=2)
        return self.create_state(index, weight)

    def _mp_state(self, master, inner):
        """Multi-precision state layout: ``(master, inner)`` (SGD-like optimizers swap it)."""
        return (master, inner)

    def _mp_split(self, state):
        """``(master, inner)`` of a multi-precision state."""
        return state[0], state[1]

    # ------------------------------------------------------------------ updates
    def update(self, index, weight, grad, state):
        """Update ``weight`` (in place) from ``grad``; ``index`` may be a list (with lists)."""
        if isinstance(index, (list, tuple)):
            for i, w, g, s in zip(index, weight, grad, state):
                self._update_impl(i, w, g, s)
            return
        self._update_impl(index, weight, grad, state)

    def _update_impl(self, index, weight, grad, state):
        """Count the update of ``index`` and apply it (:meth:`_step`, then :meth:`_apply`)."""
        if type(self)._step is Optimizer._step:
            raise UnsupportedError(f"{type(self).__name__} must override update()")
        self._apply(weight, grad, state, self._step(index))

    def _step(self, index):
        """Count one update of parameter ``index``; return this step's hyperparameters
        (``lr``, ``wd``, ...) for :meth:`_apply` (an optimizer defines it with
        :meth:`_fused_args`, or overrides :meth:`_update_impl`)."""
        raise UnsupportedError(f"{type(self).__name__} must override update()")

    #: ``_fused_args(state, step, lazy) -> (op, states, params)``: the update operator this
    #: optimizer's step calls, the state arrays it passes and its keyword parameters.
    #: Optimizers that define it (with :meth:`_step`) get :meth:`_fused` and a list update
    #: that hands every weight of a list to the operator's list entry at once
    #: (:meth:`~sparsenet.ops.update_rules.core.UpdateOperator.update_many`).
    _fused_args = None

    def update_multi_precision(self, index, weight, grad, state):
        """Update, going through the float32 master copy for float16 weights.

        >>> import sparsenet as mx
        >>> opt = mx.optimizer.SGD(learning_rate=0.5, multi_precision=True)
        >>> w = mx.nd.ones((2,), dtype='float16')
        >>> st = opt.create_state_multi_precision(0, w)
        >>> opt.update_multi_precision(0, w, mx.nd.ones((2,), dtype='float16'), st)
        >>> w.asnumpy()
        array([0.5, 0.5], dtype=float16)
        """
        if isinstance(index, (list, tuple)):
            if self.lazy_update != "exact" and _has_list_form(type(self)):
                self._update_list(index, weight, grad, state)
                return
            for i, w, g, s in zip(index, weight, grad, state):
                self.update_multi_precision(i, w, g, s)
            return
        if not (self.multi_precision and weight.dtype == np.float16):
            form = _LIST_FORM.get(self.__class__)
            if form is None:
                form = _has_list_form(self.__class__)
            if form and self.lazy_update != "exact":
                self._planned_update(index, weight, grad, state)
            else:
                self.update(index, weight, grad, state)
            return
        master, inner = self._mp_split(state)
        self._touched = None
        self.update(index, master, grad.astype(np.float32), inner)
        _copy_rows(master, weight, self._touched)

    def _planned_update(self, index, weight, grad, state):
        """One update of an optimizer with a list form (:func:`_has_list_form`), not in
        ``lazy_update='exact'``: what :meth:`update` does (:meth:`_step`, then
        :attr:`_fused_args`' operator), through the operator's memo of this index
        (:meth:`~sparsenet.ops.update_rules.core.UpdateOperator.update_memo`: the rule row
        and the hyperparameter check of the last step are reused while the signature and
        the values are the same)."""
        lazy = self.lazy_update
        op, states, params = self._fused_args(state, self._step(index), lazy)
        self._touched = None
        op.update_memo(self._plans, index, state, weight, grad, states, params)
        if lazy and grad.stype == ROW_SPARSE:
            self._touched = grad._indices

    def _update_list(self, index, weight, grad, state):
        """A list update through the operators' list entries: each index is counted and
        its step read in order (as one update per index does), then the weights of each
        operator go to its :meth:`~sparsenet.ops.update_rules.core.UpdateOperator.update_many`
        at once, with one parameter dict per distinct set of hyperparameters (the items
        whose rule row has a list kernel run together). float16 weights with
        ``multi_precision`` are updated one at a time, in their turn. Not for
        ``lazy_update='exact'`` (whose clocks run per weight)."""
        lazy, mp, fused_args = self.lazy_update, self.multi_precision, self._fused_args
        calls, shared = {}, {}
        for i, w, g, s in zip(index, weight, grad, state):
            if mp and w.dtype == np.float16:
                self.update_multi_precision(i, w, g, s)
                continue
            op, states, params = fused_args(s, self._step(i), lazy)
            params = shared.setdefault((op, tuple(params.items())), params)
            lists = calls.get(op)
            if lists is None:
                lists = calls[op] = ([], [], [], [])
            lists[0].append(w)
            lists[1].append(g)
            lists[2].append(states)
            lists[3].append(params)
        self._touched = None
        for op, lists in calls.items():
            op.update_many(*lists)

    # ------------------------------------------------------------------ lazy modes
    def _apply(self, weight, grad, state, step):
        """Run one update step honouring ``lazy_update`` (used by the built-in optimizers).

        ``step`` holds this step's hyperparameters (``lr``, ``wd``, ...); it is
        passed to :meth:`_fused` and, in ``'exact'`` mode, to :meth:`_skip_map`.
        """
        sparse = grad.stype == ROW_SPARSE
        self._touched = None
        if self.lazy_update == "exact":
            clock = self._clock(weight)
            skip = self._skip_map(step) if sparse else None
            if skip is None:
                if self.exact_guard is not None:  # (a no-op unless a catch-up is pending)
                    clock.check_fresh(self, grad._indices if sparse else None,
                                      self.exact_guard)
                clock.sync(self, weight, state)
                self._fused(weight, grad, state, step, False)
                clock.record_all(step)
                return
            full = clock.window_full(self.exact_window)
            if full:
                if self.exact_guard is not None:
                    clock.check_fresh(self, grad._indices, self.exact_guard)
                clock.sync(self, weight, state)
            clock.catch_up(self, weight, state, grad._indices, self.exact_guard)
            self._fused(weight, grad, state, step, True)
            clock.record(self, skip, step, grad._indices)
            self._touched = None if full else grad._indices
            return
        self._fused(weight, grad, state, step, self.lazy_update)
        if sparse and self.lazy_update:
            self._touched = grad._indices

    def _fused(self, weight, grad, state, step, lazy):
        """Call the fused update operator(s) of this optimizer, through their
        :meth:`~sparsenet.ops.update_rules.core.UpdateOperator.update` entry (whose rule rows
        pick the kernel): by default the operator :attr:`_fused_args` names."""
        if self._fused_args is None:
            raise UnsupportedError(f"{type(self).__name__} must override _fused()")
        op, states, params = self._fused_args(state, step, lazy)
        op.update(weight, grad, *states, **params)

    def _zero_grad_is_identity(self, index):
        """Whether an update of parameter ``index`` with an all-zero gradient leaves its weight
        and its (absent) state unchanged; then a gradient known to be zero outside some
        entries may be applied to those entries only (the Trainer's ``dense_sparsity``).
        False unless an optimizer's rule says otherwise.

        >>> import sparsenet as mx
        >>> mx.optimizer.Adam()._zero_grad_is_identity(0)
        False
        """
        return False

    def _count(self, index):
        """Count the update; return ``(lr, wd, t)`` for parameter ``index``."""
        counts = self._index_update_count  # (:meth:`_update_count` of one index, inline)
        t = counts[index] = counts.get(index, self.begin_num_update) + 1
        if t > self.num_update:
            self.num_update = t
        return self._get_lr(index), self._get_wd(index), t

    def _grad_kwargs(self, step, lazy):
        """The operator arguments every optimizer passes: lr, wd, rescale, clip, lazy flag."""
        return dict(lr=step["lr"], wd=step["wd"], rescale_grad=self.rescale_grad,
                    clip_gradient=self.clip_gradient or -1.0, lazy_update=bool(lazy))

    def _skip_map(self, step):
        """The zero-gradient step as a square matrix acting on :meth:`_exact_arrays`
        (after :meth:`_exact_encode`), or None when it has no closed form."""
        return

    def _exact_arrays(self, weight, state):
        """The arrays whose rows a skipped step changes, in the order of :meth:`_skip_map`."""
        return [weight]

    def _exact_encode(self, rows, window):
        """Coordinates in which a skipped step is linear (default: the rows themselves)."""
        return rows

    def _exact_decode(self, comps, rows, window):
        """Rows of :meth:`_exact_arrays` from the coordinates after catching up."""
        return comps[:len(rows)]

    _exact_nonlinear = False  # True when _exact_decode does more than return coordinates

    def _exact_apply(self, maps, rows, window):
        """Catch rows up: encode, apply the per-row product of skip maps (``(R, n, n)``, or
        None for the identity), decode. Optimizers may replace it with a faster closed form."""
        comps = self._exact_encode(rows, window)
        if maps is not None:
            comps = apply_linear(maps, comps)
        return self._exact_decode(comps, rows, window)

    def _clock(self, weight):
        return self._clocks.setdefault(weight)

    def sync(self, weight, state):
        """Bring every row of ``weight`` (and its state) up to date (``lazy_update='exact'``).

        Rows that skipped steps get them applied in closed form. Call it before
        reading or saving a weight trained with ``lazy_update='exact'``; the
        :class:`~sparsenet.optimizer.updater.Updater` does it in its ``get_states`` and
        ``sync``. A no-op in the other modes.

        >>> import sparsenet as mx
        >>> opt = mx.optimizer.SGD(learning_rate=0.1, wd=0.1, lazy_update='exact')
        >>> w = mx.nd.ones((3, 1)); st = opt.create_state(0, w)
        >>> g = mx.nd.sparse.row_sparse_array(([[0.0]], [0]), shape=(3, 1))
        >>> opt.update(0, w, g, st); w.asnumpy().ravel()
        array([0.99, 1.  , 1.  ], dtype=float32)
        >>> opt.sync(w, st); w.asnumpy().ravel()
        array([0.99, 0.99, 0.99], dtype=float32)
        """
        if self.multi_precision and weight.dtype == np.float16 and isinstance(state, tuple):
            master, inner = self._mp_split(state)
            clock = self._clocks.get(master)
            if clock is not None:
                clock.sync(self, master, inner)
                _copy_rows(master, weight, None)
            return
        clock = self._clocks.get(weight)
        if clock is not None:
            clock.sync(self, weight, state)

    @torch.no_grad()
    def catch_up(self, weight, state, rows):
        """Bring rows ``rows`` of ``weight`` (and its state) up to date
        (``lazy_update='exact'``; a no-op otherwise).

        A forward pass must read caught-up rows: call this with the rows a batch reads
        (an embedding's ids, a CSR batch's column indices) before the forward pass.

        >>> import sparsenet as mx
        >>> opt = mx.optimizer.SGD(learning_rate=0.1, wd=0.1, lazy_update='exact')
        >>> w = mx.nd.ones((3, 1)); st = opt.create_state(0, w)
        >>> g = mx.nd.sparse.row_sparse_array(([[0.0]], [0]), shape=(3, 1))
        >>> opt.update(0, w, g, st)
        >>> opt.catch_up(w, st, mx.nd.array([2])); w.asnumpy().ravel()
        array([0.99, 1.  , 0.99], dtype=float32)
        """
        master, inner = weight, state
        if self.multi_precision and weight.dtype == np.float16 and isinstance(state, tuple):
            master, inner = self._mp_split(state)
        clock = self._clocks.get(master)
        if clock is None or not clock.steps:
            return
        ids = rows._t if isinstance(rows, NDArray) else torch.as_tensor(rows)
        ids = ids.detach().reshape(-1).to(device=clock.device)
        if ids.dtype.is_floating_point:
            ids = ids.round()
        ids = torch.unique(ids.to(torch.int64))
        if ids.numel() and (int(ids[0]) < 0 or int(ids[-1]) >= clock.rows):
            bad = int(ids[0]) if int(ids[0]) < 0 else int(ids[-1])
            raise IndexOutOfRangeError(f"catch_up: row {bad} is out of range for a weight of "
                                       f"{clock.rows} rows")
        clock.catch_up(self, master, inner, ids)
        if master is not weight:
            _copy_rows(master, weight, ids)

    def _forget_clocks(self):
        self._clocks = ClockTable()
        self._all_plans = {0: {}}
        self._plans = self._all_plans[0]

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        ret = self.__dict__.copy()
        ret.pop("param_dict", None)
        ret.pop("_clocks", None)
        ret.pop("_plans", None)
        ret.pop("_all_plans", None)
        ret.pop("exact_guard", None)
        ret["_touched"] = None
        return ret

    def __setstate__(self, state):
        self.__dict__ = state
        self.param_dict = {}
        self._clocks = ClockTable()
        self._all_plans = {0: {}}
        self._plans = self._all_plans[0]


#: What a list update may skip: an optimizer class whose per-weight path is :meth:`_step`
#: and :attr:`_fused_args` (none of its classes below Optimizer customises the steps around
#: them) updates a list through the operators' list entries.
_PER_WEIGHT_STEPS = ("update", "_update_impl", "_apply", "_fused", "update_multi_precision")
_LIST_FORM = {}


def _has_list_form(cls):
    """Whether ``cls``'s list updates may go through :meth:`Optimizer._update_list` (the
    same result as one update per weight): it defines :attr:`~Optimizer._fused_args` and
    :meth:`~Optimizer._step`, and no class of it overrides the per-weight steps they feed.

    (Adam and AdaGrad have one; the base class has none.)

    >>> _has_list_form(Optimizer)
    False
    """
    got = _LIST_FORM.get(cls)
    if got is None:
        args = step = False
        for klass in cls.__mro__:
            names = klass.__dict__
            if names.get("_fused_args", 0) is None:  # the base class (its steps use both)
                break
            if any(name in names for name in _PER_WEIGHT_STEPS):
                args = False
                break
            args = args or "_fused_args" in names
            step = step or "_step" in names
        got = _LIST_FORM[cls] = args and step
    return got


@torch.no_grad()
def _copy_rows(master, weight, rows):
    """Copy the float32 master into the low-precision weight (only ``rows`` when given)."""
    src = full_rows(master, "multi_precision", "weight")
    dst = full_rows(weight, "multi_precision", "weight")
    if rows is None:
        dst.copy_(src)
    elif rows.numel():
        dst.index_copy_(0, rows, src.index_select(0, rows).to(dst.dtype))


register = Optimizer.register
create = Optimizer.create_optimizer

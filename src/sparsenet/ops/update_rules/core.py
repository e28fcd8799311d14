"""What every update operator shares: :class:`UpdateOperator`, its rule rows, its plans.

An update operator takes ``(weight, grad, *states)``, updates the states in
place and returns the new weight. Its dense definition is a function on full
tensors that updates them in place; ``grad=None`` means a zero gradient. Its
storage-type rows (:func:`register_update_rules`) say which kernel runs:

* every array dense: the dense kernel (by default the definition on all rows, a
  cache-sized chunk at a time; a family file may give a faster one, e.g. torch's
  fused Adam);
* row_sparse gradient, ``lazy_update=True``: the lazy kernel, by default the
  definition on the gathered rows of ``grad.indices`` (:func:`lazy_rows`); no
  other row is read or written;
* row_sparse gradient, ``lazy_update=False``: the standard kernel, the dense
  semantics without densifying the gradient (:func:`standard_rows`);
* row_sparse weight, dense gradient: the dense kernel on the weight's rows.

Weights and states may be dense or row_sparse (all row_sparse, or a row_sparse
weight with dense states). A row_sparse weight must store all its rows (as in
MXNet); a row_sparse state that does not is filled with zero rows on first use.
Any other combination (CSR arrays, mixed states) *falls back* under the
storage-fallback policy like every other operator: the arrays are densified,
the definition runs, and the weight and the states are written back in their
own storage types.

One entry reaches a kernel: :meth:`UpdateOperator.plan` resolves the rule row of
a storage-type signature once (then caches it), and the public call
(``mx.nd.sgd_update(...)``), :meth:`UpdateOperator.update` (the optimizers') and
:meth:`UpdateOperator.update_many` (aggregated list updates) all run the kernel
it returns.

>>> import sparsenet as mx
>>> w = mx.nd.ones((4, 2)); mom = mx.nd.zeros((4, 2))
>>> g = mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [2]), shape=(4, 2))
>>> _ = mx.nd.sgd_mom_update(w, g, mom, lr=0.1, momentum=0.9, wd=0.1, out=w)
>>> w.asnumpy()[:, 0]
array([1.  , 1.  , 0.89, 1.  ], dtype=float32)
"""
import math
import numbers

import numpy as np
import torch

from ... import config
from ...base import (InvalidArgumentError, InvalidArgumentTypeError, OperatorArgumentError,
                     ShapeError, SparsenetError, StorageTypeError)
from ...ndarray import memory
from ...ndarray.cast_storage import dense_to_csr
from ...ndarray.ndarray import wrap
from ...ndarray.row_sparse import RowSparseNDArray
from ...ndarray.stype import DEFAULT, ROW_SPARSE
from ...torch_compat import set_grad_enabled
from ..errors import CONVERTED, raise_op_error
from ..registry import Operator, _write_out, rule

__all__ = ["UpdateOperator", "update_op", "register_update_rules", "full_rows", "chunk_bytes",
           "row_chunks", "dense_rows", "rescale_clip", "scaled_grad_alpha", "grad_plus_wd",
           "moments", "need_lr", "check_hyperparameters", "sqrt_", "by_params",
           "check_grad", "lazy_rows", "standard_rows", "no_clip", "LAZY", "STANDARD"]

#: Rule-row conditions of update operators (their plans are keyed on ``lazy_update``).
LAZY = {"lazy_update": True}
STANDARD = {"lazy_update": False}


# ---------------------------------------------------------------------- shared helpers
def full_rows(arr, opname, role="state"):
    """The tensor holding every row of a dense or row_sparse array (updated in place).

    A row_sparse weight must store all its rows; a row_sparse state that does
    not is given zero rows for the missing ones (its storage is replaced).

    >>> import sparsenet as mx
    >>> s = mx.nd.sparse.zeros('row_sparse', (3, 2))
    >>> full_rows(s, 'doc').shape
    torch.Size([3, 2])
    """
    if arr.stype == DEFAULT:
        return arr._t
    if arr.stype != ROW_SPARSE:
        raise StorageTypeError(f"{opname}: the {role} must be dense or row_sparse, got "
                               f"{arr.stype}")
    if arr._stores_every_row():
        return arr._data
    rows = arr.shape[0]
    if role == "weight":
        raise SparsenetError(
            f"{opname}: a row_sparse weight must store all its rows, this one stores "
            f"{arr._indices.numel()} of {rows}; initialise it with all rows (e.g. "
            f"mx.nd.zeros(shape).tostype('row_sparse') after filling, or w[:] = value)")
    data = memory.zeros(arr.shape, dtype=arr._data.dtype, device=arr._data.device)
    if arr._indices.numel():
        data.index_copy_(0, arr._indices, arr._data)
    idx = torch.arange(rows, device=data.device)
    arr._replace(RowSparseNDArray._from_parts(data, idx, arr.shape))
    return data


_CHUNK_BYTES_PER_THREAD = 1 << 18


def chunk_bytes():
    """Bytes of rows per kernel chunk: 256 KiB per torch thread (see :func:`row_chunks`).

    >>> chunk_bytes() == 256 * 1024 * torch.get_num_threads()
    True
    """
    return _CHUNK_BYTES_PER_THREAD * torch.get_num_threads()


def row_chunks(n, rows_like):
    """Slices of ``n`` rows small enough (about 256 KiB of ``rows_like`` rows per torch
    thread) that a kernel's temporaries stay in the CPU caches; one slice on other devices.

    Measured on the optimizer benchmark (BENCHMARKS.md): with 1 thread 256 KiB beats
    1 MiB, 4 MiB and no chunking; with 2 threads (torch splits each chunk between them)
    512 KiB beats the single-thread size by 10-25 %.

    >>> rows = torch.zeros(1).expand(5, 10**7)  # 40 MB rows (a view: no memory)
    >>> [(s.start, s.stop) for s in row_chunks(5, rows)][:2]
    [(0, 1), (1, 2)]
    """
    row_bytes = math.prod(rows_like.shape[1:]) * rows_like.element_size()
    step = max(1, chunk_bytes() // max(1, row_bytes))
    if n <= step or rows_like.device.type != "cpu":
        return (slice(0, n),)
    return [slice(lo, min(n, lo + step)) for lo in range(0, n, step)]


def dense_rows(op, tensors, grad, params):
    """``op``'s definition on every row of full tensors, a cache-sized chunk of rows at a time
    (row views, updated in place); ``grad`` None is a zero gradient."""
    for part in row_chunks(tensors[0].shape[0], tensors[0]):
        op.fn(tensors[0][part], None if grad is None else grad[part],
              *[t[part] for t in tensors[1:]], **params)


def rescale_clip(g, rescale_grad, clip_gradient):
    """``clip(rescale_grad * g, clip_gradient)`` as a new tensor (clip after rescale, as MXNet).

    ``clip_gradient`` None or negative means no clipping.

    >>> rescale_clip(torch.tensor([1.0, -4.0]), 2.0, 3.0)
    tensor([ 2., -3.])
    """
    g = g * rescale_grad
    if clip_gradient is not None and clip_gradient >= 0:
        g.clamp_(-clip_gradient, clip_gradient)
    return g


def no_clip(clip_gradient):
    """Whether ``clip_gradient`` (None or negative) turns clipping off.

    >>> no_clip(-1.0), no_clip(None), no_clip(0.5)
    (True, True, False)
    """
    return clip_gradient is None or clip_gradient < 0


def scaled_grad_alpha(grad, rescale_grad, clip_gradient):
    """``(g, k)`` with ``k * g == clip(rescale_grad * grad, clip_gradient)``; ``g`` is ``grad``
    itself (read only, no copy) when there is no clipping.

    >>> scaled_grad_alpha(torch.tensor([1.0]), 2.0, -1.0)
    (tensor([1.]), 2.0)
    """
    if clip_gradient is not None and clip_gradient >= 0:
        return rescale_clip(grad, rescale_grad, clip_gradient), 1.0
    return grad, rescale_grad


def grad_plus_wd(grad, weight, rescale_grad, wd, clip):
    """``clip(rescale_grad*grad + wd*weight, clip)`` (weight decay inside the clip), or None
    when both terms are zero. Each product is rounded before the sum, as the native kernels
    compute it (no fused multiply-add).

    >>> grad_plus_wd(torch.tensor([1.0]), torch.tensor([10.0]), 2.0, 0.5, 5.0)
    tensor([5.])
    """
    g = grad * rescale_grad if grad is not None else None
    if wd:
        g = weight * wd if g is None else g.add_(weight * wd)
    if g is not None and clip is not None and clip >= 0:
        g.clamp_(-clip, clip)
    return g


def moments(mean, var, g, beta1, beta2):
    """Adam's moments in place: ``mean = beta1*mean + (1-beta1)*g``,
    ``var = beta2*var + ((1-beta2)*g)*g`` (``g`` None: a zero gradient), each product rounded
    before the sum, as the native kernels compute them.

    >>> m, v = torch.zeros(1), torch.zeros(1)
    >>> moments(m, v, torch.tensor([2.0]), 0.5, 0.75); m, v
    (tensor([1.]), tensor([1.]))
    """
    mean.mul_(beta1)
    var.mul_(beta2)
    if g is not None:
        mean.add_(g * (1.0 - beta1))
        var.add_((g * (1.0 - beta2)).mul_(g))


def sqrt_(t):
    """``t.sqrt_()``, correctly rounded on every device, as the native kernels' (and MXNet's)
    ``sqrt``; returns ``t``.

    Torch's CPU ``sqrt`` of a large float tensor goes through MKL's vector math, within one
    ulp but not always correctly rounded (and a short tensor takes another path), so on the
    CPU the square root is NumPy's (IEEE ``sqrtps``/``sqrtpd``, correctly rounded) in place;
    CUDA's ``sqrt`` is correctly rounded already.

    >>> sqrt_(torch.tensor([4.0, 2.0]))
    tensor([2.0000, 1.4142])
    """
    if t.device.type == "cpu" and t.dtype in (torch.float32, torch.float64):
        a = t.numpy()
        np.sqrt(a, out=a)
        return t
    return t.sqrt_()


def by_params(items):
    """The ``(weight, grad, states, params)`` items of a list update grouped by their
    parameter dict (the same object): ``[(params, [items...]), ...]`` in first-seen order.

    >>> p, q = {'lr': 1.0}, {'lr': 2.0}
    >>> [(d['lr'], len(group)) for d, group in by_params([(1, 1, (), p), (2, 2, (), q),
    ...                                                    (3, 3, (), p)])]
    [(1.0, 2), (2.0, 1)]
    """
    groups = {}
    for item in items:
        group = groups.get(id(item[3]))
        if group is None:
            groups[id(item[3])] = group = (item[3], [])
        group[1].append(item)
    return list(groups.values())


def need_lr(lr, opname):
    """Return ``lr`` as a float; raise a clear error when it was not given.

    >>> need_lr(1, 'sgd_update')
    1.0
    """
    if lr is None:
        raise OperatorArgumentError(f"{opname}() needs the learning rate: pass lr=<float>")
    return float(lr)


#: Largest magnitude of a hyperparameter by the weight's dtype: the square root of the
#: dtype's largest value (float32's for float16/bfloat16, which compute in float32), so that
#: the kernels' products of two hyperparameters (``lr*wd``, ``rescale_grad**2``) stay finite.
_HYPER_LIMIT = {torch.float64: math.sqrt(torch.finfo(torch.float64).max)}
_HYPER_LIMIT_DEFAULT = math.sqrt(torch.finfo(torch.float32).max)


def check_hyperparameters(opname, weight, params):
    """Raise :class:`~sparsenet.base.InvalidArgumentError` naming the first hyperparameter
    in ``params`` that is NaN, infinite or larger in magnitude than the square root of the
    weight dtype's largest value (float32's for float16): the one check of every kernel
    (native and torch), so that both refuse what one of them could not compute.

    >>> import sparsenet as mx
    >>> check_hyperparameters('sgd_update', mx.nd.ones((2,)), {'lr': 0.1, 'wd': 1e30})
    Traceback (most recent call last):
    ...
    sparsenet.base.InvalidArgumentError: sgd_update: hyperparameter wd=1e+30 is out of range for a float32 weight: expected a finite number of magnitude at most 1.8446744e+19
    """
    limit = None
    for name, value in params.items():
        kind = value.__class__
        if kind is not float and kind is not int and (
                kind is bool or not isinstance(value, numbers.Real)):
            continue  # (the exact-type tests first: this runs for every update)
        if limit is None:
            wt = weight._t if weight.stype == DEFAULT else weight._data
            limit = _HYPER_LIMIT.get(wt.dtype, _HYPER_LIMIT_DEFAULT)
        if not -limit <= value <= limit:  # NaN fails both comparisons
            wt = weight._t if weight.stype == DEFAULT else weight._data
            dtype = str(wt.dtype).replace("torch.", "")
            raise InvalidArgumentError(
                f"{opname}: hyperparameter {name}={value!r} is out of range for a {dtype} "
                f"weight: expected a finite number of magnitude at most {limit:.8g}")


def check_grad(weight, grad, opname):
    """Raise when the gradient's shape or dtype differs from the weight's.

    >>> import sparsenet as mx
    >>> check_grad(mx.nd.ones((2,)), mx.nd.ones((3,)), 'sgd_update')
    Traceback (most recent call last):
    ...
    sparsenet.base.ShapeError: sgd_update: gradient shape (3,) does not match weight shape (2,)
    """
    # the parts' own attributes: this runs on every step of every parameter
    wt = weight._t if weight.stype == DEFAULT else weight._data
    gt = grad._t if grad.stype == DEFAULT else grad._data
    if (wt.shape if weight.stype == DEFAULT else weight._shape) != (
            gt.shape if grad.stype == DEFAULT else grad._shape):
        raise ShapeError(f"{opname}: gradient shape {tuple(grad.shape)} does not match weight "
                         f"shape {tuple(weight.shape)}")
    if gt.dtype != wt.dtype:
        raise InvalidArgumentTypeError(
            f"{opname}: gradient dtype {gt.dtype} differs from weight dtype "
            f"{wt.dtype}; cast the gradient, or use multi_precision=True for "
            f"float16 weights")


def all_rows(op, weight, states):
    """The full tensors of the weight and of each state (see :func:`full_rows`)."""
    return [full_rows(weight, op.name, "weight")] + [full_rows(s, op.name) for s in states]


# ---------------------------------------------------------------------- generic kernels
def lazy_rows(op, weight, grad, states, params):
    """Run ``op``'s dense definition on the rows in ``grad.indices`` only; return the weight."""
    check_grad(weight, grad, op.name)
    tensors = all_rows(op, weight, states)
    for part in row_chunks(grad._indices.numel(), tensors[0]):
        idx = grad._indices[part]
        rows = [t.index_select(0, idx) for t in tensors]
        op.fn(rows[0], grad._data[part], *rows[1:], **params)
        for t, r in zip(tensors, rows):
            t.index_copy_(0, idx, r)
    return weight


def standard_rows(op, weight, grad, states, params):
    """Standard (dense) semantics for a row_sparse gradient without densifying it: the
    zero-gradient rule on every row, then the touched rows from their saved values."""
    check_grad(weight, grad, op.name)
    tensors = all_rows(op, weight, states)
    idx = grad._indices
    rows = [t.index_select(0, idx) for t in tensors]
    dense_rows(op, tensors, None, params)
    if idx.numel():
        op.fn(rows[0], grad._data, *rows[1:], **params)
        for t, r in zip(tensors, rows):
            t.index_copy_(0, idx, r)
    return weight


def _dense_kernel(op):
    """The definition on every row of a dense or row_sparse weight with a dense gradient."""
    def kernel(weight, grad, *states, **params):
        check_grad(weight, grad, op.name)
        dense_rows(op, all_rows(op, weight, states), grad._t, params)
        return weight
    kernel.__name__ = f"_{op.name}_dense"
    return kernel


def _write_back(arr, t):
    """Store the dense tensor ``t`` in the sparse array ``arr``, keeping its storage type (a
    row_sparse array keeps every row, as update operators need of a weight)."""
    if arr.stype == ROW_SPARSE:
        idx = torch.arange(t.shape[0], device=t.device)
        arr._replace(RowSparseNDArray._from_parts(t, idx, tuple(t.shape)))
    else:
        arr._replace(dense_to_csr(t))


# ---------------------------------------------------------------------- the operator
class UpdateOperator(Operator):
    """A registry operator that updates a weight and its states in place.

    Differs from :class:`~sparsenet.ops.registry.Operator` in three ways: the
    kernels mutate their inputs (``out=weight`` is an in-place update, no
    ``out`` leaves the weight alone and returns a new array); a storage fallback
    writes the densified weight and states back into the caller's arrays; and
    the operator is not differentiable. Its rows may depend on ``lazy_update``
    only, so that a storage-type signature resolves to one kernel
    (:meth:`plan`), cached.

    >>> import sparsenet as mx
    >>> op = mx.nd.sgd_update
    >>> op.plan(('default', 'row_sparse'), lazy_update=True).__name__
    '_sgd_lazy'
    """

    # each instance documents itself: its definition's docstring plus its rule table
    __doc__ = Operator.__dict__["__doc__"]

    def __init__(self, fn, name=None, num_states=0, weight_out=True):
        super().__init__(fn, name=name, differentiable=False)
        self.num_states = num_states
        self.weight_out = weight_out
        self._lazy_default = self.defaults.get("lazy_update")
        self._plans = {}
        self._generation = 0  # rows added: the callers' memos (update_memo) are stale

    def rules_markdown(self):
        """The rule table of the docstring; a fallback writes the weight and the states back
        (the result has the weight's storage type, or is dense for LAMB's phase 1)."""
        lines = ["| inputs | output | when |", "|---|---|---|"]
        for r in self.rules():
            lines.append("| " + " | ".join(r.markdown_cells()) + " |")
        result = "the weight's" if self.weight_out else "dns"
        lines.append(f"| any other | {result}, with a storage fallback (weight and states "
                     f"written back) | |")
        return "\n".join(lines)

    def add_rule(self, pattern, out, when, fn, values_grad=False, reads=None):
        if when is not None and not (isinstance(when, dict) and set(when) <= {"lazy_update"}):
            raise InvalidArgumentError(
                f"rule for {self.name}: an update operator's rows may depend on "
                f"lazy_update only (a dict condition), got {when!r}")
        self._plans.clear()
        self._generation += 1
        return super().add_rule(pattern, out, when, fn, values_grad, reads)

    # ------------------------------------------------------------------ plans
    def plan(self, stypes, lazy_update=None):
        """The kernel for input storage types ``stypes``: its rule row's implementation, or
        the storage fallback; resolved once per signature, then cached.

        Parameters
        ----------
        stypes : tuple of str
            Storage types of ``(weight, grad, *states)``.
        lazy_update : bool, optional
            The operator's parameter (default: the operator's default).

        Returns
        -------
        callable
            ``kernel(weight, grad, *states, **params)``: updates in place and returns
            the result (the weight, or LAMB phase 1's direction).
        """
        key = (stypes, self._lazy_default if lazy_update is None else lazy_update)
        kernel = self._plans.get(key)
        if kernel is None:
            r = self.find_rule(stypes, {"lazy_update": key[1]})
            kernel = r.fn if r is not None else self._fallback(stypes)
            self._plans[key] = kernel
        return kernel

    def _fallback(self, stypes):
        op = self

        def kernel(weight, grad, *states, **params):
            config.report_fallback(op.name, stypes)
            inputs = (weight, grad) + states
            check_grad(weight, grad, op.name)
            tensors = [a._dense_tensor() for a in inputs]
            res = op.fn(*tensors, **{**op.defaults, **params})
            held = range(0 if op.weight_out else 2, 2 + op.num_states)
            for i in held:
                if i != 1 and inputs[i].stype != DEFAULT:
                    _write_back(inputs[i], tensors[i])
            return weight if op.weight_out else wrap(res)
        kernel.__name__ = f"_{self.name}_fallback"
        return kernel

    # ------------------------------------------------------------------ entries
    def update(self, weight, grad, *states, **params):
        """Update ``weight`` and ``states`` in place (``op(weight, grad, *states, out=weight,
        **params)`` without the argument parsing); return the kernel's result.

        The optimizers' entry: ``params`` are the operator's keyword parameters.

        >>> import sparsenet as mx
        >>> w = mx.nd.ones((2,))
        >>> mx.nd.sgd_update.update(w, mx.nd.ones((2,)), lr=0.5) is w
        True
        >>> w.asnumpy()
        array([0.5, 0.5], dtype=float32)
        """
        check_hyperparameters(self.name, weight, params)
        stypes = (weight.stype, grad.stype, *[s.stype for s in states])
        kernel = self._plans.get((stypes, params.get("lazy_update", self._lazy_default)))
        if kernel is None:
            kernel = self.plan(stypes, params.get("lazy_update"))
        return _run_unrecorded(kernel, weight, grad, states, params)

    def update_memo(self, memo, key, token, weight, grad, states, params):
        """:meth:`update` with a plan the caller keeps between steps (an optimizer, per
        parameter index): ``memo[key]`` remembers the kernel of the rule row this call
        resolved and the hyperparameters it checked, so that the next call with the same
        signature runs that kernel at once.

        The plan holds while the weight's and the gradient's storage types, ``token`` (an
        object standing for the states: the same token, the same states' storage types;
        the optimizer's state of that index) and every value of ``params`` (``lazy_update``
        included, which picks the row), the weight's dtype and the operator's rows are those
        of the last call;
        anything else resolves the row (:meth:`plan`) and checks the hyperparameters again.

        >>> import sparsenet as mx
        >>> w, memo = mx.nd.ones((2,)), {}
        >>> for _ in range(2):
        ...     _ = mx.nd.sgd_update.update_memo(memo, 0, None, w, mx.nd.ones((2,)), (),
        ...                                      dict(lr=0.25))
        >>> w.asnumpy()
        array([0.5, 0.5], dtype=float32)
        """
        wst, gst = weight.stype, grad.stype
        values = (self._generation, (weight._t if wst == DEFAULT else weight._data).dtype,
                  *params.values())
        plan = memo.get(key)
        if (plan is None or plan[0] is not self or plan[1] is not token or plan[2] != wst
                or plan[3] != gst or plan[4] != values):
            check_hyperparameters(self.name, weight, params)
            stypes = (wst, gst, *[s.stype for s in states])
            kernel = self.plan(stypes, params.get("lazy_update"))
            memo[key] = plan = (self, token, wst, gst, values, kernel)
        return _run_unrecorded(plan[5], weight, grad, states, params)

    def update_many(self, weights, grads, states, params):
        """:meth:`update` for lists (``states[i]`` a tuple, ``params[i]`` a dict): items that
        resolve to the same kernel run together where the kernel has a list form (its
        ``many`` attribute, e.g. plain SGD on many small dense weights in one native call).

        >>> import sparsenet as mx
        >>> ws = [mx.nd.ones((2,)), mx.nd.ones((3,))]
        >>> mx.nd.sgd_update.update_many(ws, [mx.nd.ones((2,)), mx.nd.ones((3,))], [(), ()],
        ...                              [dict(lr=0.5), dict(lr=0.25)])
        >>> ws[1].asnumpy()
        array([0.75, 0.75, 0.75], dtype=float32)
        """
        plans, default, groups = self._plans, self._lazy_default, {}
        checked = {}  # id(params) -> the weight dtype it was checked for (items share dicts)
        for item in zip(weights, grads, states, params):
            w, g, s, p = item
            dtype = w._t.dtype if w._t is not None else w._data.dtype
            if checked.get(id(p)) is not dtype:
                check_hyperparameters(self.name, w, p)
                checked[id(p)] = dtype
            stypes = (w.stype, g.stype, *[x.stype for x in s]) if s else (w.stype, g.stype)
            kernel = plans.get((stypes, p.get("lazy_update", default)))
            if kernel is None:
                kernel = self.plan(stypes, p.get("lazy_update"))
            group = groups.get(kernel)
            if group is None:
                groups[kernel] = [item]
            else:
                group.append(item)
        enabled = torch.is_grad_enabled()
        set_grad_enabled(False)
        try:
            for kernel, items in groups.items():
                many = getattr(kernel, "many", None)
                if many is not None:
                    many(items)
                    continue
                for w, g, s, p in items:
                    kernel(w, g, *s, **p)
        finally:
            set_grad_enabled(enabled)

    def __call__(self, *args, out=None, **kwargs):
        try:
            inputs, params = self._split_args(args, kwargs)
            weight = inputs[0]
            in_place = out is weight or (isinstance(out, (list, tuple)) and out
                                         and out[0] is weight)
            if self.weight_out and not in_place:
                inputs[0] = weight.copy()
            result = self.update(*inputs, **params)
            if out is None or in_place:
                return weight if in_place else result
            return _write_out(result, out)
        except CONVERTED as e:  # a builtin error from torch or a kernel: a sparsenet one
            raise_op_error(self.name, e, args)

    def _dispatch(self, inputs, params):
        """The symbolic executor's entry: run the planned kernel on ``inputs`` in place."""
        return self.update(*inputs, **params)


def _run_unrecorded(kernel, weight, grad, states, params):
    """``kernel(weight, grad, *states, **params)`` with autograd off (an update is never
    recorded), restoring the caller's mode."""
    if not torch.is_grad_enabled():
        return kernel(weight, grad, *states, **params)
    set_grad_enabled(False)
    try:
        return kernel(weight, grad, *states, **params)
    finally:
        set_grad_enabled(True)


# ---------------------------------------------------------------------- rule rows
def register_update_rules(op, lazy=None, standard=None, dense=None, rsp_weight_dense=None):
    """Register the storage-type rows of an update operator.

    Weight and states: all dense, all row_sparse, or a row_sparse weight with
    dense states. Gradient: dense (``dense`` on a dense weight, ``rsp_weight_dense``
    on a row_sparse one; both default to the definition on all rows, a
    cache-sized chunk at a time) or row_sparse (``lazy`` when ``lazy_update`` is
    true, ``standard`` otherwise; defaults :func:`lazy_rows` and
    :func:`standard_rows`).
    """
    lazy = lazy or (lambda w, g, *s, **p: lazy_rows(op, w, g, s, p))
    standard = standard or (lambda w, g, *s, **p: standard_rows(op, w, g, s, p))
    generic = _dense_kernel(op)
    for w_st, s_st in [(DEFAULT, DEFAULT), (ROW_SPARSE, ROW_SPARSE), (ROW_SPARSE, DEFAULT)]:
        if op.num_states == 0 and (w_st, s_st) == (ROW_SPARSE, DEFAULT):
            continue
        held = (s_st,) * op.num_states
        rule(op, w_st, ROW_SPARSE, *held, out=w_st, when=LAZY)(lazy)
        rule(op, w_st, ROW_SPARSE, *held, out=w_st, when=STANDARD)(standard)
        on_dense = dense if w_st == DEFAULT else rsp_weight_dense
        rule(op, w_st, DEFAULT, *held, out=w_st)(on_dense or generic)


def update_op(num_states=0, name=None, **kernels):
    """Decorator: make an :class:`UpdateOperator` from a dense in-place definition and
    register its storage-type rows (``kernels``: see :func:`register_update_rules`)."""
    def make(fn):
        op = UpdateOperator(fn, name=name, num_states=num_states)
        register_update_rules(op, **kernels)
        return op
    return make


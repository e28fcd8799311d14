"""Fused optimizer update operators (SGD family) and the machinery every update operator shares.

An update operator takes ``(weight, grad, *states)``, updates the states in
place and returns the new weight. Its dense definition is a function on full
tensors that updates them in place; ``grad=None`` means a zero gradient. The
sparse kernels are built from that one definition, so the dense rule, the lazy
rule and the standard rule can never disagree:

* dense gradient: the definition on all rows;
* row_sparse gradient, ``lazy_update=True``: the rows in ``grad.indices`` are
  gathered (``index_select``), the definition runs on them, and they are
  written back (``index_copy_``); no other row is read or written (on CPU,
  SGD, SGD-momentum, Adam and AdaGrad run the same rule as one native pass
  over those rows instead: :mod:`sparsenet.ops.native_rows`);
* row_sparse gradient, ``lazy_update=False``: the standard (dense) semantics
  without densifying the gradient: the zero-gradient rule runs on all rows and
  the touched rows are then recomputed from their saved values with their
  gradient rows.

Weights and states may be dense or row_sparse. A row_sparse weight must store
all its rows (as in MXNet); a row_sparse state that does not is filled with
zero rows on first use. The storage-type rows registered here are what
``docs/stype_table.md`` lists; a weight or state combination that is not listed
raises an error instead of falling back (a fallback would lose the in-place
state updates). Only the gradient may fall back (a CSR gradient is densified).

Calling convention (MXNet's): ``out=weight`` updates the weight in place and
returns it; without ``out`` a new array is returned and the weight is left
alone; the states are always updated in place.

>>> import sparsenet as mx
>>> w = mx.nd.ones((4, 2)); mom = mx.nd.zeros((4, 2))
>>> g = mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [2]), shape=(4, 2))
>>> _ = mx.nd.sgd_mom_update(w, g, mom, lr=0.1, momentum=0.9, wd=0.1, out=w)
>>> w.asnumpy()[:, 0]
array([1.  , 1.  , 0.89, 1.  ], dtype=float32)
"""
import math

import torch

from ..base import SparsenetError, StorageTypeError
from ..ndarray.row_sparse import RowSparseNDArray
from .native_rows import lazy_step, sgd_dense
from .registry import DEFAULT, ROW_SPARSE, Operator, _check_devices, rule

__all__ = ["UpdateOperator", "update_op", "full_rows", "chunk_bytes", "row_chunks", "dense_rows",
           "rescale_clip", "scaled_grad_alpha", "need_lr", "lazy_rows", "standard_rows",
           "sgd_update", "sgd_mom_update", "mp_sgd_update", "mp_sgd_mom_update",
           "nag_mom_update", "mp_nag_mom_update", "signsgd_update", "signum_update",
           "sgld_update", "dcasgd_update", "dcasgd_mom_update"]


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
    rows = arr.shape[0]
    if arr._indices.numel() == rows:
        return arr._data
    if role == "weight":
        raise SparsenetError(
            f"{opname}: a row_sparse weight must store all its rows, this one stores "
            f"{arr._indices.numel()} of {rows}; initialise it with all rows (e.g. "
            f"mx.nd.zeros(shape).tostype('row_sparse') after filling, or w[:] = value)")
    data = torch.zeros(arr.shape, dtype=arr._data.dtype, device=arr._data.device)
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


def need_lr(lr, opname):
    """Return ``lr`` as a float; raise a clear error when it was not given."""
    if lr is None:
        raise TypeError(f"{opname}() needs the learning rate: pass lr=<float>")
    return float(lr)


def _check_shapes(weight, grad, opname):
    if tuple(grad.shape) != tuple(weight.shape):
        raise ValueError(f"{opname}: gradient shape {tuple(grad.shape)} does not match weight "
                         f"shape {tuple(weight.shape)}")
    gdt = grad._data.dtype if grad.stype != DEFAULT else grad._t.dtype
    wdt = weight._data.dtype if weight.stype != DEFAULT else weight._t.dtype
    if gdt != wdt:
        raise TypeError(f"{opname}: gradient dtype {gdt} differs from weight dtype {wdt}; "
                        f"cast the gradient, or use multi_precision=True for float16 weights")


class UpdateOperator(Operator):
    """A registry operator that updates a weight and its states in place.

    Differs from :class:`~sparsenet.ops.registry.Operator` in three ways: the
    kernels mutate their inputs (``out=weight`` is an in-place update, no
    ``out`` leaves the weight alone and returns a new array); a weight or state
    storage combination without a rule raises instead of falling back; and the
    operator is not differentiable.
    """

    # each instance documents itself: its definition's docstring plus its rule table
    __doc__ = Operator.__dict__["__doc__"]

    def __init__(self, fn, name=None, num_states=0, weight_out=True, row_separable=False):
        super().__init__(fn, name=name, differentiable=False)
        self.num_states = num_states
        self.weight_out = weight_out
        self.row_separable = row_separable

    def __call__(self, *args, out=None, **kwargs):
        inputs, params = self._split_args(args, kwargs)
        weight = inputs[0]
        in_place = out is weight or (isinstance(out, (list, tuple)) and out and out[0] is weight)
        if self.weight_out and not in_place:
            inputs[0] = weight.copy()
        with torch.no_grad():
            result = self._dispatch(inputs, params)
        if out is None or in_place:
            return weight if in_place else result
        from .registry import _write_out
        return _write_out(result, out)

    def _dispatch(self, inputs, params):
        stypes = tuple(a.stype for a in inputs)
        if self.find_rule(stypes, params) is None:
            held = [s for i, s in enumerate(stypes) if i != 1]
            if any(s != DEFAULT for s in held):
                raise StorageTypeError(
                    f"{self.name}: no kernel for storage types {stypes} (weight, grad, states); "
                    f"the states must be dense or have the weight's storage type")
            if self.row_separable and stypes[1] == DEFAULT:
                _check_devices(inputs, self.name)
                _check_shapes(inputs[0], inputs[1], self.name)
                dense_rows(self, [inputs[0]._t] + [a._t for a in inputs[2:]], inputs[1]._t,
                           params)
                return inputs[0]
        return super()._dispatch(inputs, params)


def _dense_kernel(op):
    def kernel(weight, grad, *states, **params):
        _check_shapes(weight, grad, op.name)
        dense_rows(op, _all_rows(op, weight, states), grad._t, params)
        return weight
    kernel.__name__ = f"_{op.name}_dense_grad"
    return kernel


def _all_rows(op, weight, states):
    return [full_rows(weight, op.name, "weight")] + [full_rows(s, op.name) for s in states]


def lazy_rows(op, weight, grad, states, params):
    """Run ``op``'s dense definition on the rows in ``grad.indices`` only; return the weight."""
    _check_shapes(weight, grad, op.name)
    tensors = _all_rows(op, weight, states)
    for part in row_chunks(grad._indices.numel(), tensors[0]):
        idx = grad._indices[part]
        rows = [t.index_select(0, idx) for t in tensors]
        op.fn(rows[0], grad._data[part], *rows[1:], **params)
        for t, r in zip(tensors, rows):
            t.index_copy_(0, idx, r)
    return weight


def standard_rows(op, weight, grad, states, params):
    """Standard (dense) semantics for a row_sparse gradient without densifying it."""
    _check_shapes(weight, grad, op.name)
    tensors = _all_rows(op, weight, states)
    idx = grad._indices
    rows = [t.index_select(0, idx) for t in tensors]
    dense_rows(op, tensors, None, params)
    if idx.numel():
        op.fn(rows[0], grad._data, *rows[1:], **params)
        for t, r in zip(tensors, rows):
            t.index_copy_(0, idx, r)
    return weight


def _lazy(p):
    """lazy_update=True"""
    return bool(p["lazy_update"])


def _standard(p):
    """lazy_update=False"""
    return not p["lazy_update"]


def register_update_rules(op, lazy=None, standard=None, dense_grad=None):
    """Register the storage-type rows of an update operator.

    Weight and states: all dense, all row_sparse, or a row_sparse weight with
    dense states. Gradient: dense (the definition on all rows) or row_sparse
    (``lazy`` when ``lazy_update`` is true, ``standard`` otherwise).
    """
    lazy = lazy or (lambda w, g, *s, **p: lazy_rows(op, w, g, s, p))
    standard = standard or (lambda w, g, *s, **p: standard_rows(op, w, g, s, p))
    dense_grad = dense_grad or _dense_kernel(op)
    combos = [(DEFAULT, DEFAULT), (ROW_SPARSE, ROW_SPARSE), (ROW_SPARSE, DEFAULT)]
    if op.num_states == 0:
        combos = combos[:2]
    for w_st, s_st in combos:
        held = (s_st,) * op.num_states
        rule(op, w_st, ROW_SPARSE, *held, out=w_st, when=_lazy)(lazy)
        rule(op, w_st, ROW_SPARSE, *held, out=w_st, when=_standard)(standard)
        if (w_st, s_st) != (DEFAULT, DEFAULT):
            rule(op, w_st, DEFAULT, *held, out=w_st)(dense_grad)


def update_op(num_states=0, name=None, lazy=None):
    """Decorator: make an :class:`UpdateOperator` from a dense in-place definition and
    register its storage-type rows (``lazy`` replaces the generic lazy kernel)."""
    def make(fn):
        op = UpdateOperator(fn, name=name, num_states=num_states, row_separable=True)
        register_update_rules(op, lazy=lazy)
        return op
    return make


# ---------------------------------------------------------------------- SGD
def _sgd_lazy_add(weight, grad, lr=None, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                  lazy_update=True):
    """Lazy SGD: the native kernel (:mod:`~sparsenet.ops.native_rows`) on CPU; else one
    ``index_add_`` (no gather) without weight decay, the generic row kernel with it."""
    _check_shapes(weight, grad, "sgd_update")
    w = full_rows(weight, "sgd_update", "weight")
    lr = need_lr(lr, "sgd_update")
    if lazy_step("sgd", w, (), grad._data, grad._indices, lr=lr, wd=wd,
                 rescale_grad=rescale_grad, clip_gradient=clip_gradient):
        return weight
    if wd:
        return lazy_rows(sgd_update, weight, grad, (), dict(
            lr=lr, wd=wd, rescale_grad=rescale_grad, clip_gradient=clip_gradient,
            lazy_update=lazy_update))
    for part in row_chunks(grad._indices.numel(), w):
        # scale a cache-sized chunk, then a plain index_add_ (index_add_ with alpha != 1, and
        # torch's dense += sparse, are slower on CPU)
        step = rescale_clip(grad._data[part], rescale_grad, clip_gradient).mul_(-lr)
        w.index_add_(0, grad._indices[part], step.to(w.dtype))
    return weight


@update_op(num_states=0, lazy=_sgd_lazy_add)
def sgd_update(weight, grad, *, lr=None, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
               lazy_update=True):
    """SGD step: ``weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad, clip_gradient)``.

    With a row_sparse ``grad`` and ``lazy_update=True`` only the rows in
    ``grad.indices`` change (weight decay too); with ``lazy_update=False`` every
    row decays.

    >>> import sparsenet as mx
    >>> w = mx.nd.ones((3, 1))
    >>> g = mx.nd.sparse.row_sparse_array(([[1.0]], [1]), shape=(3, 1))
    >>> mx.nd.sgd_update(w, g, lr=0.1, wd=0.1).asnumpy().ravel()
    array([1.  , 0.89, 1.  ], dtype=float32)
    """
    lr = need_lr(lr, "sgd_update")
    if (not wd and grad is not None and (clip_gradient is None or clip_gradient < 0)
            and not sgd_dense((weight,), (grad,), lr, rescale_grad)):
        return weight  # small CPU arrays: the native kernel, as SGD's list update uses
    if wd:
        weight.mul_(1.0 - lr * wd)
    if grad is not None:
        weight.add_(rescale_clip(grad, rescale_grad, clip_gradient), alpha=-lr)
    return weight


def scaled_grad_alpha(grad, rescale_grad, clip_gradient):
    """``(g, k)`` with ``k * g == clip(rescale_grad * grad, clip_gradient)``; ``g`` is ``grad``
    itself (read only, no copy) when there is no clipping."""
    if clip_gradient is not None and clip_gradient >= 0:
        return rescale_clip(grad, rescale_grad, clip_gradient), 1.0
    return grad, rescale_grad


def _sgd_mom_lazy(weight, grad, mom, lr=None, momentum=0.0, wd=0.0, rescale_grad=1.0,
                  clip_gradient=-1.0, lazy_update=True):
    """Lazy SGD with momentum: the native kernel on CPU; else gather the momentum rows and
    ``index_add_`` them to the weight."""
    _check_shapes(weight, grad, "sgd_mom_update")
    w = full_rows(weight, "sgd_mom_update", "weight")
    m = full_rows(mom, "sgd_mom_update")
    lr = need_lr(lr, "sgd_mom_update")
    if lazy_step("sgd_mom", w, (m,), grad._data, grad._indices, lr=lr, wd=wd,
                 rescale_grad=rescale_grad, clip_gradient=clip_gradient, a=momentum):
        return weight
    for part in row_chunks(grad._indices.numel(), w):
        idx = grad._indices[part]
        rows = m.index_select(0, idx).mul_(momentum)
        if wd:
            rows.add_(w.index_select(0, idx), alpha=-lr * wd)
        g, k = scaled_grad_alpha(grad._data[part], rescale_grad, clip_gradient)
        rows.add_(g, alpha=-lr * k)
        m.index_copy_(0, idx, rows)
        w.index_add_(0, idx, rows.to(w.dtype))
    return weight


@update_op(num_states=1, lazy=_sgd_mom_lazy)
def sgd_mom_update(weight, grad, mom, *, lr=None, momentum=0.0, wd=0.0, rescale_grad=1.0,
                   clip_gradient=-1.0, lazy_update=True):
    """SGD with momentum: ``mom = momentum*mom - lr*wd*weight - lr*g'``; ``weight += mom``.

    ``g' = clip(rescale_grad * grad, clip_gradient)``. With a row_sparse ``grad``
    and ``lazy_update=True`` only the rows in ``grad.indices`` change, for both
    the weight and the momentum (other rows' momentum is frozen, not decayed).

    >>> import sparsenet as mx
    >>> w, m = mx.nd.ones((2, 1)), mx.nd.zeros((2, 1))
    >>> _ = mx.nd.sgd_mom_update(w, mx.nd.ones((2, 1)), m, lr=0.1, momentum=0.9, out=w)
    >>> m.asnumpy().ravel()
    array([-0.1, -0.1], dtype=float32)
    """
    lr = need_lr(lr, "sgd_mom_update")
    mom.mul_(momentum)
    if wd:
        mom.add_(weight, alpha=-lr * wd)
    if grad is not None:
        mom.add_(rescale_clip(grad, rescale_grad, clip_gradient), alpha=-lr)
    weight.add_(mom)
    return weight


@update_op(num_states=1)
def mp_sgd_update(weight, grad, weight32, *, lr=None, wd=0.0, rescale_grad=1.0,
                  clip_gradient=-1.0, lazy_update=True):
    """Multi-precision SGD: the float32 master ``weight32`` is updated, ``weight`` gets its cast.

    >>> import sparsenet as mx
    >>> w = mx.nd.ones((2,), dtype='float16'); w32 = w.astype('float32')
    >>> _ = mx.nd.mp_sgd_update(w, mx.nd.ones((2,), dtype='float16'), w32, lr=0.5, out=w)
    >>> w.asnumpy()
    array([0.5, 0.5], dtype=float16)
    """
    g = None if grad is None else grad.to(weight32.dtype)
    sgd_update.fn(weight32, g, lr=lr, wd=wd, rescale_grad=rescale_grad,
                  clip_gradient=clip_gradient)
    weight.copy_(weight32)
    return weight


@update_op(num_states=2)
def mp_sgd_mom_update(weight, grad, mom, weight32, *, lr=None, momentum=0.0, wd=0.0,
                      rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """Multi-precision SGD with momentum (float32 ``mom`` and master ``weight32``).

    >>> import sparsenet as mx
    >>> w = mx.nd.ones((2,), dtype='float16'); w32 = w.astype('float32')
    >>> m = mx.nd.zeros((2,))
    >>> _ = mx.nd.mp_sgd_mom_update(w, mx.nd.ones((2,), dtype='float16'), m, w32, lr=0.5,
    ...                             momentum=0.9, out=w)
    >>> w.asnumpy()
    array([0.5, 0.5], dtype=float16)
    """
    g = None if grad is None else grad.to(weight32.dtype)
    sgd_mom_update.fn(weight32, g, mom, lr=lr, momentum=momentum, wd=wd,
                      rescale_grad=rescale_grad, clip_gradient=clip_gradient)
    weight.copy_(weight32)
    return weight


# ---------------------------------------------------------------------- NAG
@update_op(num_states=1)
def nag_mom_update(weight, grad, mom, *, lr=None, momentum=0.0, wd=0.0, rescale_grad=1.0,
                   clip_gradient=-1.0, lazy_update=True):
    """Nesterov momentum: ``g' = clip(rescale_grad*grad) + wd*weight``;
    ``mom = momentum*mom - lr*g'``; ``weight += momentum*mom - lr*g'``.

    The momentum uses the weight from before the step (MXNet 1.9.1 reads the
    already-updated weight when ``out=weight``; see docs/differences.md).

    >>> import sparsenet as mx
    >>> w, m = mx.nd.ones((1,)), mx.nd.zeros((1,))
    >>> _ = mx.nd.nag_mom_update(w, mx.nd.ones((1,)), m, lr=0.1, momentum=0.9, out=w)
    >>> w.asnumpy()
    array([0.81], dtype=float32)
    """
    lr = need_lr(lr, "nag_mom_update")
    g = rescale_clip(grad, rescale_grad, clip_gradient) if grad is not None else None
    if wd:
        g = weight * wd if g is None else g.add_(weight, alpha=wd)
    mom.mul_(momentum)
    if g is not None:
        mom.add_(g, alpha=-lr)
        weight.add_(g, alpha=-lr)
    weight.add_(mom, alpha=momentum)
    return weight


@update_op(num_states=2)
def mp_nag_mom_update(weight, grad, mom, weight32, *, lr=None, momentum=0.0, wd=0.0,
                      rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """Multi-precision Nesterov momentum (float32 ``mom`` and master ``weight32``).

    >>> import sparsenet as mx
    >>> w = mx.nd.ones((1,), dtype='float16'); w32 = w.astype('float32'); m = mx.nd.zeros((1,))
    >>> _ = mx.nd.mp_nag_mom_update(w, mx.nd.ones((1,), dtype='float16'), m, w32, lr=0.1,
    ...                             momentum=0.9, out=w)
    >>> float(w32.asnumpy()[0])
    0.81...
    """
    g = None if grad is None else grad.to(weight32.dtype)
    nag_mom_update.fn(weight32, g, mom, lr=lr, momentum=momentum, wd=wd,
                      rescale_grad=rescale_grad, clip_gradient=clip_gradient)
    weight.copy_(weight32)
    return weight


# ---------------------------------------------------------------------- sign methods
@update_op(num_states=0)
def signsgd_update(weight, grad, *, lr=None, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                   lazy_update=True):
    """SignSGD: ``weight = (1 - lr*wd) * weight - lr * sign(grad)``.

    >>> import sparsenet as mx
    >>> w = mx.nd.zeros((2,))
    >>> mx.nd.signsgd_update(w, mx.nd.array([3.0, -0.5]), lr=0.1).asnumpy()
    array([-0.1,  0.1], dtype=float32)
    """
    lr = need_lr(lr, "signsgd_update")
    if wd:
        weight.mul_(1.0 - lr * wd)
    if grad is not None:
        weight.add_(torch.sign(grad), alpha=-lr)
    return weight


@update_op(num_states=1)
def signum_update(weight, grad, mom, *, lr=None, momentum=0.0, wd=0.0, rescale_grad=1.0,
                  clip_gradient=-1.0, wd_lh=0.0, lazy_update=True):
    """Signum: ``mom = momentum*mom - (1-momentum)*(wd*weight + g')``;
    ``weight = (1 - lr*wd_lh)*weight + lr*sign(mom)``.

    >>> import sparsenet as mx
    >>> w, m = mx.nd.zeros((2,)), mx.nd.zeros((2,))
    >>> _ = mx.nd.signum_update(w, mx.nd.array([3.0, -0.5]), m, lr=0.1, momentum=0.9, out=w)
    >>> w.asnumpy()
    array([-0.1,  0.1], dtype=float32)
    """
    lr = need_lr(lr, "signum_update")
    mom.mul_(momentum)
    if wd:
        mom.add_(weight, alpha=-(1.0 - momentum) * wd)
    if grad is not None:
        mom.add_(rescale_clip(grad, rescale_grad, clip_gradient), alpha=-(1.0 - momentum))
    if wd_lh:
        weight.mul_(1.0 - lr * wd_lh)
    weight.add_(torch.sign(mom), alpha=lr)
    return weight


# ---------------------------------------------------------------------- SGLD
@update_op(num_states=0)
def sgld_update(weight, grad, *, lr=None, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                lazy_update=True):
    """Stochastic gradient Langevin dynamics:
    ``weight += -lr/2 * (g' + wd*weight) + N(0, lr)`` (noise from torch's generator).

    Lazily (row_sparse gradient, ``lazy_update=True``) only the gradient's rows
    move and receive noise; otherwise every row receives noise.

    >>> import sparsenet as mx
    >>> mx.random.seed(0)
    >>> mx.nd.sgld_update(mx.nd.zeros((2, 3)), mx.nd.zeros((2, 3)), lr=0.0).asnumpy()
    array([[0., 0., 0.],
           [0., 0., 0.]], dtype=float32)
    """
    lr = need_lr(lr, "sgld_update")
    if wd:
        weight.mul_(1.0 - lr / 2 * wd)
    if grad is not None:
        weight.add_(rescale_clip(grad, rescale_grad, clip_gradient), alpha=-lr / 2)
    weight.add_(torch.randn(weight.shape, dtype=weight.dtype, device=weight.device),
                alpha=lr ** 0.5)
    return weight


# ---------------------------------------------------------------------- DCASGD
def _dcasgd_step(weight, grad, prev, lr, lamda, wd, rescale_grad, clip_gradient):
    step = weight * wd if wd else torch.zeros_like(weight)
    if grad is not None:
        g = rescale_clip(grad, rescale_grad, clip_gradient)
        step.add_(g).add_(g * g * (weight - prev), alpha=lamda)
    return step.mul_(-lr)


@update_op(num_states=1)
def dcasgd_update(weight, grad, prev_weight, *, lr=None, lamda=0.04, wd=0.0, rescale_grad=1.0,
                  clip_gradient=-1.0, lazy_update=True):
    """Delay-compensated async SGD without momentum:
    ``d = -lr*(g' + wd*w + lamda*g'*g'*(w - prev))``; ``prev = w``; ``w += d``.

    >>> import sparsenet as mx
    >>> w = mx.nd.ones((1,)); prev = w.copy()
    >>> mx.nd.dcasgd_update(w, mx.nd.ones((1,)), prev, lr=0.1).asnumpy()
    array([0.9], dtype=float32)
    """
    lr = need_lr(lr, "dcasgd_update")
    d = _dcasgd_step(weight, grad, prev_weight, lr, lamda, wd, rescale_grad, clip_gradient)
    prev_weight.copy_(weight)
    weight.add_(d)
    return weight


@update_op(num_states=2)
def dcasgd_mom_update(weight, grad, mom, prev_weight, *, lr=None, momentum=0.0, lamda=0.04,
                      wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """Delay-compensated async SGD with momentum:
    ``mom = momentum*mom - lr*(g' + wd*w + lamda*g'*g'*(w - prev))``; ``prev = w``; ``w += mom``.

    >>> import sparsenet as mx
    >>> w = mx.nd.ones((1,)); prev = w.copy(); m = mx.nd.zeros((1,))
    >>> _ = mx.nd.dcasgd_mom_update(w, mx.nd.ones((1,)), m, prev, lr=0.1, momentum=0.9, out=w)
    >>> w.asnumpy()
    array([0.9], dtype=float32)
    """
    lr = need_lr(lr, "dcasgd_mom_update")
    d = _dcasgd_step(weight, grad, prev_weight, lr, lamda, wd, rescale_grad, clip_gradient)
    mom.mul_(momentum).add_(d)
    prev_weight.copy_(weight)
    weight.add_(mom)
    return weight

"""SGD's update operators (plain, momentum, multi-precision): definitions, rule rows, kernels.

Kernel variants of the rows, one function each:

* lazy (row_sparse gradient, ``lazy_update=True``): ``_sgd_lazy_native`` /
  ``_sgd_mom_lazy_native`` (one pass over the rows in C, :mod:`~sparsenet.ops.row_kernels`;
  CPU float tensors) or ``_sgd_lazy_torch`` / ``_sgd_mom_lazy_torch`` (torch index ops; any
  device);
* dense gradient on a dense weight, plain SGD: ``_sgd_dense_native`` (many small CPU
  weights in one native call) or ``_sgd_dense_torch`` (torch's multi-tensor kernels), for one
  weight or a list (:meth:`~sparsenet.ops.update_rules.core.UpdateOperator.update_many`).

>>> import sparsenet as mx
>>> w = mx.nd.ones((3, 1))
>>> g = mx.nd.sparse.row_sparse_array(([[1.0]], [1]), shape=(3, 1))
>>> mx.nd.sgd_update(w, g, lr=0.1, wd=0.1).asnumpy().ravel()
array([1.  , 0.89, 1.  ], dtype=float32)
"""

from ...torch_compat import foreach_add_, foreach_mul_
from .. import row_kernels
from .core import (
    by_params,
    check_grad,
    full_rows,
    need_lr,
    no_clip,
    rescale_clip,
    row_chunks,
    scaled_grad_alpha,
    update_op,
)

__all__ = ["sgd_update", "sgd_mom_update", "mp_sgd_update", "mp_sgd_mom_update"]


# ---------------------------------------------------------------------- plain SGD: kernels
def _sgd_lazy_native(w, grad, lr, wd, rescale_grad, clip_gradient):
    """The native lazy SGD step; False where it does not apply (nothing written)."""
    return row_kernels.lazy_step("sgd", w, (), grad._data, grad._indices, lr=lr, wd=wd,
                                 rescale_grad=rescale_grad, clip_gradient=clip_gradient)


def _sgd_lazy_torch(w, grad, lr, wd, rescale_grad, clip_gradient):
    """Lazy SGD with torch index ops, each element as the native kernel computes it (the same
    operations in the same order and precision, no fused multiply-add: the same bits):
    ``w*decay + clip(g*rescale_grad)*(-lr)``, ``decay = 1 - lr*wd`` (skipped without weight
    decay). Without weight decay one ``index_add_`` per chunk (no gather)."""
    for part in row_chunks(grad._indices.numel(), w):
        # scale a cache-sized chunk, then a plain index_add_ (index_add_ with alpha != 1
        # fuses a multiply-add, and torch's dense += sparse is slower on CPU)
        idx = grad._indices[part]
        step = rescale_clip(grad._data[part], rescale_grad, clip_gradient).mul_(-lr)
        if wd:
            rows = w.index_select(0, idx).mul_(1.0 - lr * wd).add_(step.to(w.dtype))
            w.index_copy_(0, idx, rows)
        else:
            w.index_add_(0, idx, step.to(w.dtype))


def _sgd_lazy(weight, grad, *, lr=None, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
              lazy_update=True):
    """Lazy SGD: only the rows in ``grad.indices`` change (weight decay too)."""
    check_grad(weight, grad, "sgd_update")
    w = full_rows(weight, "sgd_update", "weight")
    lr = need_lr(lr, "sgd_update")
    if not _sgd_lazy_native(w, grad, lr, wd, rescale_grad, clip_gradient):
        _sgd_lazy_torch(w, grad, lr, wd, rescale_grad, clip_gradient)
    return weight


def _sgd_dense_native(pairs, lr, rescale_grad):
    """Plain SGD without weight decay or clipping on the small CPU tensors of ``pairs`` in one
    native call; returns the pairs it did not take."""
    return row_kernels.sgd_dense([w for w, _ in pairs], [g for _, g in pairs], lr, rescale_grad)


def _sgd_dense_torch(pairs, lr, wd, rescale_grad, clip_gradient):
    """Plain SGD on the tensors of ``pairs`` with torch's multi-tensor kernels (one pass per
    weight without weight decay); one weight on the CPU with the tensor's own ops, which are
    what torch's CPU multi-tensor kernels run on each tensor (the same bits, without the
    lists)."""
    if len(pairs) == 1 and pairs[0][0].is_cpu:
        w, g = pairs[0]
        if wd:
            w.mul_(1.0 - lr * wd)
        if no_clip(clip_gradient):
            w.add_(g, alpha=-lr * rescale_grad)
        else:
            w.add_(rescale_clip(g, rescale_grad, clip_gradient), alpha=-lr)
        return
    ws = [w for w, _ in pairs]
    if wd:
        foreach_mul_(ws, 1.0 - lr * wd)
    if no_clip(clip_gradient):
        foreach_add_(ws, [g for _, g in pairs], alpha=-lr * rescale_grad)
    else:
        foreach_add_(ws, [rescale_clip(g, rescale_grad, clip_gradient) for _, g in pairs],
                     alpha=-lr)


def _sgd_dense_group(p, pairs):
    """Plain SGD on the checked ``(weight, grad)`` tensors of ``pairs`` sharing the parameter
    dict ``p``: without weight decay or clipping the small CPU ones in one native call, the
    others in torch's multi-tensor kernels."""
    lr, wd = need_lr(p.get("lr"), "sgd_update"), p.get("wd", 0.0)
    rescale_grad, clip_gradient = p.get("rescale_grad", 1.0), p.get("clip_gradient", -1.0)
    if not wd and no_clip(clip_gradient):
        pairs = _sgd_dense_native(pairs, lr, rescale_grad)
    if pairs:
        _sgd_dense_torch(pairs, lr, wd, rescale_grad, clip_gradient)


def _sgd_dense_many(items):
    """Plain SGD, dense gradients on dense weights, for a list of ``(weight, grad, states,
    params)``: every item is checked first, then the items sharing one parameter dict run
    together (:func:`_sgd_dense_group`)."""
    for w, g, _, _ in items:
        check_grad(w, g, "sgd_update")
    for p, group in by_params(items):
        _sgd_dense_group(p, [(w._t, g._t) for w, g, _, _ in group])  # the row's: both dense


def _sgd_dense(weight, grad, **params):
    """Plain SGD on a dense weight with a dense gradient (the list kernel's group on one
    item, so that a list update and one update per weight give the same bits)."""
    check_grad(weight, grad, "sgd_update")
    _sgd_dense_group(params, [(weight._t, grad._t)])
    return weight


_sgd_dense.many = _sgd_dense_many


# ---------------------------------------------------------------------- plain SGD: operator
@update_op(num_states=0, lazy=_sgd_lazy, dense=_sgd_dense)
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
    if wd:
        weight.mul_(1.0 - lr * wd)
    if grad is not None:
        weight.add_(rescale_clip(grad, rescale_grad, clip_gradient), alpha=-lr)
    return weight


# ---------------------------------------------------------------------- momentum: kernels
def _sgd_mom_lazy_native(w, m, grad, lr, momentum, wd, rescale_grad, clip_gradient):
    """The native lazy SGD-momentum step; False where it does not apply."""
    return row_kernels.lazy_step("sgd_mom", w, (m,), grad._data, grad._indices, lr=lr, wd=wd,
                                 rescale_grad=rescale_grad, clip_gradient=clip_gradient,
                                 a=momentum)


def _sgd_mom_lazy_torch(w, m, grad, lr, momentum, wd, rescale_grad, clip_gradient):
    """Lazy SGD-momentum with torch index ops, each element as the native kernel computes it
    (the same bits): ``m = m*momentum + w*(-lr*wd) + g'*(-lr*k)`` with ``k*g' =
    clip(g*rescale_grad)``, then ``w = w + m``; gather the momentum rows, update them, write
    them back and ``index_add_`` them to the weight."""
    for part in row_chunks(grad._indices.numel(), w):
        idx = grad._indices[part]
        rows = m.index_select(0, idx).mul_(momentum)
        if wd:
            rows.add_(w.index_select(0, idx).mul_(-lr * wd))
        g, k = scaled_grad_alpha(grad._data[part], rescale_grad, clip_gradient)
        rows.add_(g * (-lr * k))
        m.index_copy_(0, idx, rows)
        w.index_add_(0, idx, rows.to(w.dtype))


def _sgd_mom_lazy(weight, grad, mom, *, lr=None, momentum=0.0, wd=0.0, rescale_grad=1.0,
                  clip_gradient=-1.0, lazy_update=True):
    """Lazy SGD with momentum: only the rows in ``grad.indices`` change, weight and momentum
    (the other rows' momentum is frozen, not decayed)."""
    check_grad(weight, grad, "sgd_mom_update")
    w = full_rows(weight, "sgd_mom_update", "weight")
    m = full_rows(mom, "sgd_mom_update")
    lr = need_lr(lr, "sgd_mom_update")
    if not _sgd_mom_lazy_native(w, m, grad, lr, momentum, wd, rescale_grad, clip_gradient):
        _sgd_mom_lazy_torch(w, m, grad, lr, momentum, wd, rescale_grad, clip_gradient)
    return weight


def _sgd_mom_dense_torch(triples, lr, momentum, wd, rescale_grad, clip_gradient):
    """SGD with momentum on the ``(weight, mom, grad)`` tensors of ``triples`` with torch's
    multi-tensor kernels, each element as the native kernels compute it (the same bits):
    ``m = m*momentum + w*(-lr*wd) + g'*(-lr*k)`` with ``k*g' = clip(g*rescale_grad)``, then
    ``w = w + m`` (products apart from the sums: no fused multiply-add)."""
    ws, ms = [w for w, _, _ in triples], [m for _, m, _ in triples]
    foreach_mul_(ms, momentum)
    if wd:
        foreach_add_(ms, [w * (-lr * wd) for w in ws])
    scaled = [scaled_grad_alpha(g, rescale_grad, clip_gradient) for _, _, g in triples]
    foreach_add_(ms, [g * (-lr * k) for g, k in scaled])
    foreach_add_(ws, ms)


def _sgd_mom_dense_many(items):
    """SGD with momentum, dense gradients on dense weights and momenta, for a list of
    ``(weight, grad, (mom,), params)``: the items sharing one parameter dict run together,
    the small CPU tensors in one native call (:func:`~sparsenet.ops.row_kernels.sgd_mom_dense`),
    the others in torch's multi-tensor kernels, with the same bits."""
    for w, g, _, _ in items:
        check_grad(w, g, "sgd_mom_update")
    for p, group in by_params(items):
        triples = [(w._t, s[0]._t, g._t) for w, g, s, _ in group]
        kw = dict(lr=need_lr(p.get("lr"), "sgd_mom_update"), momentum=p.get("momentum", 0.0),
                  wd=p.get("wd", 0.0), rescale_grad=p.get("rescale_grad", 1.0),
                  clip_gradient=p.get("clip_gradient", -1.0))
        rest = row_kernels.sgd_mom_dense(*zip(*triples), **kw)
        if rest:
            _sgd_mom_dense_torch(rest, **kw)


def _sgd_mom_dense(weight, grad, mom, **params):
    """SGD with momentum on a dense weight with a dense gradient (the list kernel on one item,
    so that a list update and one update per weight give the same bits)."""
    _sgd_mom_dense_many([(weight, grad, (mom,), params)])
    return weight


_sgd_mom_dense.many = _sgd_mom_dense_many


# ---------------------------------------------------------------------- momentum: operator
@update_op(num_states=1, lazy=_sgd_mom_lazy, dense=_sgd_mom_dense)
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


# ---------------------------------------------------------------------- multi-precision
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

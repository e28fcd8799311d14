"""The Adam family's update operators: Adam, AdamW, AdaMax, Nadam.

Kernel variants of the rows, one function each:

* Adam, lazy (row_sparse gradient, ``lazy_update=True``): ``_adam_lazy_native`` (one pass over
  the rows in C, :mod:`~sparsenet.ops.row_kernels`; CPU float tensors) or ``_adam_lazy_torch``
  (torch index ops; any device);
* Adam and AdamW, dense gradient on a dense weight: ``_adam_dense_fused`` /
  ``_adamw_dense_fused`` (torch's fused Adam kernel, :func:`sparsenet.torch_compat.fused_adam`;
  with rescaling, clipping or L2 decay the gradient is prepared a cache-sized chunk of rows
  at a time) or the definition on every row; for a list of Adam weights
  (``_adam_dense_many``), the small ones in one call of the fused kernel;
* everything else: the generic rows of
  :func:`~sparsenet.ops.update_rules.core.register_update_rules`.

>>> import sparsenet as mx
>>> w = mx.nd.ones((3, 1)); m = mx.nd.zeros((3, 1)); v = mx.nd.zeros((3, 1))
>>> g = mx.nd.sparse.row_sparse_array(([[1.0]], [1]), shape=(3, 1))
>>> _ = mx.nd.adam_update(w, g, m, v, lr=0.1, out=w)
>>> w.asnumpy().ravel().round(3)
array([1.   , 0.684, 1.   ], dtype=float32)
"""
import torch

from ...torch_compat import fused_adam, fused_adam_many
from .. import row_kernels
from .core import (
    by_params,
    check_grad,
    dense_rows,
    full_rows,
    grad_plus_wd,
    moments,
    need_lr,
    no_clip,
    rescale_clip,
    row_chunks,
    sqrt_,
    update_op,
)

__all__ = ["adam_update", "adamw_update", "adamax_update", "nadam_update", "nadam_momentum"]


# ---------------------------------------------------------------------- Adam: kernels
def _adam_lazy_native(w, m, v, grad, lr, beta1, beta2, epsilon, wd, rescale_grad,
                      clip_gradient):
    """The native lazy Adam step; False where it does not apply (nothing written)."""
    return row_kernels.lazy_step("adam", w, (m, v), grad._data, grad._indices, lr=lr, wd=wd,
                                 rescale_grad=rescale_grad, clip_gradient=clip_gradient,
                                 a=beta1, b=beta2, epsilon=epsilon)


def _adam_lazy_torch(w, m, v, grad, lr, beta1, beta2, epsilon, wd, rescale_grad,
                     clip_gradient):
    """Lazy Adam with torch index ops, each element as the native kernel computes it (the
    same bits): ``g' = clip(g*rescale_grad + w*wd)``, ``m = m*beta1 + (1-beta1)*g'``,
    ``v = v*beta2 + ((1-beta2)*g')*g'``, ``w = w + (m / (sqrt(v) + eps))*(-lr)``; gather the
    moment rows, update them, write them back and ``index_add_`` the step to the weight
    rows."""
    for part in row_chunks(grad._indices.numel(), w):
        idx, g = grad._indices[part], grad._data[part]
        if wd or rescale_grad != 1.0 or not no_clip(clip_gradient):
            g = grad_plus_wd(g, w.index_select(0, idx) if wd else None, rescale_grad, wd,
                             clip_gradient)
        mr = m.index_select(0, idx).mul_(beta1).add_(g * (1.0 - beta1))
        vr = v.index_select(0, idx).mul_(beta2).add_((g * (1.0 - beta2)).mul_(g))
        m.index_copy_(0, idx, mr)
        v.index_copy_(0, idx, vr)
        step = sqrt_(vr).add_(epsilon)
        torch.div(mr, step, out=step).mul_(-lr)  # index_add_ with alpha != 1 fuses
        w.index_add_(0, idx, step.to(w.dtype))


def _adam_lazy(weight, grad, mean, var, *, lr=None, beta1=0.9, beta2=0.999, epsilon=1e-8,
               wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """Lazy Adam: only the rows in ``grad.indices`` change (MXNet's rule, = torch's
    ``SparseAdam`` without weight decay)."""
    check_grad(weight, grad, "adam_update")
    w = full_rows(weight, "adam_update", "weight")
    m, v = full_rows(mean, "adam_update"), full_rows(var, "adam_update")
    lr = need_lr(lr, "adam_update")
    if not _adam_lazy_native(w, m, v, grad, lr, beta1, beta2, epsilon, wd, rescale_grad,
                             clip_gradient):
        _adam_lazy_torch(w, m, v, grad, lr, beta1, beta2, epsilon, wd, rescale_grad,
                         clip_gradient)
    return weight


def _adam_dense_fused(w, g, m, v, lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient):
    """torch's fused Adam on the whole weight; with rescaling or clipping, on cache-sized
    chunks of rows whose gradient ``clip(rescale_grad*g + wd*w)`` is computed first. False
    where the fused kernel does not apply (nothing written)."""
    if rescale_grad == 1.0 and no_clip(clip_gradient):
        return fused_adam(w, g, m, v, lr=lr, beta1=beta1, beta2=beta2, eps=epsilon,
                          weight_decay=wd)
    for part in row_chunks(w.shape[0], w):  # the first chunk decides: all alike
        g_part = grad_plus_wd(g[part], w[part], rescale_grad, wd, clip_gradient)
        if not fused_adam(w[part], g_part, m[part], v[part], lr=lr, beta1=beta1, beta2=beta2,
                          eps=epsilon):
            return False
    return True


def _adam_dense_one(w, g, m, v, lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient):
    """Adam on one dense weight's tensors: torch's fused kernel, else the definition on every
    row."""
    if not _adam_dense_fused(w, g, m, v, lr, beta1, beta2, epsilon, wd, rescale_grad,
                             clip_gradient):
        dense_rows(adam_update, [w, m, v], g, dict(
            lr=lr, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd, rescale_grad=rescale_grad,
            clip_gradient=clip_gradient))


def _adam_dense_group(p, items):
    """Adam on the ``(weight, grad, (mean, var), p)`` items sharing the parameter dict ``p``:
    the weights whose gradient is prepared in one piece (no rescaling or clipping, or one
    cache-sized chunk of rows) in one call of torch's fused kernel
    (:func:`~sparsenet.torch_compat.fused_adam_many`), each computed as
    :func:`_adam_dense_fused` computes it alone (the same bits); the others one at a time."""
    lr = need_lr(p.get("lr"), "adam_update")
    beta1, beta2, epsilon = p.get("beta1", 0.9), p.get("beta2", 0.999), p.get("epsilon", 1e-8)
    wd, rescale_grad = p.get("wd", 0.0), p.get("rescale_grad", 1.0)
    clip_gradient = p.get("clip_gradient", -1.0)
    plain = rescale_grad == 1.0 and no_clip(clip_gradient)
    whole, single = [], []
    for w, g, s, _ in items:
        t = w._t
        if plain or len(row_chunks(t.shape[0], t)) == 1:
            whole.append((t, g._t, s[0]._t, s[1]._t))
        else:
            single.append((t, g._t, s[0]._t, s[1]._t))
    if whole:
        ws, gs, ms, vs = (list(ts) for ts in zip(*whole))
        if not plain:  # the gradient with weight decay, rescaled and clipped, as one chunk
            gs = [grad_plus_wd(g, w, rescale_grad, wd, clip_gradient) for w, g in zip(ws, gs)]
        rest = fused_adam_many(ws, gs, ms, vs, lr=lr, beta1=beta1, beta2=beta2, eps=epsilon,
                               weight_decay=wd if plain else 0.0)
        single.extend(whole[i] for i in rest)
    for w, g, m, v in single:
        _adam_dense_one(w, g, m, v, lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient)


def _adam_dense_many(items):
    """Adam with dense gradients on dense weights and moments, for a list of
    ``(weight, grad, (mean, var), params)``: the items sharing one parameter dict run together
    (:func:`_adam_dense_group`)."""
    for w, g, _, _ in items:
        check_grad(w, g, "adam_update")
    for p, group in by_params(items):
        _adam_dense_group(p, group)


def _adam_dense(weight, grad, mean, var, **params):
    """Adam with a dense gradient on a dense weight (the list kernel's group on one item, so
    that a list update and one update per weight give the same bits)."""
    check_grad(weight, grad, "adam_update")
    _adam_dense_group(params, [(weight, grad, (mean, var), params)])
    return weight


_adam_dense.many = _adam_dense_many


# ---------------------------------------------------------------------- Adam: operator
@update_op(num_states=2, lazy=_adam_lazy, dense=_adam_dense)
def adam_update(weight, grad, mean, var, *, lr=None, beta1=0.9, beta2=0.999, epsilon=1e-8,
                wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """Adam step (bias correction is the caller's, folded into ``lr``)::

        g = clip(rescale_grad*grad + wd*weight, clip_gradient)
        mean = beta1*mean + (1-beta1)*g;  var = beta2*var + (1-beta2)*g**2
        weight -= lr * mean / (sqrt(var) + epsilon)

    >>> import sparsenet as mx
    >>> w, m, v = mx.nd.ones((2,)), mx.nd.zeros((2,)), mx.nd.zeros((2,))
    >>> mx.nd.adam_update(w, mx.nd.array([1.0, -1.0]), m, v, lr=0.1).asnumpy()
    array([0.68..., 1.31...], dtype=float32)
    """
    lr = need_lr(lr, "adam_update")
    g = grad_plus_wd(grad, weight, rescale_grad, wd, clip_gradient)
    moments(mean, var, g, beta1, beta2)
    weight.addcdiv_(mean, var.sqrt().add_(epsilon), value=-lr)
    return weight


# ---------------------------------------------------------------------- AdamW
def _adamw_dense_fused(w, g, m, v, lr, eta, beta1, beta2, epsilon, wd, rescale_grad,
                       clip_gradient):
    """torch's fused AdamW (decoupled decay) on the whole weight, or on cache-sized chunks
    of rows whose gradient is rescaled and clipped first; False where it does not apply."""
    if lr <= 0.0:  # the decay is given to torch relative to the learning rate
        return False
    kwargs = dict(lr=eta * lr, beta1=beta1, beta2=beta2, eps=epsilon, weight_decay=wd / lr,
                  decoupled=True)
    if rescale_grad == 1.0 and no_clip(clip_gradient):
        return fused_adam(w, g, m, v, **kwargs)
    for part in row_chunks(w.shape[0], w):  # the first chunk decides: all alike
        if not fused_adam(w[part], rescale_clip(g[part], rescale_grad, clip_gradient), m[part],
                          v[part], **kwargs):
            return False
    return True


def _adamw_dense(weight, grad, mean, var, *, lr=None, eta=1.0, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """AdamW with a dense gradient on a dense weight: torch's fused kernel, else the
    definition on every row."""
    check_grad(weight, grad, "adamw_update")
    lr = need_lr(lr, "adamw_update")
    w, g, m, v = weight._t, grad._t, mean._t, var._t
    if not _adamw_dense_fused(w, g, m, v, lr, eta, beta1, beta2, epsilon, wd, rescale_grad,
                              clip_gradient):
        dense_rows(adamw_update, [w, m, v], g, dict(
            lr=lr, eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
            rescale_grad=rescale_grad, clip_gradient=clip_gradient))
    return weight


@update_op(num_states=2, dense=_adamw_dense)
def adamw_update(weight, grad, mean, var, *, lr=None, eta=1.0, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """AdamW step (decoupled weight decay, MXNet's ``contrib.adamw_update`` rule)::

        g = clip(rescale_grad*grad, clip_gradient)
        mean = beta1*mean + (1-beta1)*g;  var = beta2*var + (1-beta2)*g**2
        weight -= eta * (lr * mean / (sqrt(var) + epsilon) + wd * weight)

    >>> import sparsenet as mx
    >>> w, m, v = mx.nd.ones((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,))
    >>> mx.nd.adamw_update(w, mx.nd.array([1.0]), m, v, lr=0.1, wd=0.5).asnumpy()
    array([0.18...], dtype=float32)
    """
    lr = need_lr(lr, "adamw_update")
    g = rescale_clip(grad, rescale_grad, clip_gradient) if grad is not None else None
    moments(mean, var, g, beta1, beta2)
    step = torch.div(mean, var.sqrt().add_(epsilon)).mul_(lr)
    if wd:
        step.add_(weight, alpha=wd)
    weight.sub_(step.mul_(eta))
    return weight


# ---------------------------------------------------------------------- AdaMax, Nadam
@update_op(num_states=2)
def adamax_update(weight, grad, mean, u, *, lr=None, beta1=0.9, beta2=0.999, wd=0.0,
                  rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """AdaMax step (bias correction folded into ``lr``)::

        g = clip(rescale_grad*grad + wd*weight, clip_gradient)
        mean = beta1*mean + (1-beta1)*g;  u = max(beta2*u, |g|)
        weight -= lr * mean / u        (0 where u == 0; MXNet gives NaN there)

    >>> import sparsenet as mx
    >>> w, m, u = mx.nd.ones((2,)), mx.nd.zeros((2,)), mx.nd.zeros((2,))
    >>> mx.nd.adamax_update(w, mx.nd.array([2.0, 0.0]), m, u, lr=1.0).asnumpy()
    array([0.9, 1. ], dtype=float32)
    """
    lr = need_lr(lr, "adamax_update")
    g = grad_plus_wd(grad, weight, rescale_grad, wd, clip_gradient)
    mean.mul_(beta1)
    u.mul_(beta2)
    if g is not None:
        mean.add_(g, alpha=1.0 - beta1)
        torch.maximum(u, g.abs(), out=u)
    ratio = torch.where(u > 0, mean / u, torch.zeros_like(mean))
    weight.add_(ratio, alpha=-lr)
    return weight


def nadam_momentum(t, beta1, schedule_decay):
    """Nadam's warming momentum ``mu_t = beta1 * (1 - 0.5 * 0.96**(t*schedule_decay))``.

    >>> round(nadam_momentum(1, 0.9, 0.004), 6)
    0.450073
    """
    return beta1 * (1.0 - 0.5 * 0.96 ** (t * schedule_decay))


@update_op(num_states=2)
def nadam_update(weight, grad, mean, var, *, lr=None, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 t=1, schedule_decay=0.004, m_schedule=None, wd=0.0, rescale_grad=1.0,
                 clip_gradient=-1.0, lazy_update=True):
    """Nadam step at update ``t``; ``m_schedule`` is the product of ``mu_1..mu_t``
    (:func:`nadam_momentum`; default: computed from ``t``)::

        g = clip(rescale_grad*grad + wd*weight, clip_gradient)
        mean = beta1*mean + (1-beta1)*g;  var = beta2*var + (1-beta2)*g**2
        m_bar = (1-mu_t)*g/(1-m_schedule) + mu_{t+1}*mean/(1-m_schedule*mu_{t+1})
        weight -= lr * m_bar / (sqrt(var/(1-beta2**t)) + epsilon)

    >>> import sparsenet as mx
    >>> w, m, v = mx.nd.ones((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,))
    >>> mx.nd.nadam_update(w, mx.nd.array([1.0]), m, v, lr=0.1, t=1).asnumpy()
    array([0.8...], dtype=float32)
    """
    lr = need_lr(lr, "nadam_update")
    mu_t = nadam_momentum(t, beta1, schedule_decay)
    mu_next = nadam_momentum(t + 1, beta1, schedule_decay)
    if m_schedule is None:
        m_schedule = 1.0
        for i in range(1, t + 1):
            m_schedule *= nadam_momentum(i, beta1, schedule_decay)
    g = grad_plus_wd(grad, weight, rescale_grad, wd, clip_gradient)
    moments(mean, var, g, beta1, beta2)
    m_bar = mean * (mu_next / (1.0 - m_schedule * mu_next))
    if g is not None:
        m_bar.add_(g, alpha=(1.0 - mu_t) / (1.0 - m_schedule))
    denom = (var / (1.0 - beta2 ** t)).sqrt_().add_(epsilon)
    weight.addcdiv_(m_bar, denom, value=-lr)
    return weight

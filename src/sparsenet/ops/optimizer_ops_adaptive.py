"""Fused update operators with adaptive per-element rates: Adam, AdamW, AdaGrad, GroupAdaGrad,
AdaDelta, Adamax, Nadam, RMSProp (both variants), FTRL, FTML, and LAMB's two phases.

Each is defined once, on full tensors updated in place (``grad=None`` is a zero
gradient); :mod:`sparsenet.ops.optimizer_ops` builds the lazy and standard
row_sparse kernels and the storage-type rows from that definition.

>>> import sparsenet as mx
>>> w = mx.nd.ones((3, 1)); m = mx.nd.zeros((3, 1)); v = mx.nd.zeros((3, 1))
>>> g = mx.nd.sparse.row_sparse_array(([[1.0]], [1]), shape=(3, 1))
>>> _ = mx.nd.adam_update(w, g, m, v, lr=0.1, out=w)
>>> w.asnumpy().ravel().round(3)
array([1.   , 0.684, 1.   ], dtype=float32)
"""
import torch

from ..ndarray.ndarray import NDArray
from ..ndarray.row_sparse import RowSparseNDArray
from .native_rows import lazy_step
from .optimizer_ops import (
    UpdateOperator,
    _check_shapes,
    full_rows,
    need_lr,
    rescale_clip,
    row_chunks,
    scaled_grad_alpha,
    update_op,
)
from .registry import DEFAULT, ROW_SPARSE, rule

__all__ = ["adam_update", "adamw_update", "adagrad_update", "group_adagrad_update",
           "adadelta_update", "adamax_update", "nadam_update", "rmsprop_update",
           "rmspropalex_update", "ftrl_update", "ftml_update", "lamb_update_phase1",
           "lamb_update_phase2"]


def _grad_plus_wd(grad, weight, rescale_grad, wd, clip):
    """``clip(rescale_grad*grad + wd*weight, clip)`` (weight decay inside the clip), or None
    when both terms are zero."""
    g = grad * rescale_grad if grad is not None else None
    if wd:
        g = weight * wd if g is None else g.add_(weight, alpha=wd)
    if g is not None and clip is not None and clip >= 0:
        g.clamp_(-clip, clip)
    return g


def _moments(mean, var, g, beta1, beta2):
    mean.mul_(beta1)
    var.mul_(beta2)
    if g is not None:
        mean.add_(g, alpha=1.0 - beta1)
        var.addcmul_(g, g, value=1.0 - beta2)


# ---------------------------------------------------------------------- Adam family
def _adam_lazy(weight, grad, mean, var, lr=None, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
               rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """Lazy Adam: the native kernel on CPU; else gather the moment rows and ``index_add_``
    the step to the weight rows."""
    _check_shapes(weight, grad, "adam_update")
    w = full_rows(weight, "adam_update", "weight")
    m, v = full_rows(mean, "adam_update"), full_rows(var, "adam_update")
    lr = need_lr(lr, "adam_update")
    if lazy_step("adam", w, (m, v), grad._data, grad._indices, lr=lr, wd=wd,
                 rescale_grad=rescale_grad, clip_gradient=clip_gradient, a=beta1, b=beta2,
                 epsilon=epsilon):
        return weight
    for part in row_chunks(grad._indices.numel(), w):
        idx, g = grad._indices[part], grad._data[part]
        if wd or rescale_grad != 1.0 or (clip_gradient is not None and clip_gradient >= 0):
            g = _grad_plus_wd(g, w.index_select(0, idx) if wd else None, rescale_grad, wd,
                              clip_gradient)
        mr = m.index_select(0, idx).mul_(beta1).add_(g, alpha=1.0 - beta1)
        vr = v.index_select(0, idx).mul_(beta2).addcmul_(g, g, value=1.0 - beta2)
        m.index_copy_(0, idx, mr)
        v.index_copy_(0, idx, vr)
        step = vr.sqrt_().add_(epsilon)
        torch.div(mr, step, out=step).mul_(-lr)  # index_add_ with alpha != 1 is slow on CPU
        w.index_add_(0, idx, step.to(w.dtype))
    return weight


@update_op(num_states=2, lazy=_adam_lazy)
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
    g = _grad_plus_wd(grad, weight, rescale_grad, wd, clip_gradient)
    _moments(mean, var, g, beta1, beta2)
    weight.addcdiv_(mean, var.sqrt().add_(epsilon), value=-lr)
    return weight


@update_op(num_states=2)
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
    _moments(mean, var, g, beta1, beta2)
    step = torch.div(mean, var.sqrt().add_(epsilon)).mul_(lr)
    if wd:
        step.add_(weight, alpha=wd)
    weight.sub_(step.mul_(eta))
    return weight


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
    g = _grad_plus_wd(grad, weight, rescale_grad, wd, clip_gradient)
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
    g = _grad_plus_wd(grad, weight, rescale_grad, wd, clip_gradient)
    _moments(mean, var, g, beta1, beta2)
    m_bar = mean * (mu_next / (1.0 - m_schedule * mu_next))
    if g is not None:
        m_bar.add_(g, alpha=(1.0 - mu_t) / (1.0 - m_schedule))
    denom = (var / (1.0 - beta2 ** t)).sqrt_().add_(epsilon)
    weight.addcdiv_(m_bar, denom, value=-lr)
    return weight


# ---------------------------------------------------------------------- AdaGrad family
def _adagrad_lazy(weight, grad, history, lr=None, epsilon=1e-7, wd=0.0, rescale_grad=1.0,
                  clip_gradient=-1.0, lazy_update=True):
    """Lazy AdaGrad: the native kernel on CPU; else gather the history rows and
    ``index_add_`` the step to the weight rows."""
    _check_shapes(weight, grad, "adagrad_update")
    w = full_rows(weight, "adagrad_update", "weight")
    h = full_rows(history, "adagrad_update")
    lr = need_lr(lr, "adagrad_update")
    if lazy_step("adagrad", w, (h,), grad._data, grad._indices, lr=lr, wd=wd,
                 rescale_grad=rescale_grad, clip_gradient=clip_gradient, epsilon=epsilon):
        return weight
    for part in row_chunks(grad._indices.numel(), w):
        idx = grad._indices[part]
        g, k = scaled_grad_alpha(grad._data[part], rescale_grad, clip_gradient)
        hr = h.index_select(0, idx).addcmul_(g, g, value=k * k)
        h.index_copy_(0, idx, hr)
        step = hr.add_(epsilon).sqrt_()
        torch.div(g, step, out=step).mul_(-lr * k)  # index_add_ with alpha != 1 is slow on CPU
        if wd:
            step.add_(w.index_select(0, idx), alpha=-lr * wd)
        w.index_add_(0, idx, step.to(w.dtype))
    return weight


@update_op(num_states=1, lazy=_adagrad_lazy)
def adagrad_update(weight, grad, history, *, lr=None, epsilon=1e-7, wd=0.0, rescale_grad=1.0,
                   clip_gradient=-1.0, lazy_update=True):
    """AdaGrad step (MXNet's ``sparse.adagrad_update``, with weight decay allowed)::

        g = clip(rescale_grad*grad, clip_gradient)
        history += g**2
        weight -= lr * (g / sqrt(history + epsilon) + wd * weight)

    >>> import sparsenet as mx
    >>> w, h = mx.nd.ones((2,)), mx.nd.zeros((2,))
    >>> mx.nd.sparse.adagrad_update(w, mx.nd.array([1.0, 0.0]), h, lr=0.1).asnumpy()
    array([0.9, 1. ], dtype=float32)
    """
    lr = need_lr(lr, "adagrad_update")
    step = weight * wd if wd else None
    if grad is not None:
        g = rescale_clip(grad, rescale_grad, clip_gradient)
        history.addcmul_(g, g)
        div = g.div_((history + epsilon).sqrt_())
        step = div if step is None else step.add_(div)
    if step is not None:
        weight.sub_(step.mul_(lr))
    return weight


@update_op(num_states=1)
def group_adagrad_update(weight, grad, history, *, lr=None, epsilon=1e-5, rescale_grad=1.0,
                         clip_gradient=-1.0, lazy_update=True):
    """Row-wise AdaGrad (one rate per row; ``history`` has shape ``(rows, 1)``)::

        g = clip(rescale_grad*grad, clip_gradient)
        history += mean(g**2, axis=1, keepdims=True)
        weight -= lr * g / sqrt(history + epsilon)

    >>> import sparsenet as mx
    >>> w, h = mx.nd.ones((2, 2)), mx.nd.zeros((2, 1))
    >>> mx.nd.group_adagrad_update(w, mx.nd.array([[3.0, 4.0], [0, 0]]), h, lr=0.1).asnumpy()
    array([[0.91..., 0.88...],
           [1.  , 1.  ]], dtype=float32)
    """
    lr = need_lr(lr, "group_adagrad_update")
    if grad is None:
        return weight
    g = rescale_clip(grad, rescale_grad, clip_gradient)
    dims = tuple(range(1, g.dim()))
    history.add_((g * g).mean(dim=dims, keepdim=True).reshape(history.shape))
    scale = (history + epsilon).rsqrt_().reshape((-1,) + (1,) * (g.dim() - 1))
    weight.sub_(g.mul_(scale), alpha=lr)
    return weight


@update_op(num_states=2)
def adadelta_update(weight, grad, acc_g, acc_delta, *, rho=0.9, epsilon=1e-5, wd=0.0,
                    rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """AdaDelta step (no learning rate, as in MXNet)::

        g = clip(rescale_grad*grad, clip_gradient)
        acc_g = rho*acc_g + (1-rho)*g**2
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g
        acc_delta = rho*acc_delta + (1-rho)*delta**2
        weight -= delta + wd*weight

    >>> import sparsenet as mx
    >>> w, a, d = mx.nd.ones((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,))
    >>> mx.nd.adadelta_update(w, mx.nd.array([1.0]), a, d, rho=0.5, epsilon=1.0).asnumpy()
    array([0.18...], dtype=float32)
    """
    step = weight * wd if wd else None
    acc_g.mul_(rho)
    delta = None
    if grad is not None:
        g = rescale_clip(grad, rescale_grad, clip_gradient)
        acc_g.addcmul_(g, g, value=1.0 - rho)
        delta = (acc_delta + epsilon).sqrt_().div_((acc_g + epsilon).sqrt_()).mul_(g)
    acc_delta.mul_(rho)
    if delta is not None:
        acc_delta.addcmul_(delta, delta, value=1.0 - rho)
        step = delta if step is None else step.add_(delta)
    if step is not None:
        weight.sub_(step)
    return weight


# ---------------------------------------------------------------------- RMSProp
def _clip_weights(weight, clip_weights):
    if clip_weights is not None and clip_weights >= 0:
        weight.clamp_(-clip_weights, clip_weights)


@update_op(num_states=1)
def rmsprop_update(weight, grad, n, *, lr=None, gamma1=0.95, epsilon=1e-8, wd=0.0,
                   rescale_grad=1.0, clip_gradient=-1.0, clip_weights=-1.0, lazy_update=True):
    """RMSProp (Tieleman & Hinton)::

        g = clip(rescale_grad*grad + wd*weight, clip_gradient)
        n = gamma1*n + (1-gamma1)*g**2
        weight = clip(weight - lr * g / sqrt(n + epsilon), clip_weights)

    >>> import sparsenet as mx
    >>> w, n = mx.nd.ones((1,)), mx.nd.zeros((1,))
    >>> mx.nd.rmsprop_update(w, mx.nd.array([1.0]), n, lr=0.1, gamma1=0.75, epsilon=0.0).asnumpy()
    array([0.8], dtype=float32)
    """
    lr = need_lr(lr, "rmsprop_update")
    g = _grad_plus_wd(grad, weight, rescale_grad, wd, clip_gradient)
    n.mul_(gamma1)
    if g is not None:
        n.addcmul_(g, g, value=1.0 - gamma1)
        weight.addcdiv_(g, (n + epsilon).sqrt_(), value=-lr)
    _clip_weights(weight, clip_weights)
    return weight


@update_op(num_states=3)
def rmspropalex_update(weight, grad, n, g, delta, *, lr=None, gamma1=0.95, gamma2=0.9,
                       epsilon=1e-8, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                       clip_weights=-1.0, lazy_update=True):
    """Centered RMSProp (Graves)::

        gr = clip(rescale_grad*grad + wd*weight, clip_gradient)
        n = gamma1*n + (1-gamma1)*gr**2;  g = gamma1*g + (1-gamma1)*gr
        delta = gamma2*delta - lr * gr / sqrt(n - g**2 + epsilon)
        weight = clip(weight + delta, clip_weights)

    >>> import sparsenet as mx
    >>> w, n, g, d = mx.nd.ones((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,))
    >>> _ = mx.nd.rmspropalex_update(w, mx.nd.array([1.0]), n, g, d, lr=0.1, gamma1=0.5,
    ...                              epsilon=0.0, out=w)
    >>> w.asnumpy()
    array([0.8], dtype=float32)
    """
    lr = need_lr(lr, "rmspropalex_update")
    gr = _grad_plus_wd(grad, weight, rescale_grad, wd, clip_gradient)
    n.mul_(gamma1)
    g.mul_(gamma1)
    delta.mul_(gamma2)
    if gr is not None:
        n.addcmul_(gr, gr, value=1.0 - gamma1)
        g.add_(gr, alpha=1.0 - gamma1)
        delta.addcdiv_(gr, (n - g * g).add_(epsilon).sqrt_(), value=-lr)
    weight.add_(delta)
    _clip_weights(weight, clip_weights)
    return weight


# ---------------------------------------------------------------------- FTRL, FTML
def _positive_lr(lr, opname):
    lr = need_lr(lr, opname)
    if lr <= 0:
        raise ValueError(f"{opname}: the learning rate must be > 0 (the rule divides by it), "
                         f"got lr={lr}; check the lr_scheduler's final_lr")
    return lr


def ftrl_weight(z, n, lr, lamda1, beta, wd):
    """FTRL's weight from its accumulators:
    ``(sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd)`` where ``|z| > lamda1``, else 0."""
    w = (torch.sign(z) * lamda1 - z) / ((beta + n.sqrt()) / lr + wd)
    return w.masked_fill_(z.abs() <= lamda1, 0.0)


@update_op(num_states=2)
def ftrl_update(weight, grad, z, n, *, lr=None, lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0,
                clip_gradient=-1.0, lazy_update=True):
    """FTRL-proximal::

        g = clip(rescale_grad*grad, clip_gradient)
        z += g - (sqrt(n + g**2) - sqrt(n)) * weight / lr;  n += g**2
        weight = (sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd) * (|z| > lamda1)

    Lazily only the gradient's rows are recomputed; the standard rule recomputes
    every row from its ``z`` and ``n`` (rows never touched become 0).

    >>> import sparsenet as mx
    >>> w, z, n = mx.nd.ones((2,)), mx.nd.zeros((2,)), mx.nd.zeros((2,))
    >>> mx.nd.ftrl_update(w, mx.nd.array([1.0, 0.0]), z, n, lr=0.1, lamda1=0.01).asnumpy()
    array([0.4495, 0.    ], dtype=float32)
    """
    lr = _positive_lr(lr, "ftrl_update")
    if grad is not None:
        g = rescale_clip(grad, rescale_grad, clip_gradient)
        sq = n.sqrt()
        n.addcmul_(g, g)
        z.add_(g).sub_((n.sqrt() - sq).mul_(weight), alpha=1.0 / lr)
    weight.copy_(ftrl_weight(z, n, lr, lamda1, beta, wd))
    return weight


def ftml_d(v, lr, beta1, beta2, epsilon, t):
    """FTML's ``d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon)``."""
    return (v / (1.0 - beta2 ** t)).sqrt_().add_(epsilon).mul_((1.0 - beta1 ** t) / lr)


@update_op(num_states=3)
def ftml_update(weight, grad, d, v, z, *, lr=None, beta1=0.6, beta2=0.999, epsilon=1e-8, t=1,
                wd=0.0, rescale_grad=1.0, clip_grad=-1.0, lazy_update=True):
    """FTML (Follow the Moving Leader) at update ``t``::

        g = clip(rescale_grad*grad + wd*weight, clip_grad)
        v = beta2*v + (1-beta2)*g**2
        d_t = (1-beta1**t)/lr * (sqrt(v/(1-beta2**t)) + epsilon)
        z = beta1*z + (1-beta1)*g - (d_t - beta1*d)*weight;  d = d_t
        weight = -z / d_t

    >>> import sparsenet as mx
    >>> w, d, v, z = mx.nd.zeros((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,))
    >>> mx.nd.ftml_update(w, mx.nd.array([1.0]), d, v, z, lr=0.1, t=1).asnumpy()
    array([-0.1], dtype=float32)
    """
    lr = _positive_lr(lr, "ftml_update")
    g = _grad_plus_wd(grad, weight, rescale_grad, wd, clip_grad)
    v.mul_(beta2)
    if g is not None:
        v.addcmul_(g, g, value=1.0 - beta2)
    d_t = ftml_d(v, lr, beta1, beta2, epsilon, t)
    z.mul_(beta1).sub_((d_t - d * beta1).mul_(weight))
    if g is not None:
        z.add_(g, alpha=1.0 - beta1)
    d.copy_(d_t)
    weight.copy_(-z / d_t)
    return weight


# ---------------------------------------------------------------------- LAMB
def _lamb_g(weight, grad, mean, var, beta1, beta2, epsilon, t, bias_correction, wd,
            rescale_grad, clip_gradient):
    g = rescale_clip(grad, rescale_grad, clip_gradient) if grad is not None else None
    _moments(mean, var, g, beta1, beta2)
    m, v = mean, var
    if bias_correction:
        m, v = mean / (1.0 - beta1 ** t), var / (1.0 - beta2 ** t)
    out = torch.div(m, v.sqrt().add_(epsilon))
    return out.add_(weight, alpha=wd) if wd else out


def _lamb_phase1_dense(weight, grad, mean, var, *, beta1=0.9, beta2=0.999, epsilon=1e-6, t=None,
                       bias_correction=True, wd=None, rescale_grad=1.0, clip_gradient=-1.0,
                       lazy_update=True):
    """LAMB phase 1: update the moments and return the update direction ``g``::

        grad = clip(rescale_grad*grad, clip_gradient)
        mean = beta1*mean + (1-beta1)*grad;  var = beta2*var + (1-beta2)*grad**2
        g = mean_hat / (sqrt(var_hat) + epsilon) + wd*weight
            (mean_hat, var_hat bias-corrected with t when bias_correction)

    A row_sparse ``grad`` gives, lazily, a row_sparse ``g`` on the gradient's rows
    (only those rows' moments change); with ``lazy_update=False`` every row's
    moments decay and ``g`` is dense.

    >>> import sparsenet as mx
    >>> w, m, v = mx.nd.ones((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,))
    >>> mx.nd.lamb_update_phase1(w, mx.nd.array([2.0]), m, v, t=1, wd=0.0).asnumpy()
    array([0.99...], dtype=float32)
    """
    if t is None or wd is None:
        raise TypeError("lamb_update_phase1() needs t=<update count> and wd=<weight decay>")
    return _lamb_g(weight, grad, mean, var, beta1, beta2, epsilon, t, bias_correction, wd,
                   rescale_grad, clip_gradient)


lamb_update_phase1 = UpdateOperator(_lamb_phase1_dense, name="lamb_update_phase1",
                                    num_states=2, weight_out=False)


def _phase1_rows(weight, grad, mean, var, **p):
    _check_shapes(weight, grad, "lamb_update_phase1")
    w = full_rows(weight, "lamb_update_phase1", "weight")
    m, v = (full_rows(s, "lamb_update_phase1") for s in (mean, var))
    idx = grad._indices
    mr, vr = m.index_select(0, idx), v.index_select(0, idx)
    out = _lamb_phase1_dense(w.index_select(0, idx), grad._data, mr, vr, **p)
    m.index_copy_(0, idx, mr)
    v.index_copy_(0, idx, vr)
    return RowSparseNDArray._from_parts(out, idx, tuple(weight.shape))


def _phase1_standard(weight, grad, mean, var, **p):
    _check_shapes(weight, grad, "lamb_update_phase1")
    w = full_rows(weight, "lamb_update_phase1", "weight")
    m, v = (full_rows(s, "lamb_update_phase1") for s in (mean, var))
    idx = grad._indices
    mr, vr = m.index_select(0, idx), v.index_select(0, idx)
    out = _lamb_phase1_dense(w, None, m, v, **p)
    if idx.numel():
        rows = _lamb_phase1_dense(w.index_select(0, idx), grad._data, mr, vr, **p)
        out.index_copy_(0, idx, rows)
        m.index_copy_(0, idx, mr)
        v.index_copy_(0, idx, vr)
    return NDArray(out)


def _phase1_dense_grad(weight, grad, mean, var, **p):
    _check_shapes(weight, grad, "lamb_update_phase1")
    tensors = [full_rows(weight, "lamb_update_phase1", "weight")] + [
        full_rows(s, "lamb_update_phase1") for s in (mean, var)]
    return NDArray(_lamb_phase1_dense(tensors[0], grad._t, *tensors[1:], **p))


def _lazy(p):
    """lazy_update=True"""
    return bool(p["lazy_update"])


def _standard(p):
    """lazy_update=False"""
    return not p["lazy_update"]


for _w, _s in [(DEFAULT, DEFAULT), (ROW_SPARSE, ROW_SPARSE), (ROW_SPARSE, DEFAULT)]:
    rule(lamb_update_phase1, _w, ROW_SPARSE, _s, _s, out=ROW_SPARSE, when=_lazy)(_phase1_rows)
    rule(lamb_update_phase1, _w, ROW_SPARSE, _s, _s, out=DEFAULT, when=_standard)(
        _phase1_standard)
    if (_w, _s) != (DEFAULT, DEFAULT):
        rule(lamb_update_phase1, _w, DEFAULT, _s, _s, out=DEFAULT)(_phase1_dense_grad)


def _lamb_ratio(r1, r2, lower_bound, upper_bound):
    r1 = float(r1.asnumpy().reshape(-1)[0]) if isinstance(r1, NDArray) else float(r1)
    r2 = float(r2.asnumpy().reshape(-1)[0]) if isinstance(r2, NDArray) else float(r2)
    if lower_bound is not None and lower_bound >= 0:
        r1 = max(r1, lower_bound)
    if upper_bound is not None and upper_bound >= 0:
        r1 = min(r1, upper_bound)
    return r1 / r2 if r1 != 0 and r2 != 0 else 1.0


def _lamb_phase2_dense(weight, g, r1, r2, *, lr=None, lower_bound=-1.0, upper_bound=-1.0):
    """LAMB phase 2: ``weight -= lr * (r1/r2) * g`` with the trust ratio ``r1/r2`` (1 when
    either norm is 0; ``r1`` bounded by ``lower_bound``/``upper_bound`` when >= 0).

    A row_sparse ``g`` updates only its rows.

    >>> import sparsenet as mx
    >>> w = mx.nd.ones((2,))
    >>> mx.nd.lamb_update_phase2(w, mx.nd.ones((2,)), mx.nd.array([2.0]), mx.nd.array([4.0]),
    ...                          lr=0.1).asnumpy()
    array([0.95, 0.95], dtype=float32)
    """
    lr = need_lr(lr, "lamb_update_phase2")
    weight.sub_(g, alpha=lr * _lamb_ratio(r1, r2, lower_bound, upper_bound))
    return weight


lamb_update_phase2 = UpdateOperator(_lamb_phase2_dense, name="lamb_update_phase2")


def _phase2_rows(weight, g, r1, r2, **p):
    _check_shapes(weight, g, "lamb_update_phase2")
    w = full_rows(weight, "lamb_update_phase2", "weight")
    if g._indices.numel():
        lr = need_lr(p["lr"], "lamb_update_phase2")
        ratio = _lamb_ratio(r1, r2, p["lower_bound"], p["upper_bound"])
        w.index_add_(0, g._indices, g._data, alpha=-lr * ratio)
    return weight


def _phase2_rsp_weight(weight, g, r1, r2, **p):
    _check_shapes(weight, g, "lamb_update_phase2")
    _lamb_phase2_dense(full_rows(weight, "lamb_update_phase2", "weight"), g._t, r1, r2, **p)
    return weight


rule(lamb_update_phase2, DEFAULT, ROW_SPARSE, DEFAULT, DEFAULT, out=DEFAULT)(_phase2_rows)
rule(lamb_update_phase2, ROW_SPARSE, ROW_SPARSE, DEFAULT, DEFAULT, out=ROW_SPARSE)(_phase2_rows)
rule(lamb_update_phase2, ROW_SPARSE, DEFAULT, DEFAULT, DEFAULT, out=ROW_SPARSE)(
    _phase2_rsp_weight)

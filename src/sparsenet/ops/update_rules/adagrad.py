"""The AdaGrad family's update operators: AdaGrad (with weight decay) and GroupAdaGrad.

Kernel variants of AdaGrad's lazy row (row_sparse gradient, ``lazy_update=True``), one
function each: ``_adagrad_lazy_native`` (one pass over the rows in C,
:mod:`~sparsenet.ops.row_kernels`; CPU float tensors) or ``_adagrad_lazy_torch`` (torch index
ops; any device). The other rows, and GroupAdaGrad's, are the generic ones of
:func:`~sparsenet.ops.update_rules.core.register_update_rules`. A dense AdaGrad step runs the
definition (torch's fused Adagrad puts ``epsilon`` outside the square root: another rule).

>>> import sparsenet as mx
>>> w, h = mx.nd.ones((2,)), mx.nd.zeros((2,))
>>> mx.nd.sparse.adagrad_update(w, mx.nd.array([1.0, 0.0]), h, lr=0.1).asnumpy()
array([0.9, 1. ], dtype=float32)
"""
import torch

from .. import row_kernels
from .core import (
    check_grad,
    full_rows,
    need_lr,
    rescale_clip,
    row_chunks,
    scaled_grad_alpha,
    sqrt_,
    update_op,
)

__all__ = ["adagrad_update", "group_adagrad_update"]


def _adagrad_lazy_native(w, h, grad, lr, epsilon, wd, rescale_grad, clip_gradient):
    """The native lazy AdaGrad step; False where it does not apply (nothing written)."""
    return row_kernels.lazy_step("adagrad", w, (h,), grad._data, grad._indices, lr=lr, wd=wd,
                                 rescale_grad=rescale_grad, clip_gradient=clip_gradient,
                                 epsilon=epsilon)


def _adagrad_lazy_torch(w, h, grad, lr, epsilon, wd, rescale_grad, clip_gradient):
    """Lazy AdaGrad with torch index ops, each element as the native kernel computes it (the
    same bits): ``h = h + (k*k)*g'*g'``, ``w = w + (g' / sqrt(h + eps))*(-lr*k) + w*(-lr*wd)``
    with ``k*g' = clip(g*rescale_grad)``; gather the history rows, update them, write them
    back and ``index_add_`` the step to the weight rows."""
    for part in row_chunks(grad._indices.numel(), w):
        idx = grad._indices[part]
        g, k = scaled_grad_alpha(grad._data[part], rescale_grad, clip_gradient)
        hr = h.index_select(0, idx).add_((g * (k * k)).mul_(g))
        h.index_copy_(0, idx, hr)
        step = sqrt_(hr.add_(epsilon))
        torch.div(g, step, out=step).mul_(-lr * k)  # index_add_ with alpha != 1 fuses
        if wd:
            step.add_(w.index_select(0, idx).mul_(-lr * wd))
        w.index_add_(0, idx, step.to(w.dtype))


def _adagrad_lazy(weight, grad, history, *, lr=None, epsilon=1e-7, wd=0.0, rescale_grad=1.0,
                  clip_gradient=-1.0, lazy_update=True):
    """Lazy AdaGrad: only the rows in ``grad.indices`` change (MXNet's
    ``sparse.adagrad_update``, weight decay on those rows)."""
    check_grad(weight, grad, "adagrad_update")
    w = full_rows(weight, "adagrad_update", "weight")
    h = full_rows(history, "adagrad_update")
    lr = need_lr(lr, "adagrad_update")
    if not _adagrad_lazy_native(w, h, grad, lr, epsilon, wd, rescale_grad, clip_gradient):
        _adagrad_lazy_torch(w, h, grad, lr, epsilon, wd, rescale_grad, clip_gradient)
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

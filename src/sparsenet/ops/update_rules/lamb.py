"""LAMB's two update operators: phase 1 (moments and direction), phase 2 (trust-ratio step).

Phase 1 returns the direction instead of a weight; its rows: a lazy one (the gradient's
rows only, a row_sparse direction), a standard one (every row's moments decay, a dense
direction) and the dense ones. Phase 2 moves the weight by ``lr * r1/r2`` times a dense or
row_sparse direction.

>>> import sparsenet as mx
>>> w, m, v = mx.nd.ones((1,)), mx.nd.zeros((1,)), mx.nd.zeros((1,))
>>> g = mx.nd.lamb_update_phase1(w, mx.nd.array([2.0]), m, v, t=1, wd=0.0)
>>> mx.nd.lamb_update_phase2(w, g, mx.nd.array([1.0]), mx.nd.array([1.0]), lr=0.1).asnumpy()
array([0.9], dtype=float32)
"""
import torch

from ...base import OperatorArgumentError
from ...ndarray.ndarray import NDArray
from ...ndarray.row_sparse import RowSparseNDArray
from ..registry import DEFAULT, ROW_SPARSE, rule
from .core import (
    LAZY,
    STANDARD,
    UpdateOperator,
    check_grad,
    full_rows,
    moments,
    need_lr,
    rescale_clip,
)

__all__ = ["lamb_update_phase1", "lamb_update_phase2"]


def _lamb_g(weight, grad, mean, var, beta1, beta2, epsilon, t, bias_correction, wd,
            rescale_grad, clip_gradient):
    g = rescale_clip(grad, rescale_grad, clip_gradient) if grad is not None else None
    moments(mean, var, g, beta1, beta2)
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
        raise OperatorArgumentError(
            "lamb_update_phase1() needs t=<update count> and wd=<weight decay>")
    return _lamb_g(weight, grad, mean, var, beta1, beta2, epsilon, t, bias_correction, wd,
                   rescale_grad, clip_gradient)


lamb_update_phase1 = UpdateOperator(_lamb_phase1_dense, name="lamb_update_phase1",
                                    num_states=2, weight_out=False)


def _phase1_rows(weight, grad, mean, var, **p):
    check_grad(weight, grad, "lamb_update_phase1")
    w = full_rows(weight, "lamb_update_phase1", "weight")
    m, v = (full_rows(s, "lamb_update_phase1") for s in (mean, var))
    idx = grad._indices
    mr, vr = m.index_select(0, idx), v.index_select(0, idx)
    out = _lamb_phase1_dense(w.index_select(0, idx), grad._data, mr, vr, **p)
    m.index_copy_(0, idx, mr)
    v.index_copy_(0, idx, vr)
    return RowSparseNDArray._from_parts(out, idx, tuple(weight.shape))


def _phase1_standard(weight, grad, mean, var, **p):
    check_grad(weight, grad, "lamb_update_phase1")
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
    check_grad(weight, grad, "lamb_update_phase1")
    tensors = [full_rows(weight, "lamb_update_phase1", "weight")] + [
        full_rows(s, "lamb_update_phase1") for s in (mean, var)]
    return NDArray(_lamb_phase1_dense(tensors[0], grad._t, *tensors[1:], **p))


def _phase1_all_dense(weight, grad, mean, var, **p):
    check_grad(weight, grad, "lamb_update_phase1")
    return NDArray(_lamb_phase1_dense(weight._t, grad._t, mean._t, var._t, **p))


for _w, _s in [(DEFAULT, DEFAULT), (ROW_SPARSE, ROW_SPARSE), (ROW_SPARSE, DEFAULT)]:
    rule(lamb_update_phase1, _w, ROW_SPARSE, _s, _s, out=ROW_SPARSE, when=LAZY)(_phase1_rows)
    rule(lamb_update_phase1, _w, ROW_SPARSE, _s, _s, out=DEFAULT, when=STANDARD)(
        _phase1_standard)
    rule(lamb_update_phase1, _w, DEFAULT, _s, _s, out=DEFAULT)(
        _phase1_all_dense if _w == DEFAULT else _phase1_dense_grad)


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
    check_grad(weight, g, "lamb_update_phase2")
    w = full_rows(weight, "lamb_update_phase2", "weight")
    if g._indices.numel():
        lr = need_lr(p["lr"], "lamb_update_phase2")
        ratio = _lamb_ratio(r1, r2, p["lower_bound"], p["upper_bound"])
        w.index_add_(0, g._indices, g._data, alpha=-lr * ratio)
    return weight


def _phase2_rsp_weight(weight, g, r1, r2, **p):
    check_grad(weight, g, "lamb_update_phase2")
    _lamb_phase2_dense(full_rows(weight, "lamb_update_phase2", "weight"), g._t, r1, r2, **p)
    return weight


def _phase2_all_dense(weight, g, r1, r2, **p):
    check_grad(weight, g, "lamb_update_phase2")
    _lamb_phase2_dense(weight._t, g._t, r1, r2, **p)
    return weight


rule(lamb_update_phase2, DEFAULT, DEFAULT, DEFAULT, DEFAULT, out=DEFAULT)(_phase2_all_dense)
rule(lamb_update_phase2, DEFAULT, ROW_SPARSE, DEFAULT, DEFAULT, out=DEFAULT)(_phase2_rows)
rule(lamb_update_phase2, ROW_SPARSE, ROW_SPARSE, DEFAULT, DEFAULT, out=ROW_SPARSE)(_phase2_rows)
rule(lamb_update_phase2, ROW_SPARSE, DEFAULT, DEFAULT, DEFAULT, out=ROW_SPARSE)(
    _phase2_rsp_weight)

"""Loss operators: one fused operator per Gluon loss (per-sample losses).

Each operator computes MXNet 1.9.1's Gluon formula in a few torch kernels
(instead of one registry dispatch per elementwise step), then applies the
weighting of ``gluon.loss._apply_weighting`` (``loss * sample_weight * weight``)
and averages (``kldiv_loss``: sums) over every axis but ``batch_axis``. The
label is reshaped to the prediction's shape first. ``mx.gluon.loss`` blocks
call them; they are also available as ``mx.nd.<name>``.

>>> import sparsenet as mx
>>> mx.nd.l2_loss(mx.nd.array([[1.0, 2.0]]), mx.nd.array([[0.0, 0.0]]), weight=1.0).asnumpy()
array([1.25], dtype=float32)
"""
import torch
import torch.nn.functional as F

from .registry import defop

__all__ = ["l2_loss", "l1_loss", "sigmoid_bce_loss", "softmax_ce_loss", "logistic_loss",
           "hinge_loss", "squared_hinge_loss", "huber_loss", "kldiv_loss"]


def _like(label, pred):
    if label.shape == pred.shape:
        return label if label.dtype == pred.dtype else label.to(pred.dtype)
    if label.numel() != pred.numel():
        raise ValueError(f"loss: label of shape {tuple(label.shape)} ({label.numel()} elements) "
                         f"cannot be reshaped like prediction of shape {tuple(pred.shape)}")
    return label.reshape(pred.shape).to(pred.dtype)


def _finish(loss, sample_weight, weight, batch_axis, reduce="mean"):
    if sample_weight is not None:
        loss = loss * sample_weight
    if weight is not None:
        loss = loss * weight
    if loss.dim() <= 1:
        return loss
    axis = batch_axis % loss.dim()
    dims = [d for d in range(loss.dim()) if d != axis]
    return loss.mean(dim=dims) if reduce == "mean" else loss.sum(dim=dims)


@defop
def l2_loss(pred, label, sample_weight=None, *, weight=1.0, batch_axis=0):
    """``weight / 2 * (label - pred)**2`` averaged per sample (Gluon ``L2Loss``).

    >>> import sparsenet as mx
    >>> mx.nd.l2_loss(mx.nd.array([3.0]), mx.nd.array([1.0])).asnumpy()
    array([2.], dtype=float32)
    """
    loss = (_like(label, pred) - pred).square()
    return _finish(loss, sample_weight, None if weight is None else weight / 2, batch_axis)


@defop
def l1_loss(pred, label, sample_weight=None, *, weight=None, batch_axis=0):
    """``|label - pred|`` averaged per sample (Gluon ``L1Loss``).

    >>> import sparsenet as mx
    >>> mx.nd.l1_loss(mx.nd.array([[3.0, 0.0]]), mx.nd.array([[1.0, 1.0]])).asnumpy()
    array([1.5], dtype=float32)
    """
    return _finish((_like(label, pred) - pred).abs(), sample_weight, weight, batch_axis)


@defop
def sigmoid_bce_loss(pred, label, sample_weight=None, pos_weight=None, *, from_sigmoid=False,
                     weight=None, batch_axis=0):
    """Binary cross-entropy of ``sigmoid(pred)`` (or of ``pred`` with ``from_sigmoid``).

    From logits the stable form ``max(x, 0) - x*z + log(1 + exp(-|x|))`` is
    used (with ``pos_weight``: ``x - x*z + (1 + (pos_weight - 1)*z) *
    (log(1 + exp(-|x|)) + max(-x, 0))``); from probabilities
    ``-(log(p + 1e-12)*z*pos_weight + log(1 - p + 1e-12)*(1 - z))``.

    >>> import sparsenet as mx
    >>> mx.nd.sigmoid_bce_loss(mx.nd.array([0.0]), mx.nd.array([1.0])).asnumpy()
    array([0.6931472], dtype=float32)
    """
    z = _like(label, pred)
    if not from_sigmoid:
        loss = F.binary_cross_entropy_with_logits(pred, z, reduction="none",
                                                  pos_weight=pos_weight)
    else:
        eps = 1e-12
        pos = torch.log(pred + eps) * z
        if pos_weight is not None:
            pos = pos * pos_weight
        loss = -(pos + torch.log(1.0 - pred + eps) * (1.0 - z))
    return _finish(loss, sample_weight, weight, batch_axis)


@defop
def softmax_ce_loss(pred, label, sample_weight=None, *, axis=-1, sparse_label=True,
                    from_logits=False, weight=None, batch_axis=0):
    """Softmax cross-entropy: ``-log_softmax(pred)[label]`` (``sparse_label``) or ``-sum(p*label)``.

    Integer class labels are clipped to the class range, as MXNet's ``pick``.

    >>> import sparsenet as mx
    >>> mx.nd.softmax_ce_loss(mx.nd.array([[0.0, 0.0]]), mx.nd.array([1])).asnumpy()
    array([0.6931472], dtype=float32)
    """
    logp = pred if from_logits else torch.log_softmax(pred, dim=axis)
    if sparse_label:
        ax = axis % logp.dim()
        idx = label.round().to(torch.int64).clamp(0, logp.shape[ax] - 1)
        loss = -torch.gather(logp, ax, idx.reshape(
            tuple(logp.shape[:ax]) + (1,) + tuple(logp.shape[ax + 1:])))
    else:
        loss = -(logp * _like(label, logp)).sum(dim=axis, keepdim=True)
    return _finish(loss, sample_weight, weight, batch_axis)


@defop
def logistic_loss(pred, label, sample_weight=None, *, label_format="signed", weight=None,
                  batch_axis=0):
    """Logistic loss of labels in {-1, 1} (``'signed'``) or {0, 1} (``'binary'``).

    >>> import sparsenet as mx
    >>> mx.nd.logistic_loss(mx.nd.array([0.0]), mx.nd.array([1.0])).asnumpy()
    array([0.6931472], dtype=float32)
    """
    if label_format not in ("signed", "binary"):
        raise ValueError(f"label_format can only be signed or binary, got {label_format!r}")
    z = _like(label, pred)
    if label_format == "signed":
        z = (z + 1.0) / 2.0
    loss = torch.relu(pred) - pred * z + F.softplus(-pred.abs())
    return _finish(loss, sample_weight, weight, batch_axis)


@defop
def hinge_loss(pred, label, sample_weight=None, *, margin=1.0, weight=None, batch_axis=0):
    """``max(0, margin - pred * label)`` averaged per sample (labels in {-1, 1}).

    >>> import sparsenet as mx
    >>> mx.nd.hinge_loss(mx.nd.array([0.5]), mx.nd.array([1.0])).asnumpy()
    array([0.5], dtype=float32)
    """
    loss = torch.relu(margin - pred * _like(label, pred))
    return _finish(loss, sample_weight, weight, batch_axis)


@defop
def squared_hinge_loss(pred, label, sample_weight=None, *, margin=1.0, weight=None,
                       batch_axis=0):
    """``max(0, margin - pred * label)**2`` averaged per sample.

    >>> import sparsenet as mx
    >>> mx.nd.squared_hinge_loss(mx.nd.array([0.5]), mx.nd.array([1.0])).asnumpy()
    array([0.25], dtype=float32)
    """
    loss = torch.relu(margin - pred * _like(label, pred)).square()
    return _finish(loss, sample_weight, weight, batch_axis)


@defop
def huber_loss(pred, label, sample_weight=None, *, rho=1.0, weight=None, batch_axis=0):
    """Smooth L1 of ``d = label - pred``: ``|d| - rho/2`` if ``|d| > rho``, else ``d**2/(2 rho)``.

    >>> import sparsenet as mx
    >>> mx.nd.huber_loss(mx.nd.array([[0.0, 3.0]]), mx.nd.array([[0.5, 0.0]])).asnumpy()
    array([1.3125], dtype=float32)
    """
    d = (_like(label, pred) - pred).abs()
    loss = torch.where(d > rho, d - 0.5 * rho, (0.5 / rho) * d.square())
    return _finish(loss, sample_weight, weight, batch_axis)


@defop
def kldiv_loss(pred, label, sample_weight=None, *, from_logits=True, axis=-1, weight=None,
               batch_axis=0):
    """``label * (log(label + 1e-12) - pred)`` summed per sample (``pred`` log-probabilities).

    >>> import sparsenet as mx
    >>> mx.nd.kldiv_loss(mx.nd.array([[0.0, 0.0]]), mx.nd.array([[0.5, 0.5]]),
    ...                  from_logits=False).asnumpy()
    array([0.], dtype=float32)
    """
    logp = pred if from_logits else torch.log_softmax(pred, dim=axis)
    z = _like(label, logp)
    loss = z * (torch.log(z + 1e-12) - logp)
    return _finish(loss, sample_weight, weight, batch_axis, reduce="sum")

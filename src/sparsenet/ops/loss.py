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

Loss-output operators: identity-like forwards whose backward is the loss gradient.

These are MXNet's output layers for the Symbol/Module API. Their forward pass
returns the prediction; their backward pass ignores the incoming head gradient
(unless ``out_grad`` is set on ``SoftmaxOutput``) and returns the gradient of
the loss they stand for:

===========================  ==================  ==========================================
operator                     forward             gradient with respect to ``data``
===========================  ==================  ==========================================
``LinearRegressionOutput``   ``data``            ``(out - label) * grad_scale / m``
``LogisticRegressionOutput`` ``sigmoid(data)``   ``(out - label) * grad_scale / m``
``MAERegressionOutput``      ``data``            ``sign(out - label) * grad_scale / m``
``SoftmaxOutput``            ``softmax(data)``   ``(out - onehot(label)) * grad_scale / norm``
``MakeLoss``                 ``data``            ``grad_scale / norm``
===========================  ==================  ==========================================

``m`` is the number of outputs per sample (``label.size / label.shape[0]``);
the label receives no gradient. The backward rules are ``torch.autograd.Function``
subclasses, so the executor and ``mx.autograd`` both get them from torch.

>>> import sparsenet as mx
>>> pred = mx.nd.array([[1.0], [3.0]]); pred.attach_grad()
>>> with mx.autograd.record():
...     out = mx.nd.LinearRegressionOutput(pred, mx.nd.array([[0.0], [1.0]]))
>>> out.backward()
>>> pred.grad.asnumpy().ravel()
array([1., 2.], dtype=float32)
"""
import torch
import torch.nn.functional as F

from ..base import InvalidArgumentError, ShapeError
from ..ndarray.cast_storage import to_dense_tensor
from ..ndarray.ndarray import NDArray
from .kernels import values_map
from .registry import CSR, DEFAULT, ROW_SPARSE, defop, input_shapes, rule

__all__ = ["l2_loss", "l1_loss", "sigmoid_bce_loss", "softmax_ce_loss", "logistic_loss",
           "hinge_loss", "squared_hinge_loss", "huber_loss", "kldiv_loss",
           "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput",
           "SoftmaxOutput", "Softmax", "MakeLoss", "make_loss"]


def _like(label, pred):
    if label.dtype != pred.dtype:
        label = label.to(pred.dtype)
    if label.shape == pred.shape:
        return label
    if label.numel() != pred.numel():
        raise ShapeError(f"loss: label of shape {tuple(label.shape)} ({label.numel()} elements) "
                         f"cannot be reshaped like prediction of shape {tuple(pred.shape)}")
    if pred.shape[-1] == 1 and label.shape == pred.shape[:-1]:  # (N,) labels, (N, 1) scores
        return label.unsqueeze(-1)
    return label.reshape(pred.shape)


def _finish(loss, sample_weight, weight, batch_axis, reduce="mean"):
    if sample_weight is not None:
        loss = loss * sample_weight
    if weight is not None:
        loss = loss * weight
    shape = loss.shape
    if len(shape) <= 1:
        return loss
    axis = batch_axis % len(shape)
    if loss.numel() == shape[axis]:  # one value per sample: the mean is the value
        return loss.reshape(shape[axis])
    dims = [d for d in range(len(shape)) if d != axis]
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
        # F.binary_cross_entropy_with_logits without its checks (z is shaped like pred)
        loss = torch.binary_cross_entropy_with_logits(pred, z, None, pos_weight, 0)
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
        raise InvalidArgumentError(f"label_format can only be signed or binary, got "
                                   f"{label_format!r}")
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


# ---------------------------------------------------------------------- loss outputs
def _per_sample(label, data):
    """The label reshaped to ``data``'s shape and the outputs per sample."""
    if label.shape != data.shape:
        if label.numel() != data.numel():
            raise ShapeError(f"regression output: label shape {tuple(label.shape)} does not "
                             f"match the prediction shape {tuple(data.shape)} (same number of "
                             f"elements expected)")
        label = label.reshape(data.shape)
    if label.dtype != data.dtype:
        label = label.to(data.dtype)
    per_sample = data.numel() // data.shape[0] if data.dim() and data.shape[0] else 1
    return label, max(per_sample, 1)


class _RegressionLoss(torch.autograd.Function):
    """Forward ``link(data)``; backward ``grad(out - label) * grad_scale / m``."""

    @staticmethod
    def forward(ctx, data, label, kind, grad_scale):
        label, per_sample = _per_sample(label, data)
        out = torch.sigmoid(data) if kind == "logistic" else data.clone()
        ctx.save_for_backward(out, label)
        ctx.kind, ctx.scale = kind, grad_scale / per_sample
        return out

    @staticmethod
    def backward(ctx, grad_out):
        out, label = ctx.saved_tensors
        diff = out - label
        grad = torch.sign(diff) if ctx.kind == "mae" else diff
        return grad * ctx.scale, None, None, None


def _regression(kind):
    def forward(data, label, grad_scale):
        return _RegressionLoss.apply(data, label, kind, float(grad_scale))
    return forward


_linear, _logistic, _mae = _regression("linear"), _regression("logistic"), _regression("mae")


@defop
def LinearRegressionOutput(data, label, *, grad_scale=1.0):  # noqa: N802 - MXNet's name
    """Identity forward; backward: squared-loss gradient ``(data - label) * grad_scale / m``.

    ``m`` is the number of outputs per sample. The head gradient is ignored
    and the label gets no gradient.

    >>> import sparsenet as mx
    >>> mx.nd.LinearRegressionOutput(mx.nd.array([[2.0]]), mx.nd.array([[1.0]])).asnumpy()
    array([[2.]], dtype=float32)
    """
    return _linear(data, label, grad_scale)


@defop
def LogisticRegressionOutput(data, label, *, grad_scale=1.0):  # noqa: N802
    """Sigmoid forward; backward gives the logistic-loss gradient ``(sigmoid(data) - label) * s``.

    >>> import sparsenet as mx
    >>> mx.nd.LogisticRegressionOutput(mx.nd.array([[0.0]]), mx.nd.array([[1.0]])).asnumpy()
    array([[0.5]], dtype=float32)
    """
    return _logistic(data, label, grad_scale)


@defop
def MAERegressionOutput(data, label, *, grad_scale=1.0):  # noqa: N802
    """Identity forward; backward gives the absolute-loss gradient ``sign(data - label) * s``.

    >>> import sparsenet as mx
    >>> mx.nd.MAERegressionOutput(mx.nd.array([[2.0]]), mx.nd.array([[1.0]])).asnumpy()
    array([[2.]], dtype=float32)
    """
    return _mae(data, label, grad_scale)


def _regression_label_csr(data, label, *, grad_scale=1.0, _fn):
    # MXNet reads a CSR label directly; a label batch has the prediction's size,
    # so its dense values cost no more than the output itself
    return NDArray(_fn(data._t, to_dense_tensor(label), grad_scale))


for _op, _fn in ((LinearRegressionOutput, _linear), (LogisticRegressionOutput, _logistic),
                 (MAERegressionOutput, _mae)):
    rule(_op, DEFAULT, CSR, out=DEFAULT)(
        lambda data, label, *, grad_scale=1.0, _fn=_fn: _regression_label_csr(
            data, label, grad_scale=grad_scale, _fn=_fn))


def _same_as_data(shapes, params):
    data, label = shapes
    return [data if data is not None else label, label if label is not None else data]


for _op in (LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput):
    input_shapes(_op)(_same_as_data)


# ---------------------------------------------------------------------- softmax output
def _softmax_axis(data, multi_output, preserve_shape):
    if preserve_shape:
        return data.dim() - 1
    return 1 if data.dim() > 1 else 0


def _flat(data, multi_output, preserve_shape):
    """MXNet flattens all but the first axis unless multi_output or preserve_shape."""
    if multi_output or preserve_shape or data.dim() <= 2:
        return data
    return data.reshape(data.shape[0], -1)


class _SoftmaxLoss(torch.autograd.Function):

    @staticmethod
    def forward(ctx, data, label, p):
        x = _flat(data, p["multi_output"], p["preserve_shape"])
        axis = _softmax_axis(x, p["multi_output"], p["preserve_shape"])
        out = torch.softmax(x, dim=axis)
        per_position = out.select(axis, 0)
        if tuple(label.shape) != tuple(out.shape) and label.numel() != per_position.numel():
            raise ShapeError(f"SoftmaxOutput: label shape {tuple(label.shape)} does not fit data "
                             f"shape {tuple(data.shape)}; expected class ids of shape "
                             f"{tuple(per_position.shape)} or probabilities of shape "
                             f"{tuple(out.shape)}")
        ctx.save_for_backward(out, label)
        ctx.p, ctx.axis, ctx.shape = p, axis, data.shape
        return out.reshape(data.shape)

    @staticmethod
    def backward(ctx, grad_out):
        out, label = ctx.saved_tensors
        p, axis = ctx.p, ctx.axis
        k = out.shape[axis]
        if tuple(label.shape) == tuple(out.shape):  # probability labels
            target = label.to(out.dtype)
            valid = torch.ones_like(out.select(axis, 0))
        else:
            ids = label.reshape(out.select(axis, 0).shape).to(torch.int64)
            valid = torch.ones_like(ids, dtype=out.dtype)
            if p["use_ignore"]:
                valid = (ids != int(p["ignore_label"])).to(out.dtype)
            onehot = torch.nn.functional.one_hot(ids.clamp(0, k - 1), k).to(out.dtype)
            target = onehot.movedim(-1, axis)
            alpha = float(p["smooth_alpha"])
            if alpha:
                target = target * (1.0 - alpha) + (1.0 - target) * (alpha / max(k - 1, 1))
        grad = (out - target) * valid.unsqueeze(axis)
        norm = p["normalization"]
        scale = float(p["grad_scale"])
        if norm == "valid":
            scale /= max(float(valid.sum()), 1.0)
        else:
            # MXNet: multi_output divides by the positions per sample even for 'null'
            scale /= (out[0].numel() // k if p["multi_output"] and out.dim() > 2 else 1) * \
                (out.shape[0] if norm == "batch" else 1)
        grad = grad * scale
        if p["out_grad"]:
            grad = grad * grad_out.reshape(grad.shape)
        return grad.reshape(ctx.shape), None, None


_NORMALIZATIONS = ("null", "batch", "valid")


@defop
def SoftmaxOutput(data, label, *, grad_scale=1.0, ignore_label=-1.0,  # noqa: N802
                  multi_output=False, use_ignore=False, preserve_shape=False,
                  normalization="null", out_grad=False, smooth_alpha=0.0):
    """Softmax forward; backward gives the cross-entropy gradient ``softmax(data) - onehot(label)``.

    ``label`` holds class ids of shape ``data.shape[:-1]`` (or probabilities of
    ``data``'s shape). ``normalization`` divides the gradient by 1 ('null'),
    the batch size ('batch') or the number of labels not ignored ('valid');
    ``use_ignore`` zeroes the gradient of samples labelled ``ignore_label``;
    ``smooth_alpha`` smooths the one-hot target.

    >>> import sparsenet as mx
    >>> x = mx.nd.array([[0.0, 0.0]]); x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = mx.nd.SoftmaxOutput(x, mx.nd.array([1]))
    >>> y.backward()
    >>> y.asnumpy(), x.grad.asnumpy()
    (array([[0.5, 0.5]], dtype=float32), array([[ 0.5, -0.5]], dtype=float32))
    """
    if normalization not in _NORMALIZATIONS:
        raise InvalidArgumentError(f"SoftmaxOutput: normalization must be one of "
                                   f"{_NORMALIZATIONS}, got {normalization!r}")
    p = {"grad_scale": grad_scale, "ignore_label": ignore_label, "multi_output": multi_output,
         "use_ignore": use_ignore, "preserve_shape": preserve_shape,
         "normalization": normalization, "out_grad": out_grad, "smooth_alpha": smooth_alpha}
    return _SoftmaxLoss.apply(data, label, p)


Softmax = SoftmaxOutput


@input_shapes(SoftmaxOutput)
def _softmax_label_shape(shapes, params):
    data, label = shapes
    if data is not None and label is None:
        if params["multi_output"]:
            label = (data[0],) + tuple(data[2:])
        elif params["preserve_shape"]:
            label = tuple(data[:-1])
        else:
            label = (data[0],)
    return [data, label]


# ---------------------------------------------------------------------- MakeLoss
class _MakeLoss(torch.autograd.Function):

    @staticmethod
    def forward(ctx, data, grad_scale, valid_thresh, normalization):
        scale = float(grad_scale)
        if normalization == "batch":
            scale /= data.shape[0] if data.dim() else 1
        elif normalization == "valid":
            scale /= max(float((data > valid_thresh).sum()), 1.0)
        ctx.scale = scale
        return data.clone()

    @staticmethod
    def backward(ctx, grad_out):
        return torch.full_like(grad_out, ctx.scale), None, None, None


@defop
def MakeLoss(data, *, grad_scale=1.0, valid_thresh=0.0, normalization="null"):  # noqa: N802
    """Mark ``data`` as a loss: identity forward, backward gradient ``grad_scale / norm``.

    ``normalization`` 'null' keeps ``grad_scale``, 'batch' divides it by the
    batch size, 'valid' by the number of elements above ``valid_thresh``. The
    head gradient is ignored (``make_loss`` is the same operator).

    >>> import sparsenet as mx
    >>> x = mx.nd.array([[1.0, 2.0]]); x.attach_grad()
    >>> with mx.autograd.record():
    ...     loss = mx.nd.MakeLoss(x * x, grad_scale=0.5)
    >>> loss.backward()
    >>> x.grad.asnumpy()
    array([[1., 2.]], dtype=float32)
    """
    if normalization not in _NORMALIZATIONS:
        raise InvalidArgumentError(f"MakeLoss: normalization must be one of {_NORMALIZATIONS}, got "
                                   f"{normalization!r}")
    return _MakeLoss.apply(data, grad_scale, valid_thresh, normalization)


@rule(MakeLoss, CSR, out=CSR)
@rule(MakeLoss, ROW_SPARSE, out=ROW_SPARSE)
def _make_loss_sparse(data, *, grad_scale=1.0, valid_thresh=0.0, normalization="null"):
    # identity forward on the stored values (MXNet's make_loss keeps csr and row_sparse);
    # the gradient is recorded through the dense definition
    if normalization not in _NORMALIZATIONS:
        MakeLoss.fn(torch.zeros(0), normalization=normalization)  # raises the message above
    return values_map(data, torch.clone)


make_loss = MakeLoss

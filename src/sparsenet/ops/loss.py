"""Loss-output operators: identity-like forwards whose backward is the loss gradient.

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

from ..ndarray.cast_storage import to_dense_tensor
from ..ndarray.ndarray import NDArray
from .registry import CSR, DEFAULT, defop, input_shapes, rule

__all__ = ["LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput",
           "SoftmaxOutput", "Softmax", "MakeLoss", "make_loss"]


def _per_sample(label, data):
    """The label reshaped to ``data``'s shape and the outputs per sample."""
    if label.shape != data.shape:
        if label.numel() != data.numel():
            raise ValueError(f"regression output: label shape {tuple(label.shape)} does not "
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
            raise ValueError(f"SoftmaxOutput: label shape {tuple(label.shape)} does not fit data "
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
        raise ValueError(f"SoftmaxOutput: normalization must be one of {_NORMALIZATIONS}, got "
                         f"{normalization!r}")
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
        raise ValueError(f"MakeLoss: normalization must be one of {_NORMALIZATIONS}, got "
                         f"{normalization!r}")
    return _MakeLoss.apply(data, grad_scale, valid_thresh, normalization)


make_loss = MakeLoss

"""Losses (``mx.gluon.loss``): L1, L2, sigmoid/softmax cross-entropy, logistic, hinge, ...

Each loss is a :class:`HybridBlock` returning one value per sample (the mean
over every axis but ``batch_axis``), computed by one fused operator of
:mod:`sparsenet.ops.loss` with MXNet 1.9.1's formulas.

>>> import sparsenet as mx
>>> loss = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss()
>>> loss
SigmoidBinaryCrossEntropyLoss(batch_axis=0, w=None)
>>> loss(mx.nd.array([[0.0], [0.0]]), mx.nd.array([1.0, 0.0])).asnumpy()
array([0.6931472, 0.6931472], dtype=float32)
"""
import numbers

from .. import ndarray as nd
from ..base import InvalidArgumentError, InvalidArgumentTypeError, UnsupportedError
from .block import HybridBlock

__all__ = ["Loss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
           "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "LogisticLoss", "HingeLoss",
           "SquaredHingeLoss", "HuberLoss", "KLDivLoss"]


def _arrays(pred, label, sample_weight):
    return (pred, label) if sample_weight is None else (pred, label, sample_weight)


class Loss(HybridBlock):
    """Base class of losses.

    Parameters
    ----------
    weight : float or None
        Global scalar weight of the loss.
    batch_axis : int
        The axis that indexes samples.
    """

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        if weight is not None and not isinstance(weight, numbers.Number):
            raise InvalidArgumentTypeError(f"loss weight must be a number or None, got {weight!r}")
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self):
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise UnsupportedError(f"{type(self).__name__} must define hybrid_forward()")


class L2Loss(Loss):
    """``weight / 2 * (label - pred)**2``, averaged per sample.

    >>> import sparsenet as mx
    >>> mx.gluon.loss.L2Loss()(mx.nd.array([[1.0, 3.0]]), mx.nd.array([[0.0, 0.0]])).asnumpy()
    array([2.5], dtype=float32)
    """

    def __init__(self, weight=1.0, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        return F.l2_loss(*_arrays(pred, label, sample_weight), weight=self._weight,
                         batch_axis=self._batch_axis)


class L1Loss(Loss):
    """``|label - pred|``, averaged per sample.

    >>> import sparsenet as mx
    >>> mx.gluon.loss.L1Loss()(mx.nd.array([[1.0, -3.0]]), mx.nd.array([[0.0, 0.0]])).asnumpy()
    array([2.], dtype=float32)
    """

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        return F.l1_loss(*_arrays(pred, label, sample_weight), weight=self._weight,
                         batch_axis=self._batch_axis)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross-entropy of ``sigmoid(pred)`` (or of ``pred`` when ``from_sigmoid``).

    Inputs: ``pred``, ``label`` (values in [0, 1], same size), optional
    ``sample_weight`` and ``pos_weight`` (weight of positive examples,
    broadcast over the classes).

    >>> import sparsenet as mx
    >>> l = mx.gluon.loss.SigmoidBCELoss(from_sigmoid=True)
    >>> l(mx.nd.array([0.5]), mx.nd.array([1.0])).asnumpy()
    array([0.6931472], dtype=float32)
    """

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        arrays = (pred, label) if sample_weight is None and pos_weight is None else \
            (pred, label, sample_weight, pos_weight)
        return F.sigmoid_bce_loss(*arrays, from_sigmoid=self._from_sigmoid, weight=self._weight,
                                  batch_axis=self._batch_axis)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    """Softmax cross-entropy with integer labels (``sparse_label``) or distributions.

    >>> import sparsenet as mx
    >>> l = mx.gluon.loss.SoftmaxCELoss()
    >>> l(mx.nd.array([[1.0, 0.0], [0.0, 1.0]]), mx.nd.array([0, 1])).asnumpy().round(4)
    array([0.3133, 0.3133], dtype=float32)
    """

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None, batch_axis=0,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if F is not nd and self._sparse_label:
            return _softmax_ce_symbol(F, pred, label, sample_weight, self._axis,
                                      self._from_logits, self._weight, self._batch_axis)
        return F.softmax_ce_loss(*_arrays(pred, label, sample_weight), axis=self._axis,
                                 sparse_label=self._sparse_label, from_logits=self._from_logits,
                                 weight=self._weight, batch_axis=self._batch_axis)


def _softmax_ce_symbol(F, pred, label, sample_weight, axis, from_logits, weight, batch_axis):
    """Softmax cross-entropy on Symbols, built from MXNet 1.9.1's own operators
    (``log_softmax``, ``pick``, ``_mul_scalar``, ``mean``) as its Gluon loss builds it, so
    that a graph holding it (a Module checkpoint's ``-symbol.json``) loads in MXNet.

    >>> import sparsenet as mx
    >>> loss = mx.gluon.loss.SoftmaxCrossEntropyLoss(weight=2.0)(mx.sym.var('p'), mx.sym.var('l'))
    >>> [n['op'] for n in __import__('json').loads(loss.tojson())['nodes'] if n['op'] != 'null']
    ['log_softmax', 'pick', 'negative', '_mul_scalar', 'mean']
    """
    if not from_logits:
        pred = F.log_softmax(pred, axis=axis)
    loss = -F.pick(pred, label, axis=axis, keepdims=True)
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        loss = loss * weight
    return F.mean(loss, axis=batch_axis, exclude=True)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class LogisticLoss(Loss):
    """``log(1 + exp(-pred * label))`` for labels in {-1, 1} (or {0, 1} with ``'binary'``).

    >>> import sparsenet as mx
    >>> mx.gluon.loss.LogisticLoss()(mx.nd.array([0.0]), mx.nd.array([-1.0])).asnumpy()
    array([0.6931472], dtype=float32)
    """

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if label_format not in ("signed", "binary"):
            raise InvalidArgumentError(f"label_format can only be signed or binary, received "
                                       f"{label_format}.")
        self._label_format = label_format

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        return F.logistic_loss(*_arrays(pred, label, sample_weight),
                               label_format=self._label_format, weight=self._weight,
                               batch_axis=self._batch_axis)


class HingeLoss(Loss):
    """``max(0, margin - pred * label)`` for labels in {-1, 1}.

    >>> import sparsenet as mx
    >>> mx.gluon.loss.HingeLoss()(mx.nd.array([0.25]), mx.nd.array([1.0])).asnumpy()
    array([0.75], dtype=float32)
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        return F.hinge_loss(*_arrays(pred, label, sample_weight), margin=self._margin,
                            weight=self._weight, batch_axis=self._batch_axis)


class SquaredHingeLoss(Loss):
    """``max(0, margin - pred * label)**2`` for labels in {-1, 1}.

    >>> import sparsenet as mx
    >>> mx.gluon.loss.SquaredHingeLoss()(mx.nd.array([0.5]), mx.nd.array([1.0])).asnumpy()
    array([0.25], dtype=float32)
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        return F.squared_hinge_loss(*_arrays(pred, label, sample_weight), margin=self._margin,
                                    weight=self._weight, batch_axis=self._batch_axis)


class HuberLoss(Loss):
    """Smooth L1 loss with threshold ``rho``.

    >>> import sparsenet as mx
    >>> mx.gluon.loss.HuberLoss()(mx.nd.array([2.0]), mx.nd.array([0.0])).asnumpy()
    array([1.5], dtype=float32)
    """

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        return F.huber_loss(*_arrays(pred, label, sample_weight), rho=self._rho,
                            weight=self._weight, batch_axis=self._batch_axis)


class KLDivLoss(Loss):
    """Kullback-Leibler divergence ``label * (log(label) - pred)``, summed per sample.

    >>> import sparsenet as mx
    >>> l = mx.gluon.loss.KLDivLoss(from_logits=False)
    >>> l(mx.nd.array([[1.0, 1.0]]), mx.nd.array([[0.5, 0.5]])).asnumpy()
    array([0.], dtype=float32)
    """

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        return F.kldiv_loss(*_arrays(pred, label, sample_weight), from_logits=self._from_logits,
                            axis=self._axis, weight=self._weight, batch_axis=self._batch_axis)

"""Metrics of predicted class probabilities: cross-entropy, negative log-likelihood, perplexity.

>>> import sparsenet as mx
>>> m = Perplexity(ignore_label=None)
>>> m.update([mx.nd.array([0])], [mx.nd.array([[0.5, 0.5]])])
>>> m.get()
('perplexity', 2.0)
"""
import math

import numpy

from ..base import ShapeError
from .base import EvalMetric, _numpy, alias, check_label_shapes, register

__all__ = ["CrossEntropy", "NegativeLogLikelihood", "Perplexity"]


@alias("ce")
@register
class CrossEntropy(EvalMetric):
    """Mean of ``-log(p[label] + eps)`` over samples (``pred`` holds class probabilities).

    >>> import sparsenet as mx
    >>> m = CrossEntropy(); m.update([mx.nd.array([1])], [mx.nd.array([[0.5, 0.5]])])
    >>> round(m.get()[1], 6)
    0.693147
    """

    def __init__(self, eps=1e-12, name="cross-entropy", output_names=None, label_names=None):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            y, p = _numpy(label).ravel(), _numpy(pred)
            if y.shape[0] != p.shape[0]:
                raise ShapeError(f"{self.name}: {y.shape[0]} labels for {p.shape[0]} "
                                 f"predictions")
            prob = p[numpy.arange(y.shape[0]), numpy.int64(y)]
            self._add(float((-numpy.log(prob + self.eps)).sum()), y.shape[0])


@alias("nll_loss")
@register
class NegativeLogLikelihood(CrossEntropy):
    """Same as :class:`CrossEntropy`, named 'nll-loss'.

    >>> import sparsenet as mx
    >>> m = NegativeLogLikelihood(); m.update([mx.nd.array([0])], [mx.nd.array([[0.5, 0.5]])])
    >>> round(m.get()[1], 6)
    0.693147
    """

    def __init__(self, eps=1e-12, name="nll-loss", output_names=None, label_names=None):
        super().__init__(eps=eps, name=name, output_names=output_names, label_names=label_names)


@register
class Perplexity(EvalMetric):
    """``exp`` of the mean negative log-probability of the labels, skipping ``ignore_label``.

    >>> import sparsenet as mx
    >>> m = Perplexity(ignore_label=None)
    >>> m.update([mx.nd.array([0, 1])], [mx.nd.array([[0.5, 0.5], [0.25, 0.75]])])
    >>> round(m.get()[1], 6)
    1.632993
    """

    def __init__(self, ignore_label, axis=-1, name="perplexity", output_names=None,
                 label_names=None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        if len(labels) != len(preds):
            raise ShapeError(f"Perplexity: {len(labels)} labels for {len(preds)} predictions")
        loss, num = 0.0, 0
        for label, pred in zip(labels, preds):
            p = _numpy(pred)
            y = _numpy(label, "int64").reshape(-1)
            if y.size * p.shape[self.axis] != p.size:
                raise ShapeError(f"Perplexity: label shape {_numpy(label).shape} does not fit "
                                 f"prediction shape {p.shape}")
            picked = numpy.take_along_axis(
                numpy.moveaxis(p, self.axis, -1).reshape(-1, p.shape[self.axis]),
                y.clip(0, p.shape[self.axis] - 1)[:, None], axis=1).ravel()
            keep = numpy.ones_like(picked, dtype=bool) if self.ignore_label is None \
                else y != self.ignore_label
            loss -= float(numpy.log(numpy.maximum(1e-10, picked[keep])).sum())
            num += int(keep.sum())
        self._add(loss, num)

    def get(self):
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, math.exp(self.sum_metric / self.num_inst)

    def get_global(self):
        if self.global_num_inst == 0:
            return self.name, float("nan")
        return self.name, math.exp(self.global_sum_metric / self.global_num_inst)

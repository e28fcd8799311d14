"""Regression metrics: mean absolute, mean squared and root mean squared error, Pearson's r.

>>> import sparsenet as mx
>>> m = MSE()
>>> m.update([mx.nd.array([1.0, 2.0])], [mx.nd.array([1.5, 2.5])])
>>> m.get()
('mse', 0.25)
"""
import math

import numpy

from ..base import InvalidArgumentError, ShapeError
from .base import EvalMetric, _numpy, alias, check_label_shapes, register

__all__ = ["MAE", "MSE", "RMSE", "PearsonCorrelation"]


def _mean(x):
    """``x.mean()`` with the same bits (numpy's pairwise sum, then one division), without
    numpy's Python-level wrapper: the metrics run once per batch."""
    return numpy.add.reduce(x, axis=None) / x.size


class _Regression(EvalMetric):
    """Mean over updates of a per-batch error (labels and predictions as column vectors)."""

    def _error(self, diff):
        # builtin: abstract hook, every concrete subclass overrides it
        raise NotImplementedError

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            y, p = _numpy(label, numpy.float64), _numpy(pred, numpy.float64)
            y = y.reshape(y.shape[0], 1) if y.ndim == 1 else y
            p = p.reshape(p.shape[0], 1) if p.ndim == 1 else p
            self._add(float(self._error(y - p)), 1)


@register
class MAE(_Regression):
    """Mean absolute error (per batch, averaged over batches).

    >>> import sparsenet as mx
    >>> m = MAE(); m.update([mx.nd.array([1.0, 2.0])], [mx.nd.array([2.0, 4.0])]); m.get()
    ('mae', 1.5)
    """

    def __init__(self, name="mae", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def _error(self, diff):
        return _mean(numpy.abs(diff))


@register
class MSE(_Regression):
    """Mean squared error (per batch, averaged over batches).

    >>> import sparsenet as mx
    >>> m = MSE(); m.update([mx.nd.array([1.0, 2.0])], [mx.nd.array([2.0, 4.0])]); m.get()
    ('mse', 2.5)
    """

    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def _error(self, diff):
        return _mean(numpy.square(diff))


@register
class RMSE(_Regression):
    """Root mean squared error (per batch, averaged over batches).

    >>> import sparsenet as mx
    >>> m = RMSE(); m.update([mx.nd.array([1.0, 2.0])], [mx.nd.array([1.0, 4.0])]); m.get()
    ('rmse', 1.4142135623730951)
    """

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def _error(self, diff):
        return numpy.sqrt(_mean(numpy.square(diff)))


@alias("pearsonr")
@register
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of labels and predictions.

    ``average='macro'`` averages the per-update correlation; ``'micro'``
    correlates all values seen (streaming sums).

    >>> import sparsenet as mx
    >>> m = PearsonCorrelation()
    >>> m.update([mx.nd.array([1.0, 2.0, 3.0])], [mx.nd.array([2.0, 4.0, 6.5])])
    >>> round(m.get()[1], 6)
    0.997949
    """

    def __init__(self, name="pearsonr", output_names=None, label_names=None, average="macro"):
        if average not in ("macro", "micro"):
            raise InvalidArgumentError(
                f"PearsonCorrelation: average must be 'macro' or 'micro', got "
                f"{average!r}")
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names,
                         average=average)

    def reset(self):
        super().reset()
        self._moments = numpy.zeros(6)  # n, sum l, sum p, sum l^2, sum p^2, sum l*p
        self._global_moments = numpy.zeros(6)

    def reset_local(self):
        super().reset_local()
        self._moments = numpy.zeros(6)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            y = _numpy(label, numpy.float64).ravel()
            p = _numpy(pred, numpy.float64).ravel()
            if y.shape != p.shape:
                raise ShapeError(f"PearsonCorrelation: {y.size} labels for {p.size} "
                                 f"predictions")
            if self.average == "macro":
                self._add(float(numpy.corrcoef(p, y)[0, 1]), 1)
            else:
                batch = [y.size, y.sum(), p.sum(), (y * y).sum(), (p * p).sum(), (y * p).sum()]
                self._moments += batch
                self._global_moments += batch
                self.num_inst += 1
                self.global_num_inst += 1

    @staticmethod
    def _corr(moments):
        n, sl, sp, sll, spp, slp = moments
        cov = slp - sl * sp / n
        return float(cov / math.sqrt((sll - sl * sl / n) * (spp - sp * sp / n)))

    def get(self):
        if self.num_inst == 0 or self.average == "macro":
            return super().get()
        return self.name, self._corr(self._moments)

    def get_global(self):
        if self.global_num_inst == 0 or self.average == "macro":
            return super().get_global()
        return self.name, self._corr(self._global_moments)

"""Classification metrics: accuracy, top-k accuracy, and the binary F1 and MCC.

>>> import sparsenet as mx
>>> m = Accuracy()
>>> m.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
>>> m.get()
('accuracy', 0.6666666666666666)
"""
import math

import numpy

from ..base import InvalidArgumentError, ShapeError
from .base import EvalMetric, _numpy, alias, check_label_shapes, register

__all__ = ["Accuracy", "TopKAccuracy", "F1", "MCC"]


@alias("acc")
@register
class Accuracy(EvalMetric):
    """Fraction of samples whose predicted class (argmax over ``axis``) equals the label.

    >>> import sparsenet as mx
    >>> m = Accuracy(); m.update([mx.nd.array([2, 0])], [mx.nd.array([[0, 1, 5], [3, 1, 0]])])
    >>> m.get()
    ('accuracy', 1.0)
    """

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            p, y = _numpy(pred), _numpy(label)
            if p.shape != y.shape:
                p = p.argmax(axis=self.axis)
            p = p.astype("int64").ravel()
            y = y.astype("int64").ravel()
            check_label_shapes(y, p, shape=True)
            self._add(int((p == y).sum()), len(p))


@alias("top_k_accuracy", "top_k_acc")
@register
class TopKAccuracy(EvalMetric):
    """Fraction of samples whose label is among the ``top_k`` highest-scored classes.

    >>> import sparsenet as mx
    >>> m = TopKAccuracy(top_k=2)
    >>> m.update([mx.nd.array([2, 0])], [mx.nd.array([[0.1, 0.5, 0.4], [0.2, 0.3, 0.5]])])
    >>> m.get()
    ('top_k_accuracy_2', 0.5)
    """

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names)
        self.top_k = int(top_k)
        if self.top_k <= 1:
            raise InvalidArgumentError(
                f"TopKAccuracy needs top_k > 1 (got {top_k}); use Accuracy for "
                f"top_k = 1")
        self.name += f"_{self.top_k}"

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            p = _numpy(pred, "float64")
            if p.ndim > 2:
                raise ShapeError(f"TopKAccuracy: predictions must be 1-D or 2-D, got shape "
                                 f"{p.shape}")
            y = _numpy(label, "int64").ravel()
            if p.ndim == 1:
                self._add(int((p.astype("int64") == y).sum()), len(y))
                continue
            k = min(p.shape[1], self.top_k)
            top = numpy.argpartition(p, -k, axis=1)[:, -k:]
            self._add(int((top == y[:, None]).any(axis=1).sum()), p.shape[0])


class _BinaryStats:
    """True/false positive/negative counts of a binary classifier (local and global)."""

    def __init__(self):
        self.local = numpy.zeros(4, dtype=numpy.int64)   # tp, fp, fn, tn
        self.total = numpy.zeros(4, dtype=numpy.int64)

    def update(self, label, pred):
        p, y = _numpy(pred), _numpy(label).astype("int64").ravel()
        p = p.argmax(axis=1) if p.ndim > 1 else (p > 0.5).astype("int64")
        if len(numpy.unique(y)) > 2:
            raise InvalidArgumentError("F1/MCC support binary classification only (labels 0 and 1)")
        pt, yt = p == 1, y == 1
        counts = numpy.array([(pt & yt).sum(), (pt & ~yt).sum(), (~pt & yt).sum(),
                              (~pt & ~yt).sum()], dtype=numpy.int64)
        self.local += counts
        self.total += counts

    @staticmethod
    def fscore(c):
        tp, fp, fn, _ = (float(v) for v in c)
        precision = tp / (tp + fp) if tp + fp > 0 else 0.0
        recall = tp / (tp + fn) if tp + fn > 0 else 0.0
        return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0

    @staticmethod
    def mcc(c):
        tp, fp, fn, tn = (float(v) for v in c)
        if not c.sum():
            return 0.0
        denom = 1.0
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t:
                denom *= t
        return (tp * tn - fp * fn) / math.sqrt(denom)


class _BinaryMetric(EvalMetric):
    _score = None

    def __init__(self, name, output_names=None, label_names=None, average="macro"):
        if average not in ("macro", "micro"):
            raise InvalidArgumentError(
                f"{type(self).__name__}: average must be 'macro' or 'micro', got "
                f"{average!r}")
        self.average = average
        self._stats = _BinaryStats()
        super().__init__(name, output_names=output_names, label_names=label_names,
                         average=average)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self._stats.update(label, pred)
        score = type(self)._score
        if self.average == "macro":  # mean of the per-update scores
            self._add(score(self._stats.local), 1)
            self._stats.local[:] = 0
        else:  # score of all the counts so far
            n, gn = int(self._stats.local.sum()), int(self._stats.total.sum())
            self.sum_metric, self.num_inst = score(self._stats.local) * n, n
            self.global_sum_metric, self.global_num_inst = score(self._stats.total) * gn, gn

    def reset(self):
        super().reset()
        self._stats = _BinaryStats()

    def reset_local(self):
        super().reset_local()
        self._stats.local[:] = 0


@register
class F1(_BinaryMetric):
    """F1 score of a binary classifier (class 1 positive; predictions argmax over axis 1).

    ``average='macro'`` averages the per-update F1, ``'micro'`` computes it over
    all samples.

    >>> import sparsenet as mx
    >>> m = F1()
    >>> m.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
    >>> m.get()
    ('f1', 0.8)
    """

    _score = staticmethod(_BinaryStats.fscore)

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)


@register
class MCC(_BinaryMetric):
    """Matthews correlation coefficient of a binary classifier.

    >>> import sparsenet as mx
    >>> m = MCC(); m.update([mx.nd.array([0, 1])], [mx.nd.array([[0.9, 0.1], [0.2, 0.8]])])
    >>> m.get()
    ('mcc', 1.0)
    """

    _score = staticmethod(_BinaryStats.mcc)

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

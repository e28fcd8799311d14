"""Evaluation metrics (``mx.metric``): accumulate a score over batches of labels and predictions.

Every metric keeps a *local* sum and count (reset each epoch or by
``reset_local``) and a *global* one (reset only by ``reset``). ``update(labels,
preds)`` takes lists of NDArrays (any storage type; values are read as NumPy);
``get()`` returns ``(name, value)``. ``create`` builds one from a name, a
callable or a list.

>>> import sparsenet as mx
>>> acc = mx.metric.create('acc')
>>> acc.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
>>> acc.get()
('accuracy', 0.6666666666666666)
>>> mse = mx.metric.create('mse')
>>> mse.update([mx.nd.array([1.0, 2.0])], [mx.nd.array([1.5, 2.5])])
>>> mse.get()
('mse', 0.25)
"""
import math
from collections import OrderedDict

import numpy

from .ndarray.ndarray import NDArray

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC", "MAE",
           "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood", "Perplexity",
           "PearsonCorrelation", "Loss", "CustomMetric", "create", "register", "alias", "np",
           "check_label_shapes"]

_REGISTRY = {}


def register(klass):
    """Register a metric class under its lower-cased name (for :func:`create`).

    >>> type(create('mae')).__name__
    'MAE'
    """
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def alias(*names):
    """Register extra names for a metric class.

    >>> @alias('my_metric')
    ... @register
    ... class MyMetric(EvalMetric):
    ...     def __init__(self, name='mine'):
    ...         super().__init__(name)
    ...     def update(self, labels, preds):
    ...         pass
    >>> type(create('my_metric')).__name__
    'MyMetric'
    """
    def reg(klass):
        for n in names:
            _REGISTRY[n.lower()] = klass
        return klass
    return reg


def create(metric, *args, **kwargs):
    """A metric from a name (``'acc'``, ``'mse'``, ...), an EvalMetric, a callable or a list.

    A callable ``f(label, pred) -> float`` (NumPy arrays) becomes a
    :class:`CustomMetric`; a list becomes a :class:`CompositeEvalMetric`.

    >>> create(['acc', 'mse']).get()
    (['accuracy', 'mse'], [nan, nan])
    """
    if isinstance(metric, EvalMetric):
        return metric
    if callable(metric) and not isinstance(metric, type):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, (list, tuple)):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if isinstance(metric, type) and issubclass(metric, EvalMetric):
        return metric(*args, **kwargs)
    if not isinstance(metric, str):
        raise TypeError(f"metric.create: expected a name, an EvalMetric, a callable or a list, "
                        f"got {type(metric).__name__}")
    try:
        klass = _REGISTRY[metric.lower()]
    except KeyError:
        raise ValueError(f"metric.create: unknown metric {metric!r}; known names are "
                         f"{sorted(_REGISTRY)}") from None
    return klass(*args, **kwargs)


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Check that labels and predictions match in count (or in shape); optionally wrap in lists.

    >>> check_label_shapes([1, 2], [3])
    Traceback (most recent call last):
    ...
    ValueError: Shape of labels 2 does not match shape of predictions 1
    """
    if wrap:
        if isinstance(labels, NDArray):
            labels = [labels]
        if isinstance(preds, NDArray):
            preds = [preds]
    a, b = (labels.shape, preds.shape) if shape else (len(labels), len(preds))
    if a != b:
        raise ValueError(f"Shape of labels {a} does not match shape of predictions {b}")
    return labels, preds


def _numpy(x):
    return x.asnumpy() if isinstance(x, NDArray) else numpy.asarray(x)


class EvalMetric:
    """Base class of the metrics: a local and a global (sum, count) pair.

    Subclasses implement ``update(labels, preds)``; ``get()`` returns the local
    ``sum / count`` and ``get_global()`` the global one.

    Parameters
    ----------
    name : str
    output_names, label_names : list of str, optional
        Which outputs and labels :meth:`update_dict` uses (all by default).

    Examples
    --------
    >>> class Count(EvalMetric):
    ...     def update(self, labels, preds):
    ...         self._add(float(len(labels)), 1)
    >>> m = Count('count'); m.update([1, 2], [3, 4]); m.get()
    ('count', 2.0)
    """

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", True)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self):
        """The constructor arguments; ``create(**config)`` rebuilds the metric."""
        config = dict(self._kwargs)
        config.update({"metric": type(self).__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    def update_dict(self, label, pred):
        """Update from ``{name: array}`` dicts, keeping only the configured names."""
        preds = [pred[n] for n in self.output_names] if self.output_names is not None \
            else list(pred.values())
        labels = [label[n] for n in self.label_names] if self.label_names is not None \
            else list(label.values())
        self.update(labels, preds)

    def update(self, labels, preds):
        """Accumulate one batch (subclasses define it)."""
        raise NotImplementedError(f"{type(self).__name__} must define update()")

    def _add(self, value, count):
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count

    def reset(self):
        """Clear the local and the global statistics."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        """Clear the local statistics only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        """``(name, local value)``; the value is NaN before any update."""
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, float(self.sum_metric / self.num_inst)

    def get_global(self):
        """``(name, global value)``."""
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return self.name, float("nan")
        return self.name, float(self.global_sum_metric / self.global_num_inst)

    def get_name_value(self):
        """``[(name, value), ...]`` of :meth:`get`."""
        return _zip_pairs(*self.get())

    def get_global_name_value(self):
        """``[(name, value), ...]`` of :meth:`get_global`."""
        return _zip_pairs(*self.get_global())


def _zip_pairs(name, value):
    names = name if isinstance(name, list) else [name]
    values = value if isinstance(value, list) else [value]
    return list(zip(names, values))


@alias("composite")
@register
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` returns lists of names and values.

    >>> m = CompositeEvalMetric([Accuracy(), MSE()])
    >>> import sparsenet as mx
    >>> m.update([mx.nd.array([1, 0])], [mx.nd.array([[0.2, 0.8], [0.9, 0.1]])])
    >>> m.get()[0]
    ['accuracy', 'mse']
    """

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric):
        """Add a child metric (anything :func:`create` accepts)."""
        self.metrics.append(create(metric))

    def get_metric(self, index):
        """Child metric ``index``."""
        try:
            return self.metrics[index]
        except IndexError:
            raise IndexError(f"metric index {index} is out of range 0..{len(self.metrics) - 1}") \
                from None

    def update_dict(self, labels, preds):
        if self.label_names is not None:
            labels = OrderedDict((k, v) for k, v in labels.items() if k in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict((k, v) for k, v in preds.items() if k in self.output_names)
        for m in self.metrics:
            m.update_dict(labels, preds)

    def update(self, labels, preds):
        for m in self.metrics:
            m.update(labels, preds)

    def reset(self):
        super().reset()
        for m in getattr(self, "metrics", []):
            m.reset()

    def reset_local(self):
        for m in self.metrics:
            m.reset_local()

    def get(self):
        return self._collect("get")

    def get_global(self):
        return self._collect("get_global")

    def _collect(self, how):
        names, values = [], []
        for m in self.metrics:
            n, v = getattr(m, how)()
            names.extend(n if isinstance(n, list) else [n])
            values.extend(v if isinstance(v, list) else [v])
        return names, values

    def get_config(self):
        config = super().get_config()
        config["metrics"] = [m.get_config() for m in self.metrics]
        return config


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
            raise ValueError(f"TopKAccuracy needs top_k > 1 (got {top_k}); use Accuracy for "
                             f"top_k = 1")
        self.name += f"_{self.top_k}"

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            p = _numpy(pred).astype("float64")
            if p.ndim > 2:
                raise ValueError(f"TopKAccuracy: predictions must be 1-D or 2-D, got shape "
                                 f"{p.shape}")
            y = _numpy(label).astype("int64").ravel()
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
            raise ValueError("F1/MCC support binary classification only (labels 0 and 1)")
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
            raise ValueError(f"{type(self).__name__}: average must be 'macro' or 'micro', got "
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


class _Regression(EvalMetric):
    """Mean over updates of a per-batch error (labels and predictions as column vectors)."""

    def _error(self, diff):
        raise NotImplementedError

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            y, p = _numpy(label).astype(numpy.float64), _numpy(pred).astype(numpy.float64)
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
        return numpy.abs(diff).mean()


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
        return (diff ** 2.0).mean()


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
        return numpy.sqrt((diff ** 2.0).mean())


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
                raise ValueError(f"{self.name}: {y.shape[0]} labels for {p.shape[0]} "
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
            raise ValueError(f"Perplexity: {len(labels)} labels for {len(preds)} predictions")
        loss, num = 0.0, 0
        for label, pred in zip(labels, preds):
            p = _numpy(pred)
            y = _numpy(label).reshape(-1).astype("int64")
            if y.size * p.shape[self.axis] != p.size:
                raise ValueError(f"Perplexity: label shape {_numpy(label).shape} does not fit "
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
            raise ValueError(f"PearsonCorrelation: average must be 'macro' or 'micro', got "
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
            y = _numpy(label).ravel().astype(numpy.float64)
            p = _numpy(pred).ravel().astype(numpy.float64)
            if y.shape != p.shape:
                raise ValueError(f"PearsonCorrelation: {y.size} labels for {p.size} "
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


@register
class Loss(EvalMetric):
    """Mean of the predictions themselves (for outputs that are losses); labels are ignored.

    >>> import sparsenet as mx
    >>> m = Loss(); m.update(None, [mx.nd.array([1.0, 3.0])]); m.get()
    ('loss', 2.0)
    """

    def __init__(self, name="loss", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, _, preds):
        if isinstance(preds, NDArray):
            preds = [preds]
        for pred in preds:
            p = _numpy(pred)
            self._add(float(p.sum()), p.size)


@register
class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred)`` on NumPy arrays, returning a value or (sum, count).

    >>> import sparsenet as mx, numpy
    >>> def max_err(label, pred):
    ...     return numpy.abs(label - pred).max()
    >>> m = CustomMetric(max_err); m.update([mx.nd.array([1.0, 2.0])], [mx.nd.array([1.5, 4.0])])
    >>> m.get()
    ('max_err', 2.0)
    """

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if name is None:
            name = getattr(feval, "__name__", "custom")
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            value = self._feval(_numpy(label), _numpy(pred))
            if isinstance(value, tuple):
                self._add(value[0], value[1])
            else:
                self._add(value, 1)

    def get_config(self):
        raise TypeError("CustomMetric cannot be serialised: its function is Python code")


def np(numpy_feval, name=None, allow_extra_outputs=False):  # noqa: A001 - MXNet's name
    """A :class:`CustomMetric` from a function of NumPy ``(label, pred)``.

    >>> import sparsenet as mx, numpy
    >>> def mean_abs(label, pred):
    ...     return numpy.mean(numpy.abs(label - pred))
    >>> m = mx.metric.np(mean_abs)
    >>> m.update([mx.nd.array([0.0, 2.0])], [mx.nd.array([1.0, 1.0])]); m.get()
    ('mean_abs', 1.0)
    """
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = getattr(numpy_feval, "__name__", "custom")
    return CustomMetric(feval, name, allow_extra_outputs)

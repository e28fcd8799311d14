"""Metrics made of other metrics: :class:`CompositeEvalMetric`, and :func:`create`.

>>> import sparsenet as mx
>>> m = create(['acc', 'mse'])
>>> m.update([mx.nd.array([1, 0])], [mx.nd.array([[0.2, 0.8], [0.9, 0.1]])])
>>> m.get()[0]
['accuracy', 'mse']
"""
from collections import OrderedDict

from ..base import IndexOutOfRangeError, InvalidArgumentError, InvalidArgumentTypeError
from .base import REGISTRY, EvalMetric, alias, register
from .custom import CustomMetric

__all__ = ["CompositeEvalMetric", "create"]


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
        raise InvalidArgumentTypeError(
            f"metric.create: expected a name, an EvalMetric, a callable or a list, "
            f"got {type(metric).__name__}")
    try:
        klass = REGISTRY[metric.lower()]
    except KeyError:
        raise InvalidArgumentError(f"metric.create: unknown metric {metric!r}; known names are "
                                   f"{sorted(REGISTRY)}") from None
    return klass(*args, **kwargs)


@alias("composite")
@register
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` returns lists of names and values.

    >>> import sparsenet as mx
    >>> m = CompositeEvalMetric([mx.metric.Accuracy(), mx.metric.MSE()])
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
            raise IndexOutOfRangeError(
                f"metric index {index} is out of range 0..{len(self.metrics) - 1}") \
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

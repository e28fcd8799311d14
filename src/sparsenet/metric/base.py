"""The base of the metrics: :class:`EvalMetric`, the name registry and label checks.

A metric registered with :func:`register` (and :func:`alias`) can be built by
name with :func:`sparsenet.metric.create`.

>>> class Count(EvalMetric):
...     def update(self, labels, preds):
...         self._add(float(len(labels)), 1)
>>> m = Count('count'); m.update([1, 2], [3, 4]); m.get()
('count', 2.0)
"""
import numpy

from ..base import ShapeError, UnsupportedError
from ..ndarray.ndarray import NDArray

__all__ = ["EvalMetric", "register", "alias", "check_label_shapes", "REGISTRY"]

#: Metric classes by lower-cased name and alias (what :func:`sparsenet.metric.create` reads).
REGISTRY = {}


def register(klass):
    """Register a metric class under its lower-cased name (for :func:`create`).

    >>> import sparsenet as mx
    >>> type(mx.metric.create('mae')).__name__
    'MAE'
    """
    REGISTRY[klass.__name__.lower()] = klass
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
    >>> import sparsenet as mx
    >>> type(mx.metric.create('my_metric')).__name__
    'MyMetric'
    """
    def reg(klass):
        for n in names:
            REGISTRY[n.lower()] = klass
        return klass
    return reg


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Check that labels and predictions match in count (or in shape); optionally wrap in lists.

    >>> check_label_shapes([1, 2], [3])
    Traceback (most recent call last):
    ...
    sparsenet.base.ShapeError: Shape of labels 2 does not match shape of predictions 1
    """
    if wrap:
        if isinstance(labels, NDArray):
            labels = [labels]
        if isinstance(preds, NDArray):
            preds = [preds]
    a, b = (labels.shape, preds.shape) if shape else (len(labels), len(preds))
    if a != b:
        raise ShapeError(f"Shape of labels {a} does not match shape of predictions {b}")
    return labels, preds


def _numpy(x, dtype=None):
    """``x`` as a NumPy array: a copy of an NDArray's values, converted to ``dtype`` when
    given (one conversion, no intermediate copy)."""
    if not isinstance(x, NDArray):
        return numpy.asarray(x) if dtype is None else numpy.asarray(x, dtype=dtype)
    if dtype is None:
        return x.asnumpy()
    return x._host_values().astype(dtype)


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
        raise UnsupportedError(f"{type(self).__name__} must define update()")

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

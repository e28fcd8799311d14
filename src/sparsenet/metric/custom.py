"""Metrics of user functions and of loss outputs: :class:`CustomMetric`, :func:`np`, :class:`Loss`.

>>> import sparsenet as mx
>>> m = CustomMetric(lambda label, pred: abs(label - pred).sum(), name='l1')
>>> m.update([mx.nd.array([1.0, 2.0])], [mx.nd.array([1.5, 4.0])])
>>> m.get()
('l1', 2.5)
"""
from ..base import InvalidArgumentTypeError
from ..ndarray.ndarray import NDArray
from .base import EvalMetric, _numpy, check_label_shapes, register

__all__ = ["Loss", "CustomMetric", "np"]


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
        raise InvalidArgumentTypeError(
            "CustomMetric cannot be serialised: its function is Python code")


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

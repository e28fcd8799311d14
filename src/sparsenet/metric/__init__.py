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
from .base import EvalMetric, alias, check_label_shapes, register
from .classification import F1, MCC, Accuracy, TopKAccuracy
from .composite import CompositeEvalMetric, create
from .custom import CustomMetric, Loss, np
from .likelihood import CrossEntropy, NegativeLogLikelihood, Perplexity
from .regression import MAE, MSE, RMSE, PearsonCorrelation

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC", "MAE",
           "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood", "Perplexity",
           "PearsonCorrelation", "Loss", "CustomMetric", "create", "register", "alias", "np",
           "check_label_shapes"]

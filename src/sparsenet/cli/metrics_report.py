"""The metrics the ``sparsenet`` commands report, per task, computed with NumPy.

============  ===============================================
task          metrics
============  ===============================================
binary        ``auc`` (ties averaged), ``logloss`` (natural log)
multiclass    ``accuracy``, ``logloss``
regression    ``rmse``
============  ===============================================

``preds`` are :func:`sparsenet.models.tasks.predict`'s outputs: the values for
regression, class probabilities ``(rows, classes)`` otherwise.

>>> import numpy as np
>>> auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8]))
0.75
>>> format_metrics({'auc': 0.75, 'logloss': 0.5})
'auc=0.7500 logloss=0.5000'
"""
import numpy as np

__all__ = ["auc", "log_loss", "accuracy", "rmse", "task_metrics", "format_metrics"]

_EPS = 1e-15


def auc(labels, scores):
    """Area under the ROC curve of 0/1 ``labels`` ranked by ``scores`` (NaN with one class)."""
    labels = np.asarray(labels) > 0
    scores = np.asarray(scores, dtype=np.float64)
    pos = int(labels.sum())
    neg = labels.size - pos
    if pos == 0 or neg == 0:
        return float("nan")
    _, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    mid_rank = ends - (counts - 1) / 2.0  # 1-based average rank of each distinct score
    rank_sum = mid_rank[inverse][labels].sum()
    return float((rank_sum - pos * (pos + 1) / 2.0) / (pos * neg))


def log_loss(labels, probs):
    """Mean negative log-likelihood of integer ``labels`` under ``probs`` ``(rows, classes)``."""
    labels = np.asarray(labels).astype(np.int64)
    probs = np.asarray(probs, dtype=np.float64)
    picked = probs[np.arange(labels.size), labels]
    return float(-np.mean(np.log(np.clip(picked, _EPS, 1.0))))


def accuracy(labels, probs):
    """Fraction of rows whose most probable class is the label."""
    return float(np.mean(np.argmax(probs, axis=1) == np.asarray(labels).astype(np.int64)))


def rmse(labels, values):
    """Root mean squared error."""
    diff = np.asarray(values, dtype=np.float64) - np.asarray(labels, dtype=np.float64)
    return float(np.sqrt(np.mean(diff * diff)))


def task_metrics(task, labels, preds):
    """``{name: value}`` of the task's metrics (see the module table); empty without rows.

    >>> task_metrics('regression', np.array([1.0, 3.0]), np.array([2.0, 2.0]))
    {'rmse': 1.0}
    """
    if len(labels) == 0:
        return {}
    if task == "regression":
        return {"rmse": rmse(labels, preds)}
    if task == "binary":
        return {"auc": auc(labels, preds[:, -1]), "logloss": log_loss(labels, preds)}
    return {"accuracy": accuracy(labels, preds), "logloss": log_loss(labels, preds)}


def format_metrics(metrics):
    """``name=value`` pairs, four decimals."""
    return " ".join(f"{k}={v:.4f}" for k, v in metrics.items())

"""The metrics the ``sparsenet`` commands report, per task, computed with NumPy.

============  =================================================================
task          metrics
============  =================================================================
binary        ``auc`` (ties averaged), ``accuracy`` (score > 0, i.e. P(1) > 0.5),
              ``logloss`` (natural log)
multiclass    ``accuracy``, ``logloss``
regression    ``rmse``
============  =================================================================

The metrics are computed from the model's raw ``scores`` ``(rows, outputs)`` in
float64: ``logloss`` from the log-probabilities (log-sigmoid, log-softmax), exactly
and without clipping, so it is the very quantity the ``logistic`` and ``softmax``
losses train (float32 probabilities round to 0 or 1 for scores past about 17 and
would have to be clipped, which made the reported log-loss differ from the loss);
``auc`` ranks the scores themselves (no ties from probabilities rounded to 1).

>>> import numpy as np
>>> auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8]))
0.75
>>> format_metrics({'auc': 0.75, 'logloss': 0.5})
'auc=0.7500 logloss=0.5000'
>>> round(task_metrics('binary', np.array([0]), np.array([[40.0]]))['logloss'], 6)
40.0
"""
import numpy as np

__all__ = ["auc", "log_loss", "log_probabilities", "accuracy", "rmse", "task_metrics",
           "format_metrics"]


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


def log_probabilities(task, scores):
    """float64 log-probabilities ``(rows, classes)`` of a classifier's raw ``scores``: for
    ``binary`` (one score ``s`` per row) ``[log sigmoid(-s), log sigmoid(s)]``, for
    ``multiclass`` the log-softmax; both computed without overflow.

    >>> log_probabilities('binary', np.array([[0.0]])).round(4)
    array([[-0.6931, -0.6931]])
    """
    scores = np.asarray(scores, dtype=np.float64)
    if task == "binary":
        s = scores.reshape(-1, 1)
        return -np.logaddexp(0.0, np.concatenate([s, -s], axis=1))
    top = scores.max(axis=1, keepdims=True)
    shifted = scores - top
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def log_loss(labels, log_probs):
    """Mean negative log-likelihood of integer ``labels`` under ``log_probs``
    ``(rows, classes)`` (natural log; :func:`log_probabilities`)."""
    labels = np.asarray(labels).astype(np.int64)
    return float(-np.mean(np.asarray(log_probs)[np.arange(labels.size), labels]))


def accuracy(labels, scores):
    """Fraction of rows whose highest-scoring class (column) is the label."""
    return float(np.mean(np.argmax(scores, axis=1) == np.asarray(labels).astype(np.int64)))


def rmse(labels, values):
    """Root mean squared error."""
    diff = np.asarray(values, dtype=np.float64) - np.asarray(labels, dtype=np.float64)
    return float(np.sqrt(np.mean(diff * diff)))


def task_metrics(task, labels, scores):
    """``{name: value}`` of the task's metrics (see the module table) from the model's raw
    ``scores`` ``(rows, outputs)``; empty without rows.

    >>> task_metrics('regression', np.array([1.0, 3.0]), np.array([[2.0], [2.0]]))
    {'rmse': 1.0}
    >>> task_metrics('binary', np.array([0, 1, 1]), np.array([[-1.0], [2.0], [-0.5]]))['accuracy']
    0.6666666666666666
    """
    if len(labels) == 0:
        return {}
    scores = np.asarray(scores, dtype=np.float64)
    if task == "regression":
        return {"rmse": rmse(labels, scores.reshape(-1))}
    log_probs = log_probabilities(task, scores)
    if task == "binary":
        s = scores.reshape(-1)
        hit = (s > 0) == (np.asarray(labels) > 0)
        return {"auc": auc(labels, s), "accuracy": float(np.mean(hit)),
                "logloss": log_loss(labels, log_probs)}
    return {"accuracy": accuracy(labels, scores), "logloss": log_loss(labels, log_probs)}


def format_metrics(metrics):
    """``name=value`` pairs, four decimals."""
    return " ".join(f"{k}={v:.4f}" for k, v in metrics.items())

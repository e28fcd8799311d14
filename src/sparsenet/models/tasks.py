"""What a model predicts: the task, its output width, its link and its default loss.

A model's forward pass returns raw scores of shape ``(batch, outputs)``; the task turns
them into predictions (:func:`predict`) and names the loss that trains them
(:func:`default_loss`).

==============  =======  ==================================  ================
task            outputs  prediction                          default loss
==============  =======  ==================================  ================
``regression``  1        the score, ``(batch,)``             ``'l2'``
``binary``      1        ``[P(0), P(1)]``, ``(batch, 2)``    ``'logistic'``
``multiclass``  K        softmax, ``(batch, K)``             ``'softmax'``
==============  =======  ==================================  ================

>>> import sparsenet as mx
>>> predict(mx.nd.array([[0.0], [2.0]]), 'binary').asnumpy().round(3)
array([[0.5  , 0.5  ],
       [0.119, 0.881]], dtype=float32)
"""
from .. import ndarray as nd
from ..base import InvalidArgumentError
from ..gluon import loss as gloss

__all__ = ["TASKS", "LOSSES", "check_task", "num_outputs", "predict", "default_loss",
           "make_loss"]

TASKS = ("regression", "binary", "multiclass")

#: loss name -> (task it trains, gluon loss class)
LOSSES = {
    "l2": ("regression", gloss.L2Loss),
    "l1": ("regression", gloss.L1Loss),
    "huber": ("regression", gloss.HuberLoss),
    "logistic": ("binary", gloss.SigmoidBinaryCrossEntropyLoss),
    "hinge": ("binary", gloss.HingeLoss),
    "softmax": ("multiclass", gloss.SoftmaxCrossEntropyLoss),
}

_DEFAULT_LOSS = {"regression": "l2", "binary": "logistic", "multiclass": "softmax"}


def check_task(task):
    """Return ``task`` if it is one of :data:`TASKS`, else raise ``InvalidArgumentError``."""
    if task not in TASKS:
        raise InvalidArgumentError(f"task must be one of {', '.join(TASKS)}, got {task!r}")
    return task


def _positive(value, name):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgumentError(f"{name} must be a positive integer, got {value!r}")
    return value


def num_outputs(task, num_classes=2):
    """Width of the scores a model of ``task`` returns (``num_classes`` for multiclass).

    >>> num_outputs('multiclass', 5), num_outputs('binary')
    (5, 1)
    """
    check_task(task)
    if task != "multiclass":
        return 1
    if _positive(num_classes, "num_classes") < 2:
        raise InvalidArgumentError(f"num_classes must be at least 2 for a multiclass model, "
                                   f"got {num_classes}")
    return num_classes


def predict(scores, task):
    """Predictions from raw ``scores`` ``(batch, outputs)`` (see the module table)."""
    check_task(task)
    if task == "regression":
        return scores.reshape((-1,))
    if task == "binary":
        p = nd.sigmoid(scores.reshape((-1, 1)))
        return nd.concat(1 - p, p, dim=1)
    return nd.softmax(scores, axis=1)


def default_loss(task):
    """The loss name that trains ``task`` by default.

    >>> default_loss('binary')
    'logistic'
    """
    return _DEFAULT_LOSS[check_task(task)]


def make_loss(name, task):
    """The gluon loss block ``name`` (a key of :data:`LOSSES`) for a model of ``task``.

    Binary losses take labels 0/1 (``hinge`` maps them to -1/+1 itself).
    """
    if name not in LOSSES:
        raise InvalidArgumentError(f"loss must be one of {', '.join(LOSSES)}, got {name!r}")
    trains, cls = LOSSES[name]
    if trains != check_task(task):
        raise InvalidArgumentError(f"loss {name!r} trains {trains} models, but the model's "
                                   f"task is {task}; use one of "
                                   f"{', '.join(k for k, v in LOSSES.items() if v[0] == task)}")
    block = cls()
    if name != "hinge":
        return block
    return lambda scores, label: block(scores, 2 * label - 1)

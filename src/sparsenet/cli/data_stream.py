"""Reading LibSVM files for the ``sparsenet`` commands: batches, checked labels, predictions.

Files are streamed with :class:`sparsenet.io.LibSVMIter` (``round_batch=False``: every
row once per pass, in file order). Labels are checked against the task:

- ``binary``: 0/1 or -1/+1 (-1 read as 0);
- ``multiclass``: integers in ``[0, classes)``;
- ``regression``: any finite number.

>>> import numpy as np
>>> task_labels(np.array([-1.0, 1.0]), 'binary', None, 'd.svm', 0)
array([0., 1.], dtype=float32)
"""
import numpy as np

from .. import autograd
from ..base import InvalidArgumentError
from ..io import LibSVMIter
from ..models.tasks import predict
from .model_schema import MAX_AUTO_CLASSES

__all__ = ["open_batches", "task_labels", "count_classes", "predictions", "MAX_AUTO_CLASSES"]



def open_batches(path, features, batch_size, ctx, index_base=0, workers=4):
    """A ``LibSVMIter`` over ``path`` with ``features`` columns."""
    return LibSVMIter(data_libsvm=path, data_shape=(features,), batch_size=batch_size,
                      round_batch=False, ctx=ctx, zero_based=index_base == 0,
                      prefetch_buffer=workers)


def task_labels(labels, task, classes, path, row0):
    """``labels`` (NumPy) checked for ``task`` and mapped to what the loss takes (float32);
    ``row0`` is the 0-based row of the first label in ``path`` (for the error)."""
    labels = np.asarray(labels, dtype=np.float32)
    if task == "regression":
        return labels
    if task == "binary":
        bad = (labels != 0) & (labels != 1) & (labels != -1)
        what = "0/1 or -1/+1"
    else:
        bad = (labels != np.floor(labels)) | (labels < 0) | (labels >= classes)
        what = f"integer classes in [0, {classes})"
    if bad.any():
        first = int(np.argmax(bad))
        raise InvalidArgumentError(
            f"{path}:{row0 + first + 1}: a {task} model expects labels {what}, got "
            f"{labels[first]:g}" + ("; pass --classes for more classes"
                                    if task == "multiclass" else ""))
    return np.where(labels < 0, 0, labels).astype(np.float32)


def count_classes(path, features, batch_size, ctx, index_base=0):
    """``1 + the largest label`` of ``path`` (one pass over the file), at most
    :data:`MAX_AUTO_CLASSES`."""
    top, rows = 0.0, 0
    for batch in open_batches(path, features, batch_size, ctx, index_base):
        label = batch.label[0].asnumpy()
        if label.size:
            top = max(top, float(label.max()))
            rows += label.size
    if not rows:
        raise InvalidArgumentError(f"{path}: no rows to train on (the data holds no lines "
                                   f"with a label), so the number of classes cannot be "
                                   f"counted; nothing was written")
    if top != np.floor(top) or top < 1:
        raise InvalidArgumentError(f"{path}: a multiclass model expects integer labels "
                                   f"0, 1, ..., got a largest label of {top:g}")
    if top + 1 > MAX_AUTO_CLASSES:
        raise InvalidArgumentError(
            f"{path}: the largest label is {top:.0f}, so a multiclass model would have "
            f"{top + 1:.0f} classes, more than the {MAX_AUTO_CLASSES} counted without "
            f"--classes; pass --classes K (K > the largest label) if the data really has "
            f"that many classes, or fix the labels")
    return int(top) + 1


def predictions(net, task, batches, classes, path):
    """Yield ``(labels, predictions)`` NumPy batches of ``net`` over ``batches``."""
    row = 0
    for batch in batches:
        labels = task_labels(batch.label[0].asnumpy(), task, classes, path, row)
        row += labels.size
        with autograd.predict_mode():
            preds = predict(net(batch.data[0]), task).asnumpy()
        yield labels, preds

"""Reading LibSVM files for the ``sparsenet`` commands: batches, checked labels, predictions.

Files are streamed with :class:`sparsenet.io.LibSVMIter` (``round_batch=False``: every
row once per pass, in file order). Labels are checked against the task:

- ``binary``: 0/1 or -1/+1 (-1 read as 0);
- ``multiclass``: the labels the model was trained on (``model.json``'s ``labels``,
  inferred from the training data), mapped to class indices; or, for a model given
  ``--classes K``, integers in ``[0, K)``;
- ``regression``: any finite number.

>>> import numpy as np
>>> task_labels(np.array([-1.0, 1.0]), 'binary', None, 'd.svm', 0)
array([0., 1.], dtype=float32)
"""
from typing import NamedTuple

import numpy as np

from .. import autograd
from ..base import InvalidArgumentError
from ..io import LibSVMIter
from .model_schema import MAX_AUTO_CLASSES

__all__ = ["open_batches", "batch_groups", "training_groups", "Step", "task_labels",
           "infer_labels", "predictions", "MAX_AUTO_CLASSES", "scaled"]



def open_batches(path, features, batch_size, ctx, index_base=0, workers=4, scale=None):
    """A ``LibSVMIter`` over ``path`` with ``features`` columns; with ``scale`` (each
    feature's divisor, ``--scale``), batches whose values are divided by it
    (:func:`scaled`)."""
    batches = _iterator(path, features, batch_size, ctx, index_base, workers)
    return batches if scale is None else scaled(batches, scale, ctx)


def _iterator(path, features, batch_size, ctx, index_base, workers):
    return LibSVMIter(data_libsvm=path, data_shape=(features,), batch_size=batch_size,
                      round_batch=False, ctx=ctx, zero_based=index_base == 0,
                      prefetch_buffer=workers)


def batch_groups(path, features, batch_size, ctx, index_base=0, workers=4, scale=None):
    """Yield the batches of :func:`open_batches` a list at a time: those each parsed chunk of
    ``path`` completes (:meth:`sparsenet.io.LibSVMIter.next_group`), so that a reader thread
    hands them over in one piece."""
    batches = _iterator(path, features, batch_size, ctx, index_base, workers)
    rescale = None if scale is None else _scaler(scale, ctx)
    while True:
        group = batches.next_group()
        if not group:
            return
        if rescale is not None:
            for batch in group:
                rescale(batch)
        yield group


class Step(NamedTuple):
    """One training batch made ready for the step (:func:`training_groups`)."""

    #: the CSR data
    x: object
    #: the labels as the loss takes them: an NDArray on ``x``'s context
    y: object
    #: the same labels as a NumPy float32 vector (for the metrics)
    labels: object


def training_groups(groups, task, classes, path, label_values=None, watch=None):
    """Yield each list of batches of ``groups`` (:func:`batch_groups`) as a list of
    :class:`Step`: its labels checked and mapped for ``task`` in one pass over the group
    (:func:`task_labels`, whose error names the row in ``path``) and placed beside the data.

    With ``watch`` (a dict with ``min_index`` and ``max_abs``), the smallest column and the
    largest absolute value of every batch are noted in it (:func:`sparsenet.cli.notices.
    check_data` warns about them after the epoch). Runs in ``sparsenet train``'s reader
    thread (:mod:`sparsenet.cli.read_ahead`), so that the training thread only steps.
    """
    import torch  # on first use: building the parser imports no torch

    from ..ndarray import array, from_torch  # on first use (as above)

    row = 0
    for group in groups:
        sizes = [batch.label[0].shape[0] for batch in group]
        raw = np.concatenate([batch.label[0].asnumpy() for batch in group])
        labels = task_labels(raw, task, classes, path, row, label_values)
        row += labels.size
        x0 = group[0].data[0]
        ys = torch.split(array(labels, ctx=x0.context).to_torch(), sizes)
        views = np.split(labels, np.cumsum(sizes[:-1]))
        if watch is not None:
            for batch in group:
                _watch(watch, batch.data[0], torch)
        yield [Step(batch.data[0], from_torch(y), view)
               for batch, y, view in zip(group, ys, views)]


def _watch(watch, x, torch):
    """Note the smallest column and the largest absolute value of the CSR batch ``x``."""
    if x.stype != "csr":
        return
    parts = x.to_torch()  # shares the parts (``x.indices`` and ``x.data`` are copies)
    values = parts.values()
    if not values.numel():
        return
    watch["min_index"] = min(watch["min_index"], int(parts.col_indices().min()))
    low, high = torch.aminmax(values)
    watch["max_abs"] = max(watch["max_abs"], float(-low), float(high))


def scaled(batches, scale, ctx):
    """Yield ``batches`` with each CSR value divided by its feature's ``scale`` (a NumPy
    vector, one positive divisor per column: ``--scale``'s largest absolute values).

    >>> import sparsenet as mx
    >>> from sparsenet.io import DataBatch
    >>> x = mx.nd.sparse.csr_matrix(np.array([[0, 4.0], [2.0, 8.0]], dtype=np.float32))
    >>> batch = DataBatch([x], [mx.nd.array([0, 1])])
    >>> next(scaled([batch], np.array([2.0, 8.0]), mx.cpu())).data[0].asnumpy()
    array([[0. , 0.5],
           [1. , 1. ]], dtype=float32)
    """
    rescale = _scaler(scale, ctx)
    for batch in batches:
        rescale(batch)
        yield batch


def _scaler(scale, ctx):
    """A function that divides, in the batch it is given, each CSR value by its feature's
    ``scale`` (the batch's data array is replaced, not written into)."""
    # on first use: the ndarray namespace imports torch
    from ..ndarray import array, take
    from ..ndarray.sparse import csr_matrix  # on first use (as above)

    inverse = array((1.0 / np.asarray(scale, np.float64)).astype(np.float32), ctx=ctx)

    def rescale(batch):
        x = batch.data[0]
        factors = take(inverse, x.indices)
        batch.data[0] = csr_matrix((x.data * factors, x.indices, x.indptr), shape=x.shape,
                                   validate=False)

    return rescale


def task_labels(labels, task, classes, path, row0, label_values=None):
    """``labels`` (NumPy) checked for ``task`` and mapped to what the loss takes (float32);
    ``row0`` is the 0-based row of the first label in ``path`` (for the error).

    A multiclass model whose labels were inferred from the data has ``label_values``, its
    sorted distinct labels: label ``label_values[i]`` is class ``i`` (as scikit-learn's
    classifiers map ``classes_``).

    >>> task_labels(np.array([4.0, 1.0]), 'multiclass', 2, 'd.svm', 0, [1.0, 4.0])
    array([1., 0.], dtype=float32)
    """
    labels = np.asarray(labels, dtype=np.float32)
    if task == "regression":
        return labels
    if task == "multiclass" and label_values is not None:
        return _class_indices(labels, label_values, path, row0)
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


def _class_indices(labels, label_values, path, row0):
    known = np.asarray(label_values, dtype=np.float32)
    where = np.minimum(np.searchsorted(known, labels), known.shape[0] - 1)
    bad = known[where] != labels
    if bad.any():
        first = int(np.argmax(bad))
        shown = ", ".join(f"{v:g}" for v in known[:20]) + (", ..." if known.shape[0] > 20
                                                           else "")
        raise InvalidArgumentError(
            f"{path}:{row0 + first + 1}: label {labels[first]:g} is not one of the "
            f"{known.shape[0]} labels the model was trained on ({shown})")
    return where.astype(np.float32)


def infer_labels(summary, path):
    """The sorted distinct labels of a multiclass training file (:func:`scan_data`'s
    ``labels``), checked: at least 2 and at most :data:`MAX_AUTO_CLASSES`."""
    if not summary.rows:
        raise InvalidArgumentError(f"{path}: no rows to train on (the data holds no lines "
                                   f"with a label), so the classes cannot be counted; "
                                   f"nothing was written")
    if summary.labels is None:
        raise InvalidArgumentError(
            f"{path}: more than {MAX_AUTO_CLASSES} distinct labels, the most a multiclass "
            f"model takes from the data without --classes; pass --classes K (the labels are "
            f"then the integers 0 .. K-1) if the data really has that many classes, or fix "
            f"the labels")
    if summary.labels.shape[0] < 2:
        raise InvalidArgumentError(f"{path}: a multiclass model needs at least 2 distinct "
                                   f"labels, the data has only {summary.labels[0]:g}")
    return [int(v) if float(v).is_integer() else float(v) for v in summary.labels]


def predictions(net, task, batches, classes, path, label_values=None):
    """Yield ``(labels, scores)`` NumPy batches of ``net`` over ``batches``: the labels as
    class indices (:func:`task_labels`) and the raw scores ``(rows, outputs)``
    (:func:`sparsenet.cli.metrics_report.task_metrics` takes them)."""
    row = 0
    for batch in batches:
        labels = task_labels(batch.label[0].asnumpy(), task, classes, path, row, label_values)
        row += labels.size
        with autograd.predict_mode():
            scores = net(batch.data[0]).asnumpy()
        yield labels, scores

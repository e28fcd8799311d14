"""The epoch loop of ``sparsenet train``: stream, step, measure, checkpoint.

Each epoch streams the training file once in file order (no shuffling, so a run
resumed from a checkpoint continues exactly as the uninterrupted run would), shows a
tqdm bar with the running objective and samples/s (with a percentage and an ETA once
the row count is known: from the pass that inferred sizes, else from the first
epoch), computes the task's metrics on the predictions made while training (before
each batch's update) and on the validation file, appends them to
``OUT/metrics.jsonl``, and writes the checkpoint
(:func:`sparsenet.cli.model_dir.write_checkpoint`). With a validation file only an epoch
better than every earlier one is checkpointed (``OUT`` keeps the best epoch, its record
says ``"kept": true``), and ``--patience`` worse epochs in a row stop training (:func:`fit`).
The batches are made ahead in a background thread (:mod:`sparsenet.cli.read_ahead`) while
the current one trains: a parsed chunk's worth at a time, labels checked and placed
(:func:`sparsenet.cli.data_stream.training_groups`), so the training thread only steps.

The training objective is reported under its own name (:func:`objective_name`) only
when it is not already one of the task's metrics: the ``logistic`` and ``softmax``
losses *are* the log-loss (both averaged over the rows of the epoch, computed from the
same scores), so they are reported once, as ``logloss``; ``hinge``, ``l2``, ``l1`` and
``huber`` appear as ``hinge_loss`` ... beside the metrics. Each quantity has one name,
so the learning-curve plot draws one panel per quantity.

>>> line = epoch_line(2, 3, {'hinge_loss': 0.5, 'auc': 0.9}, {'auc': 0.8}, 1.5, 1000)
>>> line
'epoch 2/3  train hinge_loss=0.5000 auc=0.9000  val auc=0.8000  (1.5 s, 667 samples/s)'
"""
import json
import os
import sys
import time

import numpy as np
import tqdm

from .. import autograd
from ..atomic import atomic_write
from ..base import InvalidArgumentError
from .data_stream import batch_groups, open_batches, predictions, training_groups
from .metrics_report import format_metrics, task_metrics
from .model_dir import write_checkpoint
from .model_schema import MAX_JSON_BYTES, check_record, read_json_text
from .notices import check_data
from .read_ahead import read_ahead

__all__ = ["METRICS_FILE", "fit", "read_history", "epoch_line", "objective_name",
           "stopping_metric"]

METRICS_FILE = "metrics.jsonl"

#: The losses that are the task's ``logloss`` metric (reported once, under that name).
_LOG_LOSSES = ("logistic", "softmax")


def objective_name(loss):
    """The metrics name of the training objective ``loss`` (a ``--loss`` name), or None when
    it is the task's ``logloss``.

    >>> objective_name("hinge"), objective_name("logistic")
    ('hinge_loss', None)
    """
    return None if loss in _LOG_LOSSES else f"{loss}_loss"


def epoch_line(epoch, epochs, train, val, seconds, rows):
    """The line printed after each epoch."""
    text = f"epoch {epoch}/{epochs}  train {format_metrics(train)}"
    if val:
        text += f"  val {format_metrics(val)}"
    rate = rows / seconds if seconds > 0 else float("inf")
    return text + f"  ({seconds:.1f} s, {rate:.0f} samples/s)"


def read_history(out_dir, upto):
    """The ``metrics.jsonl`` records of epochs ``<= upto`` (a resumed run keeps those); each
    line checked (:func:`sparsenet.cli.model_schema.check_record`)."""
    path = os.path.join(out_dir, METRICS_FILE)
    if not os.path.isfile(path):
        return []
    records = []
    with open(path, "rb") as f:
        for number, line in enumerate(iter(lambda: f.readline(MAX_JSON_BYTES + 1), b""), 1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            records.append(check_record(read_json_text(line, where), where))
    return [r for r in records if r["epoch"] <= upto]


def _write_history(out_dir, history):
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in history)
    atomic_write(os.path.join(out_dir, METRICS_FILE), lambda f: f.write(text.encode()))


def _catch_up(trainer, x):
    """``--lazy exact``: bring the weight rows the CSR batch ``x`` reads (its columns) up
    to date before the forward pass reads them."""
    if trainer.optimizer.lazy_update != "exact" or x.stype != "csr":
        return
    for param in trainer._params:
        if param.grad_stype == "row_sparse" and param.shape[0] == x.shape[1]:
            trainer.catch_up(param, x.indices)


def _train_epoch(net, loss_fn, trainer, config, opts, bar, watch):
    groups = read_ahead(training_groups(
        batch_groups(opts.data, config["features"], opts.batch_size, opts.context,
                     config["index_base"], opts.num_workers, opts.scale_vector),
        config["task"], config["classes"], opts.data, config.get("labels"), watch))
    objective = objective_name(config["loss"])
    labels_seen, scores_seen = [], []
    loss_sum, rows = 0.0, 0
    for group in groups:
        for x, y, labels in group:
            _catch_up(trainer, x)
            with autograd.record():
                scores = net(x)
                loss = loss_fn(scores, y)
            loss.backward()
            trainer.step(labels.size)
            # NumPy on the host copies: no operator dispatch per batch for the bookkeeping
            loss_sum += float(loss.asnumpy().sum(dtype=np.float64))
            rows += labels.size
            labels_seen.append(labels)
            scores_seen.append(scores.asnumpy())
            bar.update(labels.size)
        if rows:
            bar.set_postfix({objective or "logloss": f"{loss_sum / rows:.4f}"}, refresh=False)
    if not rows:
        return {}, 0
    metrics = {objective: loss_sum / rows} if objective else {}
    metrics.update(task_metrics(config["task"], np.concatenate(labels_seen),
                                np.concatenate(scores_seen)))
    return metrics, rows


def evaluate(net, config, path, opts):
    """The task's metrics of ``net`` on the file ``path`` (``{}`` when it has no rows)."""
    batches = read_ahead(open_batches(path, config["features"], opts.batch_size, opts.context,
                                      config["index_base"], opts.num_workers,
                                      opts.scale_vector))
    labels, scores = [], []
    for y, s in predictions(net, config["task"], batches, config["classes"], path,
                            config.get("labels")):
        labels.append(y)
        scores.append(s)
    if not labels:
        return {}
    return task_metrics(config["task"], np.concatenate(labels), np.concatenate(scores))


def stopping_metric(task):
    """The validation metric early stopping watches for ``task`` (lower is better):
    ``rmse`` for regression, else ``logloss``.

    >>> stopping_metric("binary"), stopping_metric("regression")
    ('logloss', 'rmse')
    """
    return "rmse" if task == "regression" else "logloss"


def _score(val, task):
    """The watched validation value of an epoch (``+inf`` when not finite), or None
    without validation rows."""
    value = val.get(stopping_metric(task)) if val else None
    if value is None:
        return None
    return value if np.isfinite(value) else np.inf


def _best(history, task):
    """``(best score, epochs since it)`` over the epochs a resumed run keeps."""
    best, stale = None, 0
    for record in history:
        score = _score(record["val"], task)
        if score is None or best is None or score < best:
            best, stale = score, 0
        else:
            stale += 1
    return best, stale


def fit(net, loss_fn, trainer, config, opts, start_epoch, history):
    """Train epochs ``start_epoch + 1 .. opts.epochs``; return the full metrics history.

    With validation rows, an epoch whose validation :func:`stopping_metric` is not below
    the best so far writes no checkpoint (the directory keeps the best epoch's model, and
    ``metrics.jsonl`` marks that epoch's record ``"kept": true``), and training stops after
    ``opts.patience`` such epochs in a row. Without them every epoch is kept.
    """
    task = config["task"]
    best, stale = _best(history, task)
    for epoch in range(start_epoch + 1, opts.epochs + 1):
        began = time.perf_counter()
        watch = None if opts.data_checked else {"min_index": np.inf, "max_abs": 0.0}
        with tqdm.tqdm(desc=f"epoch {epoch}/{opts.epochs}", unit=" rows", unit_scale=True,
                       total=opts.rows_known, disable=opts.quiet or None, leave=False,
                       file=sys.stderr) as bar:
            train, rows = _train_epoch(net, loss_fn, trainer, config, opts, bar, watch)
        seconds = time.perf_counter() - began
        opts.rows_known = rows  # the bar's total from the next epoch on
        if watch is not None and rows:
            check_data(opts, None if watch["min_index"] == np.inf else watch["min_index"],
                       watch["max_abs"])
        if not rows:
            raise InvalidArgumentError(f"{opts.data}: no rows to train on (the data holds no "
                                       f"lines); no checkpoint was written")
        trainer.sync()  # --lazy exact: validation reads every row
        val = evaluate(net, config, opts.val, opts) if opts.val else {}
        score = _score(val, task)
        kept = score is None or best is None or score < best
        record = {"epoch": epoch, "train": train, "val": val, "seconds": round(seconds, 3),
                  "rows": rows, "kept": kept}
        if kept:
            best, stale = score, 0
            history = [dict(r, kept=False) if r.get("kept") else r for r in history]
            config = write_checkpoint(opts.out, net, trainer, config, epoch)
        else:
            stale += 1
        history = history + [record]
        _write_history(opts.out, history)
        line = epoch_line(epoch, opts.epochs, train, val, seconds, rows)
        if not kept:
            line += (f"  no better than epoch {config['epoch']} "
                     f"({stale}/{opts.patience})")
        print(line, flush=True)
        if not kept and stale >= opts.patience and epoch < opts.epochs:
            print(f"stopping early: val {stopping_metric(task)} has not improved for {stale} "
                  f"epoch{'s' if stale > 1 else ''}; {opts.out} keeps epoch {config['epoch']}",
                  flush=True)
            break
    else:
        if history and not history[-1]["kept"] and opts.val:
            print(f"{opts.out} keeps epoch {config['epoch']}, the best val "
                  f"{stopping_metric(task)}", flush=True)
    return history

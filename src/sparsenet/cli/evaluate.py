"""``sparsenet eval MODEL_DIR DATA``: the metrics of a trained model on a LibSVM file.

Prints ``rows=N`` and the task's metrics (see :mod:`sparsenet.cli.metrics_report`:
a binary model's AUC, accuracy and log-loss) on one line, or a JSON object with
``--json``. DATA is read as the model was trained: its index base, its ``--scale``
divisors, and a multiclass model's labels mapped to its classes as in training.

>>> from sparsenet.cli.main import build_parser
>>> build_parser().parse_args(["eval", "model", "test.svm", "--json"]).json
True
"""
import json

from .paths import require_model_and_data as check_inputs
from .train import add_common, context_of

__all__ = ["add_parser", "check_inputs", "run"]


def add_parser(subparsers):
    p = subparsers.add_parser("eval", help="metrics of a trained model on a LibSVM file",
                              description="Print the metrics of the model in MODEL_DIR (written "
                                          "by 'sparsenet train') on DATA: AUC, accuracy and "
                                          "log-loss for a binary model, accuracy and log-loss "
                                          "for multiclass, RMSE for regression. DATA is read "
                                          "as the model was trained (index base, --scale, "
                                          "labels mapped to classes).")
    p.add_argument("model_dir", metavar="MODEL_DIR")
    p.add_argument("data", metavar="DATA", help="LibSVM data with labels")
    p.add_argument("--json", action="store_true", help="print a JSON object")
    add_common(p)
    return p


def run(args):
    # on first use: these import NumPy and torch, which building the parser must not
    import numpy as np

    from .data_stream import open_batches, predictions  # on first use (start-up)
    from .metrics_report import format_metrics, task_metrics  # on first use (start-up)
    from .model_dir import load_model, read_scale  # on first use (start-up)

    ctx = context_of(args.ctx)
    net, config = load_model(args.model_dir, ctx)
    batches = open_batches(args.data, config["features"], args.batch_size, ctx,
                           config["index_base"], args.num_workers,
                           read_scale(args.model_dir, config))
    labels, preds = [], []
    for y, p in predictions(net, config["task"], batches, config["classes"], args.data,
                            config.get("labels")):
        labels.append(y)
        preds.append(p)
    rows = int(sum(y.size for y in labels))
    metrics = task_metrics(config["task"], np.concatenate(labels), np.concatenate(preds)) \
        if rows else {}
    if args.json:
        print(json.dumps(dict(rows=rows, **metrics), sort_keys=True))
    else:
        print(f"rows={rows} {format_metrics(metrics)}".rstrip())
    return 0

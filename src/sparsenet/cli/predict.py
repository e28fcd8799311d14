"""``sparsenet predict MODEL_DIR DATA --out preds.txt``: one line of predictions per row.

A regression model writes its value; a classifier writes its class probabilities,
space-separated (a binary model writes ``P(0) P(1)``: the positive class's probability
is the last column; a multiclass model whose classes were inferred from the labels
writes one column per label in increasing order, ``model.json``'s ``labels``). Values
are written with 9 significant digits, enough to give the float32 predictions back
exactly. ``--out -`` writes to stdout; a file is written atomically. Labels in DATA
are read but not used (any number is accepted). DATA is read as the model was trained
(its index base and ``--scale`` divisors).

>>> from sparsenet.cli.main import build_parser
>>> build_parser().parse_args(["predict", "model", "test.svm"]).out
'-'
"""
import sys

from ..atomic import atomic_write
from .paths import require_model_and_data as check_inputs
from .train import add_common, context_of

__all__ = ["add_parser", "check_inputs", "run", "write_predictions"]

_DESCRIPTION = (
    "Write one line per row of DATA. A regression model writes its value; a classifier "
    "writes its class probabilities, space-separated (a binary model writes P(0) P(1): the "
    "positive class's probability is the last column; a multiclass model whose classes "
    "were inferred from the labels writes one column per label, in increasing order, as "
    "listed by model.json's labels). Values are written with 9 significant digits, enough "
    "to give the float32 predictions back exactly. --out - writes to stdout; a file is "
    "written atomically. Labels in DATA are read but not used (any number is accepted). "
    "DATA is read as the model was trained (index base, --scale).")


def add_parser(subparsers):
    p = subparsers.add_parser("predict", help="write a trained model's predictions",
                              description=_DESCRIPTION)
    p.add_argument("model_dir", metavar="MODEL_DIR")
    p.add_argument("data", metavar="DATA", help="LibSVM data (labels ignored)")
    p.add_argument("--out", default="-", metavar="FILE",
                   help="where to write (default -, stdout)")
    add_common(p)
    return p


def write_predictions(net, task, batches, f):
    """Write ``net``'s predictions over ``batches`` to the text file object ``f``."""
    # on first use: these import NumPy and torch, which building the parser must not
    import numpy as np

    from .. import autograd  # on first use (start-up)
    from ..models.tasks import predict  # on first use (start-up)

    for batch in batches:
        with autograd.predict_mode():
            preds = predict(net(batch.data[0]), task).asnumpy()
        np.savetxt(f, preds.reshape(preds.shape[0], -1), fmt="%.9g")


def run(args):
    from .data_stream import open_batches  # on first use: imports torch
    from .model_dir import load_model, read_scale  # on first use: imports torch

    ctx = context_of(args.ctx)
    net, config = load_model(args.model_dir, ctx)
    batches = open_batches(args.data, config["features"], args.batch_size, ctx,
                           config["index_base"], args.num_workers,
                           read_scale(args.model_dir, config))
    if args.out == "-":
        write_predictions(net, config["task"], batches, sys.stdout)
        sys.stdout.flush()
    else:
        atomic_write(args.out, lambda f: write_predictions(net, config["task"], batches, f))
    return 0

"""``sparsenet train``: train a ready sparse model on a LibSVM file.

Streams DATA with :class:`~sparsenet.io.LibSVMIter`, prints each epoch's training and
validation metrics (AUC, accuracy and log-loss for binary models, accuracy and
log-loss for multiclass, RMSE for regression; the training objective too when it is
another quantity, e.g. ``hinge_loss``), and writes into ``--out``: a checkpoint every
epoch (see :mod:`sparsenet.cli.model_dir`), ``metrics.jsonl``, and with ``--plot``
``learning_curves.png``. ``--resume`` continues from the directory's last checkpoint
exactly as an uninterrupted run would (``--epochs`` counts all epochs). With ``--val`` the
directory keeps the best epoch (lowest validation log-loss, rmse for regression) and
``--patience`` epochs without a better one stop training (:func:`sparsenet.cli.fit_loop.fit`).

The defaults (one epoch, ``--batch-size 1024``, adam at ``--lr 0.02``) were chosen from a
grid over epochs 1-3, batch sizes 256-16384 and learning rates (BENCHMARKS.md, "``sparsenet
train`` vs Vowpal Wabbit"): they are the fastest cell whose held-out log-loss is within
0.002 of Vowpal Wabbit's one pass (or better) on both a 100,000- and a 1,000,000-row
generated file. More epochs at a lower rate reach a lower loss on the larger file in
twice the time, and overfit the smaller one: pass ``--epochs N --val VAL`` for them.

What the data says need not be repeated (:mod:`sparsenet.cli.data_scan`): without
``--features`` the width is the largest index + 1 (the index base considered), a
multiclass model without ``--classes`` has the data's distinct labels as its classes
(saved as ``model.json``'s ``labels`` and applied by ``eval``), and each inference is
printed as a note on stderr. A warning names data that looks 1-based but is read
0-based, and features with large magnitudes (``--scale`` divides each by its largest
absolute value).

Reading starts before torch loads (:func:`prepare`, :mod:`sparsenet.cli.head_start`): the
pass over DATA when sizes are inferred, else the first 256 MiB of DATA (and
``--num-workers`` chunks of VAL), parsed while ``import torch`` runs and taken over by the
first epoch's reader; the batches are then made a parsed chunk at a time in a reader thread
(:mod:`sparsenet.cli.read_ahead`), so the training thread only steps.

>>> from sparsenet.cli.main import build_parser
>>> args = build_parser().parse_args(["train", "d.svm", "--features", "100", "--out", "m"])
>>> args.optimizer, args.lazy, args.epochs, args.patience
('adam', True, 1, 2)
"""
import argparse
import os

from ..base import InvalidArgumentError
from ._plotting import pyplot
from .arg_types import int_in, non_negative_float, positive_int
from .model_schema import (LOSS_TASKS, MAX_AUTO_CLASSES, MAX_BATCH_SIZE, MAX_CLASSES, MAX_EPOCH,
                           MAX_FEATURES, MAX_LAYER, MODEL_FILE, MODELS, SEED_RANGE, parse_hidden)
from .paths import require_model_dir, require_paths
from .threads import add_threads_option

# Building the parser imports no torch (``sparsenet --help`` answers at once): the model,
# data and training modules are imported inside the functions that use them.

__all__ = ["add_parser", "check_inputs", "run", "OPTIMIZERS", "context_of",
           "DEFAULT_BATCH_SIZE", "DEFAULT_EPOCHS", "DEFAULT_PATIENCE"]

#: ``--patience``: epochs without a better validation loss before training stops
DEFAULT_PATIENCE = 2

#: ``--optimizer`` -> its default learning rate (adam's chosen with the other defaults from
#: the grid in BENCHMARKS.md, "sparsenet train vs Vowpal Wabbit"; the others are not tuned)
OPTIMIZERS = {"sgd": 0.1, "adam": 0.02, "adagrad": 0.1, "ftrl": 0.1}

#: ``--batch-size``: rows per batch of train, eval and predict
DEFAULT_BATCH_SIZE = 1024

#: ``--epochs``: one pass, the least time to the best held-out log-loss in the grid
DEFAULT_EPOCHS = 1

_DESCRIPTION = """\
Stream DATA (LibSVM), print each epoch's training and validation metrics (AUC,
accuracy and log-loss for binary models, accuracy and log-loss for multiclass, RMSE
for regression; the training objective too when it is another quantity, such as
hinge_loss), and write into --out: a checkpoint every epoch, metrics.jsonl, and with
--plot learning_curves.png. --resume continues from the directory's last checkpoint
exactly as an uninterrupted run would (--epochs counts all epochs). With --val, an epoch
whose validation loss is no better than the best so far writes no checkpoint (DIR keeps
the best epoch; metrics.jsonl marks it "kept"), and --patience such epochs in a row stop
training.

The defaults (one epoch, batch 1024, adam at 0.02) were chosen from a grid of epochs,
batch sizes and learning rates on generated data (BENCHMARKS.md): the fastest setting
that matches Vowpal Wabbit's held-out log-loss on both 100,000 and 1,000,000 rows. For
more epochs pass --val, which stops training before it overfits.

Without --features, the number of features is the largest index in DATA + 1 (the index
base considered); without --classes, a multiclass model's classes are the distinct
labels of DATA (saved with the model; eval maps labels back the same way). What was
inferred is printed as a note on stderr. A warning names data with no index 0 read
0-based (a 1-based file: pass --index-base 1) and feature values far outside [-1, 1]
(pass --scale)."""

_EPILOG = """\
examples:
  sparsenet train train.svm --val val.svm --out model/
  sparsenet train train.svm --features 1000000 --val val.svm --out model/
  sparsenet train train.svm --features 4096 --model fm --factor-size 16 --optimizer adagrad \\
      --epochs 5 --out fm/ --plot
  sparsenet train train.svm --features 4096 --out fm/ --epochs 8 --resume   # 3 more epochs
  sparsenet eval model/ test.svm
  sparsenet predict model/ test.svm --out preds.txt"""


def _lazy(text):
    modes = {"true": True, "false": False, "exact": "exact"}
    if text.lower() not in modes:
        raise argparse.ArgumentTypeError(f"expected true, false or exact, got {text!r}")
    return modes[text.lower()]


def add_common(parser):
    """The flags ``train``, ``eval`` and ``predict`` share."""
    parser.add_argument("--batch-size", type=int_in(1, MAX_BATCH_SIZE),
                        default=DEFAULT_BATCH_SIZE, metavar="B",
                        help="rows per batch (default %d)" % DEFAULT_BATCH_SIZE)
    parser.add_argument("--ctx", choices=("cpu", "gpu"), default="cpu",
                        help="device (default cpu)")
    parser.add_argument("--num-workers", type=positive_int, default=4, metavar="N",
                        help="chunks of the file parsed ahead in background threads "
                             "(default 4)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_threads_option(parser)


def add_parser(subparsers):
    p = subparsers.add_parser(
        "train", help="train a sparse model on a LibSVM file",
        description=_DESCRIPTION,
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", metavar="DATA", help="training data (LibSVM; a file or a folder)")
    p.add_argument("--features", type=int_in(1, MAX_FEATURES), metavar="N",
                   help="number of features: every index must be below N (default: the "
                        "largest index in DATA + 1, found in a pass over DATA)")
    p.add_argument("--val", metavar="VAL", help="validation data (LibSVM)")
    p.add_argument("--model", choices=tuple(MODELS), default=None,
                   help="linear (regression), logistic (binary), softmax (multiclass), fm "
                        "(factorization machine), widedeep, mlp (seed 000's network); "
                        "default logistic")
    p.add_argument("--loss", choices=tuple(LOSS_TASKS), default=None,
                   help="default: l2 for regression, logistic for binary, softmax for "
                        "multiclass; for fm/widedeep/mlp the loss picks the task")
    p.add_argument("--classes", type=int_in(2, MAX_CLASSES), metavar="K",
                   help="classes of a multiclass model, labelled 0 .. K-1 (default: the "
                        "distinct labels of DATA, at most %d, mapped to classes in "
                        "increasing order)" % MAX_AUTO_CLASSES)
    p.add_argument("--factor-size", type=int_in(1, MAX_LAYER), metavar="K",
                   help="fm: width of the factors (default 8)")
    p.add_argument("--hidden", type=parse_hidden_arg, metavar="H1,H2",
                   help="widedeep/mlp: layer sizes (default 64,32 and 128,8)")
    p.add_argument("--optimizer", choices=tuple(OPTIMIZERS), default="adam",
                   help="default adam")
    p.add_argument("--lazy", type=_lazy, default=True, metavar="true|false|exact",
                   help="lazy updates from row_sparse gradients (default true); exact "
                        "catches up skipped steps so lazy training equals dense training")
    p.add_argument("--lr", type=non_negative_float, metavar="LR",
                   help="learning rate (default: " + ", ".join(
                       f"{name} {lr:g}" for name, lr in OPTIMIZERS.items()) + ")")
    p.add_argument("--wd", type=non_negative_float, default=0.0, help="weight decay")
    p.add_argument("--epochs", type=int_in(1, MAX_EPOCH), default=DEFAULT_EPOCHS,
                   help="total epochs, those of a resumed run included (default %d; with "
                        "--val more epochs stop early, see --patience)" % DEFAULT_EPOCHS)
    p.add_argument("--patience", type=int_in(1, MAX_EPOCH), default=DEFAULT_PATIENCE,
                   metavar="P",
                   help="with --val: stop after P epochs in a row whose validation log-loss "
                        "(rmse for regression) is no better than the best so far; DIR keeps "
                        "the best epoch's model (default %d)" % DEFAULT_PATIENCE)
    p.add_argument("--out", required=True, metavar="DIR", help="model directory to write")
    p.add_argument("--resume", action="store_true",
                   help="continue from DIR's last checkpoint (model and optimizer flags "
                        "come from it)")
    p.add_argument("--plot", action="store_true", help="write DIR/learning_curves.png")
    p.add_argument("--seed", type=int_in(*SEED_RANGE), default=0,
                   help="initialisation seed (default 0)")
    p.add_argument("--index-base", type=int, choices=(0, 1), default=0,
                   help="feature indices count from 0 (default, MXNet's convention) or 1 "
                        "(LibSVM's own convention; 'sparsenet inspect' detects it)")
    p.add_argument("--scale", action="store_true",
                   help="divide each feature by its largest absolute value in DATA (saved "
                        "with the model and applied by eval and predict)")
    add_common(p)
    p.set_defaults(batch_size=None)  # DEFAULT_BATCH_SIZE, or a resumed run's own
    return p


def parse_hidden_arg(text):
    """argparse type for ``--hidden``."""
    try:
        return parse_hidden(text)
    except InvalidArgumentError as exc:
        raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[1]) from None


def context_of(name):
    """``mx.cpu()`` or ``mx.gpu(0)`` for ``--ctx``."""
    # on first use: sparsenet.context imports torch, which building the parser must not
    from ..context import cpu, gpu, num_gpus

    if name == "gpu":
        if num_gpus() == 0:
            raise InvalidArgumentError("--ctx gpu: no CUDA device is available; use --ctx cpu")
        return gpu(0)
    return cpu()


#: How the size arguments of a fresh model are named in errors.
_FLAG_NAMES = {"features": "--features", "classes": "--classes",
               "factor_size": "--factor-size", "hidden": "--hidden"}


def _needs_labels(args):
    """Whether a fresh model's classes must come from the labels of DATA."""
    task = LOSS_TASKS[args.loss] if args.loss else None
    return (MODELS[args.model or "logistic"][0] or task) == "multiclass" and args.classes is None


def _needs_scan(args):
    return args.features is None or args.scale or _needs_labels(args)


def check_inputs(args):
    """Raise ``FileNotFoundError`` for a missing DATA, then VAL, then (``--resume``) a
    missing ``--out`` directory; imports no torch (:func:`sparsenet.cli.main.main` calls it
    first)."""
    require_paths(args.data, args.val)
    if args.resume:
        require_model_dir(args.out)


def prepare(args):
    """Start reading in the background, before :func:`sparsenet.cli.main.main` imports
    torch (the parser releases the GIL, so it runs beside the import; see
    :mod:`sparsenet.cli.head_start`): the pass over DATA that a fresh model's sizes need
    (:func:`_scan`), or, when nothing is to be inferred, the first chunks of the first
    epoch and of the validation file. DATA and VAL exist: :func:`check_inputs` ran first."""
    args.scan_job, args.early = None, []
    if args.resume:
        return
    from .head_start import read_early, start  # on first use (start-up)

    if _needs_scan(args):
        from .data_scan import scan_data  # on first use (start-up)

        args.scan_job = start(scan_data, args.data, args.index_base, MAX_AUTO_CLASSES,
                              per_feature=args.scale)
        return
    from ..io.libsvm.source import DEFAULT_CHUNK_SIZE  # on first use (start-up)

    args.early.append(read_early(args.data, args.features, args.index_base))
    if args.val is not None:  # as deep as its reader reads ahead (--num-workers)
        args.early.append(read_early(args.val, args.features, args.index_base,
                                     nbytes=args.num_workers * DEFAULT_CHUNK_SIZE))


def _scan(args):
    """One pass over DATA when something must be inferred (:mod:`.data_scan`), else None:
    the one :func:`prepare` started, or a new one."""
    if not _needs_scan(args):
        return None
    from .data_scan import scan_data  # on first use (start-up)

    from .notices import check_data  # on first use (start-up)

    job = getattr(args, "scan_job", None)
    if job is not None:
        summary = job.result()
    else:
        summary = scan_data(args.data, args.index_base, MAX_AUTO_CLASSES,
                            per_feature=args.scale)
    args.rows_known = summary.rows
    check_data(args, summary.min_index, summary.max_abs)
    return summary


def _infer_features(args, summary):
    from .notices import note  # on first use (start-up)

    if summary.max_index is None:
        raise InvalidArgumentError(f"{args.data}: no feature index in the data, so the number "
                                   f"of features cannot be inferred; pass --features N")
    features = summary.max_index + 1
    if features > MAX_FEATURES:
        raise InvalidArgumentError(f"{args.data}: the largest feature index gives {features} "
                                   f"features, more than {MAX_FEATURES}")
    largest = summary.max_index + args.index_base
    note(f"--features {features} inferred from {args.data} (largest index {largest}, "
         f"{args.index_base}-based); pass --features N to set it")
    return features


def _scale_vector(summary, features):
    """``--scale``'s divisors: each feature's largest absolute value (1 where it never
    holds a non-zero value)."""
    import numpy as np  # on first use (start-up)

    scale = np.ones(features, np.float64)
    col = summary.col_max_abs
    if col is not None:
        n = min(features, col.shape[0])
        scale[:n] = np.where(col[:n] > 0, col[:n], 1.0)
    return scale


def _fresh_config(args):
    if os.path.isfile(os.path.join(args.out, MODEL_FILE)):
        raise InvalidArgumentError(f"--out {args.out} already holds a model; pass --resume to "
                                   f"continue training it, or choose another directory")
    model = args.model or "logistic"
    args.batch_size = args.batch_size or DEFAULT_BATCH_SIZE
    # on first use (torch): not imported to build the parser
    from ..models.tasks import default_loss
    from .data_stream import infer_labels  # on first use (start-up)
    from .model_dir import new_config  # on first use (start-up)
    from .notices import note  # on first use (start-up)

    task = LOSS_TASKS[args.loss] if args.loss else None
    classes, labels = args.classes, None
    need_labels = _needs_labels(args)
    summary = _scan(args)
    features = args.features if args.features is not None else _infer_features(args, summary)
    args.size_names = dict(_FLAG_NAMES)
    if need_labels:
        labels = infer_labels(summary, args.data)
        classes = len(labels)
        shown = ", ".join(map(str, labels[:10])) + (", ..." if classes > 10 else "")
        note(f"{classes} classes inferred from the labels of {args.data} ({shown}; class i "
             f"is the i-th smallest label); pass --classes K for labels 0 .. K-1")
        args.size_names["classes"] = "classes (the distinct labels of DATA)"
    if args.features is None:
        args.size_names["features"] = "features (the largest index of DATA + 1)"
    args.scale_vector = _scale_vector(summary, features) if args.scale else None
    config = new_config(model, features, task=task, classes=classes,
                        arch={"factor_size": args.factor_size, "hidden": args.hidden})
    lr = OPTIMIZERS[args.optimizer] if args.lr is None else args.lr
    config.update(loss=args.loss or default_loss(config["task"]), optimizer=args.optimizer,
                  optimizer_params={"learning_rate": lr, "wd": args.wd,
                                    "lazy_update": args.lazy},
                  batch_size=args.batch_size, index_base=args.index_base, seed=args.seed,
                  epoch=0, labels=labels, scale_file=None)
    return config


def _resumed_config(args):
    from .model_dir import file_names, read_config  # on first use: imports torch

    config = read_config(args.out)
    args.size_names = file_names(args.out, config)
    for flag, key in (("model", "model"), ("features", "features")):
        given = getattr(args, flag)
        if given is not None and given != config[key]:
            raise InvalidArgumentError(f"--{flag} {given} conflicts with the checkpoint in "
                                       f"{args.out}, a {key} of {config[key]}")
    args.batch_size = args.batch_size or config["batch_size"]
    if args.scale and config.get("scale_file") is None:
        raise InvalidArgumentError(f"--scale conflicts with the checkpoint in {args.out}, "
                                   f"trained without it; resume without --scale")
    from .model_dir import read_scale  # on first use (start-up)

    args.scale_vector = read_scale(args.out, config)
    args.index_base = config["index_base"]
    args.data_checked = True  # checked when the run began
    if config["epoch"] >= args.epochs:
        raise InvalidArgumentError(f"--epochs {args.epochs}: {args.out} has already trained "
                                   f"{config['epoch']} epochs; --epochs counts all epochs, "
                                   f"so pass more than {config['epoch']}")
    return config


def run(args):
    try:
        return _run(args)
    finally:
        for stream in getattr(args, "early", ()):  # those not taken over (an error came first)
            if stream is not None:
                stream.close()


def _run(args):
    # on first use: these import torch, which building the parser must not
    from .fit_loop import read_history
    from .index_hint import index_hint  # on first use (start-up)
    from .model_memory import allocation_guard, check_fits  # on first use (start-up)
    from .plot_curves import plot_history  # on first use (start-up)

    args.context = context_of(args.ctx)
    if args.plot:
        pyplot()  # fail now, not after training, when matplotlib is missing
    args.rows_known, args.data_checked = None, False
    if args.resume:
        config = _resumed_config(args)
    else:
        config = _fresh_config(args)
    history = read_history(args.out, config["epoch"]) if args.resume else []
    check_fits(config, args.context, args.size_names, optimizer=config["optimizer"])
    with allocation_guard(config, args.size_names, args.context), index_hint(args, config):
        history = _train(config, args, history)
    if args.plot:
        path = plot_history(history, os.path.join(args.out, "learning_curves.png"))
        print(f"wrote {path}")
    return 0


def _checkpoint_path(args, config, key):
    path = os.path.join(args.out, config[key])
    if not os.path.isfile(path):
        raise FileNotFoundError(2, f"checkpoint file missing (named by {MODEL_FILE} key "
                                   f"{key!r})", path)
    return path


def _train(config, args, history):
    """Build (or load) the model and its trainer, train, return the metrics history."""
    # on first use: the model and training modules import torch
    from .. import random as mx_random
    from ..gluon.trainer import Trainer  # on first use (start-up)
    from ..models.tasks import make_loss  # on first use (start-up)
    from .fit_loop import fit  # on first use (start-up)
    from .head_start import settle_heap  # on first use (start-up)
    from .model_dir import build_model, check_states  # on first use (start-up)

    net = build_model(config)
    if args.resume:
        params = _checkpoint_path(args, config, "params_file")
        states = _checkpoint_path(args, config, "states_file")
        net.load_parameters(params, ctx=args.context)
    else:
        os.makedirs(args.out, exist_ok=True)
        if args.scale_vector is not None:
            from .model_dir import write_scale  # on first use (start-up)

            config["scale_file"] = write_scale(args.out, args.scale_vector)
        mx_random.seed(config["seed"])
        net.initialize(ctx=args.context)
    trainer = Trainer(net.collect_params(), config["optimizer"],
                      dict(config["optimizer_params"]), kvstore=None)
    if args.resume:
        trainer.load_states(states)
        check_states(trainer, config, states)
    loss_fn = make_loss(config["loss"], config["task"])
    settle_heap()  # start-up is over (sparsenet.cli.head_start)
    return fit(net, loss_fn, trainer, config, args, config["epoch"], history)

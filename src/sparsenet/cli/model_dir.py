"""A model directory: what ``sparsenet train --out DIR`` writes and ``eval``/``predict`` read.

``DIR/model.json`` (written last, atomically) names the model and its checkpoint:

- ``model``, ``task``, ``features``, ``classes``, ``arch`` (layer sizes...): the model;
- ``loss``, ``optimizer``, ``optimizer_params``, ``batch_size``, ``index_base``: how it trains;
- ``labels`` (a multiclass model's labels inferred from the data: ``labels[i]`` is class
  ``i``) and ``scale_file`` (``--scale``: ``scale.npy``, each feature's divisor), or null;
- ``epoch`` and the checkpoint's files, ``epoch-NNNN.params`` (``save_parameters``, the
  library's own format) and ``epoch-NNNN.states`` (``Trainer.save_states``, read back
  through an allow-list unpickler).

Each file is written atomically before ``model.json`` points to it, and the previous
epoch's files are removed only after, so a crash leaves the last complete checkpoint.
Nothing in a model directory is run as code: ``model.json`` is JSON, the parameters
are arrays, the states go through :mod:`sparsenet.optimizer.states_file`. Every key of
``model.json`` is checked against :mod:`sparsenet.cli.model_schema` and the loaded
optimizer states against the model's parameters (:func:`check_states`), so a damaged or
crafted directory raises :class:`~sparsenet.base.FileFormatError` naming the file and
the key, before any training step.

>>> config = new_config('logistic', features=100)
>>> net = build_model(config)
>>> type(net).__name__, net.task
('LinearModel', 'binary')
"""
import glob
import json
import math
import os

import numpy as np

from ..atomic import atomic_write
from ..base import FileFormatError, InvalidArgumentError
from ..models import MLP, FactorizationMachine, LinearModel, WideAndDeep
from ..ndarray.ndarray import NDArray
from .model_memory import check_fits
from .model_schema import FORMAT as _FORMAT
from .model_schema import MODEL_FILE, MODELS, check_config, parse_hidden, read_json_text
from .model_schema import VERSION as _VERSION
from .paths import require_model_dir

__all__ = ["MODELS", "MODEL_FILE", "SCALE_FILE", "new_config", "build_model", "read_config",
           "write_checkpoint", "load_model", "parse_hidden", "check_states", "file_names",
           "write_scale", "read_scale"]

#: ``--scale``'s file: a ``.npy`` float64 vector, one positive divisor per feature.
SCALE_FILE = "scale.npy"


def new_config(model, features, task=None, classes=None, arch=None):
    """A fresh model configuration (the model part of ``model.json``)."""
    if model not in MODELS:
        raise InvalidArgumentError(f"--model: expected one of {', '.join(MODELS)}, "
                                   f"got {model!r}")
    fixed, defaults = MODELS[model]
    if fixed is not None and task is not None and task != fixed:
        raise InvalidArgumentError(f"model {model!r} is a {fixed} model, but the loss trains "
                                   f"{task} models")
    task = fixed or task or "binary"
    merged = dict(defaults)
    merged.update({k: v for k, v in (arch or {}).items() if k in defaults and v is not None})
    if task == "multiclass" and classes is None:
        raise InvalidArgumentError("a multiclass model needs its number of classes (--classes)")
    return {"format": _FORMAT, "version": _VERSION, "model": model, "task": task,
            "features": int(features), "classes": int(classes) if task == "multiclass" else None,
            "arch": merged}


def build_model(config):
    """The (uninitialised) Gluon block that ``config`` describes."""
    model, task, features = config["model"], config["task"], config["features"]
    arch, classes = config["arch"], config["classes"] or 2
    if model in ("linear", "logistic", "softmax"):
        return LinearModel(features, task=task, num_classes=classes)
    if model == "fm":
        return FactorizationMachine(features, factor_size=arch["factor_size"], task=task)
    if model == "widedeep":
        return WideAndDeep(features, hidden=arch["hidden"], task=task, num_classes=classes)
    return MLP(features, hidden=arch["hidden"], activation=arch["activation"], task=task,
               num_classes=classes)


def _json_bytes(obj):
    return (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode()


def write_scale(out_dir, scale):
    """Write ``scale`` (each feature's divisor) to ``out_dir/scale.npy`` atomically; return
    the file name (``model.json``'s ``scale_file``)."""
    scale = np.ascontiguousarray(scale, dtype=np.float64)
    atomic_write(os.path.join(out_dir, SCALE_FILE),
                 lambda f: np.save(f, scale, allow_pickle=False))
    return SCALE_FILE


def read_scale(model_dir, config):
    """The feature divisors of a model trained with ``--scale`` (None without), checked: a
    float vector of ``features`` finite positive numbers (no pickle is read)."""
    name = config.get("scale_file")
    if name is None:
        return None
    path = _checkpoint_file(model_dir, config, "scale_file")
    try:
        scale = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise _bad(path, f"not a NumPy .npy array of feature divisors ({exc})") from None
    if scale.ndim != 1 or scale.shape[0] != config["features"] or scale.dtype.kind != "f" \
            or not np.all(np.isfinite(scale)) or not np.all(scale > 0):
        raise _bad(path, f"expected {config['features']} (features) finite positive float "
                         f"divisors, got an array of shape {scale.shape} and dtype "
                         f"{scale.dtype}")
    return scale


def write_checkpoint(out_dir, net, trainer, config, epoch):
    """Save epoch ``epoch``'s checkpoint into ``out_dir``; return the config written."""
    stem = f"epoch-{epoch:04d}"
    params, states = f"{stem}.params", f"{stem}.states"
    trainer.sync()  # lazy_update='exact': the skipped steps, before the weights are written
    net.save_parameters(os.path.join(out_dir, params))
    trainer.save_states(os.path.join(out_dir, states))
    config = dict(config, epoch=epoch, params_file=params, states_file=states)
    atomic_write(os.path.join(out_dir, MODEL_FILE), lambda f: f.write(_json_bytes(config)))
    for old in glob.glob(os.path.join(out_dir, "epoch-*.*")):
        if os.path.basename(old) not in (params, states):
            os.remove(old)
    return config


def _bad(path, problem):
    return FileFormatError(f"{path}: {problem}")


def read_config(model_dir):
    """The ``model.json`` of ``model_dir``, every key checked (:mod:`.model_schema`)."""
    require_model_dir(model_dir)
    path = os.path.join(model_dir, MODEL_FILE)
    if not os.path.isfile(path):
        raise _bad(model_dir, f"not a model directory: it has no {MODEL_FILE} (write one with "
                              f"'sparsenet train ... --out {model_dir}')")
    with open(path, "rb") as f:
        text = f.read(_MAX_CONFIG_READ)
    config = check_config(read_json_text(text, path), path)
    try:
        build_model(config)
    except (KeyError, TypeError, ValueError) as exc:
        raise _bad(path, f"the model description is invalid ({exc})") from None
    return config


_MAX_CONFIG_READ = (1 << 20) + 1  # one byte past model_schema.MAX_JSON_BYTES: refused


def file_names(model_dir, config):
    """How the size arguments of a model read from ``model_dir`` are named in errors."""
    path = os.path.join(model_dir, MODEL_FILE)
    return {key: f"{path}: {key}" for key in ("features", "classes", "factor_size", "hidden")}


def _checkpoint_file(model_dir, config, key):
    path = os.path.join(model_dir, config[key])
    if not os.path.isfile(path):
        raise FileNotFoundError(2, f"checkpoint file missing (named by {MODEL_FILE} key "
                                   f"{key!r})", path)
    return path


def load_model(model_dir, ctx):
    """``(net, config)``: the model of ``model_dir`` with its last checkpoint's parameters."""
    config = read_config(model_dir)
    params = _checkpoint_file(model_dir, config, "params_file")
    check_fits(config, ctx, file_names(model_dir, config))
    net = build_model(config)
    net.load_parameters(params, ctx=ctx)
    return net, config


#: Optimizer attributes that must be finite numbers (``clip_gradient`` may also be None).
_NUMERIC_HYPER = ("lr", "wd", "rescale_grad", "beta1", "beta2", "epsilon", "lamda1", "beta",
                  "momentum", "float_stable_eps", "clip_gradient")


def _state_leaves(value):
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        for item in value:
            yield from _state_leaves(item)
    elif value is not None:
        yield value


def check_states(trainer, config, path):
    """Raise ``FileFormatError`` naming ``path`` (the ``.states`` file just loaded into
    ``trainer``) unless it is the state of ``config``'s optimizer for these parameters: the
    optimizer's class, finite hyperparameters, one state per parameter index, each state
    tensor of its parameter's shape and dtype (another model's states are refused here,
    not at the first step)."""
    expected = config["optimizer"]
    optimizer = trainer.optimizer
    if type(optimizer).__name__.lower() != expected:
        raise FileFormatError(f"{path}: holds the state of a {type(optimizer).__name__} "
                              f"optimizer, but {MODEL_FILE} key 'optimizer' is {expected!r}; "
                              f"the states file belongs to another model")
    for name in _NUMERIC_HYPER:
        value = getattr(optimizer, name, 0.0)
        if name == "clip_gradient" and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            raise FileFormatError(f"{path}: the optimizer's {name} is {value!r}, expected a "
                                  f"finite number")
    params = list(trainer._params)
    for updater in trainer._updaters:
        for key, state in updater.states.items():
            if isinstance(key, bool) or not isinstance(key, int) or not 0 <= key < len(params):
                raise FileFormatError(f"{path}: holds a state for parameter {key!r}, but the "
                                      f"model has parameters 0..{len(params) - 1}; the states "
                                      f"file belongs to another model")
            param = params[key]
            for leaf in _state_leaves(state):
                if not isinstance(leaf, NDArray):
                    continue  # a counter
                have, want = np.dtype(leaf.dtype), np.dtype(param.dtype)
                if tuple(leaf.shape) != tuple(param.shape) or have != want:
                    raise FileFormatError(
                        f"{path}: the state of parameter {key} ({param.name}) has shape "
                        f"{tuple(leaf.shape)} and dtype {have.name}, expected "
                        f"{tuple(param.shape)} and {want.name}; the states file belongs to "
                        f"another model")

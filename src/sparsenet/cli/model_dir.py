"""A model directory: what ``sparsenet train --out DIR`` writes and ``eval``/``predict`` read.

``DIR/model.json`` (written last, atomically) names the model and its checkpoint:

- ``model``, ``task``, ``features``, ``classes``, ``arch`` (layer sizes...): the model;
- ``loss``, ``optimizer``, ``optimizer_params``, ``batch_size``, ``index_base``: how it trains;
- ``epoch`` and the checkpoint's files, ``epoch-NNNN.params`` (``save_parameters``, the
  library's own format) and ``epoch-NNNN.states`` (``Trainer.save_states``, read back
  through an allow-list unpickler).

Each file is written atomically before ``model.json`` points to it, and the previous
epoch's files are removed only after, so a crash leaves the last complete checkpoint.
Nothing in a model directory is run as code: ``model.json`` is JSON, the parameters
are arrays, the states go through :mod:`sparsenet.optimizer.states_file`.

>>> config = new_config('logistic', features=100)
>>> net = build_model(config)
>>> type(net).__name__, net.task
('LinearModel', 'binary')
"""
import glob
import json
import os

from ..atomic import atomic_write
from ..base import FileFormatError, InvalidArgumentError
from ..models import MLP, FactorizationMachine, LinearModel, WideAndDeep

__all__ = ["MODELS", "MODEL_FILE", "new_config", "build_model", "read_config",
           "write_checkpoint", "load_model", "parse_hidden"]

MODEL_FILE = "model.json"
_FORMAT = "sparsenet-model"
_VERSION = 1

#: ``--model`` name -> (the task it fixes, or None for any, default arch)
MODELS = {
    "linear": ("regression", {}),
    "logistic": ("binary", {}),
    "softmax": ("multiclass", {}),
    "fm": (None, {"factor_size": 8}),
    "widedeep": (None, {"hidden": [64, 32]}),
    "mlp": (None, {"hidden": [128, 8], "activation": "sigmoid"}),
}


def parse_hidden(text):
    """``'64,32'`` -> ``[64, 32]`` (for ``--hidden``)."""
    try:
        sizes = [int(s) for s in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise InvalidArgumentError(f"--hidden: expected comma-separated positive layer sizes "
                                   f"such as 64,32, got {text!r}")
    return sizes


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


def write_checkpoint(out_dir, net, trainer, config, epoch):
    """Save epoch ``epoch``'s checkpoint into ``out_dir``; return the config written."""
    stem = f"epoch-{epoch:04d}"
    params, states = f"{stem}.params", f"{stem}.states"
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
    """The validated ``model.json`` of ``model_dir``."""
    if not os.path.isdir(model_dir):
        raise FileNotFoundError(2, "no such model directory", model_dir)
    path = os.path.join(model_dir, MODEL_FILE)
    if not os.path.isfile(path):
        raise _bad(model_dir, f"not a model directory: it has no {MODEL_FILE} (write one with "
                              f"'sparsenet train ... --out {model_dir}')")
    try:
        with open(path, "rb") as f:
            config = json.loads(f.read().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad(path, f"not valid JSON ({exc})") from None
    if not isinstance(config, dict) or config.get("format") != _FORMAT:
        raise _bad(path, f"expected a JSON object with \"format\": \"{_FORMAT}\"")
    if config.get("version") != _VERSION:
        raise _bad(path, f"expected version {_VERSION}, got {config.get('version')!r}")
    if config.get("model") not in MODELS:
        raise _bad(path, f"unknown model {config.get('model')!r}; expected one of "
                         f"{', '.join(MODELS)}")
    for key in ("params_file", "states_file"):
        name = config.get(key)
        if not isinstance(name, str) or os.path.basename(name) != name or not name:
            raise _bad(path, f"{key} must be a file name inside the directory, got {name!r}")
    try:
        build_model(config)
    except (KeyError, TypeError, ValueError) as exc:
        raise _bad(path, f"the model description is invalid ({exc})") from None
    return config


def load_model(model_dir, ctx):
    """``(net, config)``: the model of ``model_dir`` with its last checkpoint's parameters."""
    config = read_config(model_dir)
    net = build_model(config)
    params = os.path.join(model_dir, config["params_file"])
    if not os.path.isfile(params):
        raise FileNotFoundError(2, "checkpoint file missing (named by model.json)", params)
    net.load_parameters(params, ctx=ctx)
    return net, config

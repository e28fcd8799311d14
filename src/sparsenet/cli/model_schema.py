"""What the JSON files of a model directory may hold: a schema, key by key, with types and ranges.

``model.json`` and ``metrics.jsonl`` are read only through :func:`read_json_text`
(bounded size and nesting) and checked by :func:`check_config` and
:func:`check_record`; anything else raises
:class:`~sparsenet.base.FileFormatError` naming the file and the key, so a crafted or
damaged directory gives one clear error and never reaches the model or the optimizer.

=====================  ==============================================================
``model.json`` key     accepted
=====================  ==============================================================
``format``             ``"sparsenet-model"``
``version``            ``1``
``model``              a ``--model`` name (``linear``, ``logistic``, ``softmax``, ...)
``task``               the model's task (``regression``, ``binary``, ``multiclass``)
``features``           integer in ``[1, 2**40]``
``classes``            ``null``; for a multiclass model an integer in ``[2, 2**31 - 1]``
``arch``               the model's own keys only: ``factor_size`` (fm), ``hidden``
                       (widedeep, mlp: 1 to 64 integers in ``[1, 2**31 - 1]``),
                       ``activation`` (mlp)
``loss``               a ``--loss`` name that trains the task
``optimizer``          ``sgd``, ``adam``, ``adagrad`` or ``ftrl``
``optimizer_params``   exactly ``learning_rate`` and ``wd`` (finite, ``>= 0``) and
                       ``lazy_update`` (``true``, ``false`` or ``"exact"``)
``batch_size``         integer in ``[1, 2**24]``
``index_base``         ``0`` or ``1``
``seed``               integer in ``[-2**63, 2**64 - 1]`` (what torch's seed takes)
``epoch``              integer in ``[1, 10**9]``
``params_file``,       a file name inside the directory
``states_file``
``labels``             optional: ``null``; for a multiclass model whose classes were
                       inferred from the data, its ``classes`` distinct labels
                       (finite numbers, increasing): label ``labels[i]`` is class ``i``
``scale_file``         optional: ``null``, or (``--scale``) a file name inside the
                       directory: a ``.npy`` vector of ``features`` positive divisors
=====================  ==============================================================

No other key is accepted; booleans are not integers. The optional keys are absent
from directories written before they existed and read as ``null``. A ``metrics.jsonl`` line is an
object with ``epoch`` (integer ``>= 1``), ``rows`` (integer ``>= 0``), ``seconds``
(number ``>= 0``) and ``train``/``val`` objects of metric name -> number; optionally
``kept`` (boolean: whether the directory's model is this epoch's, ``sparsenet train --val``
keeping its best epoch).

>>> check_config({"format": "sparsenet-model"}, "m/model.json")
Traceback (most recent call last):
...
sparsenet.base.FileFormatError: m/model.json: key 'version' is missing (expected 1)
"""
import json
import math
import os

from ..base import FileFormatError, InvalidArgumentError

__all__ = ["TASKS", "LOSS_TASKS", "MODELS", "MODEL_FILE", "MAX_AUTO_CLASSES", "FORMAT", "VERSION",
           "MAX_FEATURES", "MAX_CLASSES", "MAX_LAYER", "MAX_LAYERS",
           "MAX_BATCH_SIZE", "MAX_EPOCH", "SEED_RANGE", "OPTIMIZER_NAMES", "ACTIVATIONS",
           "MAX_JSON_BYTES", "MAX_JSON_DEPTH", "parse_hidden", "read_json_text", "check_config",
           "check_record"]

#: The tasks of :data:`sparsenet.models.tasks.TASKS`, and each ``--loss`` name -> the task it
#: trains (:data:`sparsenet.models.tasks.LOSSES` without its loss classes): restated here so
#: that the parsers of ``sparsenet train``/``eval``/``predict`` import no torch
#: (tests/test_startup.py checks they agree).
TASKS = ("regression", "binary", "multiclass")
LOSS_TASKS = {"l2": "regression", "l1": "regression", "huber": "regression",
              "logistic": "binary", "hinge": "binary", "softmax": "multiclass"}

#: ``--model`` name -> (the task it fixes, or None for any, default arch)
MODELS = {
    "linear": ("regression", {}),
    "logistic": ("binary", {}),
    "softmax": ("multiclass", {}),
    "fm": (None, {"factor_size": 8}),
    "widedeep": (None, {"hidden": [64, 32]}),
    "mlp": (None, {"hidden": [128, 8], "activation": "sigmoid"}),
}

#: Without ``--classes``, a multiclass model's classes are the distinct labels of its
#: training data, and there must not be more than this many (a column of real-valued
#: targets would otherwise size one class per row); more classes are accepted when
#: ``--classes`` says so.
MAX_AUTO_CLASSES = 10000

#: The file of a model directory that holds its configuration.
MODEL_FILE = "model.json"

FORMAT = "sparsenet-model"
VERSION = 1

#: Upper bounds of the sizes a model directory (and the ``train`` flags) may declare.
MAX_FEATURES = 2 ** 40
MAX_CLASSES = 2 ** 31 - 1
MAX_LAYER = 2 ** 31 - 1
MAX_LAYERS = 64
MAX_BATCH_SIZE = 2 ** 24
MAX_EPOCH = 10 ** 9
#: What ``torch.manual_seed`` accepts.
SEED_RANGE = (-(2 ** 63), 2 ** 64 - 1)

#: The optimizers ``sparsenet train`` offers.
OPTIMIZER_NAMES = ("sgd", "adam", "adagrad", "ftrl")
#: The activations of ``gluon.nn.Activation``.
ACTIVATIONS = ("relu", "sigmoid", "tanh", "softrelu", "softsign")

#: A ``model.json`` (or one ``metrics.jsonl`` line) larger than this is refused unread.
def parse_hidden(text):
    """``'64,32'`` -> ``[64, 32]`` (for ``--hidden``).

    >>> parse_hidden("64,32")
    [64, 32]
    """
    try:
        sizes = [int(s) for s in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1 or max(sizes) > MAX_LAYER or len(sizes) > MAX_LAYERS:
        raise InvalidArgumentError(f"--hidden: expected 1 to {MAX_LAYERS} comma-separated layer "
                                   f"sizes in [1, {MAX_LAYER}] such as 64,32, got {text!r}")
    return sizes


MAX_JSON_BYTES = 1 << 20
#: Deeper nesting of arrays/objects is refused (the files written are 3 deep).
MAX_JSON_DEPTH = 16

#: The model-dependent keys of ``arch``, per ``--model`` (those of its default arch).
_ARCH_KEYS = {name: tuple(arch) for name, (_, arch) in MODELS.items()}
#: The task a model fixes (absent: the loss picks it).
_FIXED_TASK = {name: task for name, (task, _) in MODELS.items() if task is not None}


def _bad(path, key, problem):
    return FileFormatError(f"{path}: key {key!r} {problem}")


def _depth(text):
    """The deepest nesting of ``[``/``{`` in JSON ``text``, outside strings."""
    depth = top = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            top = max(top, depth)
            if top > MAX_JSON_DEPTH:
                return top
        elif ch in "]}":
            depth -= 1
    return top


def read_json_text(text, where):
    """``json.loads(text)`` for a file of a model directory, or ``FileFormatError`` naming
    ``where`` (too large, nested deeper than :data:`MAX_JSON_DEPTH`, not UTF-8, not JSON).

    >>> read_json_text('[[[1]]]', 'x.json')
    [[[1]]]
    >>> read_json_text('[' * 100 + ']' * 100, 'x.json')
    Traceback (most recent call last):
    ...
    sparsenet.base.FileFormatError: x.json: JSON nested deeper than 16 levels; a model
    directory's files are at most 3 deep
    """
    if isinstance(text, bytes):
        if len(text) > MAX_JSON_BYTES:
            raise FileFormatError(f"{where}: {len(text)} bytes, more than the "
                                  f"{MAX_JSON_BYTES} a model directory's JSON holds")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FileFormatError(f"{where}: not UTF-8 text ({exc})") from None
    if len(text) > MAX_JSON_BYTES:
        raise FileFormatError(f"{where}: {len(text)} characters, more than the "
                              f"{MAX_JSON_BYTES} a model directory's JSON holds")
    if _depth(text) > MAX_JSON_DEPTH:
        raise FileFormatError(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels; a "
                              f"model directory's files are at most 3 deep")
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise FileFormatError(f"{where}: not valid JSON ({exc})") from None


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _int_in(config, path, key, lo, hi):
    value = config[key]
    if not _is_int(value) or not lo <= value <= hi:
        raise _bad(path, key, f"must be an integer in [{lo}, {hi}], got {value!r}")
    return value


def _one_of(config, path, key, choices):
    value = config[key]
    if not isinstance(value, str) or value not in choices:
        raise _bad(path, key, f"must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def _file_name(config, path, key):
    name = config[key]
    if not isinstance(name, str) or not name or os.path.basename(name) != name \
            or name in (".", "..") or "\x00" in name:
        raise _bad(path, key, f"must be a file name inside the directory, got {name!r}")


def _check_arch(config, path):
    arch, model = config["arch"], config["model"]
    if not isinstance(arch, dict):
        raise _bad(path, "arch", f"must be an object, got {type(arch).__name__}")
    wanted = _ARCH_KEYS[model]
    extra = sorted(set(arch) - set(wanted))
    if extra:
        raise _bad(path, f"arch.{extra[0]}", f"is not a key of a {model} model (its keys: "
                                             f"{', '.join(wanted) or 'none'})")
    for key in wanted:
        if key not in arch:
            raise _bad(path, f"arch.{key}", "is missing")
    if "factor_size" in wanted:
        value = arch["factor_size"]
        if not _is_int(value) or not 1 <= value <= MAX_LAYER:
            raise _bad(path, "arch.factor_size", f"must be an integer in [1, {MAX_LAYER}], "
                                                 f"got {value!r}")
    if "hidden" in wanted:
        hidden = arch["hidden"]
        if not isinstance(hidden, list) or not 1 <= len(hidden) <= MAX_LAYERS or any(
                not _is_int(h) or not 1 <= h <= MAX_LAYER for h in hidden):
            raise _bad(path, "arch.hidden", f"must be a list of 1 to {MAX_LAYERS} integers in "
                                            f"[1, {MAX_LAYER}], got {hidden!r}")
    if "activation" in wanted:
        value = arch["activation"]
        if not isinstance(value, str) or value not in ACTIVATIONS:
            raise _bad(path, "arch.activation", f"must be one of {', '.join(ACTIVATIONS)}, "
                                                f"got {value!r}")


def _check_optimizer_params(config, path):
    params = config["optimizer_params"]
    if not isinstance(params, dict):
        raise _bad(path, "optimizer_params", f"must be an object, got {type(params).__name__}")
    wanted = ("learning_rate", "wd", "lazy_update")
    extra = sorted(set(params) - set(wanted))
    if extra:
        raise _bad(path, f"optimizer_params.{extra[0]}",
                   f"is not an optimizer parameter 'sparsenet train' sets (expected "
                   f"{', '.join(wanted)})")
    for key in wanted:
        if key not in params:
            raise _bad(path, f"optimizer_params.{key}", "is missing")
    for key in ("learning_rate", "wd"):
        value = params[key]
        if not _is_number(value) or not 0 <= value < math.inf:
            raise _bad(path, f"optimizer_params.{key}", f"must be a finite number >= 0, "
                                                        f"got {value!r}")
    lazy = params["lazy_update"]
    if not (isinstance(lazy, bool) or lazy == "exact" and isinstance(lazy, str)):
        raise _bad(path, "optimizer_params.lazy_update",
                   f"must be true, false or \"exact\", got {lazy!r}")


_CONFIG_KEYS = ("format", "version", "model", "task", "features", "classes", "arch", "loss",
                "optimizer", "optimizer_params", "batch_size", "index_base", "seed", "epoch",
                "params_file", "states_file")


#: Keys a model directory may omit (written by later versions; absent means null).
_OPTIONAL_KEYS = ("labels", "scale_file")


def _check_labels(config, path):
    labels = config.get("labels")
    if labels is None:
        return
    if config["task"] != "multiclass":
        raise _bad(path, "labels", f"must be null for a {config['task']} model")
    if not isinstance(labels, list) or len(labels) != config["classes"] or any(
            not _is_number(v) or not math.isfinite(v) for v in labels) or any(
            a >= b for a, b in zip(labels, labels[1:])):
        raise _bad(path, "labels", f"must be a list of {config['classes']} (classes) "
                                   f"increasing finite numbers, got {str(labels)[:80]}")


def check_config(config, path):
    """Return ``config`` (``model.json``'s object) if every key is as the module table says;
    else raise ``FileFormatError`` naming ``path`` and the key."""
    if not isinstance(config, dict):
        raise FileFormatError(f"{path}: expected a JSON object with \"format\": \"{FORMAT}\", "
                              f"got a JSON {type(config).__name__}")
    if config.get("format") != FORMAT:
        raise _bad(path, "format", f"must be {FORMAT!r}, got {config.get('format')!r} (not a "
                                   f"sparsenet model directory)")
    for key in _CONFIG_KEYS:
        if key not in config:
            expected = f" (expected {VERSION})" if key == "version" else ""
            raise _bad(path, key, f"is missing{expected}")
    extra = sorted(k for k in config if k not in _CONFIG_KEYS + _OPTIONAL_KEYS)
    if extra:
        raise _bad(path, extra[0], f"is not a key of model.json (its keys: "
                                   f"{', '.join(_CONFIG_KEYS + _OPTIONAL_KEYS)})")
    if config["version"] != VERSION or not _is_int(config["version"]):
        raise _bad(path, "version", f"must be {VERSION}, got {config['version']!r}")
    model = config["model"]
    if not isinstance(model, str) or model not in _ARCH_KEYS:
        raise _bad(path, "model", f"names an unknown model {model!r}; expected one of "
                                  f"{', '.join(_ARCH_KEYS)}")
    task = _one_of(config, path, "task", TASKS)
    fixed = _FIXED_TASK.get(model)
    if fixed is not None and task != fixed:
        raise _bad(path, "task", f"must be {fixed!r} for a {model} model, got {task!r}")
    if model == "fm" and task == "multiclass":
        raise _bad(path, "task", "must be 'regression' or 'binary' for an fm model, got "
                                 "'multiclass'")
    _int_in(config, path, "features", 1, MAX_FEATURES)
    if task == "multiclass":
        _int_in(config, path, "classes", 2, MAX_CLASSES)
    elif config["classes"] is not None:
        raise _bad(path, "classes", f"must be null for a {task} model, got "
                                    f"{config['classes']!r}")
    _check_arch(config, path)
    loss = _one_of(config, path, "loss", tuple(LOSS_TASKS))
    if LOSS_TASKS[loss] != task:
        raise _bad(path, "loss", f"{loss!r} trains {LOSS_TASKS[loss]} models, but the task is "
                                 f"{task}")
    _one_of(config, path, "optimizer", OPTIMIZER_NAMES)
    _check_optimizer_params(config, path)
    _int_in(config, path, "batch_size", 1, MAX_BATCH_SIZE)
    _int_in(config, path, "index_base", 0, 1)
    _int_in(config, path, "seed", *SEED_RANGE)
    _int_in(config, path, "epoch", 1, MAX_EPOCH)
    _file_name(config, path, "params_file")
    _file_name(config, path, "states_file")
    if config["params_file"] == config["states_file"]:
        raise _bad(path, "states_file", f"must differ from params_file, both are "
                                        f"{config['params_file']!r}")
    _check_labels(config, path)
    if config.get("scale_file") is not None:
        _file_name(config, path, "scale_file")
        if config["scale_file"] in (config["params_file"], config["states_file"]):
            raise _bad(path, "scale_file", "must differ from params_file and states_file")
    return config


_RECORD_KEYS = ("epoch", "train", "val", "seconds", "rows")
_OPTIONAL_RECORD_KEYS = ("kept",)


def check_record(record, where):
    """Return ``record`` (one ``metrics.jsonl`` line) if it is as the module docstring says;
    else raise ``FileFormatError`` naming ``where`` (``path:line``) and the key.

    >>> check_record({"epoch": 1, "train": {"auc": 0.5}, "val": {}, "seconds": 0.1,
    ...               "rows": 4}, "m.jsonl:1")["epoch"]
    1
    """
    if not isinstance(record, dict):
        raise FileFormatError(f"{where}: expected a JSON object per line, got a JSON "
                              f"{type(record).__name__}")
    for key in _RECORD_KEYS:
        if key not in record:
            raise _bad(where, key, "is missing")
    extra = sorted(k for k in record if k not in _RECORD_KEYS + _OPTIONAL_RECORD_KEYS)
    if extra:
        raise _bad(where, extra[0], f"is not a key of a metrics record (its keys: "
                                    f"{', '.join(_RECORD_KEYS + _OPTIONAL_RECORD_KEYS)})")
    if "kept" in record and not isinstance(record["kept"], bool):
        raise _bad(where, "kept", f"must be true or false, got {record['kept']!r}")
    if not _is_int(record["epoch"]) or not 1 <= record["epoch"] <= MAX_EPOCH:
        raise _bad(where, "epoch", f"must be an integer in [1, {MAX_EPOCH}], got "
                                   f"{record['epoch']!r}")
    if not _is_int(record["rows"]) or record["rows"] < 0:
        raise _bad(where, "rows", f"must be an integer >= 0, got {record['rows']!r}")
    if not _is_number(record["seconds"]) or not 0 <= record["seconds"] < math.inf:
        raise _bad(where, "seconds", f"must be a finite number >= 0, got "
                                     f"{record['seconds']!r}")
    for part in ("train", "val"):
        metrics = record[part]
        if not isinstance(metrics, dict):
            raise _bad(where, part, f"must be an object of metric name -> number, got "
                                    f"{type(metrics).__name__}")
        for name, value in metrics.items():
            if not _is_number(value):
                raise _bad(where, f"{part}.{name}", f"must be a number, got {value!r}")
    return record

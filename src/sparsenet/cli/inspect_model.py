"""``sparsenet inspect MODEL_DIR``: a readable summary of a model directory.

A model directory (``sparsenet train --out DIR``) holds binary checkpoint files that
are not LibSVM text; ``inspect`` reads its ``model.json`` (checked against
:mod:`sparsenet.cli.model_schema`) and its ``metrics.jsonl`` instead, and lists the
files with their sizes. No torch is imported: only JSON is read.

>>> import json, os, tempfile
>>> d = tempfile.mkdtemp()
>>> is_model_dir(d)
False
"""
import json
import os

from .model_schema import MODEL_FILE, check_config, check_record, read_json_text

__all__ = ["is_model_dir", "model_report"]

_MAX_READ = (1 << 20) + 1


def is_model_dir(path):
    """Whether ``path`` is a directory holding a ``model.json``."""
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, MODEL_FILE))


def _size(n):
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024


def _last_record(model_dir):
    path = os.path.join(model_dir, "metrics.jsonl")
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        lines = [line for line in f.read(16 << 20).splitlines() if line.strip()]
    if not lines:
        return None
    where = f"{path}:{len(lines)}"
    return check_record(read_json_text(lines[-1], where), where)


def _metrics(values):
    return " ".join(f"{k}={v:.4f}" for k, v in values.items()) or "none"


def model_report(model_dir):
    """The summary's lines (``FileFormatError`` for a damaged ``model.json``)."""
    path = os.path.join(model_dir, MODEL_FILE)
    with open(path, "rb") as f:
        config = check_config(read_json_text(f.read(_MAX_READ), path), path)
    arch = ", ".join(f"{k}={v}" for k, v in config["arch"].items())
    lines = [f"model directory: {model_dir}",
             f"model: {config['model']} ({config['task']})" + (f", {arch}" if arch else ""),
             f"features: {config['features']} ({config['index_base']}-based indices)"]
    if config["task"] == "multiclass":
        labels = config.get("labels")
        shown = ("0 .. {}".format(config["classes"] - 1) if labels is None else
                 ", ".join(map(str, labels[:20])) + (", ..." if len(labels) > 20 else ""))
        lines.append(f"classes: {config['classes']} (labels {shown})")
    params = config["optimizer_params"]
    lines += [f"loss: {config['loss']}",
              f"optimizer: {config['optimizer']} (learning rate {params['learning_rate']:g}, "
              f"wd {params['wd']:g}, lazy_update {json.dumps(params['lazy_update'])}), batch "
              f"size {config['batch_size']}, seed {config['seed']}",
              "scaled features: " + (f"yes ({config['scale_file']})"
                                     if config.get("scale_file") else "no"),
              f"epochs trained: {config['epoch']}"]
    record = _last_record(model_dir)
    if record is not None:
        lines.append(f"last epoch ({record['epoch']}): train {_metrics(record['train'])}"
                     + (f"; val {_metrics(record['val'])}" if record["val"] else ""))
    files = sorted(os.listdir(model_dir))
    lines.append("files: " + ", ".join(
        f"{name} ({_size(os.path.getsize(os.path.join(model_dir, name)))})" for name in files
        if os.path.isfile(os.path.join(model_dir, name))))
    return lines

"""A damaged or crafted model directory never escapes from ``sparsenet eval``/``predict``/
``train --resume`` as a traceback: each command either works or prints one line,
``sparsenet: error: ...``, naming the file (and, for ``model.json``, the key), and exits 1.

Real model directories are written by ``sparsenet train`` on a tiny file; hypothesis then
mutates ``model.json`` (keys deleted, values of other JSON types, unknown keys, nesting,
truncation, garbage), ``metrics.jsonl``, and the checkpoint files (truncated, corrupted,
swapped for another model's, removed). The memory the CLI may use is capped at 256 MiB
(``available_bytes`` patched) so a mutated size can never make a test allocate much.
"""
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from sparsenet.cli import model_memory
from sparsenet.cli.main import main

ROWS = ("1 0:1 3:2\n0 1:1\n1 2:0.5 4:1\n0 0:1\n", "2 0:1 3:2\n0 1:1\n1 2:0.5 4:1\n0 0:1\n")
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                      HealthCheck.too_slow])


def _run(argv):
    """``(status, stderr)`` of ``main(argv)`` in-process (any escaping exception fails)."""
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        status = main(argv)
    return status, err.getvalue()


def _assert_clean(status, err, argv):
    assert status in (0, 1), (argv, status, err)
    assert "Traceback" not in err, err
    if status == 1:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("sparsenet: error: "), (argv, err)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """Model directories written by ``sparsenet train``: a logistic (adam), an mlp softmax
    (sgd) and an fm (adagrad) model; and the data files."""
    root = tmp_path_factory.mktemp("hostile")
    binary, multi = root / "binary.svm", root / "multi.svm"
    binary.write_text(ROWS[0])
    multi.write_text(ROWS[1])
    dirs = {}
    for name, data, flags in (
            ("logistic", binary, ["--optimizer", "adam"]),
            ("mlp", multi, ["--model", "mlp", "--loss", "softmax", "--optimizer", "sgd",
                            "--hidden", "4,3"]),
            ("fm", binary, ["--model", "fm", "--optimizer", "adagrad", "--factor-size", "2"])):
        out = root / name
        status, err = _run(["train", str(data), "--features", "5", "--out", str(out),
                            "--epochs", "1", "--quiet", *flags])
        assert status == 0, err
        dirs[name] = out
    return {"root": root, "dirs": dirs, "data": {"logistic": binary, "mlp": multi,
                                                 "fm": binary}}


@pytest.fixture(autouse=True)
def _small_memory(monkeypatch):
    monkeypatch.setattr(model_memory, "available_bytes", lambda ctx: 256 << 20)


def _copy(base, name):
    work = tempfile.mkdtemp(dir=base["root"])
    target = os.path.join(work, "m")
    shutil.copytree(base["dirs"][name], target)
    return target


def _commands(base, name, model_dir):
    data = str(base["data"][name])
    preds = os.path.join(os.path.dirname(model_dir), "preds.txt")
    return [["eval", model_dir, data], ["predict", model_dir, data, "--out", preds],
            ["train", data, "--out", model_dir, "--resume", "--epochs", "2", "--quiet"]]


def _run_all(base, name, model_dir):
    results = []
    for argv in _commands(base, name, model_dir):
        status, err = _run(argv)
        _assert_clean(status, err, argv)
        results.append((status, err))
    return results


def _kind(value):
    if isinstance(value, bool) or value is None or isinstance(value, (str, list, dict)):
        return type(value)
    return "number"


def _config_paths(config):
    paths = [(k,) for k in config]
    for k in ("arch", "optimizer_params"):
        paths += [(k, sub) for sub in config[k]]
    return paths


_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70),
    st.sampled_from([0, 1, -1, -3, 7, 2 ** 31, 2 ** 40, 2 ** 63, 2 ** 64, 10 ** 30]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
    st.sampled_from(["logistic", "softmax", "mlp", "fm", "multiclass", "binary", "exact",
                     "sgd", "ftrl", "epoch-0001.params", "../x", ""]))
_VALUE = st.recursive(_LEAF, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text("abcdefgh_", max_size=6), inner, max_size=3),
                      max_leaves=6)


def _set(config, path, value):
    target = config
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


def _delete(config, path):
    target = config
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]


def _get(config, path):
    for key in path:
        config = config[key]
    return config


@settings(max_examples=90, **SETTINGS)
@given(name=st.sampled_from(["logistic", "mlp", "fm"]), data=st.data(),
       op=st.sampled_from(["set", "delete", "add", "nest"]))
def test_mutated_model_json_is_refused_in_one_line(base, name, data, op):
    model_dir = _copy(base, name)
    path = os.path.join(model_dir, "model.json")
    with open(path) as f:
        config = json.load(f)
    key = data.draw(st.sampled_from(_config_paths(config)), label="key")
    refused_key = None
    if op == "set":
        value = data.draw(_VALUE, label="value")
        old = _get(config, key)
        _set(config, key, value)
        lazy_exact = key == ("optimizer_params", "lazy_update") and value == "exact"
        if _kind(value) != _kind(old) and not lazy_exact:
            refused_key = ".".join(key)
        text = json.dumps(config)
    elif op == "delete":
        _delete(config, key)
        # labels and scale_file may be absent (directories written before they existed)
        refused_key = None if key in (("labels",), ("scale_file",)) else ".".join(key)
        text = json.dumps(config)
    elif op == "add":
        new = data.draw(st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8),
                        label="new key")
        where = data.draw(st.sampled_from([(), ("arch",), ("optimizer_params",)]), label="in")
        new_path = where + (new,)
        if new_path in _config_paths(config):
            return
        _set(config, new_path, 1)
        refused_key = ".".join(new_path)
        text = json.dumps(config)
    else:  # wrap one value in many levels of lists (the file's own nesting is 3)
        depth = data.draw(st.sampled_from([20, 1000, 100000]), label="depth")
        _set(config, key, "@@")
        text = json.dumps(config).replace('"@@"', "[" * depth + "0" + "]" * depth)
        refused_key = "nested"
    with open(path, "w") as f:
        f.write(text)
    for status, err in _run_all(base, name, model_dir):
        if refused_key is not None:
            assert status == 1, err
            assert "model.json" in err
            if refused_key != "nested":
                assert f"'{refused_key}'" in err, err


@settings(max_examples=40, **SETTINGS)
@given(name=st.sampled_from(["logistic", "mlp", "fm"]),
       how=st.sampled_from(["truncate", "garbage", "empty", "bom"]),
       cut=st.floats(0.0, 0.99))
def test_damaged_model_json_bytes(base, name, how, cut):
    model_dir = _copy(base, name)
    path = os.path.join(model_dir, "model.json")
    raw = open(path, "rb").read()
    new = {"truncate": raw[:int(len(raw) * cut)], "garbage": os.urandom(64), "empty": b"",
           "bom": b"\xff\xfe" + raw}[how]
    with open(path, "wb") as f:
        f.write(new)
    for status, err in _run_all(base, name, model_dir):
        assert status == 1 and "model.json" in err, err


@settings(max_examples=60, **SETTINGS)
@given(name=st.sampled_from(["logistic", "mlp", "fm"]),
       which=st.sampled_from(["params", "states", "metrics"]),
       how=st.sampled_from(["truncate", "flip", "swap", "remove", "directory", "garbage"]),
       at=st.floats(0.0, 0.999), other=st.sampled_from(["logistic", "mlp", "fm"]))
def test_damaged_checkpoint_files(base, name, which, how, at, other):
    model_dir = _copy(base, name)
    with open(os.path.join(model_dir, "model.json")) as f:
        config = json.load(f)
    target = os.path.join(model_dir, {"params": config["params_file"],
                                      "states": config["states_file"],
                                      "metrics": "metrics.jsonl"}[which])
    raw = open(target, "rb").read()
    if how == "truncate":
        open(target, "wb").write(raw[:int(len(raw) * at)])
    elif how == "flip":
        i = int(len(raw) * at)
        open(target, "wb").write(raw[:i] + bytes([raw[i] ^ 0xFF]) + raw[i + 1:])
    elif how == "swap":
        if other == name:
            return
        src = os.path.join(base["dirs"][other], os.path.basename(target))
        shutil.copyfile(src, target)
    elif how == "remove":
        os.remove(target)
    elif how == "directory":
        os.remove(target)
        os.mkdir(target)
    else:
        open(target, "wb").write(os.urandom(200))
    results = _run_all(base, name, model_dir)
    if which == "metrics" and how in ("swap", "flip"):
        return  # another model's history, or a flipped digit, may still be a valid history
    if how == "swap" and which == "states":  # the three models have three optimizers
        assert results[2][0] == 1 and "belongs to another model" in results[2][1], results[2]
    if how in ("remove", "directory", "garbage", "swap") and which == "params":
        assert all(status == 1 for status, _ in results)


# -- the cases of the report, each pinned -----------------------------------------------

@pytest.mark.parametrize("mutate, match", [
    (lambda c: c.pop("loss"), "model.json: key 'loss' is missing"),
    (lambda c: c.pop("epoch"), "model.json: key 'epoch' is missing"),
    (lambda c: c.update(epoch=-3), "key 'epoch' must be an integer in [1, "),
    (lambda c: c.update(index_base=7), "key 'index_base' must be an integer in [0, 1], got 7"),
    (lambda c: c.update(batch_size=2 ** 40), "key 'batch_size' must be an integer in [1, "),
    (lambda c: c.update(optimizer_params=[1]), "key 'optimizer_params' must be an object"),
    (lambda c: c["optimizer_params"].update(bogus=1), "key 'optimizer_params.bogus' is not"),
    (lambda c: c["optimizer_params"].update(learning_rate="x"),
     "key 'optimizer_params.learning_rate' must be a finite number >= 0, got 'x'"),
    (lambda c: c.update(features=True), "key 'features' must be an integer"),
    (lambda c: c.update(seed=2 ** 70), "key 'seed' must be an integer in"),
])
def test_reported_model_json_cases(base, mutate, match):
    model_dir = _copy(base, "logistic")
    path = os.path.join(model_dir, "model.json")
    config = json.load(open(path))
    mutate(config)
    open(path, "w").write(json.dumps(config))
    for status, err in _run_all(base, "logistic", model_dir):
        assert status == 1 and match in err, err
        assert path in err


def test_deeply_nested_model_json(base):
    model_dir = _copy(base, "logistic")
    path = os.path.join(model_dir, "model.json")
    open(path, "w").write("[" * 100000 + "]" * 100000)
    for status, err in _run_all(base, "logistic", model_dir):
        assert status == 1 and f"{path}: JSON nested deeper than" in err, err


@pytest.mark.parametrize("text, match", [
    ("{not json\n", "metrics.jsonl:1: not valid JSON"),
    ("[1, 2]\n", "metrics.jsonl:1: expected a JSON object per line, got a JSON list"),
    ('{"epoch": "x", "train": {}, "val": {}, "seconds": 0, "rows": 0}\n',
     "metrics.jsonl:1: key 'epoch' must be an integer"),
    ('{"epoch": 1, "train": {"auc": "high"}, "val": {}, "seconds": 0, "rows": 4}\n',
     "metrics.jsonl:1: key 'train.auc' must be a number"),
])
def test_reported_metrics_cases(base, text, match):
    model_dir = _copy(base, "logistic")
    open(os.path.join(model_dir, "metrics.jsonl"), "w").write(text)
    status, err = _run(_commands(base, "logistic", model_dir)[2])
    assert status == 1 and match in err, err


def test_another_models_states_are_refused_before_training(base):
    model_dir = _copy(base, "fm")
    states = os.path.join(model_dir, "epoch-0001.states")
    params_before = open(os.path.join(model_dir, "epoch-0001.params"), "rb").read()
    shutil.copyfile(os.path.join(base["dirs"]["logistic"], "epoch-0001.states"), states)
    status, err = _run(_commands(base, "fm", model_dir)[2])
    # the logistic model's states are Adam's, the fm model trains with AdaGrad
    assert status == 1 and f"{states}: holds the state of a Adam optimizer" in err, err
    assert open(os.path.join(model_dir, "epoch-0001.params"), "rb").read() == params_before


def test_same_optimizer_other_shapes_are_refused(base, tmp_path):
    # a second adam model with other shapes: its states fit the optimizer, not the weights
    other = tmp_path / "other"
    status, err = _run(["train", str(base["data"]["logistic"]), "--features", "5", "--out",
                        str(other), "--model", "widedeep", "--hidden", "3", "--epochs", "1",
                        "--quiet"])
    assert status == 0, err
    model_dir = _copy(base, "logistic")
    states = os.path.join(model_dir, "epoch-0001.states")
    shutil.copyfile(other / "epoch-0001.states", states)
    status, err = _run(_commands(base, "logistic", model_dir)[2])
    assert status == 1 and f"{states}: the state of parameter" in err, err
    assert "belongs to another model" in err


@pytest.mark.parametrize("case", ["nested", "no_loss", "swapped_states"])
def test_in_a_subprocess_one_line_and_status_1(base, case):
    model_dir = _copy(base, "logistic")
    path = os.path.join(model_dir, "model.json")
    config = json.load(open(path))
    if case == "nested":
        open(path, "w").write("{\"a\": " * 50000 + "1" + "}" * 50000)
    elif case == "no_loss":
        del config["loss"]
        open(path, "w").write(json.dumps(config))
    else:
        shutil.copyfile(os.path.join(base["dirs"]["mlp"], "epoch-0001.states"),
                        os.path.join(model_dir, "epoch-0001.states"))
    argv = _commands(base, "logistic", model_dir)[2 if case == "swapped_states" else 0]
    proc = subprocess.run([sys.executable, "-m", "sparsenet", *argv], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert proc.returncode == 1, proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("sparsenet: error: ") and "Traceback" not in proc.stderr

"""Sizes the ``sparsenet`` CLI refuses before allocating, what it does with no data and on
Ctrl-C, and the distributed timeout's range (``SPARSENET_DIST_TIMEOUT``, ``launch --timeout``).

Each case was a traceback (or a 10-200 GB allocation) before: a softmax label of 1e9
sized a 1e9-column weight, huge ``--features``/``--hidden``/``--factor-size`` reached
torch's allocator, Ctrl-C printed a traceback, an empty file wrote a checkpoint of an
untrained model, and a timeout of 1e30 s raised a bare ``OverflowError`` on every rank.
"""
import contextlib
import datetime
import io
import json
import os
import resource
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from sparsenet.base import InvalidArgumentError, SparsenetError
from sparsenet.cli.data_stream import MAX_AUTO_CLASSES
from sparsenet.cli.main import main
from sparsenet.kvstore import collective

ENV = dict(os.environ, OMP_NUM_THREADS="1")


def _run(argv):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        status = main(argv)
    return status, err.getvalue()


def _one_error_line(err):
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sparsenet: error: "), err
    return lines[0]


def _file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# -- classes from the labels --------------------------------------------------------------

@pytest.mark.parametrize("label", ["1000000000", "50000000", str(MAX_AUTO_CLASSES)])
def test_softmax_large_labels_are_mapped_to_classes(tmp_path, label):
    # the classes are the distinct labels (as scikit-learn's), not 1 + the largest label:
    # two labels, two classes, however large they are
    data = _file(tmp_path, "d.svm", f"0 1:1\n{label} 1:1\n")
    out = tmp_path / "m"
    status, err = _run(["train", data, "--features", "4", "--model", "softmax", "--out",
                        str(out), "--quiet", "--epochs", "1"])
    assert status == 0, err
    config = json.loads((out / "model.json").read_text())
    assert (config["classes"], config["labels"]) == (2, [0, int(label)])


def test_softmax_more_distinct_labels_than_the_bound_need_classes(tmp_path):
    data = _file(tmp_path, "d.svm",
                 "".join(f"{k} 0:1\n" for k in range(MAX_AUTO_CLASSES + 1)))
    out = tmp_path / "m"
    status, err = _run(["train", data, "--features", "4", "--model", "softmax", "--out",
                        str(out), "--quiet"])
    assert status == 1
    line = _one_error_line(err)
    assert f"more than {MAX_AUTO_CLASSES} distinct labels" in line and "pass --classes K" in line
    assert "the most a multiclass model takes from the data without --classes" in line
    assert not (out / "model.json").exists()


def test_softmax_as_many_distinct_labels_as_the_bound_trains(tmp_path):
    data = _file(tmp_path, "d.svm", "".join(f"{k} 1:1\n" for k in range(MAX_AUTO_CLASSES)))
    out = tmp_path / "m"
    status, err = _run(["train", data, "--features", "4", "--model", "softmax", "--out",
                        str(out), "--epochs", "1", "--quiet"])
    assert status == 0, err
    assert json.loads((out / "model.json").read_text())["classes"] == MAX_AUTO_CLASSES


def test_explicit_classes_take_labels_beyond_the_bound(tmp_path):
    data = _file(tmp_path, "d.svm", f"0 0:1\n{MAX_AUTO_CLASSES + 5} 1:1\n")
    status, err = _run(["train", data, "--features", "2", "--model", "softmax", "--classes",
                        str(MAX_AUTO_CLASSES + 6), "--out", str(tmp_path / "m"), "--epochs",
                        "1", "--quiet"])
    assert status == 0, err


# -- sizes checked against memory before allocating --------------------------------------

@pytest.mark.parametrize("flags, named", [
    (["--features", str(2 ** 40)], "--features 1099511627776:"),
    (["--features", "1000", "--model", "mlp", "--hidden", "2147483647"],
     "--features 1000 --hidden 2147483647:"),
    (["--features", "1000", "--model", "fm", "--factor-size", "2147483647"],
     "--features 1000 --factor-size 2147483647:"),
    (["--features", "1000", "--model", "softmax", "--classes", "2147483647"],
     "--features 1000 --classes 2147483647:"),
    (["--features", "100000", "--model", "widedeep", "--hidden", "100000,100000"],
     "--features 100000 --hidden 100000,100000:"),
])
def test_huge_sizes_are_refused_naming_the_arguments(tmp_path, flags, named):
    data = _file(tmp_path, "d.svm", "1 0:1\n0 1:1\n")
    out = tmp_path / "m"
    status, err = _run(["train", data, "--out", str(out), "--quiet", *flags])
    assert status == 1
    line = _one_error_line(err)
    assert named in line and "GiB" in line and "memory available" in line
    assert not (out / "model.json").exists()


def test_eval_refuses_a_model_json_declaring_a_huge_model(tmp_path):
    data = _file(tmp_path, "d.svm", "1 0:1\n0 1:1\n")
    out = tmp_path / "m"
    assert _run(["train", data, "--features", "2", "--out", str(out), "--epochs", "1",
                 "--quiet"])[0] == 0
    config = json.loads((out / "model.json").read_text())
    config["features"] = 2 ** 40
    (out / "model.json").write_text(json.dumps(config))
    status, err = _run(["eval", str(out), data])
    assert status == 1
    assert f"{out / 'model.json'}: features 1099511627776:" in _one_error_line(err)


@pytest.mark.parametrize("flag, value", [
    ("--features", str(2 ** 40 + 1)), ("--classes", str(2 ** 31)), ("--seed", str(2 ** 70)),
    ("--seed", str(-2 ** 63 - 1)), ("--epochs", str(10 ** 10)), ("--batch-size", str(2 ** 24 + 1)),
    ("--factor-size", str(2 ** 31)), ("--hidden", f"4,{2 ** 31}")])
def test_out_of_range_flags_are_usage_errors(tmp_path, capsys, flag, value):
    data = str(tmp_path / "missing.svm")  # a flag let through fails fast on the missing file
    argv = ["train", data, "--out", str(tmp_path / "m"), "--quiet", flag, value]
    if flag != "--features":
        argv += ["--features", "2"]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert f"argument {flag}: expected" in capsys.readouterr().err


def test_an_allocation_failure_is_one_line_naming_the_arguments(tmp_path):
    """With the check before allocating switched off, torch's own failure (here under a
    4 GiB address-space limit) becomes the same one-line error."""
    data = _file(tmp_path, "d.svm", "1 0:1\n0 1:1\n")
    code = ("import sys; import sparsenet.cli.model_memory as m; "
            "m.available_bytes = lambda ctx: None; "
            "from sparsenet.cli.main import main; sys.exit(main(sys.argv[1:]))")
    limit = 4 << 30

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    proc = subprocess.run([sys.executable, "-c", code, "train", data, "--features",
                           str(2 ** 36), "--out", str(tmp_path / "m"), "--quiet"],
                          capture_output=True, text=True, timeout=300, env=ENV,
                          preexec_fn=cap)
    assert proc.returncode == 1, proc.stderr
    line = _one_error_line(proc.stderr)
    assert "--features 68719476736: out of memory on cpu(0)" in line


# -- an empty training set ---------------------------------------------------------------

@pytest.mark.parametrize("model", ["logistic", "softmax"])
def test_an_empty_training_file_writes_no_checkpoint(tmp_path, model):
    data = _file(tmp_path, "empty.svm", "")
    out = tmp_path / "m"
    status, err = _run(["train", data, "--features", "3", "--model", model, "--out", str(out),
                        "--quiet"])
    assert status == 1
    assert f"{data}: no rows to train on" in _one_error_line(err)
    assert not (out / "model.json").exists()
    assert not list(out.glob("epoch-*")) if out.exists() else True


def test_resume_on_an_empty_file_keeps_the_checkpoint(tmp_path):
    data = _file(tmp_path, "d.svm", "1 0:1\n0 1:1\n")
    empty = _file(tmp_path, "empty.svm", "\n\n")
    out = tmp_path / "m"
    assert _run(["train", data, "--features", "2", "--out", str(out), "--epochs", "1",
                 "--quiet"])[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    status, err = _run(["train", empty, "--out", str(out), "--resume", "--epochs", "2",
                        "--quiet"])
    assert status == 1 and "no rows to train on" in _one_error_line(err)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


# -- Ctrl-C --------------------------------------------------------------------------------

def test_ctrl_c_prints_one_line_and_exits_130(tmp_path):
    rng = np.random.default_rng(0)
    with open(tmp_path / "big.svm", "w") as f:
        for i in range(5000):
            cols = np.sort(rng.choice(200, 5, replace=False))
            f.write(f"{i % 2} " + " ".join(f"{c}:1" for c in cols) + "\n")
    proc = subprocess.Popen([sys.executable, "-m", "sparsenet", "train",
                             str(tmp_path / "big.svm"), "--features", "200", "--out",
                             str(tmp_path / "m"), "--epochs", "100000", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        first = proc.stdout.readline()  # training is under way once an epoch is done
        assert first.startswith("epoch 1/"), first + proc.stderr.read()
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err == "sparsenet: interrupted\n"


# -- the distributed timeout ------------------------------------------------------------

@pytest.mark.parametrize("value", ["1e30", "1e10", "inf", "nan", "-5", "0", str(10 ** 400)])
def test_dist_timeout_variable_out_of_range(monkeypatch, value):
    monkeypatch.setenv("SPARSENET_DIST_TIMEOUT", value)
    with pytest.raises(InvalidArgumentError, match="environment variable "
                                                   "SPARSENET_DIST_TIMEOUT must be a finite "
                                                   r"number of seconds > 0, got .* \(the "
                                                   r"longest accepted is 1e\+09 s"):
        collective.timeout_seconds()
    # what a rank runs first: the same error, not an OverflowError from timedelta
    with pytest.raises(InvalidArgumentError, match="SPARSENET_DIST_TIMEOUT"):
        collective.ensure_process_group()


@pytest.mark.parametrize("value", [1e30, 10 ** 400, datetime.timedelta.max, float("inf")])
def test_dist_timeout_argument_out_of_range(value):
    with pytest.raises(InvalidArgumentError, match="^timeout must be a finite number"):
        collective.timeout_seconds(value)
    with pytest.raises(SparsenetError):
        collective.ensure_process_group(value)


def test_largest_dist_timeout_is_one_torch_and_timedelta_take(monkeypatch):
    monkeypatch.setenv("SPARSENET_DIST_TIMEOUT", "1e9")
    seconds = collective.timeout_seconds()
    assert seconds == 1e9
    datetime.timedelta(seconds=seconds)  # no OverflowError
    assert seconds * 1e9 < 2 ** 63  # torch's deadlines count int64 nanoseconds


@pytest.mark.parametrize("value", ["1e30", "1e10"])
def test_launch_timeout_out_of_range_is_a_usage_error(capsys, value):
    with pytest.raises(SystemExit) as exc:
        main(["launch", "-n", "2", "--timeout", value, __file__])
    assert exc.value.code == 2
    assert "argument --timeout: expected a number of seconds in (0, 1e+09]" in \
        capsys.readouterr().err


# -- sparsenet demo -------------------------------------------------------------------------

@pytest.mark.parametrize("flags, named", [
    (["--rows", str(10 ** 14), "--features", "30"], "--rows 100000000000000 --features 30"),
    (["--rows", "50", "--features", str(10 ** 14)], "--rows 50 --features 100000000000000"),
])
def test_demo_refuses_sizes_beyond_memory(tmp_path, flags, named):
    status, err = _run(["demo", "--out", str(tmp_path / "d"), *flags])
    assert status == 1
    line = _one_error_line(err)
    assert named in line and "GiB of memory available" in line


def test_demo_negative_seed_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--out", str(tmp_path / "d"), "--rows", "5", "--features", "5",
              "--seed", "-1"])
    assert exc.value.code == 2
    assert "argument --seed: expected an integer in [0, " in capsys.readouterr().err

"""``sparsenet eval`` and ``predict`` against the in-process model, the one-line errors of
train/eval/predict, and the installed console script and ``python -m sparsenet``."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import sparsenet as mx
from sparsenet.cli.main import main
from sparsenet.cli.model_dir import load_model
from sparsenet.models.tasks import predict
from tests.cli.libsvm_data import FEATURES, make_task


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A model dir per task, with its validation file."""
    folder = tmp_path_factory.mktemp("pe")
    out = {}
    for task, model in (("binary", "fm"), ("multiclass", "softmax"), ("regression", "linear")):
        train, val, y_val = make_task(folder, task, rows=1000, seed=1)
        model_dir = folder / f"{task}_model"
        assert main(["train", train, "--features", str(FEATURES), "--val", val, "--out",
                     str(model_dir), "--model", model, "--epochs", "2", "--quiet"]) == 0
        out[task] = (str(model_dir), val, y_val)
    return out


def _in_process(model_dir, path):
    """The model's predictions on the whole file, in one batch read with SciPy."""
    net, config = load_model(model_dir, mx.cpu())
    rows = open(path).read().splitlines()
    X = sp.lil_matrix((len(rows), FEATURES), dtype=np.float32)
    for i, line in enumerate(rows):
        for tok in line.split()[1:]:
            j, v = tok.split(":")
            X[i, int(j)] = float(v)
    return predict(net(mx.nd.sparse.csr_matrix(X.tocsr())), config["task"]).asnumpy()


@pytest.mark.parametrize("task, width", [("binary", 2), ("multiclass", 4), ("regression", 1)])
def test_predict_equals_the_in_process_model(trained, tmp_path, task, width):
    model_dir, val, y_val = trained[task]
    out = tmp_path / "preds.txt"
    assert main(["predict", model_dir, val, "--out", str(out), "--batch-size", "64"]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == y_val.size and {len(line.split()) for line in lines} == {width}
    written = np.loadtxt(out, ndmin=2).astype(np.float32)
    expected = _in_process(model_dir, val).reshape(y_val.size, -1)
    np.testing.assert_allclose(written, expected, rtol=2e-6, atol=1e-7)
    if task != "regression":
        np.testing.assert_allclose(written.sum(1), 1.0, rtol=1e-5)


def test_predict_to_stdout(trained, capsys):
    model_dir, val, y_val = trained["binary"]
    assert main(["predict", model_dir, val]) == 0
    assert len(capsys.readouterr().out.splitlines()) == y_val.size


def test_eval_matches_the_last_validation_metrics(trained, capsys):
    for task in ("binary", "multiclass", "regression"):
        model_dir, val, y_val = trained[task]
        assert main(["eval", model_dir, val, "--json"]) == 0
        printed = json.loads(capsys.readouterr().out)
        with open(os.path.join(model_dir, "metrics.jsonl")) as f:
            last = [json.loads(line) for line in f][-1]["val"]
        assert printed.pop("rows") == y_val.size
        assert printed == pytest.approx(last, rel=1e-6)
    assert main(["eval", trained["binary"][0], trained["binary"][1]]) == 0
    assert capsys.readouterr().out.startswith(f"rows={trained['binary'][2].size} auc=")


def _fails(capsys, argv, match, status=1):
    """``main(argv)`` fails with status ``status`` and a one-line error matching ``match``."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == status, err
    last = err.strip().splitlines()[-1]
    assert "Traceback" not in err
    assert last.startswith(("sparsenet: error: ", "sparsenet train: error: ",
                            "sparsenet predict: error: ")), last
    assert match in last, last
    return last


def test_bad_files_fail_with_one_line(trained, tmp_path, capsys):
    model_dir, val, _ = trained["binary"]
    bad = tmp_path / "bad.svm"
    bad.write_text("1 0:1 3:2\n0 2:x\n")
    big = tmp_path / "big.svm"
    big.write_text(f"1 0:1\n0 {FEATURES}:1\n")
    label = tmp_path / "label.svm"
    label.write_text("1 0:1\n2 1:1\n")
    out = str(tmp_path / "o")
    feats = ["--features", str(FEATURES), "--out", out, "--quiet"]
    _fails(capsys, ["train", str(tmp_path / "none.svm"), *feats],
           f"{tmp_path / 'none.svm'}: no such file or directory")
    _fails(capsys, ["train", str(bad), *feats], f"{bad}:2:3: invalid feature value 'x'")
    _fails(capsys, ["train", str(big), *feats],
           f"{big}:2:3: feature index {FEATURES} out of range [0, {FEATURES})")
    _fails(capsys, ["train", str(label), *feats],
           f"{label}:2: a binary model expects labels 0/1 or -1/+1, got 2")
    _fails(capsys, ["train", val, *feats, "--val", str(bad)], f"{bad}:2:3:")
    _fails(capsys, ["eval", model_dir, str(bad)], f"{bad}:2:3: invalid feature value")
    _fails(capsys, ["predict", model_dir, str(big), "--out", out], f"{big}:2:3: feature index")
    assert not os.path.exists(out + "/model.json")


def test_bad_model_dirs_fail_with_one_line(trained, tmp_path, capsys):
    model_dir, val, _ = trained["binary"]
    empty = tmp_path / "empty"
    empty.mkdir()
    _fails(capsys, ["eval", str(empty), val], "it has no model.json")
    _fails(capsys, ["predict", str(tmp_path / "nope"), val],
           f"{tmp_path / 'nope'}: no such model directory")
    broken = tmp_path / "broken"
    shutil.copytree(model_dir, broken)
    config = json.loads((broken / "model.json").read_text())
    (broken / "model.json").write_text(json.dumps(dict(config, model="xgboost")))
    _fails(capsys, ["eval", str(broken), val], "unknown model 'xgboost'")
    (broken / "model.json").write_text(json.dumps(dict(config, params_file="../x.params")))
    _fails(capsys, ["eval", str(broken), val], "'params_file' must be a file name inside")
    (broken / "model.json").write_text("{not json")
    _fails(capsys, ["eval", str(broken), val], "not valid JSON")
    (broken / "model.json").write_text(json.dumps(config))
    os.remove(broken / config["params_file"])
    _fails(capsys, ["predict", str(broken), val], "checkpoint file missing")


def test_bad_flags_fail(trained, tmp_path, capsys):
    model_dir, val, _ = trained["binary"]
    out = str(tmp_path / "o")
    _fails(capsys, ["train", val, "--features", "8", "--out", out, "--model", "svm"],
           "invalid choice: 'svm'", status=2)
    _fails(capsys, ["train", val, "--features", "8", "--out", out, "--lazy", "maybe"],
           "expected true, false or exact, got 'maybe'", status=2)
    _fails(capsys, ["train", val, "--features", "0", "--out", out],
           "expected an integer in [1, 1099511627776], got '0'", status=2)
    _fails(capsys, ["train", val, "--features", str(FEATURES), "--out", out,
                    "--model", "linear", "--loss", "logistic"],
           "model 'linear' is a regression model, but the loss trains binary models")
    _fails(capsys, ["train", val, "--features", str(FEATURES), "--out", out,
                    "--model", "fm", "--loss", "softmax", "--classes", "3"],
           "FactorizationMachine supports the tasks regression and binary")
    _fails(capsys, ["train", val, "--out", model_dir, "--features", str(FEATURES)],
           "already holds a model; pass --resume")
    _fails(capsys, ["train", val, "--out", model_dir, "--resume", "--epochs", "2"],
           "has already trained 2 epochs")
    _fails(capsys, ["train", val, "--out", model_dir, "--resume", "--epochs", "3",
                    "--features", "7"], "--features 7 conflicts with the checkpoint")
    _fails(capsys, ["train", val, "--out", out, "--resume"], "no such model directory")
    if not mx.num_gpus():
        _fails(capsys, ["eval", model_dir, val, "--ctx", "gpu"], "--ctx gpu: no CUDA device")


def test_console_script_and_python_m(trained, tmp_path):
    """One subprocess run of each entry point: the installed script and python -m."""
    model_dir, val, y_val = trained["regression"]
    script = shutil.which("sparsenet") or os.path.join(os.path.dirname(sys.executable),
                                                       "sparsenet")
    if not os.path.exists(script):
        pytest.skip("the sparsenet console script is not installed")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    ok = subprocess.run([script, "eval", model_dir, val], capture_output=True, text=True,
                        env=env)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith(f"rows={y_val.size} rmse=")
    bad = subprocess.run([sys.executable, "-m", "sparsenet", "eval", str(tmp_path), val],
                         capture_output=True, text=True, env=env)
    assert bad.returncode == 1
    assert bad.stderr.strip().splitlines() == [
        f"sparsenet: error: {tmp_path}: not a model directory: it has no model.json (write "
        f"one with 'sparsenet train ... --out {tmp_path}')"]

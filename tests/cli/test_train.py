"""``sparsenet train`` end to end on generated files: metrics beat a trivial baseline,
checkpoints, ``--resume`` continues bit for bit, ``--plot``, and a public dataset."""
import json
import os

import numpy as np
import pytest

from sparsenet.cli.main import main
from tests.cli.libsvm_data import FEATURES, make_task, write_libsvm


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("train_data")
    return {task: make_task(folder, task) for task in ("binary", "multiclass", "regression")}


def _train(train, out, *flags):
    return main(["train", train, "--features", str(FEATURES), "--out", str(out), "--quiet",
                 *flags])


def _history(out):
    with open(os.path.join(out, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f]


def test_logistic_beats_baseline_and_writes_a_model_dir(data, tmp_path, capsys):
    train, val, _ = data["binary"]
    out = tmp_path / "m"
    assert _train(train, out, "--val", val, "--epochs", "3", "--lr", "0.05") == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines] == [["epoch", "1/3"], ["epoch", "2/3"],
                                                    ["epoch", "3/3"]]
    assert "val auc=" in lines[-1] and "logloss=" in lines[-1] and "samples/s" in lines[-1]
    history = _history(out)
    assert [r["epoch"] for r in history] == [1, 2, 3]
    assert history[-1]["val"]["auc"] > 0.8  # a constant predictor has AUC 0.5
    assert history[-1]["val"]["logloss"] < np.log(2)
    assert history[-1]["rows"] == 1600
    config = json.loads((out / "model.json").read_text())
    assert (config["model"], config["task"], config["features"], config["epoch"]) == \
        ("logistic", "binary", FEATURES, 3)
    assert sorted(os.listdir(out)) == ["epoch-0003.params", "epoch-0003.states",
                                       "metrics.jsonl", "model.json"]


def test_softmax_beats_the_majority_class(data, tmp_path):
    train, val, y_val = data["multiclass"]
    out = tmp_path / "m"
    assert _train(train, out, "--val", val, "--model", "softmax", "--epochs", "4",
                  "--lr", "0.05") == 0
    majority = np.bincount(y_val.astype(int)).max() / y_val.size
    assert _history(out)[-1]["val"]["accuracy"] > majority + 0.1
    assert json.loads((out / "model.json").read_text())["classes"] == 4  # found in the data


def test_linear_regression_beats_the_mean(data, tmp_path):
    train, val, y_val = data["regression"]
    out = tmp_path / "m"
    assert _train(train, out, "--val", val, "--model", "linear", "--epochs", "5",
                  "--lr", "0.1", "--batch-size", "256") == 0
    assert _history(out)[-1]["val"]["rmse"] < 0.5 * np.std(y_val)


@pytest.mark.parametrize("model, flags", [
    ("fm", ["--factor-size", "4"]),
    ("widedeep", ["--hidden", "16,8"]),
    ("mlp", ["--hidden", "16,8", "--lr", "0.02"]),
    ("fm", ["--loss", "l2", "--factor-size", "4", "--lr", "0.1"]),
], ids=["fm", "widedeep", "mlp", "fm-regression"])
def test_other_models_learn(data, tmp_path, model, flags):
    task = "regression" if "l2" in flags else "binary"
    train, val, y_val = data[task]
    out = tmp_path / "m"
    assert _train(train, out, "--val", val, "--model", model, "--epochs", "3", *flags) == 0
    last = _history(out)[-1]["val"]
    if task == "binary":
        assert last["auc"] > 0.75
    else:
        assert last["rmse"] < np.std(y_val)


@pytest.mark.parametrize("optimizer, lazy", [("adam", "true"), ("ftrl", "exact"),
                                             ("sgd", "false"), ("adagrad", "true")])
def test_resume_continues_exactly(data, tmp_path, optimizer, lazy):
    """2 epochs, then --resume to 3, equals 3 epochs straight, bit for bit."""
    train, val, _ = data["binary"]
    flags = ["--model", "fm", "--factor-size", "3", "--optimizer", optimizer, "--lazy", lazy,
             "--wd", "0.001", "--batch-size", "100", "--val", val]
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    assert _train(train, straight, "--epochs", "3", *flags) == 0
    assert _train(train, resumed, "--epochs", "2", *flags) == 0
    assert main(["train", train, "--out", str(resumed), "--epochs", "3", "--resume",
                 "--quiet", "--val", val]) == 0
    a = (straight / "epoch-0003.params").read_bytes()
    b = (resumed / "epoch-0003.params").read_bytes()
    assert a == b
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in _history(straight)]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"} for r in _history(resumed)]


def test_plot_writes_learning_curves(data, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    train, val, _ = data["binary"]
    out = tmp_path / "m"
    assert _train(train, out, "--val", val, "--epochs", "2", "--plot") == 0
    png = (out / "learning_curves.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert f"wrote {out / 'learning_curves.png'}" in capsys.readouterr().out


def test_breast_cancer_public_dataset(tmp_path):
    """scikit-learn's copy of the UCI Wisconsin breast cancer data (569 rows, 30 features),
    standardised, 0-based LibSVM; logistic regression reaches validation AUC > 0.95."""
    datasets = pytest.importorskip("sklearn.datasets")
    X, y = datasets.load_breast_cancer(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], y[order]
    X = (X - X[:400].mean(0)) / X[:400].std(0)
    train = write_libsvm(tmp_path / "bc_train.svm", X[:400], y[:400])
    val = write_libsvm(tmp_path / "bc_val.svm", X[400:], y[400:])
    out = tmp_path / "m"
    assert main(["train", str(train), "--features", "30", "--val", str(val), "--out", str(out),
                 "--model", "logistic", "--epochs", "5", "--batch-size", "32", "--quiet"]) == 0
    assert _history(out)[-1]["val"]["auc"] > 0.95

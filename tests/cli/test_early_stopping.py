"""``sparsenet train --val``: early stopping keeps the best epoch's model.

The data make the validation log-loss fall for two epochs and rise after (30% label noise
in a small training file, clean validation rows from the same hidden model, a large
learning rate): the saved model must be epoch 2's, which an independent NumPy evaluation
of the saved weights on the validation file confirms, and ``metrics.jsonl`` must mark it.
"""
import json
import os

import numpy as np
import pytest
import scipy.sparse as sp

import sparsenet as mx
from sparsenet.cli.main import main
from tests.cli.libsvm_data import write_libsvm

FEATURES = 200


@pytest.fixture(scope="module")
def noisy(tmp_path_factory):
    """(train, val) files: val log-loss is lowest after epoch 2 at ``--lr 0.03``."""
    folder = tmp_path_factory.mktemp("early_stop")
    rng = np.random.default_rng(1)
    w = np.zeros(FEATURES)
    w[:100] = rng.normal(0, 2, 100)

    def make(rows, noise):
        X = sp.random(rows, FEATURES, density=0.05, format="csr", random_state=rng,
                      dtype=np.float32)
        X.data[:] = 1.0
        y = (rng.random(rows) < 1 / (1 + np.exp(-(X @ w)))).astype(int)
        flip = rng.random(rows) < noise
        y[flip] = 1 - y[flip]
        return X, y

    Xt, yt = make(400, 0.25)
    Xv, yv = make(2000, 0.0)
    return (str(write_libsvm(folder / "train.svm", Xt, yt)),
            str(write_libsvm(folder / "val.svm", Xv, yv)))


def _train(train, val, out, *flags):
    return main(["train", train, "--features", str(FEATURES), "--val", val, "--out",
                 str(out), "--quiet", "--lr", "0.03", "--batch-size", "16", *flags])


def _history(out):
    with open(os.path.join(out, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f]


def _read_libsvm(path):
    """(labels, CSR) parsed here with plain Python, not with sparsenet's reader."""
    labels, rows, cols, vals = [], [], [], []
    with open(path) as f:
        for i, line in enumerate(f):
            label, *feats = line.split()
            labels.append(float(label))
            for tok in feats:
                j, v = tok.split(":")
                rows.append(i)
                cols.append(int(j))
                vals.append(float(v))
    X = sp.csr_matrix((vals, (rows, cols)), shape=(len(labels), FEATURES))
    return np.array(labels), X


def _numpy_logloss(out, val):
    """The validation log-loss of the model saved in ``out``, computed with NumPy."""
    config = json.loads(open(os.path.join(out, "model.json")).read())
    params = mx.nd.load(os.path.join(out, config["params_file"]))
    w = params["linear.weight"].asnumpy().astype(np.float64).reshape(-1)
    b = float(params["linear.bias"].asnumpy()[0])
    y, X = _read_libsvm(val)
    z = X @ w + b
    return float(np.mean(np.logaddexp(0.0, z) - y * z)), config


def test_stops_after_patience_and_keeps_the_best_epoch(noisy, tmp_path, capsys):
    train, val = noisy
    out = tmp_path / "m"
    assert _train(train, val, out, "--epochs", "10", "--patience", "2") == 0
    text = capsys.readouterr().out
    history = _history(out)
    losses = [r["val"]["logloss"] for r in history]
    # epochs 1..4 ran: 2 is the best, 3 and 4 are no better, then it stopped
    assert [r["epoch"] for r in history] == [1, 2, 3, 4]
    assert int(np.argmin(losses)) == 1 and losses[2] > losses[1] and losses[3] > losses[1]
    assert [r["kept"] for r in history] == [False, True, False, False]
    assert "stopping early" in text and "keeps epoch 2" in text
    got, config = _numpy_logloss(out, val)
    assert config["epoch"] == 2 and config["params_file"] == "epoch-0002.params"
    assert got == pytest.approx(losses[1], rel=1e-5, abs=1e-6)
    assert got < min(losses[2:]) - 1e-3  # the saved model is not a later epoch's
    assert sorted(os.listdir(out)) == ["epoch-0002.params", "epoch-0002.states",
                                       "metrics.jsonl", "model.json"]


def test_patience_one_stops_at_the_first_worse_epoch(noisy, tmp_path):
    train, val = noisy
    out = tmp_path / "m"
    assert _train(train, val, out, "--epochs", "10", "--patience", "1") == 0
    assert [r["epoch"] for r in _history(out)] == [1, 2, 3]
    assert json.loads((out / "model.json").read_text())["epoch"] == 2


def test_last_epoch_worse_without_stopping_still_keeps_the_best(noisy, tmp_path, capsys):
    train, val = noisy
    out = tmp_path / "m"
    assert _train(train, val, out, "--epochs", "3", "--patience", "5") == 0
    history = _history(out)
    assert [r["kept"] for r in history] == [False, True, False]
    assert "keeps epoch 2" in capsys.readouterr().out
    got, config = _numpy_logloss(out, val)
    assert config["epoch"] == 2
    assert got == pytest.approx(history[1]["val"]["logloss"], rel=1e-5, abs=1e-6)


def test_resume_continues_from_the_kept_epoch(noisy, tmp_path):
    """A resumed run starts from the kept (best) epoch: its history drops the later, worse
    epochs and re-runs them exactly as before."""
    train, val = noisy
    once = tmp_path / "once"
    assert _train(train, val, once, "--epochs", "3", "--patience", "5") == 0
    twice = tmp_path / "twice"
    assert _train(train, val, twice, "--epochs", "2") == 0
    assert _train(train, val, twice, "--epochs", "3", "--patience", "5", "--resume") == 0
    a, b = _history(once), _history(twice)
    assert [r["val"] for r in a] == [r["val"] for r in b]
    assert [r["kept"] for r in b] == [False, True, False]


def test_without_val_every_epoch_is_kept(noisy, tmp_path):
    train, _ = noisy
    out = tmp_path / "m"
    assert main(["train", train, "--features", str(FEATURES), "--out", str(out), "--quiet",
                 "--lr", "0.03", "--batch-size", "16", "--epochs", "3"]) == 0
    assert [r["kept"] for r in _history(out)] == [False, False, True]
    assert json.loads((out / "model.json").read_text())["epoch"] == 3


@pytest.mark.parametrize("bad", ["0", "-1", "x"])
def test_patience_must_be_a_positive_integer(noisy, tmp_path, bad, capsys):
    train, val = noisy
    with pytest.raises(SystemExit) as info:
        _train(train, val, tmp_path / "m", "--patience", bad)
    assert info.value.code == 2
    assert "--patience" in capsys.readouterr().err

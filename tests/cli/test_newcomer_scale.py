"""Unscaled features (values in the thousands) made the default optimizer oscillate with
no hint: ``sparsenet train`` warns with the remedy, and ``--scale`` divides each feature
by its largest absolute value (scikit-learn's ``MaxAbsScaler``), saved with the model
and applied by ``eval`` and ``predict``."""
import json
import shutil

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file
from sklearn.preprocessing import MaxAbsScaler

from tests.cli.newcomer_data import linear_labels, random_rows, run, write_rows

F = 16


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scale")
    rows = random_rows(800, F, seed=4, scale=3000.0)
    y = linear_labels(rows, F)
    return (write_rows(folder / "train.svm", y[:600], rows[:600]),
            write_rows(folder / "val.svm", y[600:], rows[600:]))


def _largest(path):
    return float(abs(load_svmlight_file(path, n_features=F)[0]).max())


def test_large_values_warn_with_the_remedy(big, tmp_path):
    train, _ = big
    status, _, err = run(["train", train, "--features", str(F), "--out", str(tmp_path / "m"),
                          "--quiet", "--epochs", "1"])
    assert status == 0, err
    largest = np.float32(_largest(train))  # the values as read: float32
    assert err.splitlines() == [
        f"sparsenet: warning: {train} holds feature values up to {largest:g} in magnitude; "
        f"features far outside [-1, 1] make the optimizer's steps too large and training "
        f"oscillate: pass --scale (divides each feature by its largest absolute value in the "
        f"training data, saved with the model and applied by eval and predict), or scale the "
        f"features"]


def test_small_values_do_not_warn(tmp_path):
    path = write_rows(tmp_path / "d.svm", [0, 1], [{0: 1.0}, {1: 99.0}])
    status, _, err = run(["train", path, "--features", "2", "--out", str(tmp_path / "m"),
                          "--quiet", "--epochs", "1"])
    assert (status, err) == (0, "")


@pytest.fixture(scope="module")
def scaled_model(big, tmp_path_factory):
    train, val = big
    out = tmp_path_factory.mktemp("scaled") / "m"
    status, stdout, err = run(["train", train, "--val", val, "--features", str(F), "--out",
                               str(out), "--quiet", "--epochs", "3", "--scale"])
    assert status == 0 and err == "", err
    return out, stdout


def test_scale_is_max_abs_per_feature(big, scaled_model):
    train, _ = big
    out, _ = scaled_model
    config = json.loads((out / "model.json").read_text())
    assert config["scale_file"] == "scale.npy"
    X = load_svmlight_file(train, n_features=F)[0].astype(np.float32)
    expected = MaxAbsScaler().fit(X).scale_
    np.testing.assert_allclose(np.load(out / "scale.npy"), expected, rtol=1e-7)


def test_scaled_training_learns(scaled_model):
    _, stdout = scaled_model
    aucs = [float(line.split("val auc=")[1].split()[0]) for line in stdout.splitlines()]
    assert len(aucs) == 3 and min(aucs) > 0.9, stdout


def test_predict_applies_the_scale(big, scaled_model, tmp_path):
    # the same parameters on a file scaled by scikit-learn, with no scale in model.json,
    # give the same predictions
    _, val = big
    out, _ = scaled_model
    X, y = load_svmlight_file(val, n_features=F)
    scale = np.load(out / "scale.npy")
    X = X.multiply(1.0 / scale).tocsr()
    rows = [dict(zip(X.indices[X.indptr[i]:X.indptr[i + 1]].tolist(),
                     X.data[X.indptr[i]:X.indptr[i + 1]].tolist())) for i in range(X.shape[0])]
    prescaled = write_rows(tmp_path / "pre.svm", y, rows)
    plain = tmp_path / "plain"
    shutil.copytree(out, plain)
    config = json.loads((plain / "model.json").read_text())
    (plain / "model.json").write_text(json.dumps(dict(config, scale_file=None)))
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    assert run(["predict", str(out), val, "--out", str(a)])[0] == 0
    assert run(["predict", str(plain), prescaled, "--out", str(b)])[0] == 0
    np.testing.assert_allclose(np.loadtxt(a), np.loadtxt(b), rtol=1e-5, atol=1e-6)
    status, stdout, _ = run(["eval", str(out), val])
    assert status == 0 and stdout.startswith(f"rows={y.size} auc=")


@pytest.mark.parametrize("bad, shown", [
    (np.ones(F + 1), f"shape ({F + 1},) and dtype float64"),
    (np.zeros(F), f"shape ({F},) and dtype float64"),
    (np.ones(F, np.int64), f"shape ({F},) and dtype int64")])
def test_a_damaged_scale_file_is_named(scaled_model, tmp_path, bad, shown, big):
    out, _ = scaled_model
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    np.save(broken / "scale.npy", bad)
    status, _, err = run(["eval", str(broken), big[1]])
    assert status == 1
    assert err == (f"sparsenet: error: {broken / 'scale.npy'}: expected {F} (features) finite "
                   f"positive float divisors, got an array of {shown}\n")


def test_a_pickled_scale_file_is_refused(scaled_model, tmp_path, big):
    out, _ = scaled_model
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    np.save(broken / "scale.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    status, _, err = run(["predict", str(broken), big[1]])
    assert status == 1
    assert err.startswith(f"sparsenet: error: {broken / 'scale.npy'}: not a NumPy .npy array "
                          f"of feature divisors (")

"""A multiclass file labelled 1..4 gets 4 classes (scikit-learn's rule: the distinct
labels, sorted, are the classes), saved as ``model.json``'s ``labels`` and applied back
by ``eval``; it used to get 5 classes and a dead column 0 in ``predict``."""
import json

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file
from sklearn.metrics import accuracy_score, log_loss
from sklearn.preprocessing import LabelEncoder

from tests.cli.newcomer_data import random_rows, run, write_rows

F = 12


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("labels")
    rows = random_rows(500, F, seed=2)
    rng = np.random.default_rng(0)
    labels = rng.choice([1, 2, 3, 4], size=500)
    for row, y in zip(rows, labels):  # learnable: the label's own column is large
        row[int(y)] = 3.0
    train = write_rows(folder / "train.svm", labels[:400], rows[:400])
    val = write_rows(folder / "val.svm", labels[400:], rows[400:])
    out = folder / "m"
    status, _, err = run(["train", train, "--model", "softmax", "--features", str(F),
                          "--out", str(out), "--quiet", "--epochs", "5", "--lr", "0.1"])
    assert status == 0, err
    return train, val, labels[400:], out, err


def test_classes_are_the_distinct_labels(data):
    train, _, _, out, err = data
    config = json.loads((out / "model.json").read_text())
    expected = LabelEncoder().fit(load_svmlight_file(train)[1]).classes_
    assert config["classes"] == len(expected) == 4
    assert config["labels"] == expected.tolist() == [1, 2, 3, 4]
    assert err.splitlines() == [
        f"sparsenet: note: 4 classes inferred from the labels of {train} (1, 2, 3, 4; class "
        f"i is the i-th smallest label); pass --classes K for labels 0 .. K-1"]


def test_predict_has_one_column_per_label_and_eval_maps_labels_back(data, tmp_path):
    _, val, y_val, out, _ = data
    preds = tmp_path / "p.txt"
    assert run(["predict", str(out), val, "--out", str(preds)])[0] == 0
    probs = np.loadtxt(preds)
    assert probs.shape == (y_val.size, 4)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    predicted_labels = np.array([1, 2, 3, 4])[probs.argmax(axis=1)]
    status, stdout, _ = run(["eval", str(out), val, "--json"])
    got = json.loads(stdout)
    assert got["accuracy"] == accuracy_score(y_val, predicted_labels) > 0.9
    normalised = probs / probs.sum(axis=1, keepdims=True)  # 9 printed digits
    assert got["logloss"] == pytest.approx(log_loss(y_val, normalised, labels=[1, 2, 3, 4]),
                                           rel=1e-4)


def test_an_unseen_label_is_named(data, tmp_path):
    _, _, _, out, _ = data
    other = write_rows(tmp_path / "o.svm", [1, 7], [{0: 1.0}, {1: 1.0}])
    status, _, err = run(["eval", str(out), other])
    assert status == 1
    assert err == (f"sparsenet: error: {other}:2: label 7 is not one of the 4 labels the "
                   f"model was trained on (1, 2, 3, 4)\n")


def test_explicit_classes_keep_integer_labels(tmp_path):
    path = write_rows(tmp_path / "d.svm", [0, 2, 1], [{0: 1.0}, {1: 1.0}, {2: 1.0}])
    out = tmp_path / "m"
    status, _, err = run(["train", path, "--model", "softmax", "--classes", "5",
                          "--features", "3", "--out", str(out), "--quiet", "--epochs", "1"])
    assert status == 0, err
    config = json.loads((out / "model.json").read_text())
    assert (config["classes"], config["labels"]) == (5, None)


@pytest.mark.parametrize("labels, shown", [([1, 2, 3], "[1, 2, 3]"), ([1, 3, 2, 4], "[1, 3, 2, 4]"),
                                           ([1, 2, 3, "4"], "[1, 2, 3, '4']")])
def test_damaged_labels_are_named(data, tmp_path, labels, shown):
    import shutil
    _, val, _, out, _ = data
    broken = tmp_path / "b"
    shutil.copytree(out, broken)
    config = json.loads((broken / "model.json").read_text())
    (broken / "model.json").write_text(json.dumps(dict(config, labels=labels)))
    status, _, err = run(["eval", str(broken), val])
    assert status == 1
    assert err == (f"sparsenet: error: {broken / 'model.json'}: key 'labels' must be a list of "
                   f"4 (classes) increasing finite numbers, got {shown}\n")


def test_a_model_dir_written_before_labels_existed_loads(data, tmp_path):
    import shutil
    _, val, _, out, _ = data
    old = tmp_path / "old"
    shutil.copytree(out, old)
    config = json.loads((old / "model.json").read_text())
    del config["labels"], config["scale_file"]
    (old / "model.json").write_text(json.dumps(config))
    status, _, err = run(["eval", str(old), val])  # labels 1..4 read as classes 0..3
    assert status == 1 and "expects labels integer classes in [0, 4), got 4" in err


def test_resume_keeps_the_labels(data, tmp_path):
    import shutil
    train, val, _, out, _ = data
    again = tmp_path / "again"
    shutil.copytree(out, again)
    status, stdout, err = run(["train", train, "--out", str(again), "--resume", "--epochs",
                               "6", "--quiet", "--val", val])
    assert (status, err) == (0, ""), err
    assert stdout.startswith("epoch 6/6  train accuracy=")
    assert json.loads((again / "model.json").read_text())["labels"] == [1, 2, 3, 4]

"""The figures ``sparsenet train``/``eval`` report: the logistic loss reported once, as
``logloss``, computed exactly (float32 probabilities rounded to 0/1 made it differ from
the loss: 2.79 vs 3.58 in the report), binary ``eval`` with accuracy, and one plot panel
per quantity. References: scikit-learn's metrics, SciPy's log-sigmoid."""
import json

import numpy as np
import pytest
from scipy.special import expit, log_expit
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score

from sparsenet.cli import plot_curves
from sparsenet.cli.metrics_report import task_metrics
from tests.cli.newcomer_data import linear_labels, random_rows, run, write_rows

F = 20


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("metrics")
    rows = random_rows(600, F, seed=5)
    y = linear_labels(rows, F)
    return (write_rows(folder / "train.svm", y[:400], rows[:400]),
            write_rows(folder / "val.svm", y[400:], rows[400:]), y[400:])


def test_logloss_of_large_scores_is_exact():
    # float32 sigmoid(40) is exactly 1.0: the old clipped log-loss was -log(1e-15) = 34.5;
    # the logistic loss of score 40 for label 0 is log(1 + e^40) = 40.000000000000004
    labels = np.array([0, 1, 1])
    scores = np.array([[40.0], [-25.0], [3.0]])
    expected = -np.mean([log_expit(-40.0), log_expit(-25.0), log_expit(3.0)])
    got = task_metrics("binary", labels, scores)
    assert got["logloss"] == pytest.approx(expected, rel=1e-12)
    assert got["accuracy"] == accuracy_score(labels, scores[:, 0] > 0)
    assert got["auc"] == roc_auc_score(labels, scores[:, 0])


def test_multiclass_logloss_of_large_scores_is_exact():
    scores = np.array([[300.0, 0.0, -10.0], [1.0, 2.0, 3.0]])
    labels = np.array([1, 2])
    # log-softmax by hand: row 0 picks 0 - 300 (the other terms vanish in float64)
    z = np.log(np.exp(1.0) + np.exp(2.0) + np.exp(3.0))
    expected = np.mean([300.0, z - 3.0])
    assert task_metrics("multiclass", labels, scores)["logloss"] == pytest.approx(expected)


def _history(out):
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def test_logistic_loss_is_reported_once(files, tmp_path):
    train, val, _ = files
    out = tmp_path / "m"
    status, stdout, err = run(["train", train, "--val", val, "--features", str(F), "--out",
                               str(out), "--quiet", "--epochs", "2"])
    assert status == 0, err
    for record in _history(out):
        assert sorted(record["train"]) == sorted(record["val"]) == ["accuracy", "auc",
                                                                    "logloss"]
    assert " loss=" not in stdout


def test_another_objective_is_named_beside_the_metrics(files, tmp_path):
    train, _, _ = files
    out = tmp_path / "m"
    status, stdout, err = run(["train", train, "--features", str(F), "--out", str(out),
                               "--quiet", "--epochs", "1", "--loss", "hinge"])
    assert status == 0, err
    assert sorted(_history(out)[0]["train"]) == ["accuracy", "auc", "hinge_loss", "logloss"]
    assert stdout.startswith("epoch 1/1  train hinge_loss=")


def test_binary_eval_reports_accuracy_matching_scikit_learn(files, tmp_path):
    train, val, y_val = files
    out = tmp_path / "m"
    assert run(["train", train, "--features", str(F), "--out", str(out), "--quiet"])[0] == 0
    status, stdout, _ = run(["eval", str(out), val, "--json"])
    assert status == 0
    got = json.loads(stdout)
    preds = tmp_path / "p.txt"
    assert run(["predict", str(out), val, "--out", str(preds)])[0] == 0
    p1 = np.loadtxt(preds)[:, 1]
    assert sorted(got) == ["accuracy", "auc", "logloss", "rows"]
    assert got["accuracy"] == accuracy_score(y_val, p1 > 0.5)
    assert got["logloss"] == pytest.approx(log_loss(y_val, p1), rel=1e-5)
    assert got["auc"] == pytest.approx(roc_auc_score(y_val, p1), abs=1e-6)
    status, stdout, _ = run(["eval", str(out), val])
    assert stdout.startswith(f"rows={y_val.size} auc=") and " accuracy=" in stdout


def test_val_logloss_is_the_logistic_loss_of_the_model(files, tmp_path):
    # the val figure after the last epoch is the model's logistic loss on val, as
    # computed from its predictions with SciPy (expit of the logit)
    train, val, y_val = files
    out = tmp_path / "m"
    assert run(["train", train, "--val", val, "--features", str(F), "--out", str(out),
                "--quiet", "--epochs", "2"])[0] == 0
    preds = tmp_path / "p.txt"
    assert run(["predict", str(out), val, "--out", str(preds)])[0] == 0
    p1 = np.loadtxt(preds)[:, 1]
    logit = np.log(p1) - np.log1p(-p1)
    ref = -np.mean(np.where(y_val == 1, np.log(expit(logit)), np.log(expit(-logit))))
    assert _history(out)[-1]["val"]["logloss"] == pytest.approx(ref, rel=1e-5)


def test_plot_draws_one_panel_per_quantity(files, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    train, val, _ = files
    titles = []
    real = plot_curves.pyplot

    def spying_pyplot(*args):
        plt = real(*args)
        original = plt.subplots

        def subplots(*a, **k):
            fig, axes = original(*a, **k)
            titles.append(axes)
            return fig, axes
        monkeypatch.setattr(plt, "subplots", subplots)
        return plt
    monkeypatch.setattr(plot_curves, "pyplot", spying_pyplot)
    out = tmp_path / "m"
    assert run(["train", train, "--val", val, "--features", str(F), "--out", str(out),
                "--quiet", "--epochs", "2", "--plot"])[0] == 0
    panels = sorted(ax.get_title() for ax in titles[0][0])
    assert panels == ["accuracy", "auc", "logloss"]

"""A 1-based LIBSVM file (the format's own convention) meets ``sparsenet train``: the
out-of-range error names ``--index-base 1`` and the detected base, a larger
``--features`` warns of the dead column 0, and ``--features`` is inferred when not
given (scikit-learn's ``load_svmlight_file`` gives the expected width)."""
import json

import pytest
from sklearn.datasets import load_svmlight_file

from tests.cli.newcomer_data import random_rows, run, write_rows

F = 30  # 1-based indices 1..30


@pytest.fixture()
def one_based(tmp_path):
    rows = random_rows(60, F, seed=3)
    labels = [i % 2 for i in range(60)]
    return write_rows(tmp_path / "one.svm", labels, rows, base=1), \
        write_rows(tmp_path / "zero.svm", labels, rows, base=0)


def test_out_of_range_names_the_option_and_the_detected_base(one_based, tmp_path):
    path, _ = one_based
    status, _, err = run(["train", path, "--features", str(F), "--out", str(tmp_path / "m"),
                          "--quiet"])
    assert status == 1
    line, = err.splitlines()
    assert line.startswith(f"sparsenet: error: {path}:1:")
    assert f"feature index {F} out of range [0, {F})" in line
    assert line.endswith(f"; {path} looks 1-based (LibSVM's own convention): no index 0 in "
                         f"it, indices 1..{F} (detected, as 'sparsenet inspect' reports); "
                         f"pass --index-base 1 to read it so")
    assert not (tmp_path / "m" / "model.json").exists()


def test_too_small_features_for_a_0_based_file_names_the_width(one_based, tmp_path):
    _, path = one_based
    status, _, err = run(["train", path, "--features", str(F - 5), "--out",
                          str(tmp_path / "m"), "--quiet"])
    assert status == 1
    assert err.rstrip().endswith(f"the largest index in {path} is {F - 1} (0-based), so it "
                                 f"needs --features {F} or more (leave --features out to "
                                 f"infer it)")


def test_larger_features_warns_of_the_dead_column_0(one_based, tmp_path):
    path, _ = one_based
    status, _, err = run(["train", path, "--features", str(F + 1), "--out",
                          str(tmp_path / "m"), "--quiet", "--epochs", "1"])
    assert status == 0, err
    assert err.splitlines() == [
        f"sparsenet: warning: {path} has no feature index 0 (its smallest index is 1): it "
        f"looks 1-based, LibSVM's own convention, but is read 0-based (--index-base 0, the "
        f"default), so column 0 is never trained; pass --index-base 1 if its indices count "
        f"from 1"]


def test_declared_base_trains_without_a_warning(one_based, tmp_path):
    path, _ = one_based
    status, _, err = run(["train", path, "--features", str(F), "--index-base", "1",
                          "--out", str(tmp_path / "m"), "--quiet", "--epochs", "1"])
    assert (status, err) == (0, "")


@pytest.mark.parametrize("which, base", [(0, 1), (1, 0)])
def test_features_inferred_as_scikit_learn_does(one_based, tmp_path, which, base):
    path = one_based[which]
    _, n_features = load_svmlight_file(path, zero_based=base == 0).__getitem__(0).shape
    out = tmp_path / "m"
    status, _, err = run(["train", path, "--index-base", str(base), "--out", str(out),
                          "--quiet", "--epochs", "1"])
    assert status == 0, err
    assert json.loads((out / "model.json").read_text())["features"] == n_features == F
    largest = F - 1 + base
    assert err.splitlines() == [
        f"sparsenet: note: --features {F} inferred from {path} (largest index {largest}, "
        f"{base}-based); pass --features N to set it"]


def test_inferred_features_of_a_1_based_file_read_0_based_warns(one_based, tmp_path):
    path, _ = one_based
    out = tmp_path / "m"
    status, _, err = run(["train", path, "--out", str(out), "--quiet", "--epochs", "1"])
    assert status == 0, err
    assert json.loads((out / "model.json").read_text())["features"] == F + 1
    warning, note = err.splitlines()
    assert warning.startswith(f"sparsenet: warning: {path} has no feature index 0")
    assert note.startswith(f"sparsenet: note: --features {F + 1} inferred")

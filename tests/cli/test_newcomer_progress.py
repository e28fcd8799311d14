"""The progress bar knows its total (so it shows a percentage and an ETA): from the pass
that inferred sizes when there was one, else from the first epoch's row count."""
import pytest

from sparsenet.cli import fit_loop
from tests.cli.newcomer_data import random_rows, run, write_rows

ROWS = 300


@pytest.fixture()
def totals(monkeypatch):
    seen = []
    real = fit_loop.tqdm.tqdm

    def recording(*args, **kwargs):
        seen.append(kwargs.get("total"))
        return real(*args, **kwargs)
    monkeypatch.setattr(fit_loop.tqdm, "tqdm", recording)
    return seen


@pytest.fixture()
def data(tmp_path):
    return write_rows(tmp_path / "d.svm", [i % 2 for i in range(ROWS)], random_rows(ROWS, 8))


def test_total_from_the_second_epoch_on(totals, data, tmp_path):
    status, _, err = run(["train", data, "--features", "8", "--out", str(tmp_path / "m"),
                          "--epochs", "3", "--quiet"])
    assert status == 0, err
    assert totals == [None, ROWS, ROWS]


def test_total_from_the_start_when_the_data_was_scanned(totals, data, tmp_path):
    status, _, err = run(["train", data, "--out", str(tmp_path / "m"), "--epochs", "2",
                          "--quiet"])
    assert status == 0, err
    assert totals == [ROWS, ROWS]

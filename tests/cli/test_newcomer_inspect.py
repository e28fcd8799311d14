"""``sparsenet inspect`` on a model directory prints a readable summary (it printed a
kilobyte of escaped binary, twice: the checkpoint read as LibSVM text)."""
from tests.cli.newcomer_data import random_rows, run, write_rows


def test_model_dir_summary(tmp_path):
    data = write_rows(tmp_path / "d.svm", [1, 2, 3, 1, 2, 3] * 10, random_rows(60, 6))
    out = tmp_path / "m"
    status, _, err = run(["train", data, "--model", "softmax", "--features", "6", "--out",
                          str(out), "--quiet", "--epochs", "2", "--lr", "0.05", "--batch-size", "256"])
    assert status == 0, err
    status, stdout, err = run(["inspect", str(out)])
    assert (status, err) == (0, "")
    lines = stdout.splitlines()
    assert lines[:5] == [f"model directory: {out}", "model: softmax (multiclass)",
                         "features: 6 (0-based indices)", "classes: 3 (labels 1, 2, 3)",
                         "loss: softmax"]
    assert lines[5] == ("optimizer: adam (learning rate 0.05, wd 0, lazy_update true), batch "
                        "size 256, seed 0")
    assert lines[6:8] == ["scaled features: no", "epochs trained: 2"]
    assert lines[8].startswith("last epoch (2): train accuracy=")
    assert lines[9].startswith("files: epoch-0002.params (") and "model.json (" in lines[9]
    assert len(lines) == 10 and "\\x" not in stdout


def test_a_folder_of_data_is_still_scanned(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    write_rows(folder / "a.svm", [0, 1], [{0: 1.0}, {2: 1.0}])
    status, stdout, _ = run(["inspect", str(folder)])
    assert status == 0 and "rows: 2" in stdout

"""``sparsenet inspect``: the report against statistics computed independently with NumPy
from the generated rows, compressed files, chunk boundaries, malformed lines and usage errors."""
import gzip
import subprocess
import sys

import numpy as np
import pytest

from sparsenet.cli import inspect_cmd
from sparsenet.cli.main import main


def _rows(rng, n, width, base, labels):
    """Random rows as (label, sorted distinct indices, values), indices from ``base``."""
    out = []
    for i in range(n):
        k = int(rng.integers(0, 6))
        idx = np.sort(rng.choice(width, size=k, replace=False)) + base
        out.append((labels[i], idx, rng.standard_normal(k).round(3)))
    return out


def _text(rows, qid=False):
    lines = []
    for label, idx, val in rows:
        q = " qid:3" if qid else ""
        feats = "".join(f" {i}:{v}" for i, v in zip(idx.tolist(), val.tolist()))
        lines.append(f"{label:g}{q}{feats}\n")
    return "".join(lines)


def _report(capsys, argv):
    code = main(["inspect"] + argv)
    out, err = capsys.readouterr()
    return code, dict(line.split(": ", 1) for line in out.splitlines()), err


@pytest.fixture
def binary(tmp_path):
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 200)
    rows = _rows(rng, 200, 50, 1, labels)
    path = tmp_path / "b.svm"
    path.write_text(_text(rows))
    return path, rows


def _expected(rows):
    idx = np.concatenate([r[1] for r in rows])
    nnz = np.array([len(r[1]) for r in rows])
    labels, counts = np.unique([r[0] for r in rows], return_counts=True)
    return idx, nnz, labels, counts


def test_report_matches_numpy(capsys, binary):
    path, rows = binary
    code, rep, err = _report(capsys, [str(path)])
    idx, nnz, labels, counts = _expected(rows)
    assert code == 0 and err == ""
    assert rep["rows"] == "200"
    assert rep["features seen (distinct indices)"] == str(np.unique(idx).size)
    assert rep["min index"] == str(idx.min()) and rep["max index"] == str(idx.max())
    med = np.median(nnz)
    med = str(int(med)) if med.is_integer() else f"{med:g}"
    assert rep["stored values per row"] == (f"min {nnz.min()}, median {med}, max {nnz.max()} "
                                            f"(total {nnz.sum()})")
    listed = ", ".join(f"{lab}: {c}" for lab, c in zip(labels.tolist(), counts.tolist()))
    assert rep["labels"] == f"{labels.size} distinct: {listed}"
    assert rep["index base"].startswith("detected 1-based: no index 0 seen")
    assert rep["qid"] == "absent" and rep["malformed lines"] == "none"


def test_declared_one_based_reports_file_indices(capsys, binary):
    path, rows = binary
    idx = _expected(rows)[0]
    code, rep, _ = _report(capsys, [str(path), "--index-base", "1"])
    assert code == 0 and rep["index base"] == "1-based (declared)"
    assert rep["max index"] == str(idx.max()) and rep["min index"] == str(idx.min())


def test_zero_based_detected(capsys, tmp_path):
    path = tmp_path / "z.svm"
    path.write_text("1 0:1 3:1\n0 2:1\n")
    _, rep, _ = _report(capsys, [str(path)])
    assert rep["index base"] == "detected 0-based: index 0 seen"


def test_index_zero_with_declared_one_based_is_malformed(capsys, tmp_path):
    path = tmp_path / "z.svm"
    path.write_text("1 1:1\n0 0:1\n")
    code, rep, err = _report(capsys, [str(path), "--index-base", "1"])
    assert code == 1 and rep["rows"] == "1"
    assert err.startswith(f"sparsenet: error: {path}:2:3: ") and err.count("\n") == 1


@pytest.mark.parametrize("chunk_size", [16, 64, 1 << 20])
def test_chunks_give_the_same_statistics(binary, chunk_size):
    path, rows = binary
    stats, err = inspect_cmd.scan(path, chunk_size=chunk_size)
    idx, nnz, _, _ = _expected(rows)
    assert err is None and stats.rows == 200 and stats.nnz == nnz.sum()
    np.testing.assert_array_equal(stats.seen, np.unique(idx))
    assert stats.nnz_median() == np.median(nnz)


@pytest.mark.parametrize("limit", [0, 20, 1 << 27])
def test_bitmap_and_sorted_index_sets_agree(binary, monkeypatch, limit):
    """Indices are marked in a bitmap below BITMAP_LIMIT, else kept as a sorted array."""
    monkeypatch.setattr(inspect_cmd, "BITMAP_LIMIT", limit)
    path, rows = binary
    stats, _ = inspect_cmd.scan(path, chunk_size=64)
    idx = _expected(rows)[0]
    np.testing.assert_array_equal(stats.seen, np.unique(idx))
    assert (stats.features_seen, stats.min_index, stats.max_index) == \
        (np.unique(idx).size, idx.min(), idx.max())


@pytest.mark.parametrize("chunk_size", [16, 1 << 20])
def test_malformed_line_stops_counting(capsys, tmp_path, chunk_size, monkeypatch):
    text = "1 1:1\n\n# comment\n0 2:1 3:1\n1 4:2\n1 5:x\n0 6:1\n"
    path = tmp_path / "m.svm"
    path.write_text(text)
    stats, err = inspect_cmd.scan(path, chunk_size=chunk_size)
    assert (stats.rows, stats.nnz, err.line, err.column) == (3, 4, 6, 3)
    code, rep, out_err = _report(capsys, [str(path)])
    assert code == 1
    assert rep["rows"] == "3"
    assert rep["first malformed line"] == (f"{path}:6:3: invalid feature value 'x' in token "
                                           "'5:x' (counting stopped there)")
    assert out_err == f"sparsenet: error: {path}:6:3: invalid feature value 'x' in token '5:x'\n"


def test_compressed_files_give_the_same_report(capsys, binary, tmp_path):
    path, _ = binary
    data = path.read_bytes()
    gz = tmp_path / "b.svm.gz"
    with gzip.open(gz, "wb") as f:
        f.write(data)
    zstandard = pytest.importorskip("zstandard")
    zst = tmp_path / "b.svm.zst"
    zst.write_bytes(zstandard.ZstdCompressor().compress(data))
    _, plain, _ = _report(capsys, [str(path)])
    for other in (gz, zst):
        _, rep, _ = _report(capsys, [str(other)])
        assert {k: v for k, v in rep.items() if k != "file"} == \
            {k: v for k, v in plain.items() if k != "file"}


def test_many_labels_summarised_and_qid(capsys, tmp_path):
    rng = np.random.default_rng(1)
    labels = rng.standard_normal(100).round(4)
    path = tmp_path / "r.svm"
    path.write_text(_text(_rows(rng, 100, 20, 0, labels), qid=True))
    _, rep, _ = _report(capsys, [str(path)])
    lab = labels.astype(np.float32).astype(np.float64)  # the reader's float32 labels
    assert rep["labels"] == (f"more than 20 distinct: min {lab.min():.6g}, mean {lab.mean():.6g}, "
                             f"std {lab.std():.6g}, max {lab.max():.6g}")
    assert rep["qid"] == "present"


def test_directory_and_empty_file(capsys, tmp_path):
    (tmp_path / "a.svm").write_text("1 0:1\n")
    (tmp_path / "b.svm").write_text("0 1:1 2:1\n")
    _, rep, _ = _report(capsys, [str(tmp_path)])
    assert rep["rows"] == "2" and rep["features seen (distinct indices)"] == "3"
    empty = tmp_path / "e" / "e.svm"
    empty.parent.mkdir()
    empty.write_text("")
    code, rep, _ = _report(capsys, [str(empty)])
    assert code == 0 and rep["rows"] == "0" and rep["labels"] == "none"
    assert rep["index base"] == "unknown: no feature index seen"


def test_plot_writes_png(capsys, binary, tmp_path):
    pytest.importorskip("matplotlib")
    path, _ = binary
    png = tmp_path / "h.png"
    assert main(["inspect", str(path), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib(capsys, binary, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    path, _ = binary
    assert main(["inspect", str(path), "--plot", str(tmp_path / "h.png")]) == 1
    err = capsys.readouterr().err
    assert err == "sparsenet: error: --plot needs matplotlib: pip install matplotlib\n"


def test_missing_file(capsys, tmp_path):
    assert main(["inspect", str(tmp_path / "nope.svm")]) == 1
    err = capsys.readouterr().err
    # the format of every command (train's, eval's, ...): sparsenet.cli.paths
    assert err == f"sparsenet: error: {tmp_path / 'nope.svm'}: no such file or directory\n"


def test_bad_flag_is_a_usage_error(capsys, binary):
    with pytest.raises(SystemExit) as exc:
        main(["inspect", str(binary[0]), "--index-base", "2"])
    assert exc.value.code == 2
    assert "argument --index-base: invalid choice: '2'" in capsys.readouterr().err


def test_console_error_has_no_traceback(tmp_path):
    path = tmp_path / "m.svm"
    path.write_text("1 1:1\nabc 2:1\n")
    proc = subprocess.run([sys.executable, "-m", "sparsenet.cli", "inspect", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr == (f"sparsenet: error: {path}:2:1: invalid label 'abc': expected a "
                           "number such as 1, -1 or 0.5\n")


def test_multilabel_lines_report_their_class_ids(capsys, tmp_path):
    path = tmp_path / "ml.svm"
    path.write_text("1,3 0:1 2:2\n2 1:1\n3 4:1\n")
    code, rep, _ = _report(capsys, [str(path), "--multilabel"])
    assert code == 0
    assert rep["rows"] == "3" and rep["malformed lines"] == "none"
    # class ids 1, 3 / 2 / 3, counted by hand
    assert rep["class ids (multi-label)"] == "3 distinct: 1: 1, 2: 1, 3: 2"


def test_weighted_lines_report_their_weights(capsys, tmp_path):
    path = tmp_path / "w.svm"
    path.write_text("1:0.5 0:1 2:2\n0:2 1:1\n1:0.25 3:1\n")
    code, rep, _ = _report(capsys, [str(path), "--weights"])
    assert code == 0
    assert rep["labels"] == "2 distinct: 0: 1, 1: 2"
    assert rep["instance weights"] == "min 0.25, mean 0.916667, max 2"  # (0.5 + 2 + 0.25) / 3
    # without --weights the first line is malformed, and the error says what to declare
    code, rep, err = _report(capsys, [str(path)])
    assert code == 1 and "w.svm:1:1: invalid label '1:0.5'" in err

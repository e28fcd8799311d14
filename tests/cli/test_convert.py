"""``sparsenet convert``: round trips bit for bit, checked with independent readers
(scikit-learn's ``load_svmlight_file``, ``scipy.sparse.load_npz``, ``numpy.loadtxt``), and the
one-line errors (bad suffix, dense too large, missing file, malformed line, bad flags)."""
import gzip

import numpy as np
import pytest
import scipy.sparse
from sklearn.datasets import load_svmlight_file

from sparsenet.cli import convert
from sparsenet.cli.main import main

N_FEATURES = 40


@pytest.fixture
def libsvm_file(tmp_path):
    """100 rows of random float32 values (shortest float32 text), 0-based, labels in {-1, 0, 2}."""
    rng = np.random.default_rng(7)
    lines = []
    for _ in range(100):
        k = int(rng.integers(0, 8))
        idx = np.sort(rng.choice(N_FEATURES - 1, size=k, replace=False))
        val = rng.standard_normal(k).astype(np.float32) * np.float32(1e3)
        label = int(rng.choice([-1, 0, 2]))
        lines.append(f"{label}" + "".join(f" {i}:{v}" for i, v in zip(idx, val)) + "\n")
    path = tmp_path / "in.svm"
    path.write_text("".join(lines))
    return path


def _sklearn(path, zero_based=True, n_features=N_FEATURES):
    x, y = load_svmlight_file(str(path), n_features=n_features, dtype=np.float32,
                              zero_based=zero_based)
    return x.tocsr(), y.astype(np.float32)


def _same(a, b):
    a, b = scipy.sparse.csr_matrix(a), scipy.sparse.csr_matrix(b)
    a.sort_indices()
    b.sort_indices()
    assert a.shape == b.shape and a.dtype == b.dtype == np.float32
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert a.data.tobytes() == b.data.tobytes()


def _convert(capsys, *argv):
    code = main(["convert", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_libsvm_to_npz_matches_sklearn(capsys, libsvm_file, tmp_path):
    out = tmp_path / "o.npz"
    code, text, err = _convert(capsys, libsvm_file, out, "--features", N_FEATURES)
    assert code == 0 and err == ""
    assert text.startswith(f"{libsvm_file} (libsvm) -> {out} (npz): 100 rows, 40 features")
    x, y = _sklearn(libsvm_file)
    _same(scipy.sparse.load_npz(out), x)
    with np.load(out, allow_pickle=False) as f:
        assert f["label"].tobytes() == y.tobytes()


def test_npz_libsvm_npz_round_trip(capsys, libsvm_file, tmp_path):
    a, b, c = tmp_path / "a.npz", tmp_path / "b.svm.gz", tmp_path / "c.npz"
    for src, dst in ((libsvm_file, a), (a, b), (b, c)):
        assert _convert(capsys, src, dst, "--features", N_FEATURES)[0] == 0
    _same(scipy.sparse.load_npz(a), scipy.sparse.load_npz(c))
    x, y = _sklearn(b)  # sklearn reads .gz too
    _same(x, scipy.sparse.load_npz(a))
    with gzip.open(b, "rt") as f:
        assert float(f.readline().split()[0]) in (-1, 0, 2)


def test_libsvm_csv_round_trip(capsys, libsvm_file, tmp_path):
    csv, back = tmp_path / "d.csv", tmp_path / "back.svm"
    assert _convert(capsys, libsvm_file, csv, "--features", N_FEATURES)[0] == 0
    table = np.loadtxt(csv, delimiter=",", dtype=np.float64)
    x, y = _sklearn(libsvm_file)
    assert table.shape == (100, N_FEATURES + 1)
    assert table[:, 0].astype(np.float32).tobytes() == y.tobytes()
    assert table[:, 1:].astype(np.float32).tobytes() == x.toarray().tobytes()
    assert _convert(capsys, csv, back)[0] == 0
    _same(_sklearn(back)[0], x)
    assert _sklearn(back)[1].tobytes() == y.tobytes()


def test_one_based_side(capsys, tmp_path):
    src = tmp_path / "one.libsvm"
    src.write_text("1 1:0.25 3:-2\n0 2:7\n")
    out = tmp_path / "one.npz"
    assert _convert(capsys, src, out, "--index-base", "1")[0] == 0
    x, _ = _sklearn(src, zero_based=False, n_features=3)
    _same(scipy.sparse.load_npz(out), x)
    back = tmp_path / "back.txt"
    assert _convert(capsys, out, back, "--index-base", "1")[0] == 0
    assert back.read_text() == "1.0 1:0.25 3:-2.0\n0.0 2:7.0\n"  # save_libsvm's text


def test_npz_without_labels(capsys, tmp_path):
    m = scipy.sparse.csc_matrix(np.array([[0, 1.5], [2, 0]], np.float32))
    scipy.sparse.save_npz(tmp_path / "m.npz", m)
    code, _, err = _convert(capsys, tmp_path / "m.npz", tmp_path / "m.svm")
    assert code == 0
    assert err == f"sparsenet: note: {tmp_path / 'm.npz'} has no 'label' array; every label is 0\n"
    assert (tmp_path / "m.svm").read_text() == "0.0 1:1.5\n0.0 0:2.0\n"


def test_features_widen_and_too_small(capsys, tmp_path):
    src = tmp_path / "w.svm"
    src.write_text("1 0:1 4:2\n")
    assert _convert(capsys, src, tmp_path / "w.csv", "--features", "7")[0] == 0
    assert (tmp_path / "w.csv").read_text() == "1,1,0,0,0,2,0,0\n"
    code, _, err = _convert(capsys, tmp_path / "w.csv", tmp_path / "x.npz", "--features", "3")
    assert code == 1
    assert err == (f"sparsenet: error: {tmp_path / 'w.csv'}: --features 3 is smaller than the "
                   "data's 7 columns\n")


@pytest.mark.parametrize("name", ["x.parquet", "x.gz", "x.csv.gz"])
def test_unknown_suffix(capsys, libsvm_file, tmp_path, name):
    code, _, err = _convert(capsys, libsvm_file, tmp_path / name)
    assert code == 1 and err.count("\n") == 1
    assert err.startswith(f"sparsenet: error: {tmp_path / name}: unknown file format: expected "
                          "a name ending in .svm, .libsvm, .txt")
    assert not (tmp_path / name).exists()


def test_dense_too_large(capsys, libsvm_file, tmp_path):
    code, _, err = _convert(capsys, libsvm_file, tmp_path / "d.csv", "--features", N_FEATURES,
                            "--max-dense-bytes", "1000")
    assert code == 1
    assert err == (f"sparsenet: error: {tmp_path / 'd.csv'}: the dense table would take 32,800 "
                   "bytes (100 rows x 41 columns x 8), more than --max-dense-bytes 1,000; raise "
                   "--max-dense-bytes or convert to .npz or LibSVM instead\n")
    assert not (tmp_path / "d.csv").exists()
    big = tmp_path / "big.csv"
    big.write_text("1,2,3\n" * 200)
    code, _, err = _convert(capsys, big, tmp_path / "b.npz", "--max-dense-bytes", "100")
    assert code == 1 and "the CSV file holds 1,200 bytes, more than --max-dense-bytes 100" in err


def test_missing_and_malformed_inputs(capsys, tmp_path):
    code, _, err = _convert(capsys, tmp_path / "no.svm", tmp_path / "o.npz")
    assert code == 1 and err.startswith("sparsenet: error: ") and "no such file" in err
    bad = tmp_path / "bad.svm"
    bad.write_text("1 0:1\n0 3:1 3:2\n")
    code, _, err = _convert(capsys, bad, tmp_path / "o.npz")
    assert code == 1
    assert err.startswith(f"sparsenet: error: {bad}:2:7: duplicate feature index 3")
    assert not (tmp_path / "o.npz").exists()
    notnpz = tmp_path / "n.npz"
    np.savez(notnpz, a=np.arange(3))
    code, _, err = _convert(capsys, notnpz, tmp_path / "o.svm")
    assert code == 1 and err.startswith(f"sparsenet: error: {notnpz}: not a scipy.sparse .npz file")
    badcsv = tmp_path / "b.csv"
    badcsv.write_text("1,2\n1,x\n")
    code, _, err = _convert(capsys, badcsv, tmp_path / "o.svm")
    assert code == 1 and err.startswith(f"sparsenet: error: {badcsv}: not a numeric CSV table")


@pytest.mark.parametrize("flag", [["--features", "0"], ["--index-base", "2"],
                                  ["--max-dense-bytes", "x"], ["--bogus"]])
def test_bad_flags(capsys, libsvm_file, tmp_path, flag):
    with pytest.raises(SystemExit) as exc:
        main(["convert", str(libsvm_file), str(tmp_path / "o.npz"), *flag])
    assert exc.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("usage: sparsenet") and err[-1].startswith("sparsenet")
    assert ": error: " in err[-1]


def test_format_of():
    assert [convert.format_of(n) for n in ("a.SVM", "b.libsvm.xz", "c.txt.bz2", "d.npz")] == \
        ["libsvm", "libsvm", "libsvm", "npz"]

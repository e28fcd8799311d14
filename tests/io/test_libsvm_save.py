"""save_libsvm: exact text, exact round trips, options, atomic replacement."""
import os

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

import sparsenet as mx
from sparsenet.io import load_libsvm, save_libsvm


def test_text_is_shortest_and_exact(tmp_path):
    x = mx.nd.sparse.csr_matrix(([0.1, 2.5, -3.0, 1e-8, 3.4e38], [1, 4, 0, 2, 3], [0, 2, 3, 5]),
                                shape=(3, 5))
    p = str(tmp_path / "x.svm")
    save_libsvm(p, x, mx.nd.array([1, 0, -1]))
    assert open(p).read() == "1.0 1:0.1 4:2.5\n0.0 0:-3.0\n-1.0 2:1e-08 3:3.4e+38\n"


def test_seed_style_labels_and_empty_rows(tmp_path):
    x = sp.csr_matrix(np.array([[0, 0, 0], [0, 1.5, 0]], dtype=np.float32))
    p = str(tmp_path / "e.svm")
    save_libsvm(p, x, np.array([True, False]), zero_based=False, comment="made by a test\nline 2")
    assert open(p).read() == "# made by a test\n# line 2\n1\n0 2:1.5\n"
    data, label = load_libsvm(p, zero_based=False, num_features=3)
    assert data.asnumpy().tolist() == [[0, 0, 0], [0, 1.5, 0]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_round_trip_bit_exact(tmp_path, dtype):
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2 ** 63, 3000, dtype=np.int64)
    vals = (bits.astype(np.uint32).view(np.float32) if dtype == np.float32
            else bits.view(np.float64)).astype(dtype)
    vals = vals[np.isfinite(vals)][:2000]
    n = vals.size
    X = sp.csr_matrix((vals, (np.arange(n) // 10, (np.arange(n) % 10) * 7)), shape=(n // 10, 70))
    y = rng.standard_normal(n // 10).astype(dtype)
    p = str(tmp_path / "r.svm.gz")
    save_libsvm(p, X, y)
    data, label = load_libsvm(p, num_features=70, dtype=np.dtype(dtype).name)
    assert data.data.asnumpy().tobytes() == X.data.tobytes()
    assert data.indices.asnumpy().tolist() == X.indices.tolist()
    assert label.asnumpy().tobytes() == y.tobytes()


def test_sklearn_reads_our_files(tmp_path):
    X = sp.random(40, 9, density=0.3, format="csr", random_state=3, dtype=np.float64)
    y = np.arange(40) % 3
    q = np.repeat(np.arange(8), 5)
    p = str(tmp_path / "s.svm.bz2")
    save_libsvm(p, X, y, query_id=q)
    Xs, ys, qs = load_svmlight_file(p, zero_based=True, n_features=9, query_id=True)
    assert (Xs != X).nnz == 0 and ys.tolist() == y.tolist() and qs.tolist() == q.tolist()


def test_multilabel_round_trip(tmp_path):
    lab = mx.nd.sparse.csr_matrix(np.array([[0, 1, 0, 1], [0, 0, 0, 0], [1, 0, 0, 0]],
                                           dtype=np.float32))
    x = mx.nd.sparse.csr_matrix(np.eye(3, dtype=np.float32))
    p = str(tmp_path / "m.svm")
    save_libsvm(p, x, lab, multilabel=True)
    assert open(p).read() == "1,3 0:1.0\n 1:1.0\n0 2:1.0\n"
    _, back = load_libsvm(p, multilabel=True, num_labels=4)
    assert back.asnumpy().tolist() == lab.asnumpy().tolist()
    save_libsvm(p, x, [(3, 1), (), (0,)], multilabel=True)
    assert open(p).read().split()[0] == "1,3"


def test_dense_and_torch_inputs(tmp_path):
    import torch
    p = str(tmp_path / "d.svm")
    save_libsvm(p, torch.tensor([[0.0, 2.0], [3.0, 0.0]]), torch.tensor([[1.0], [0.0]]))
    assert open(p).read() == "1.0 1:2.0\n0.0 0:3.0\n"
    save_libsvm(p, mx.nd.array([[0, 2]]), [5])
    assert open(p).read() == "5 1:2.0\n"


@pytest.mark.parametrize("data,label,exc,msg", [
    (np.zeros((2, 2)), np.zeros(3), ValueError, "label has 3 rows but data has 2"),
    (np.zeros((2, 2, 2)), np.zeros(2), ValueError, "data must be 2-D"),
    (np.array([[np.nan, 1.0]]), np.zeros(1), ValueError, "non-finite value \\(nan\\) in row 0"),
    (np.ones((1, 2)), np.array([np.inf]), ValueError, "label holds NaN or infinity"),
    (np.ones((2, 2)), np.ones((2, 2)), ValueError, "pass multilabel=True"),
])
def test_bad_input(tmp_path, data, label, exc, msg):
    p = tmp_path / "bad.svm"
    p.write_text("old\n")
    with pytest.raises(exc, match=msg):
        save_libsvm(str(p), data, label)
    assert p.read_text() == "old\n"  # untouched
    assert os.listdir(tmp_path) == ["bad.svm"]  # no temporary left behind


def test_nonfinite_when_allowed(tmp_path):
    p = str(tmp_path / "n.svm")
    save_libsvm(p, np.array([[np.nan, np.inf]]), np.array([-np.inf]), allow_nonfinite=True)
    data, label = load_libsvm(p, allow_nonfinite=True)
    v = data.data.asnumpy()
    assert np.isnan(v[0]) and v[1] == np.inf and label.asnumpy()[0] == -np.inf


def test_replaces_atomically_and_keeps_mode(tmp_path):
    p = tmp_path / "a.svm"
    p.write_text("old\n")
    os.chmod(p, 0o640)
    save_libsvm(str(p), np.ones((1, 1)), [1])
    assert p.read_text() == "1 0:1.0\n" and (os.stat(p).st_mode & 0o777) == 0o640
    assert os.listdir(tmp_path) == ["a.svm"]


def test_large_write_in_blocks(tmp_path, monkeypatch):
    from sparsenet.io.libsvm import save as libsvm_save
    monkeypatch.setattr(libsvm_save, "_BLOCK_NNZ", 7)
    X = sp.random(300, 20, density=0.2, format="csr", random_state=4, dtype=np.float32)
    p = str(tmp_path / "b.svm")
    save_libsvm(p, X, np.arange(300))
    data, label = load_libsvm(p, num_features=20)
    assert (data.asscipy() != X).nnz == 0 and label.asnumpy().tolist() == list(range(300))


native = pytest.mark.skipif(not __import__("sparsenet.io.libsvm.kernel", fromlist=["x"])
                            .native_available(), reason="the native kernel is not built")


@native
def test_native_float32_text_is_shortest_and_round_trips():
    from sparsenet.io.libsvm.kernel import _native
    f = np.random.default_rng(7).integers(0, 2 ** 32, 100000, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
    f = np.concatenate([f[np.isfinite(f)], np.array([0.1, -0.0, 1e16, 9.99e-5, 1.4e-45,
                                                     3.4028235e38, 123456789.0], np.float32)])
    text = _native.format_f32(f).split()
    back = np.array([float(t) for t in text]).astype(np.float32)
    assert np.array_equal(back.view(np.uint32), f.view(np.uint32))
    for t, x in zip(text[:20000], f[:20000]):  # as short as NumPy's Dragon4
        mant = t.lstrip(b"-").split(b"e")[0].replace(b".", b"").strip(b"0")
        ref = np.format_float_scientific(x, unique=True).lstrip("-").split("e")[0]
        assert len(mant) == len(ref.replace(".", "").rstrip("0") or "0") or x == 0


@native
def test_native_and_numpy_writers_agree(tmp_path, monkeypatch):
    from sparsenet.io.libsvm import save as libsvm_save
    X = sp.random(300, 40, density=0.2, format="csr", random_state=9, dtype=np.float32)
    X.data *= np.float32(10.0) ** np.random.default_rng(1).integers(-20, 20, X.nnz)
    y = np.random.default_rng(2).standard_normal(300).astype(np.float32)
    a, b = str(tmp_path / "a.svm"), str(tmp_path / "b.svm")
    save_libsvm(a, X, y, zero_based=False)
    monkeypatch.setattr(libsvm_save, "native_available", lambda: False)
    save_libsvm(b, X, y, zero_based=False)
    da, la = load_libsvm(a, zero_based=False, num_features=40)
    db, lb = load_libsvm(b, zero_based=False, num_features=40)
    assert da.data.asnumpy().tobytes() == db.data.asnumpy().tobytes() == X.data.tobytes()
    assert la.asnumpy().tobytes() == lb.asnumpy().tobytes() == y.tobytes()

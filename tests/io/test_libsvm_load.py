"""load_libsvm against SciPy and scikit-learn: formats, chunking, compression, sharding."""
import io
import os

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

import sparsenet as mx
from sparsenet.io import load_libsvm, save_libsvm


def random_csr(rows, cols, density, seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    m = sp.random(rows, cols, density=density, format="csr", random_state=rng, dtype=np.float64)
    m.data = (rng.standard_normal(m.nnz) * 10.0 ** rng.integers(-3, 4, m.nnz)).astype(dtype)
    return m


def assert_same_csr(ours, ref):
    ref = sp.csr_matrix(ref)
    ref.sort_indices()
    assert ours.shape == ref.shape
    assert ours.indptr.asnumpy().tolist() == ref.indptr.tolist()
    assert ours.indices.asnumpy().tolist() == ref.indices.tolist()
    np.testing.assert_array_equal(ours.data.asnumpy(), ref.data.astype(ours.dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matches_sklearn(tmp_path, backend, dtype):
    X = random_csr(300, 50, 0.2, 1, np.float64)
    y = np.random.default_rng(2).integers(-1, 3, 300).astype(np.float64)
    path = str(tmp_path / "d.svm")
    dump_svmlight_file(X, y, path, zero_based=True)
    Xr, yr = load_svmlight_file(path, zero_based=True, n_features=50, dtype=dtype)
    data, label = load_libsvm(path, num_features=50, dtype=dtype)
    assert data.dtype == np.dtype(dtype) and label.dtype == np.dtype(dtype)
    assert_same_csr(data, Xr)
    np.testing.assert_array_equal(label.asnumpy(), yr.astype(dtype))


@pytest.mark.parametrize("chunk_size", [1, 7, 100, 4096, 1 << 20])
def test_chunking_does_not_change_the_result(tmp_path, backend, chunk_size):
    X = random_csr(400, 30, 0.15, 3)
    y = np.arange(400) % 3
    path = str(tmp_path / "d.svm")
    dump_svmlight_file(X, y, path, zero_based=True)
    data, label = load_libsvm(path, num_features=30, chunk_size=chunk_size)
    assert_same_csr(data, X)
    assert label.asnumpy().tolist() == y.tolist()


def test_round_trip_writer_reader_sklearn(tmp_path, backend):
    X = random_csr(200, 40, 0.2, 4)
    X.data[3] = 0.0  # an explicit zero survives
    y = (np.arange(200) % 2).astype(np.float32)
    path = str(tmp_path / "rt.svm")
    save_libsvm(path, mx.nd.sparse.csr_matrix(X), mx.nd.array(y))
    data, label = load_libsvm(path, num_features=40)
    ref = mx.nd.sparse.csr_matrix(X)
    assert data.indptr.asnumpy().tolist() == ref.indptr.asnumpy().tolist()
    assert data.indices.asnumpy().tolist() == ref.indices.asnumpy().tolist()
    assert data.data.asnumpy().tobytes() == ref.data.asnumpy().tobytes()  # bit for bit
    assert label.asnumpy().tobytes() == y.tobytes()
    Xs, ys = load_svmlight_file(path, zero_based=True, n_features=40, dtype=np.float32)
    assert (Xs != X).nnz == 0 and np.array_equal(ys, y)


def test_float64_round_trip_bit_exact(tmp_path, backend):
    rng = np.random.default_rng(5)
    vals = rng.integers(0, 2 ** 63, 500, dtype=np.int64).view(np.float64)
    vals = vals[np.isfinite(vals) & (vals != 0)][:300]
    X = sp.csr_matrix((vals, (np.arange(vals.size) // 3, np.arange(vals.size) % 3)))
    path = str(tmp_path / "f64.svm")
    save_libsvm(path, X, np.zeros(X.shape[0]))
    data, _ = load_libsvm(path, dtype="float64")
    assert data.data.asnumpy().tobytes() == X.data.tobytes()


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
def test_compressed(tmp_path, backend, suffix):
    X = random_csr(500, 20, 0.3, 6)
    y = np.arange(500) % 2
    plain = str(tmp_path / "d.svm")
    dump_svmlight_file(X, y, plain, zero_based=True)
    path = plain + suffix
    save_libsvm(path, X, y)
    data, label = load_libsvm(path, num_features=20, chunk_size=999)
    assert_same_csr(data, X)
    assert label.asnumpy().tolist() == y.tolist()


def test_directory_in_name_order(tmp_path, backend):
    d = tmp_path / "parts"
    d.mkdir()
    (d / "b.svm").write_text("0 1:2\n1 2:3")  # no final newline before the next file
    (d / "a.svm").write_text("1 0:1\n")
    (d / "c.svm.gz").write_bytes(__import__("gzip").compress(b"1 3:4\n"))
    (d / ".hidden").write_text("garbage\n")
    (d / "sub").mkdir()
    data, label = load_libsvm(str(d))
    assert data.asnumpy().tolist() == [[1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 3, 0], [0, 0, 0, 4]]
    assert label.asnumpy().tolist() == [1, 0, 1, 1]


def shard_rows(path, n, **kw):
    parts = [load_libsvm(path, num_parts=n, part_index=k, **kw) for k in range(n)]
    return parts


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 64])
def test_sharding_union_is_the_file(tmp_path, backend, n):
    X = random_csr(97, 10, 0.3, n)
    y = np.arange(97)  # labels identify rows
    path = str(tmp_path / "s.svm")
    dump_svmlight_file(X, y, path, zero_based=True)
    parts = shard_rows(path, n, num_features=10, chunk_size=50)
    labels = np.concatenate([p[1].asnumpy() for p in parts])
    assert labels.tolist() == list(range(97))  # every row once, in order, no overlap
    data = sp.vstack([p[0].asscipy() for p in parts])
    assert (data != X).nnz == 0


@pytest.mark.parametrize("n", [2, 3, 7])
def test_sharding_compressed_and_directories(tmp_path, backend, n, monkeypatch):
    from sparsenet.io.libsvm import source as libsvm_source
    monkeypatch.setattr(libsvm_source, "SHARD_BLOCK", 64)  # many blocks in a small file
    d = tmp_path / "dir"
    d.mkdir()
    rows = [f"{i} {i % 5}:1" for i in range(300)]
    (d / "a.svm").write_text("\n".join(rows[:100]) + "\n")
    (d / "b.svm.gz").write_bytes(__import__("gzip").compress(("\n".join(rows[100:250]) + "\n")
                                                            .encode()))
    (d / "c.svm").write_text("\n".join(rows[250:]))
    seen = []
    for k in range(n):
        _, label = load_libsvm(str(d), num_parts=n, part_index=k, chunk_size=40)
        seen.extend(label.asnumpy().astype(int).tolist())
    assert sorted(seen) == list(range(300))


def test_qid_matches_sklearn(tmp_path, backend):
    X = random_csr(50, 8, 0.4, 7)
    y = np.arange(50) % 4
    q = np.repeat(np.arange(10), 5)
    path = str(tmp_path / "q.svm")
    dump_svmlight_file(X, y, path, zero_based=True, query_id=q)
    Xs, ys, qs = load_svmlight_file(path, zero_based=True, query_id=True, n_features=8,
                                    dtype=np.float32)
    data, label, qid = load_libsvm(path, num_features=8, query_id=True)
    assert_same_csr(data, Xs)
    assert qid.asnumpy().tolist() == qs.tolist()


def test_multilabel_matches_sklearn(tmp_path, backend):
    text = b"1,3 0:1\n0 1:2\n2 2:3\n3,0,1 0:4\n"
    Xs, ys = load_svmlight_file(io.BytesIO(text), zero_based=True, multilabel=True,
                                dtype=np.float32)
    path = tmp_path / "m.svm"
    path.write_bytes(text)
    data, label = load_libsvm(str(path), multilabel=True)
    assert_same_csr(data, Xs)
    got = [tuple(np.flatnonzero(r).astype(float)) for r in label.asnumpy()]
    assert got == [tuple(sorted(t)) for t in ys]


def test_ctx_and_progress(tmp_path, capsys):
    path = tmp_path / "p.svm"
    path.write_text("1 0:1\n0 1:1\n")
    data, label = load_libsvm(str(path), ctx=mx.cpu(), progress=True)
    assert data.context == mx.cpu()
    assert "p.svm" in capsys.readouterr().err  # the bar was drawn on stderr
    load_libsvm(str(path))
    assert capsys.readouterr().err == ""  # off when stderr is not a terminal


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs CUDA")
def test_gpu_ctx(tmp_path):
    path = tmp_path / "g.svm"
    path.write_text("1 0:1\n0 1:1\n")
    data, label = load_libsvm(str(path), ctx=mx.gpu(0))
    assert data.context == mx.gpu(0) and label.context == mx.gpu(0)


# ---------------------------------------------------------------- property test vs scikit-learn
value = st.floats(allow_nan=False, allow_infinity=False, width=32).filter(lambda v: v != 0)
row = st.dictionaries(st.integers(0, 60), value, max_size=8)
label = st.sampled_from([0, 1, -1, 2.5])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(label, row), max_size=25), crlf=st.booleans(),
       shuffle=st.booleans(), chunk=st.sampled_from([3, 50, 1 << 16]))
def test_random_valid_files_equal_sklearn(tmp_path, rows, crlf, shuffle, chunk):
    rng = np.random.default_rng(len(rows))
    lines = []
    for lab, feats in rows:
        items = sorted(feats.items())
        if shuffle:
            rng.shuffle(items)
        lines.append(" ".join([repr(float(lab))] + [f"{k}:{repr(float(v))}" for k, v in items]))
    text = ("\r\n" if crlf else "\n").join(lines) + "\n"
    path = tmp_path / "h.svm"
    path.write_text(text)
    ours, our_y = load_libsvm(str(path), num_features=61, chunk_size=chunk)
    ref, ref_y = load_svmlight_file(io.BytesIO("\n".join(
        " ".join([parts[0]] + sorted(parts[1:], key=lambda t: int(t.split(":")[0])))
        for parts in (ln.split() for ln in lines)).encode() + b"\n"),
        zero_based=True, n_features=61, dtype=np.float32)
    assert_same_csr(ours, ref)
    assert our_y.asnumpy().tolist() == ref_y.tolist()


def _rows_in(path):
    return load_libsvm(path)[0].shape[0]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_reading_in_a_forked_child(tmp_path):
    """The parsing threads do not survive fork(): the child starts its own."""
    import multiprocessing
    path = str(tmp_path / "f.svm")
    (tmp_path / "f.svm").write_text("".join(f"1 {i % 5}:1\n" for i in range(100)))
    assert _rows_in(path) == 100  # the parent's pool is running
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply_async(_rows_in, (path,)).get(timeout=120) == 100

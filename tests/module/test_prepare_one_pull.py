"""Issue 33 (per-step cost): ``Module.prepare`` pulls the rows of every row_sparse parameter
in one ``row_sparse_pull`` (the store checks a shared row ids array once), and the rows it
pulls are the stored values at the unique sorted ids (NumPy's indexing)."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.kvstore import kvstore as kvstore_module


def _fm_like_module(kv, num_features=7):
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.var("w", shape=(num_features, 1), stype="row_sparse")
    v = mx.sym.var("v", shape=(num_features, 2), stype="row_sparse")
    out = mx.sym.broadcast_add(mx.sym.dot(x, w), mx.sym.sum(mx.sym.dot(x, v), axis=1,
                                                            keepdims=True))
    net = mx.sym.LinearRegressionOutput(out, mx.sym.Variable("label"))
    mod = mx.mod.Module(net, data_names=["data"], label_names=["label"])
    mod.bind(data_shapes=[("data", (2, num_features))], label_shapes=[("label", (2, 1))])
    w0 = np.arange(1, num_features + 1, dtype=np.float32).reshape(-1, 1)  # no zero row
    v0 = np.arange(1, 2 * num_features + 1, dtype=np.float32).reshape(-1, 2) / 10
    mod.init_params(arg_params={"w": mx.nd.array(w0).tostype("row_sparse"),
                                "v": mx.nd.array(v0).tostype("row_sparse")})
    mod.init_optimizer(kvstore=kv, optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    return mod, w0, v0


def test_prepare_pulls_every_row_sparse_parameter_in_one_call(monkeypatch):
    kv = mx.kv.create("local")
    mod, w0, v0 = _fm_like_module(kv)
    pulls, checks = [], []
    real_pull, real_check = type(kv).row_sparse_pull, kvstore_module.checked_row_ids
    monkeypatch.setattr(type(kv), "row_sparse_pull", lambda self, key, *a, **k: (
        pulls.append(key), real_pull(self, key, *a, **k)))
    monkeypatch.setattr(kvstore_module, "checked_row_ids",
                        lambda r, n, key: (checks.append(key), real_check(r, n, key))[1])
    batch = mx.io.DataBatch([mx.nd.sparse.csr_matrix(
        (np.array([1.0, 2.0, 3.0], np.float32), np.array([5, 2, 5]), np.array([0, 2, 3])),
        shape=(2, 7))], [mx.nd.zeros((2, 1))])
    ids = batch.data[0].indices
    before = ids.asnumpy().copy()
    mod.prepare(batch, sparse_row_id_fn=lambda b: {"w": ids, "v": ids})
    assert len(pulls) == 1 and sorted(pulls[0]) == ["v", "w"]
    assert len(checks) == 1  # one ids array, one row count: one check
    args = mod._exec_group.param_arrays
    names = mod._param_names
    w, v = args[names.index("w")][0], args[names.index("v")][0]
    np.testing.assert_array_equal(w.indices.asnumpy(), [2, 5])
    np.testing.assert_array_equal(w.data.asnumpy(), w0[[2, 5]])
    np.testing.assert_array_equal(v.indices.asnumpy(), [2, 5])
    np.testing.assert_array_equal(v.data.asnumpy(), v0[[2, 5]])
    np.testing.assert_array_equal(ids.asnumpy(), before)  # the batch is untouched


def test_prepare_still_refuses_an_unknown_name_before_pulling(monkeypatch):
    kv = mx.kv.create("local")
    mod, _, _ = _fm_like_module(kv)
    pulls = []
    monkeypatch.setattr(type(kv), "row_sparse_pull", lambda self, *a, **k: pulls.append(a))
    ids = mx.nd.array([1], dtype="int64")
    with pytest.raises(mx.MXNetError, match="row ids for 'nope', which is not a parameter"):
        mod.prepare(None, sparse_row_id_fn=lambda b: {"w": ids, "nope": ids})
    assert pulls == []


def test_training_through_prepare_matches_numpy_sgd():
    kv = mx.kv.create("local")
    mod, w0, v0 = _fm_like_module(kv)
    x = np.array([[1.0, 0, 2.0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 3.0, 0]], np.float32)
    y = np.array([[1.0], [2.0]], np.float32)
    batch = mx.io.DataBatch([mx.nd.array(x).tostype("csr")], [mx.nd.array(y)])
    ids = batch.data[0].indices
    w, v = w0.astype(np.float64), v0.astype(np.float64)
    for _ in range(3):
        mod.prepare(batch, sparse_row_id_fn=lambda b: {"w": ids, "v": ids})
        mod.forward_backward(batch)
        mod.update()
        # NumPy: pred = x w + sum(x v, 1); LinearRegressionOutput's gradient is pred - y,
        # and Module's optimizer rescales by 1 / batch size (2), as MXNet's
        pred = x @ w + (x @ v).sum(axis=1, keepdims=True)
        d = (pred - y) / 2
        w = w - 0.1 * (x.T @ d)
        v = v - 0.1 * (x.T @ np.repeat(d, 2, axis=1))
    all_ids = mx.nd.arange(0, 7, dtype="int64")
    mod.prepare(None, lambda b: {"w": all_ids, "v": all_ids})
    arg, _ = mod.get_params()
    np.testing.assert_allclose(arg["w"].asnumpy(), w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(arg["v"].asnumpy(), v, rtol=1e-5, atol=1e-5)

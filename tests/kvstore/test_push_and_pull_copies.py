"""Issue 33 (per-step cost): a local store hands one pushed array to its optimizer updater
without copying it, copies it everywhere else, never writes into it, and row_sparse_pull
checks a row ids array once for every key it is pulled for.

Expected values are NumPy's (SGD and Adam written out by hand)."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import IndexOutOfRangeError
from sparsenet.kvstore import dist as dist_module
from sparsenet.kvstore import kvstore as kvstore_module


def rsp(rows, data, shape):
    return mx.nd.sparse.row_sparse_array((np.asarray(data, np.float32), rows), shape=shape)


def pulled(kv, key, shape):
    out = mx.nd.zeros(shape)
    kv.pull(key, out=out)
    return out.asnumpy()


class _Recorder(mx.optimizer.SGD):
    """SGD that remembers the gradient objects it was given."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.seen = []

    def update(self, index, weight, grad, state):
        self.seen.append(grad)
        super().update(index, weight, grad, state)

    update_multi_precision = update


def test_the_optimizer_updater_reads_the_pushed_array_itself():
    kv = mx.kv.create("local")
    opt = _Recorder(learning_rate=0.5)
    kv.set_optimizer(opt)
    kv.init("d", mx.nd.ones((2, 3)))
    kv.init("r", mx.nd.ones((4, 2)).tostype("row_sparse"))
    g_d = mx.nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    g_r = rsp([1, 3], [[1.0, 2.0], [3.0, 4.0]], (4, 2))
    kv.push(["d", "r"], [g_d, g_r])
    assert opt.seen[0] is g_d and opt.seen[1] is g_r  # no copy on the way
    np.testing.assert_array_equal(pulled(kv, "d", (2, 3)),
                                  1 - 0.5 * np.arange(6, dtype=np.float32).reshape(2, 3))
    want = np.ones((4, 2), np.float32)
    want[[1, 3]] -= 0.5 * np.array([[1, 2], [3, 4]], np.float32)
    np.testing.assert_array_equal(pulled(kv, "r", (4, 2)), want)
    # the caller's arrays are as they were
    np.testing.assert_array_equal(g_d.asnumpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(g_r.indices.asnumpy(), [1, 3])
    np.testing.assert_array_equal(g_r.data.asnumpy(), [[1, 2], [3, 4]])


def test_adam_through_the_store_matches_numpy_and_leaves_the_gradients():
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.Adam(learning_rate=lr, beta1=b1, beta2=b2, epsilon=eps))
    w0 = np.arange(10, dtype=np.float32).reshape(5, 2) / 10
    kv.init(0, mx.nd.array(w0).tostype("row_sparse"))
    w, m, v = w0.astype(np.float64), np.zeros((5, 2)), np.zeros((5, 2))
    rng = np.random.RandomState(0)
    for t, rows in enumerate(([0, 2], [2, 4], [1]), start=1):
        values = rng.uniform(-1, 1, (len(rows), 2)).astype(np.float32)
        g = rsp(rows, values, (5, 2))
        kv.push(0, g)
        np.testing.assert_array_equal(g.data.asnumpy(), values)  # never written into
        np.testing.assert_array_equal(g.indices.asnumpy(), rows)
        # lazy Adam (MXNet's rule): only the pushed rows, no bias correction in the step
        # (Adam folds it into the learning rate)
        gr = values.astype(np.float64)
        m[rows] = b1 * m[rows] + (1 - b1) * gr
        v[rows] = b2 * v[rows] + (1 - b2) * gr * gr
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        w[rows] -= lr_t * m[rows] / (np.sqrt(v[rows]) + eps)
        np.testing.assert_allclose(pulled(kv, 0, (5, 2)), w, rtol=1e-5, atol=1e-6)


def test_without_updater_the_store_keeps_a_copy():
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.zeros((3,)))
    g = mx.nd.array([1.0, 2.0, 3.0])
    kv.push("w", g)
    g[:] = 9.0  # the caller reuses its buffer
    np.testing.assert_array_equal(pulled(kv, "w", (3,)), [1, 2, 3])


def test_a_custom_updater_gets_a_copy_it_may_write():
    kv = mx.kv.create("local")
    got = []

    def updater(key, grad, weight):
        got.append(grad)
        weight[:] = weight + grad
        grad[:] = -1.0  # a custom updater may scribble on what it is given

    kv.set_updater(updater)
    kv.init("w", mx.nd.zeros((2,)))
    g = mx.nd.array([1.0, 2.0])
    kv.push("w", g)
    assert got[0] is not g
    np.testing.assert_array_equal(g.asnumpy(), [1, 2])
    np.testing.assert_array_equal(pulled(kv, "w", (2,)), [1, 2])


def test_a_cast_or_moved_push_reaches_the_updater_converted():
    kv = mx.kv.create("local")
    opt = _Recorder(learning_rate=1.0)
    kv.set_optimizer(opt)
    kv.init("w", mx.nd.zeros((2,)))
    g = mx.nd.array([1.0, 2.0], dtype="float64", ctx=mx.cpu(1))
    kv.push("w", g)
    assert opt.seen[0] is not g and opt.seen[0].dtype == np.float32
    assert opt.seen[0].context == mx.cpu(0)
    np.testing.assert_array_equal(pulled(kv, "w", (2,)), [-1, -2])
    np.testing.assert_array_equal(g.asnumpy(), [1, 2])


def test_stores_that_borrow():
    kv = mx.kv.create("local")
    assert not kv._borrows_pushed()
    kv.set_optimizer(mx.optimizer.SGD())
    assert kv._borrows_pushed()
    kv.set_updater(lambda k, g, w: None)
    assert not kv._borrows_pushed()
    # a distributed store's reduction over the ranks may write into the local sum
    assert dist_module.DistKVStore._borrows_pushed(kv) is False


def _count_checks(monkeypatch):
    calls = []
    real = kvstore_module.checked_row_ids

    def counting(row_ids, num_rows, key):
        calls.append(key)
        return real(row_ids, num_rows, key)

    monkeypatch.setattr(kvstore_module, "checked_row_ids", counting)
    return calls


def test_row_sparse_pull_checks_one_ids_array_once_for_several_keys(monkeypatch):
    calls = _count_checks(monkeypatch)
    kv = mx.kv.create("local")
    a = np.arange(12, dtype=np.float32).reshape(6, 2)
    b = np.arange(6, dtype=np.float32).reshape(6, 1) * 10
    kv.init(["a", "b"], [mx.nd.array(a).tostype("row_sparse"), mx.nd.array(b)])
    ids = mx.nd.array([4, 1, 4, 0], dtype="int64")
    outs = [mx.nd.sparse.zeros("row_sparse", (6, 2)), mx.nd.sparse.zeros("row_sparse", (6, 1))]
    kv.row_sparse_pull(["a", "b"], outs, row_ids=[ids, ids])
    assert calls == ["a"]
    for out, full in zip(outs, (a, b)):
        np.testing.assert_array_equal(out.indices.asnumpy(), [0, 1, 4])
        np.testing.assert_array_equal(out.data.asnumpy(), full[[0, 1, 4]])
    # the two outs do not share storage with each other or with the ids
    assert outs[0].indices._t.data_ptr() != outs[1].indices._t.data_ptr()
    np.testing.assert_array_equal(ids.asnumpy(), [4, 1, 4, 0])


def test_row_sparse_pull_checks_the_range_of_each_key(monkeypatch):
    calls = _count_checks(monkeypatch)
    kv = mx.kv.create("local")
    kv.init(["big", "small"], [mx.nd.ones((8, 1)), mx.nd.ones((5, 1))])
    ids = mx.nd.array([6, 2], dtype="int64")
    outs = [mx.nd.sparse.zeros("row_sparse", (8, 1)), mx.nd.sparse.zeros("row_sparse", (5, 1))]
    with pytest.raises(IndexOutOfRangeError, match="key 'small'.*holds 6, out of range"):
        kv.row_sparse_pull(["big", "small"], outs, row_ids=[ids, ids])
    assert calls == ["big", "small"]  # two row counts: two checks
    assert outs[0].indices.asnumpy().size == 0  # nothing pulled before every id was checked


@pytest.mark.parametrize("stype", ["row_sparse", "default"])
def test_pulled_rows_are_a_snapshot_in_new_memory(monkeypatch, stype):
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=1.0))
    full = np.arange(1, 11, dtype=np.float32).reshape(5, 2)
    kv.init("w", mx.nd.array(full).tostype(stype))
    out = mx.nd.sparse.row_sparse_array(([[7.0, 7.0]], [0]), shape=(5, 2))
    old_data, old_indices = out._data, out._indices
    copies = []
    real = mx.nd.NDArray.copyto
    monkeypatch.setattr(mx.nd.NDArray, "copyto",
                        lambda self, other: (copies.append(1), real(self, other))[1])
    ids = mx.nd.array([3, 1], dtype="int64")
    kv.row_sparse_pull("w", out, row_ids=ids)
    assert copies == []  # the gathered rows are taken over, not copied a second time
    np.testing.assert_array_equal(out.indices.asnumpy(), [1, 3])
    np.testing.assert_array_equal(out.data.asnumpy(), full[[1, 3]])
    # the memory out held before is not written, and out shares nothing with the store
    np.testing.assert_array_equal(old_data.numpy(), [[7.0, 7.0]])
    np.testing.assert_array_equal(old_indices.numpy(), [0])
    kv.push("w", rsp([1, 3], np.ones((2, 2)), (5, 2)))  # updates the stored rows in place
    np.testing.assert_array_equal(out.data.asnumpy(), full[[1, 3]])
    np.testing.assert_array_equal(ids.asnumpy(), [3, 1])


def test_pull_into_an_out_of_another_dtype_converts():
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.array([[1.5], [2.5], [3.5]]).tostype("row_sparse"))
    out = mx.nd.sparse.zeros("row_sparse", (3, 1), dtype="float64")
    kv.row_sparse_pull("w", out, row_ids=mx.nd.array([2], dtype="int64"))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out.data.asnumpy(), [[3.5]])
    np.testing.assert_array_equal(out.indices.asnumpy(), [2])

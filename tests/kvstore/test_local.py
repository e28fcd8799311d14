"""The in-process KVStore ('local' / 'device'): MXNet 1.9.1's answers, measured with
/tmp/mx (MXNet 1.9.1) and hard-coded here, or computed with NumPy."""
import os
import pickle
import warnings

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import (FileFormatError, IndexOutOfRangeError, InvalidArgumentError,
                            InvalidArgumentTypeError, ShapeError, SparsenetError,
                            StorageTypeError)
from sparsenet.kvstore import KVStore

DATA = os.path.join(os.path.dirname(__file__), "data")


def rsp(rows, value, shape, ctx=None):
    data = np.full((len(rows),) + shape[1:], value, dtype=np.float32)
    return mx.nd.sparse.row_sparse_array((data, rows), shape=shape, ctx=ctx)


def pulled(kv, key, shape, ctx=None):
    out = mx.nd.zeros(shape, ctx=ctx)
    kv.pull(key, out=out)
    return out.asnumpy()


# ---------------------------------------------------------------------- create / properties
@pytest.mark.parametrize("name", ["local", "device", "local_update_cpu", "local_allreduce_cpu",
                                  "local_allreduce_device"])
def test_create_local_names(name):
    kv = mx.kv.create(name)
    assert isinstance(kv, KVStore)
    assert (kv.type, kv.rank, kv.num_workers) == (name, 0, 1)  # measured with MXNet 1.9.1
    assert mx.kvstore.create is mx.kv.create


def test_create_default_is_local():
    assert mx.kv.create().type == "local"


@pytest.mark.parametrize("name", ["nccl", "foo", "Local"])
def test_create_unknown_name(name):
    with pytest.raises(InvalidArgumentError, match=rf"unknown name '{name}'; expected one of "
                                                   r"'local', 'device'"):
        mx.kv.create(name)


@pytest.mark.parametrize("name", [3, None])
def test_create_non_str_name(name):
    # MXNet 1.9.1: TypeError "name must be a string"
    with pytest.raises(TypeError, match="name must be a str, got"):
        mx.kv.create(name)
    with pytest.raises(InvalidArgumentTypeError):
        mx.kv.create(name)


# ---------------------------------------------------------------------- init
def test_init_twice_is_refused():
    kv = mx.kv.create("local")
    kv.init(3, mx.nd.ones((2, 3)))
    # MXNet 1.9.1: "duplicate init of key 3. Please double check if you called kv.init or
    # kv.broadcast with this key multiple times"
    with pytest.raises(InvalidArgumentError, match="duplicate init of key 3. Please double"):
        kv.init(3, mx.nd.ones((2, 3)))
    kv = mx.kv.create("local")  # a store of str keys
    with pytest.raises(InvalidArgumentError, match="duplicate init of key 'a'"):
        kv.init(["a", "a"], [mx.nd.ones(1), mx.nd.ones(1)])


def test_init_keeps_its_own_copy():
    kv = mx.kv.create("local")
    v = mx.nd.ones((2, 3))
    kv.init(3, v)
    v[:] = 9
    np.testing.assert_array_equal(pulled(kv, 3, (2, 3)), np.ones((2, 3)))  # MXNet 1.9.1: ones


def test_init_several_values_for_one_key():
    kv = mx.kv.create("local")
    with pytest.raises(InvalidArgumentError, match="expected one value per key, got a list of 2"):
        kv.init(0, [mx.nd.ones(2), mx.nd.ones(2)])


# ---------------------------------------------------------------------- push / pull dense
def test_push_list_sums_then_replaces_without_updater():
    kv = mx.kv.create("local")
    kv.init(3, mx.nd.ones((2, 3)))
    kv.push(3, [mx.nd.ones((2, 3)), mx.nd.ones((2, 3)) * 2])
    np.testing.assert_array_equal(pulled(kv, 3, (2, 3)), np.full((2, 3), 3.0))  # MXNet 1.9.1
    kv.push(3, mx.nd.ones((2, 3)) * 5)
    np.testing.assert_array_equal(pulled(kv, 3, (2, 3)), np.full((2, 3), 5.0))  # MXNet 1.9.1


def test_push_does_not_alias_the_pushed_array():
    # MXNet 1.9.1 keeps the pushed array itself (a later write to it shows in the pull: 100);
    # sparsenet copies (docs/differences.md)
    kv = mx.kv.create("local")
    kv.init(3, mx.nd.ones((2, 3)))
    p = mx.nd.ones((2, 3)) * 4
    kv.push(3, p)
    p[:] = 100
    np.testing.assert_array_equal(pulled(kv, 3, (2, 3)), np.full((2, 3), 4.0))


@pytest.mark.parametrize("name", ["local", "device"])
def test_push_on_two_contexts_pull_on_two_contexts(name):
    kv = mx.kv.create(name)
    kv.init(3, mx.nd.ones((2, 3)))
    kv.push(3, [mx.nd.ones((2, 3), ctx=mx.cpu(0)), mx.nd.ones((2, 3), ctx=mx.cpu(1)) * 2])
    outs = [mx.nd.zeros((2, 3), ctx=mx.cpu(0)), mx.nd.zeros((2, 3), ctx=mx.cpu(1))]
    kv.pull(3, out=outs)
    # measured with MXNet 1.9.1: both 3, contexts cpu(0) and cpu(1) kept
    assert [o.context for o in outs] == [mx.cpu(0), mx.cpu(1)]
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), np.full((2, 3), 3.0))


def test_push_other_dtype_is_cast_to_the_key_dtype():
    kv = mx.kv.create("local")
    kv.init(3, mx.nd.ones((2, 3)))
    kv.push(3, mx.nd.ones((2, 3), dtype="float64") * 2)
    out64 = mx.nd.zeros((2, 3), dtype="float64")
    kv.pull(3, out=out64)
    np.testing.assert_array_equal(out64.asnumpy(), np.full((2, 3), 2.0))  # MXNet 1.9.1: 2
    np.testing.assert_array_equal(pulled(kv, 3, (2, 3)), np.full((2, 3), 2.0))


def test_str_and_int_keys_and_lists_of_keys():
    kv = mx.kv.create("local")
    kv.init([20, 21], [mx.nd.ones(2), mx.nd.ones(2) * 2])
    a, b, a2, b2 = (mx.nd.zeros(2) for _ in range(4))
    kv.pull([20, 21], out=[a, b])
    assert a.asnumpy().tolist() == [1, 1] and b.asnumpy().tolist() == [2, 2]
    kv.pull([20, 21], out=[[a, a2], [b, b2]])
    assert a2.asnumpy().tolist() == [1, 1] and b2.asnumpy().tolist() == [2, 2]
    kv.push([20, 21], [[mx.nd.ones(2), mx.nd.ones(2)], [mx.nd.ones(2) * 3, mx.nd.ones(2)]])
    kv.pull([20, 21], out=[a, b])
    # measured with MXNet 1.9.1: [2, 2] and [4, 4]
    assert a.asnumpy().tolist() == [2, 2] and b.asnumpy().tolist() == [4, 4]
    kvs = mx.kv.create("local")
    kvs.init(["w", "b"], [mx.nd.ones(2), mx.nd.zeros(2)])
    kvs.push("w", mx.nd.full((2,), 6.0))
    assert pulled(kvs, "w", (2,)).tolist() == [6, 6]
    assert pulled(kvs, "b", (2,)).tolist() == [0, 0]
    kv.push(np.int64(20), mx.nd.ones(2) * 7)  # NumPy ints are ints
    assert pulled(kv, 20, (2,)).tolist() == [7, 7]


def test_repeated_key_in_one_push_is_summed():
    kv = mx.kv.create("local")
    kv.init(0, mx.nd.zeros(2))
    kv.push([0, 0], [mx.nd.ones(2), mx.nd.ones(2) * 2])
    assert pulled(kv, 0, (2,)).tolist() == [3, 3]


def test_pushpull():
    kv = mx.kv.create("local")
    kv.init(3, mx.nd.ones((2, 3)))
    o = mx.nd.zeros((2, 3))
    kv.pushpull(3, mx.nd.ones((2, 3)) * 7, out=o)
    np.testing.assert_array_equal(o.asnumpy(), np.full((2, 3), 7.0))  # MXNet 1.9.1
    v = mx.nd.ones((2, 3)) * 8
    kv.pushpull(3, v)
    np.testing.assert_array_equal(v.asnumpy(), np.full((2, 3), 8.0))  # MXNet 1.9.1
    outs = [mx.nd.zeros((2, 3)), mx.nd.zeros((2, 3), ctx=mx.cpu(1))]
    kv.pushpull(3, [mx.nd.ones((2, 3)), mx.nd.ones((2, 3), ctx=mx.cpu(1))], out=outs)
    for o in outs:  # MXNet 1.9.1: 2 in both
        np.testing.assert_array_equal(o.asnumpy(), np.full((2, 3), 2.0))


def test_broadcast_is_init_then_pull():
    kv = mx.kv.create("local")
    outs = [mx.nd.zeros((2, 3)), mx.nd.zeros((2, 3), ctx=mx.cpu(1))]
    kv.broadcast(30, mx.nd.ones((2, 3)) * 4, out=outs)
    for o in outs:  # MXNet 1.9.1: 4 in both
        np.testing.assert_array_equal(o.asnumpy(), np.full((2, 3), 4.0))
    assert outs[1].context == mx.cpu(1)
    with pytest.raises(InvalidArgumentError, match="duplicate init of key 30"):
        kv.broadcast(30, mx.nd.ones((2, 3)), out=outs[0])
    with pytest.raises(InvalidArgumentError, match="out is required"):
        kv.broadcast(31, mx.nd.ones((2, 3)), out=None)
    with pytest.raises(InvalidArgumentError, match="key 31 has not been initialized"):
        kv.pull(31, out=outs[0])  # the failed broadcast initialised nothing


# ---------------------------------------------------------------------- errors
def test_pull_and_push_errors():
    kv = mx.kv.create("local")
    kv.init(3, mx.nd.ones((2, 3)))
    o = mx.nd.zeros((2, 3))
    # MXNet 1.9.1: "key 99 has not been inited"
    with pytest.raises(InvalidArgumentError, match="pull: key 99 has not been initialized"):
        kv.pull(99, out=o)
    with pytest.raises(InvalidArgumentError, match="push: key 99 has not been initialized"):
        kv.push(99, o)
    with pytest.raises(InvalidArgumentError, match="out is required"):
        kv.pull(3)
    # MXNet 1.9.1: "operands shape mismatch from.shape = [2,3] to.shape=[3,3]"
    with pytest.raises(ShapeError, match=r"out has shape \(3, 3\), the value has shape \(2, 3\)"):
        kv.pull(3, out=mx.nd.zeros((3, 3)))
    # MXNet 1.9.1 accepts this push and replaces the (2, 3) value by a (3, 3) one
    with pytest.raises(ShapeError, match=r"value has shape \(3, 3\), the key was initialized "
                                         r"with shape \(2, 3\)"):
        kv.push(3, mx.nd.ones((3, 3)))
    with pytest.raises(ShapeError):
        kv.push(3, [mx.nd.ones((2, 3)), mx.nd.ones((3, 3))])
    np.testing.assert_array_equal(pulled(kv, 3, (2, 3)), np.ones((2, 3)))  # nothing pushed
    # MXNet 1.9.1: AssertionError "unexpected type for keys: <class 'float'>"
    with pytest.raises(InvalidArgumentTypeError, match="expected an int or a str .* got float"):
        kv.init(3.5, mx.nd.ones((2, 3)))
    with pytest.raises(InvalidArgumentTypeError, match="got bool"):
        kv.push(True, o)
    # MXNet 1.9.1: bare AssertionError for the rest
    with pytest.raises(InvalidArgumentError, match=r"expected a list of 2 entries \(one per key"):
        kv.init([10, 11], [mx.nd.ones(2)])
    with pytest.raises(InvalidArgumentError, match="expected a list of 1 entries"):
        kv.pull([3], out=o)
    with pytest.raises(InvalidArgumentTypeError, match="value for key 3: expected an NDArray or "
                                                       "a list of NDArrays .* got ndarray"):
        kv.push(3, np.ones((2, 3)))
    with pytest.raises(InvalidArgumentTypeError, match="got a list of int"):
        kv.push(3, [1, 2])


def test_csr_value():
    kv = mx.kv.create("local")
    c = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 2], [0, 1, 2]), shape=(2, 3))
    kv.init(1, c)
    # measured with MXNet 1.9.1: a csr value pulls into a dense out
    assert pulled(kv, 1, (2, 3)).tolist() == [[1, 0, 0], [0, 0, 2]]
    # MXNet 1.9.1: "Unexpected storage type detected during kvstore push: 2"
    with pytest.raises(StorageTypeError, match="expected default or row_sparse values, got a "
                                               "csr value"):
        kv.push(1, c)


def test_gradient_compression_is_accepted():
    # MXNet 1.9.1: 'local' raises "Gradient compression is not supported for this type of
    # kvstore"; 'device' accepts it for dense values. sparsenet accepts it in every store
    # (tests/kvstore/test_gradient_compression.py)
    for name in ("local", "device"):
        assert mx.kv.create(name).set_gradient_compression({"type": "2bit",
                                                            "threshold": 0.5}) is None


def test_barrier_and_capability():
    kv = mx.kv.create("local")
    assert kv.barrier() is None and kv._barrier() is None
    assert kv.is_capable("optimizer") and kv.is_capable("OPTIMIZER")  # MXNet 1.9.1: True
    with pytest.raises(ValueError, match="unknown capability 'foo'"):  # MXNet: ValueError
        kv.is_capable("foo")


# ---------------------------------------------------------------------- row_sparse
def test_row_sparse_push_sums_to_the_union_of_rows():
    kv = mx.kv.create("local")
    seen = []
    kv.set_updater(lambda key, grad, weight: seen.append((key, grad)))
    kv.init(1, mx.nd.sparse.zeros("row_sparse", (5, 2)))
    kv.push(1, [rsp([1, 3], 1.0, (5, 2)), rsp([1, 4], 2.0, (5, 2), mx.cpu(1)),
                rsp([], 0.0, (5, 2))])
    (key, merged), = seen
    # measured with MXNet 1.9.1: row_sparse, rows [1, 3, 4], values 3, 1, 2
    assert key == 1 and merged.stype == "row_sparse"
    assert merged.indices.asnumpy().tolist() == [1, 3, 4]
    assert merged.data.asnumpy().tolist() == [[3, 3], [1, 1], [2, 2]]


def test_row_sparse_key_without_updater():
    kv = mx.kv.create("local")
    w = mx.nd.sparse.row_sparse_array((np.arange(12, dtype="float32").reshape(4, 3)[[1, 3]],
                                       [1, 3]), shape=(4, 3))
    kv.init("w", w)
    kv.push("w", [rsp([0, 1], 1.0, (4, 3)), rsp([1], 2.0, (4, 3))])
    out = mx.nd.sparse.zeros("row_sparse", (4, 3))
    kv.row_sparse_pull("w", out=out, row_ids=mx.nd.array([3, 0, 1, 1, 0]))
    # measured with MXNet 1.9.1: the stored value is the pushed sum; rows 0, 1, 3
    assert out.stype == "row_sparse"
    assert out.indices.asnumpy().tolist() == [0, 1, 3]
    assert out.data.asnumpy().tolist() == [[1, 1, 1], [3, 3, 3], [0, 0, 0]]
    kv.row_sparse_pull("w", out=out, row_ids=mx.nd.array([3, 2]))
    assert out.indices.asnumpy().tolist() == [2, 3]
    assert out.data.asnumpy().tolist() == [[0, 0, 0], [0, 0, 0]]
    # a row_sparse value into a dense out works (MXNet 1.9.1)
    assert pulled(kv, "w", (4, 3)).tolist() == [[1] * 3, [3] * 3, [0] * 3, [0] * 3]


def test_pull_into_row_sparse_out_is_ignored_with_a_warning():
    kv = mx.kv.create("local")
    kv.init("w", rsp([0, 1], 1.0, (4, 3)))
    r = mx.nd.sparse.zeros("row_sparse", (4, 3))
    # MXNet 1.9.1 logs "non-default weights detected during kvstore pull. This call has been
    # ignored. Please make sure to use kv.row_sparse_pull() or module.prepare() with row_ids."
    with pytest.warns(UserWarning, match=r"storage type row_sparse, so the pull into it was "
                                         r"skipped .* kv.row_sparse_pull"):
        kv.pull("w", out=r)
    assert r.indices.asnumpy().tolist() == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kv.pull("w", out=r, ignore_sparse=False)  # MXNet 1.9.1: the whole value, rows [0, 1]
    assert r.indices.asnumpy().tolist() == [0, 1]
    with pytest.warns(UserWarning, match="skipped"):  # pushpull into its own rsp value
        kv.pushpull("w", mx.nd.sparse.zeros("row_sparse", (4, 3)))


def test_dense_key_pull_into_row_sparse_out_with_ignore_sparse_false():
    kv = mx.kv.create("local")
    kv.init(2, mx.nd.array(np.arange(8).reshape(4, 2)))
    r = mx.nd.sparse.zeros("row_sparse", (4, 2))
    kv.pull(2, out=r, ignore_sparse=False)
    # measured with MXNet 1.9.1: rows [0, 1, 2, 3]
    assert r.indices.asnumpy().tolist() == [0, 1, 2, 3]
    assert r.data.asnumpy().tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_row_sparse_pull_several_outs_contexts_and_ids():
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.sparse.row_sparse_array(([[1.0] * 3, [3.0] * 3], [0, 1]), shape=(4, 3)))
    ra = mx.nd.sparse.zeros("row_sparse", (4, 3))
    rb = mx.nd.sparse.zeros("row_sparse", (4, 3), ctx=mx.cpu(1))
    kv.row_sparse_pull("w", out=[ra, rb],
                       row_ids=[mx.nd.array([0]), mx.nd.array([3, 1, 3], ctx=mx.cpu(1))])
    # measured with MXNet 1.9.1
    assert ra.indices.asnumpy().tolist() == [0] and ra.data.asnumpy().tolist() == [[1, 1, 1]]
    assert rb.indices.asnumpy().tolist() == [1, 3]
    assert rb.data.asnumpy().tolist() == [[3, 3, 3], [0, 0, 0]]
    assert rb.context == mx.cpu(1)
    kv.row_sparse_pull("w", out=[ra, rb], row_ids=mx.nd.array([2]))  # one ids for every out
    assert ra.indices.asnumpy().tolist() == [2] and rb.indices.asnumpy().tolist() == [2]
    kv.row_sparse_pull("w", out=[ra, rb], row_ids=[mx.nd.array([1])])  # MXNet: also accepted
    assert rb.indices.asnumpy().tolist() == [1]
    kv.row_sparse_pull("w", out=ra, row_ids=mx.nd.array([2, 3], dtype="int64"))
    assert ra.indices.asnumpy().tolist() == [2, 3]
    kv.row_sparse_pull("w", out=ra, row_ids=mx.nd.array([[2, 3]]))  # MXNet: flattened
    assert ra.indices.asnumpy().tolist() == [2, 3]
    kv.row_sparse_pull("w", out=ra, row_ids=mx.nd.array([], dtype="int64"))
    assert ra.indices.asnumpy().tolist() == [] and ra.data.shape == (0, 3)  # MXNet: (0, 3)


def test_row_sparse_pull_list_of_keys():
    kv = mx.kv.create("local")
    kv.init(["a", "b"], [rsp([0], 1.0, (3, 2)), rsp([2], 2.0, (3, 2))])
    oa, ob = mx.nd.sparse.zeros("row_sparse", (3, 2)), mx.nd.sparse.zeros("row_sparse", (3, 2))
    kv.row_sparse_pull(["a", "b"], out=[oa, ob], row_ids=[mx.nd.array([0, 2]), mx.nd.array([2])])
    np.testing.assert_array_equal(oa.asnumpy(), [[1, 1], [0, 0], [0, 0]])
    np.testing.assert_array_equal(ob.asnumpy(), [[0, 0], [0, 0], [2, 2]])


def test_row_sparse_pull_of_a_dense_key():
    # MXNet 1.9.1 refuses ("PullRowSparse expects row_sparse src NDArray"); sparsenet pulls the
    # rows (docs/differences.md). Expected value: NumPy.
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    kv = mx.kv.create("local")
    kv.init(2, mx.nd.array(table))
    r = mx.nd.sparse.zeros("row_sparse", (4, 2), ctx=mx.cpu(1))
    kv.row_sparse_pull(2, out=r, row_ids=mx.nd.array([2, 0, 2]))
    assert r.indices.asnumpy().tolist() == [0, 2]
    np.testing.assert_array_equal(r.data.asnumpy(), table[[0, 2]])
    assert r.context == mx.cpu(1)


def test_row_sparse_pull_errors():
    kv = mx.kv.create("local")
    kv.init("w", rsp([0, 1], 1.0, (4, 3)))
    r = mx.nd.sparse.zeros("row_sparse", (4, 3))
    # MXNet 1.9.1: "Expected row_sparse storage type for row_sparse_pull values, but detected
    # storage type 0"
    with pytest.raises(StorageTypeError, match="out must be row_sparse, got default"):
        kv.row_sparse_pull("w", out=mx.nd.zeros((4, 3)), row_ids=mx.nd.array([1]))
    with pytest.raises(InvalidArgumentError, match="row_ids is required"):  # MXNet: assert
        kv.row_sparse_pull("w", out=r)
    with pytest.raises(InvalidArgumentError, match="out is required"):
        kv.row_sparse_pull("w", row_ids=mx.nd.array([1]))
    # MXNet 1.9.1 returns an invalid array with index 7 (or -1); sparsenet refuses
    for bad in (7, 4, -1):
        with pytest.raises(IndexOutOfRangeError, match=rf"row_ids holds {bad}, out of range "
                                                        r"\[0, 4\)"):
            kv.row_sparse_pull("w", out=r, row_ids=mx.nd.array([1, bad]))
    # MXNet 1.9.1 truncates 1.7 to row 1; sparsenet refuses
    with pytest.raises(InvalidArgumentError, match="row_ids must hold whole numbers, got 1.7"):
        kv.row_sparse_pull("w", out=r, row_ids=mx.nd.array([1.7]))
    # MXNet 1.9.1: AssertionError "row_ids should be NDArray or list of NDArray"
    with pytest.raises(InvalidArgumentTypeError, match="row_ids: expected an NDArray"):
        kv.row_sparse_pull("w", out=r, row_ids=np.array([2, 3]))
    with pytest.raises(InvalidArgumentTypeError, match="row_ids: expected an NDArray"):
        kv.row_sparse_pull("w", out=r, row_ids=[2, 3])
    with pytest.raises(InvalidArgumentError, match=r"one row_ids array, or one per out \(2\), "
                                                   r"got 3"):
        kv.row_sparse_pull("w", out=[r, r], row_ids=[mx.nd.array([1])] * 3)
    with pytest.raises(ShapeError, match=r"out has shape \(5, 3\)"):
        kv.row_sparse_pull("w", out=mx.nd.sparse.zeros("row_sparse", (5, 3)),
                           row_ids=mx.nd.array([1]))
    assert r.indices.asnumpy().tolist() == []  # no failed call wrote anything


# ---------------------------------------------------------------------- optimizer on the store
def test_dense_key_row_sparse_push_without_and_with_optimizer():
    g1, g2 = rsp([0, 1], 1.0, (4, 2)), rsp([3], 2.0, (4, 2))
    kv = mx.kv.create("local")
    kv.init(5, mx.nd.ones((4, 2)))
    kv.push(5, [g1, g2])
    # measured with MXNet 1.9.1: rows not pushed become 0
    assert pulled(kv, 5, (4, 2)).tolist() == [[1, 1], [1, 1], [0, 0], [2, 2]]
    kv.push(5, [g1, mx.nd.ones((4, 2))])  # dense + row_sparse: dense sum (MXNet 1.9.1)
    assert pulled(kv, 5, (4, 2)).tolist() == [[2, 2], [2, 2], [1, 1], [1, 1]]
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    kv.init(0, mx.nd.ones((4, 2)))
    g = rsp([1, 3], 1.0, (4, 2))
    kv.push(0, [g, g])
    # measured with MXNet 1.9.1: only rows 1 and 3 move
    np.testing.assert_allclose(pulled(kv, 0, (4, 2)), [[1, 1], [0.8, 0.8], [1, 1], [0.8, 0.8]],
                               rtol=1e-6)


def _numpy_lazy_sgd(w, steps, lr, momentum, wd):
    mom = np.zeros_like(w)
    for grad, rows in steps:
        g = grad[rows] + wd * w[rows]
        mom[rows] = momentum * mom[rows] - lr * g
        w[rows] += mom[rows]
    return w, mom


def _numpy_lazy_adam(w, steps, lr, wd, b1=0.9, b2=0.999, eps=1e-8):
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, (grad, rows) in enumerate(steps, start=1):
        g = grad[rows] + wd * w[rows]
        m[rows] = b1 * m[rows] + (1 - b1) * g
        v[rows] = b2 * v[rows] + (1 - b2) * g * g
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        w[rows] -= lr_t * m[rows] / (np.sqrt(v[rows]) + eps)
    return w, m, v


def _pushes(shape):
    """Three pushes, each from cpu(0) and cpu(1): (arrays, dense sum, pushed rows)."""
    out = []
    for step, rows in enumerate([[1, 3], [0, 1], [3]]):
        arrays = [rsp(rows, step + 1.0, shape), rsp([rows[0]], 0.5, shape, mx.cpu(1))]
        dense = sum(a.asnumpy() for a in arrays)
        out.append((arrays, dense, sorted(set(rows))))
    return out


@pytest.mark.parametrize("name", ["local", "device"])
def test_sgd_momentum_lazy_on_row_sparse_weight(name):
    shape = (5, 2)
    kv = mx.kv.create(name)
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.1))
    kv.init("emb", mx.nd.ones(shape).tostype("row_sparse"))
    pushes = _pushes(shape)
    for arrays, _, _ in pushes:
        kv.push("emb", arrays)
    out = mx.nd.sparse.zeros("row_sparse", shape, ctx=mx.cpu(1))
    kv.row_sparse_pull("emb", out=out, row_ids=mx.nd.array([4, 0, 1, 2, 3, 0], ctx=mx.cpu(1)))
    expected_w, expected_mom = _numpy_lazy_sgd(np.ones(shape, np.float32),
                                               [(d, r) for _, d, r in pushes], 0.1, 0.9, 0.1)
    np.testing.assert_allclose(out.asnumpy(), expected_w, rtol=1e-6)
    # measured with MXNet 1.9.1 (the same pushes on a 'device' store)
    np.testing.assert_allclose(out.data.asnumpy()[:, 0], [0.74, 0.4876, 1.0, 0.4321, 1.0],
                               rtol=1e-5)
    assert out.indices.asnumpy().tolist() == [0, 1, 2, 3, 4] and out.context == mx.cpu(1)
    mom = kv._updater.states["emb"]
    assert mom.stype == "row_sparse"  # MXNet 1.9.1: row_sparse state for a row_sparse weight
    np.testing.assert_allclose(mom.asnumpy(), expected_mom, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(mom.asnumpy()[:, 0], [-0.26, -0.3524, 0.0, -0.4579, 0.0],
                               rtol=1e-5)  # measured with MXNet 1.9.1


def test_adam_lazy_on_row_sparse_weight():
    shape = (5, 2)
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.Adam(learning_rate=0.1, wd=0.1))
    w0 = np.arange(10, dtype=np.float32).reshape(shape)
    kv.init("emb", mx.nd.array(w0).tostype("row_sparse"))
    steps = []
    for step, rows in enumerate([[1, 3], [0, 1], [3]]):
        g = rsp(rows, step + 1.0, shape)
        kv.push("emb", [g, g])
        steps.append((2 * g.asnumpy(), rows))
    out = mx.nd.sparse.zeros("row_sparse", shape)
    kv.row_sparse_pull("emb", out=out, row_ids=mx.nd.arange(5))
    expected_w, m, v = _numpy_lazy_adam(w0.copy(), steps, 0.1, 0.1)
    np.testing.assert_allclose(out.asnumpy(), expected_w, rtol=1e-5)
    # measured with MXNet 1.9.1
    mxnet_w = [[-0.07441416382789612, 0.9255858063697815], [1.8029704093933105, 2.802760124206543],
               [4.0, 5.0], [5.819469451904297, 6.819236755371094], [8.0, 9.0]]
    np.testing.assert_allclose(out.data.asnumpy(), mxnet_w, rtol=1e-5, atol=1e-6)
    mean, var = kv._updater.states["emb"]
    np.testing.assert_allclose(mean.asnumpy(), m, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(var.asnumpy(), v, rtol=1e-5, atol=1e-9)
    np.testing.assert_array_equal(out.asnumpy()[[2, 4]], w0[[2, 4]])  # never pushed: unchanged


def test_set_updater_gets_mxnet_keys():
    calls = []

    def upd(key, grad, weight):
        calls.append((key, grad.stype, weight.stype))
        weight[:] = weight + grad * 10

    kv = mx.kv.create("local")
    kv._set_updater(upd)  # MXNet 1.9.1's name; set_updater is the same
    kv.init("a", mx.nd.ones(2))
    kv.push("a", [mx.nd.ones(2), mx.nd.ones(2, ctx=mx.cpu(1))])
    assert pulled(kv, "a", (2,)).tolist() == [21, 21]  # measured with MXNet 1.9.1
    kv2 = mx.kv.create("device")
    kv2.set_updater(upd)
    kv2.init(7, mx.nd.ones(2, ctx=mx.cpu(1)))
    kv2.push(7, mx.nd.ones(2, ctx=mx.cpu(1)))
    kv2.init(8, mx.nd.sparse.zeros("row_sparse", (3, 2)))
    kv2.push(8, mx.nd.sparse.zeros("row_sparse", (3, 2), ctx=mx.cpu(1)))
    # measured with MXNet 1.9.1: a str key reaches the updater as bytes, an int as int
    assert calls == [(b"a", "default", "default"), (7, "default", "default"),
                     (8, "row_sparse", "row_sparse")]
    with pytest.raises(InvalidArgumentTypeError, match="updater must be callable"):
        kv.set_updater(3)


def test_set_optimizer_needs_an_optimizer():
    kv = mx.kv.create("local")
    # MXNet 1.9.1: AttributeError "'str' object has no attribute 'aggregate_num'"
    with pytest.raises(InvalidArgumentTypeError, match="optimizer must be an Optimizer "
                                                       "instance .* got str"):
        kv.set_optimizer("sgd")
    kv.set_optimizer(mx.optimizer.SGD())
    kv.set_optimizer(mx.optimizer.SGD())  # MXNet 1.9.1: twice is fine


# ---------------------------------------------------------------------- optimizer states files
def _sgd_store(w):
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01))
    kv.init(0, mx.nd.array(w))
    return kv


# measured with MXNet 1.9.1: w0 = arange(8).reshape(4, 2) / 10, SGD(lr .1, momentum .9, wd .01),
# push 1 = rows {1, 3} of 1 + row {1} of 2, push 2 = dense 0.5, (save), push 3 = rows {0, 2} of 1.5
SGD_W2 = [[-0.05000000074505806, 0.04989999905228615], [-0.420279860496521, -0.3205696940422058],
          [0.34960001707077026, 0.4494999945163727], [0.35836061835289, 0.45807066559791565]]
SGD_MOM2 = [[-0.05000000074505806, -0.05010000243782997],
            [-0.32007983326911926, -0.32026970386505127],
            [-0.05040000006556511, -0.05050000175833702],
            [-0.1410394012928009, -0.1412293016910553]]
SGD_W3 = [[-0.24494999647140503, -0.145239919424057], [-0.420279860496521, -0.3205696940422058],
          [0.15389041602611542, 0.25360047817230225], [0.35836061835289, 0.45807066559791565]]


def _sgd_push(kv, n):
    if n == 1:
        kv.push(0, [rsp([1, 3], 1.0, (4, 2)), rsp([1], 2.0, (4, 2))])
    elif n == 2:
        kv.push(0, mx.nd.full((4, 2), 0.5))
    else:
        kv.push(0, rsp([0, 2], 1.5, (4, 2)))


def test_sgd_matches_mxnet_and_states_round_trip(tmp_path):
    kv = _sgd_store(np.arange(8, dtype=np.float32).reshape(4, 2) / 10)
    _sgd_push(kv, 1)
    _sgd_push(kv, 2)
    np.testing.assert_allclose(pulled(kv, 0, (4, 2)), SGD_W2, rtol=1e-6)
    np.testing.assert_allclose(kv._updater.states[0].asnumpy(), SGD_MOM2, rtol=1e-6)
    fname = tmp_path / "kv.states"
    kv.save_optimizer_states(str(fname))
    assert os.listdir(tmp_path) == ["kv.states"]  # atomic write: no temporary left
    resumed = _sgd_store(pulled(kv, 0, (4, 2)))
    resumed.load_optimizer_states(str(fname))
    _sgd_push(kv, 3)
    _sgd_push(resumed, 3)
    np.testing.assert_array_equal(pulled(resumed, 0, (4, 2)), pulled(kv, 0, (4, 2)))
    np.testing.assert_allclose(pulled(resumed, 0, (4, 2)), SGD_W3, rtol=1e-6)


def test_adam_states_round_trip_with_optimizer(tmp_path):
    def run(kv, steps):
        for step, rows in steps:
            kv.push("emb", [rsp(rows, step + 1.0, (5, 2))] * 2)

    def store():
        kv = mx.kv.create("local")
        kv.set_optimizer(mx.optimizer.Adam(learning_rate=0.1, wd=0.1))
        return kv

    plan = list(enumerate([[1, 3], [0, 1], [3], [1, 4]]))
    full = store()
    full.init("emb", mx.nd.array(np.arange(10).reshape(5, 2)).tostype("row_sparse"))
    run(full, plan)
    first = store()
    first.init("emb", mx.nd.array(np.arange(10).reshape(5, 2)).tostype("row_sparse"))
    run(first, plan[:2])
    fname = str(tmp_path / "adam.states")
    first.save_optimizer_states(fname, dump_optimizer=True)
    resumed = mx.kv.create("local")
    resumed.set_optimizer(mx.optimizer.SGD())  # replaced by the dumped Adam
    weight = mx.nd.sparse.zeros("row_sparse", (5, 2))
    first.row_sparse_pull("emb", out=weight, row_ids=mx.nd.arange(5))
    resumed.init("emb", weight)
    resumed.load_optimizer_states(fname)
    assert type(resumed._updater.optimizer).__name__ == "Adam"
    run(resumed, plan[2:])
    np.testing.assert_array_equal(pulled(resumed, "emb", (5, 2)), pulled(full, "emb", (5, 2)))


def test_loads_mxnet_sgd_states_file():
    # written by MXNet 1.9.1's kv.save_optimizer_states after pushes 1 and 2 above
    kv = _sgd_store(np.asarray(SGD_W2, dtype=np.float32))
    kv.load_optimizer_states(os.path.join(DATA, "sgd_momentum_mxnet191.states"))
    np.testing.assert_array_equal(kv._updater.states[0].asnumpy(),
                                  np.asarray(SGD_MOM2, dtype=np.float32))
    _sgd_push(kv, 3)
    np.testing.assert_allclose(pulled(kv, 0, (4, 2)), SGD_W3, rtol=1e-6)


def test_loads_mxnet_adam_states_file_with_optimizer():
    # written by MXNet 1.9.1: Adam(lr .1, wd .1) on a row_sparse 'emb' (arange(10) as 5x2), two
    # pushes ([rows 1, 3] of 1) x 2 and ([rows 0, 1] of 2) x 2, dump_optimizer=True
    w2 = [[-0.07441416382789612, 0.9255858063697815], [1.8029704093933105, 2.802760124206543],
          [4.0, 5.0], [5.899999141693115, 6.899999141693115], [8.0, 9.0]]
    mean2 = [[0.40000009536743164, 0.4100000858306885], [0.617000162601471, 0.6360001564025879],
             [0.0, 0.0], [0.2600000500679016, 0.27000007033348083], [0.0, 0.0]]
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.SGD())
    kv.init("emb", mx.nd.array(w2).tostype("row_sparse"))
    kv.load_optimizer_states(os.path.join(DATA, "adam_dump_mxnet191.states"))
    opt = kv._updater.optimizer
    assert type(opt).__name__ == "Adam" and (opt.lr, opt.wd) == (0.1, 0.1)
    np.testing.assert_array_equal(kv._updater.states["emb"][0].asnumpy(),
                                  np.asarray(mean2, dtype=np.float32))
    kv.push("emb", [rsp([3], 3.0, (5, 2))] * 2)
    # measured with MXNet 1.9.1 (push 3 after the save): row 3 only
    np.testing.assert_allclose(pulled(kv, "emb", (5, 2))[3],
                               [5.819469451904297, 6.819236755371094], rtol=1e-5)


class _RunsCommand:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("wrap", [lambda x: x, lambda x: {0: x}, lambda x: ({0: x}, None)])
def test_states_file_that_would_run_code_is_refused(tmp_path, wrap):
    marker = tmp_path / "pwned"
    fname = tmp_path / "evil.states"
    fname.write_bytes(pickle.dumps(wrap(_RunsCommand(marker))))
    kv = _sgd_store(np.zeros((4, 2), np.float32))
    with pytest.raises(FileFormatError, match=r"evil\.states: .*(posix|os)\.system.*"
                                              r"(no code from the file was run|nothing in the "
                                              r"file was run)"):
        kv.load_optimizer_states(str(fname))
    assert not marker.exists()
    assert kv._updater.states == {}  # nothing loaded


@pytest.mark.parametrize("content", [b"", b"\x00\x01garbage\xff" * 7, b"not a pickle at all"])
def test_corrupt_states_file(tmp_path, content):
    fname = tmp_path / "bad.states"
    fname.write_bytes(content)
    kv = _sgd_store(np.zeros((4, 2), np.float32))
    with pytest.raises(FileFormatError, match=r"bad\.states: "):
        kv.load_optimizer_states(str(fname))


def test_truncated_states_file(tmp_path):
    kv = _sgd_store(np.zeros((4, 2), np.float32))
    _sgd_push(kv, 2)
    good = tmp_path / "good.states"
    kv.save_optimizer_states(str(good))
    cut = tmp_path / "cut.states"
    cut.write_bytes(good.read_bytes()[:-9])
    with pytest.raises(FileFormatError, match=r"cut\.states: "):
        kv.load_optimizer_states(str(cut))
    with pytest.raises(FileNotFoundError):
        kv.load_optimizer_states(str(tmp_path / "missing.states"))


def test_states_without_optimizer():
    kv = mx.kv.create("local")
    # MXNet 1.9.1: AssertionError "Cannot save states for distributed training"
    with pytest.raises(SparsenetError, match="the store has no optimizer; call "
                                             "kv.set_optimizer"):
        kv.save_optimizer_states("x.states")
    kv.set_updater(lambda k, g, w: None)
    with pytest.raises(SparsenetError, match="custom function"):
        kv.load_optimizer_states("x.states")

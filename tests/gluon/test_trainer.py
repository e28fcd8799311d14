"""gluon.Trainer: against MXNet 1.9.1 training runs, rescaling, stale gradients, contexts, states.

``mxnet_1_9_1_trainer.json`` holds the weights after four SGD steps of a small
CSR model trained with MXNet 1.9.1 (the probe script is stored under ``"probe"``).
"""
import json
import os

import numpy as np
import pytest

import sparsenet as mx
from sparsenet import gluon
from sparsenet.gluon import nn

with open(os.path.join(os.path.dirname(__file__), "mxnet_1_9_1_trainer.json")) as _f:
    REF = json.load(_f)


class _FCS(gluon.HybridBlock):
    """The seed's FullyConnectedSparse (weight (in, out), dot + broadcast_add)."""

    def __init__(self, grad_stype):
        super().__init__()
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(12, 4), grad_stype=grad_stype)
            self.bias = self.params.get("bias", shape=(4,), init="zeros")

    def hybrid_forward(self, F, x, weight, bias):
        return F.broadcast_add(F.sparse.dot(x, weight), bias)


@pytest.mark.parametrize("case", ["rsp_sgd_mom_wd", "dense_sgd_mom_wd", "rsp_sgd", "dense_sgd_wd"])
def test_training_matches_mxnet_1_9_1(case):
    ref = REF[case]
    X, y = np.array(REF["X"], np.float32), np.array(REF["y"], np.float32)
    net = nn.Sequential()
    net.add(_FCS(ref["grad_stype"]), nn.Activation("sigmoid"), nn.Dense(1, in_units=4))
    net.initialize()
    net[0].weight.set_data(mx.nd.array(REF["W0"]))
    net[0].bias.set_data(mx.nd.array(REF["b0"]))
    net[2].weight.set_data(mx.nd.array(REF["W1"]))
    net[2].bias.set_data(mx.nd.zeros((1,)))
    trainer = gluon.Trainer(net.collect_params(), "sgd", ref["opt"], kvstore=None)
    loss_fn = gluon.loss.SigmoidBCELoss()
    for step in range(4):
        rows = [0, 1, 2] if step % 2 == 0 else [3, 4, 5]
        xb, yb = mx.nd.array(X[rows]).tostype("csr"), mx.nd.array(y[rows])
        with mx.autograd.record():
            loss = loss_fn(net(xb), yb)
        loss.backward()
        trainer.step(3)
    for key, p in (("W0", net[0].weight), ("b0", net[0].bias), ("W1", net[2].weight),
                   ("b1", net[2].bias)):
        np.testing.assert_allclose(p.data().asnumpy(), ref[key], rtol=1e-5, atol=1e-6,
                                   err_msg=key)


def _one_step(net, trainer, x, batch_size=1):
    with mx.autograd.record():
        y = net(x).sum()
    y.backward()
    trainer.step(batch_size)


def test_step_rescales_by_batch_size_and_uses_lr_mult():
    net = nn.Dense(1, in_units=2)
    net.initialize(init="zeros")
    net.weight.lr_mult = 0.5
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    _one_step(net, trainer, mx.nd.array([[4.0, 8.0]]), batch_size=4)
    np.testing.assert_allclose(net.weight.data().asnumpy(), [[-0.5, -1.0]])  # lr .5, /4
    np.testing.assert_allclose(net.bias.data().asnumpy(), [-0.25])
    assert trainer.learning_rate == 1.0
    trainer.set_learning_rate(0.1)
    assert trainer.learning_rate == 0.1 and trainer.optimizer.lr == 0.1


def test_stale_gradient_raises_or_is_skipped():
    a, b = nn.Dense(1, in_units=1), nn.Dense(1, in_units=1)
    net = nn.Sequential()
    net.add(a, b)
    net.initialize(init="ones")
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    with mx.autograd.record():
        y = a(mx.nd.ones((1, 1))).sum()  # b is not used
    y.backward()
    with pytest.raises(UserWarning, match=r"Gradient of Parameter `dense\d+_bias` on context "
                                          r"cpu\(0\) has not been updated by backward"):
        trainer.step(1)
    trainer.step(1, ignore_stale_grad=True)
    np.testing.assert_allclose(a.weight.data().asnumpy(), [[0.0]])
    np.testing.assert_allclose(b.weight.data().asnumpy(), [[1.0]])
    # the gradient of a is consumed: a second step finds it stale too
    with pytest.raises(UserWarning, match="has not been updated by backward"):
        trainer.step(1)


def test_allreduce_and_update_split_equals_step():
    def run(split):
        net = nn.Dense(2, in_units=3)
        net.initialize(init="ones")
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1,
                                                               "momentum": 0.9})
        for _ in range(2):
            with mx.autograd.record():
                y = (net(mx.nd.array([[1.0, 2.0, 3.0]])) ** 2).sum()
            y.backward()
            if split:
                trainer.allreduce_grads()
                trainer.update(2)
            else:
                trainer.step(2)
        return net.weight.data().asnumpy()

    np.testing.assert_array_equal(run(True), run(False))


def test_multiple_contexts_reduce_gradients_and_stay_in_sync():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    w = gluon.Parameter("w", shape=(1, 2), init="ones")
    e = gluon.Parameter("e", shape=(5, 2), init="ones", grad_stype="row_sparse")
    for p in (w, e):
        p.initialize(ctx=ctxs)
    trainer = gluon.Trainer([w, e], "sgd", {"learning_rate": 1.0})
    xs = [mx.nd.array([[1.0, 0.0]], ctx=ctxs[0]), mx.nd.array([[0.0, 2.0]], ctx=ctxs[1])]
    ids = [mx.nd.array([1], ctx=ctxs[0]), mx.nd.array([3], ctx=ctxs[1])]
    with mx.autograd.record():
        losses = [mx.nd.dot(x, wk, transpose_b=True).sum() +
                  mx.nd.Embedding(i, ek, input_dim=5, output_dim=2).sum()
                  for x, i, wk, ek in zip(xs, ids, w.list_data(), e.list_data())]
    mx.autograd.backward(losses)
    trainer.step(2)
    for wk in w.list_data():
        np.testing.assert_allclose(wk.asnumpy(), [[0.5, 0.0]])  # 1 - (1 + 0)/2, 1 - (0 + 2)/2
    expect = np.ones((5, 2), np.float32)
    expect[[1, 3]] = 0.5
    for ek in e.list_data():
        np.testing.assert_allclose(ek.asnumpy(), expect)
    for g in e.list_grad():
        assert g.stype == "row_sparse" and g.indices.asnumpy().tolist() == [1, 3]


def test_row_sparse_gradient_updates_only_its_rows_lazily():
    emb = nn.Embedding(6, 2, sparse_grad=True)
    emb.initialize(init="ones")
    trainer = gluon.Trainer(emb.collect_params(), "sgd", {"learning_rate": 0.1, "wd": 0.5})
    with mx.autograd.record():
        y = emb(mx.nd.array([2, 2, 4])).sum()
    y.backward()
    trainer.step(1)
    w = emb.weight.data().asnumpy()
    np.testing.assert_allclose(w[[0, 1, 3, 5]], 1.0)  # lazy: no decay of untouched rows
    np.testing.assert_allclose(w[2], 1 - 0.1 * (2 + 0.5), rtol=1e-6)
    np.testing.assert_allclose(w[4], 1 - 0.1 * (1 + 0.5), rtol=1e-6)


def test_row_sparse_weight_sparse_embedding_trains():
    emb = gluon.contrib.nn.SparseEmbedding(50, 3)
    emb.initialize(init="ones")
    trainer = gluon.Trainer(emb.collect_params(), "sgd", {"learning_rate": 1.0})
    for ids in ([7, 9], [9]):
        with mx.autograd.record():
            y = emb(mx.nd.array(ids)).sum()
        y.backward()
        trainer.step(1)
    full = emb.weight._data[0]
    assert full.stype == "row_sparse"
    expect = np.ones((50, 3), np.float32)
    expect[7] = 0.0
    expect[9] = -1.0
    np.testing.assert_allclose(full.asnumpy(), expect)


@pytest.mark.parametrize("transposed", [False, True])
def test_dense_sparsity_update_equals_dense_update_bitwise(transposed):
    rng = np.random.default_rng(0)
    init = rng.standard_normal((30, 4)).astype(np.float32)

    def train(dense_sparsity):
        w = gluon.Parameter("w", shape=(4, 30) if transposed else (30, 4))
        w.initialize()
        w.set_data(mx.nd.array(init.T if transposed else init))
        trainer = gluon.Trainer([w], "sgd", {"learning_rate": 0.3, "clip_gradient": 0.5},
                                dense_sparsity=dense_sparsity)
        local = np.random.default_rng(1)
        for _ in range(5):
            x = mx.nd.array(local.random((2, 30)) * (local.random((2, 30)) < 0.1)).tostype("csr")
            with mx.autograd.record():
                y = (mx.nd.dot(x, w.data(), transpose_b=transposed) ** 2).sum()
            y.backward()
            trainer.step(2)
        return w.data().asnumpy()

    np.testing.assert_array_equal(train(True), train(False))


def test_save_and_load_states_roundtrip(tmp_path):
    def make():
        net = nn.Dense(2, in_units=2)
        net.initialize(init="ones")
        return net, gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1,
                                                                 "momentum": 0.9})

    net, trainer = make()
    _one_step(net, trainer, mx.nd.array([[1.0, 2.0]]))
    path = str(tmp_path / "trainer.states")
    trainer.save_states(path)
    net2, trainer2 = make()
    net2.weight.set_data(net.weight.data())
    net2.bias.set_data(net.bias.data())
    trainer2.load_states(path)
    _one_step(net, trainer, mx.nd.array([[1.0, 2.0]]))
    _one_step(net2, trainer2, mx.nd.array([[1.0, 2.0]]))
    np.testing.assert_array_equal(net2.weight.data().asnumpy(), net.weight.data().asnumpy())
    assert trainer2.optimizer.momentum == 0.9


def test_constructor_checks():
    p = gluon.Parameter("w", shape=(1,))
    p.initialize()
    with pytest.raises(ValueError, match="must be a list or dict of Parameters"):
        gluon.Trainer(p, "sgd")
    with pytest.raises(ValueError, match="appears twice"):
        gluon.Trainer([p, p], "sgd")
    with pytest.raises(ValueError, match="unknown kvstore 'nccl'"):
        gluon.Trainer([p], "sgd", kvstore="nccl")
    with pytest.raises(TypeError, match="kvstore must be None, a str or a KVStore"):
        gluon.Trainer([p], "sgd", kvstore=3)
    with pytest.raises(ValueError, match="optimizer_params must be None"):
        gluon.Trainer([p], mx.optimizer.SGD(), {"learning_rate": 0.1})
    q = gluon.Parameter("q", shape=(1,))
    q.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    with pytest.raises(ValueError, match="same set of contexts"):
        gluon.Trainer([p, q], "sgd")
    d = {"b": gluon.Parameter("b", shape=(1,)), "a": gluon.Parameter("a", shape=(1,))}
    for v in d.values():
        v.initialize()
    assert [x.name for x in gluon.Trainer(d, "sgd")._params] == ["a", "b"]

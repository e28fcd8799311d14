"""Data parallelism over host contexts: training on 2-3 contexts equals one-context training
on the concatenated batch (float tolerance: the gradient sums are ordered differently), the
replicas stay bit-identical, and parameters may live on contexts other than cpu(0)."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet import autograd, gluon

CTX_SETS = [[mx.cpu(0)], [mx.cpu(0), mx.cpu(1)], [mx.cpu(1), mx.cpu(2), mx.cpu(0)]]


def _train_mlp(ctxs, optimizer, hybridize, steps=4):
    mx.random.seed(0)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(8, activation='relu', in_units=6), gluon.nn.Dense(1, in_units=8))
    net.initialize(mx.init.Xavier(), ctx=ctxs)
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), optimizer, {'learning_rate': 0.1})
    rs = np.random.RandomState(1)
    loss = gluon.loss.L2Loss()
    for _ in range(steps):
        x, y = rs.rand(12, 6).astype('f4'), rs.rand(12, 1).astype('f4')
        xs = gluon.utils.split_and_load(mx.nd.array(x), ctxs)
        ys = gluon.utils.split_and_load(mx.nd.array(y), ctxs)
        with autograd.record():
            losses = [loss(net(a), b) for a, b in zip(xs, ys)]
        autograd.backward(losses)
        trainer.step(12)
    return [[p.data(c).asnumpy() for c in ctxs] for p in net.collect_params().values()]


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("hybridize", [False, True])
def test_dense_model_over_contexts_equals_one_context(optimizer, hybridize):
    ref = _train_mlp(CTX_SETS[0], optimizer, hybridize)
    for ctxs in CTX_SETS[1:]:
        got = _train_mlp(ctxs, optimizer, hybridize)
        for want, replicas in zip(ref, got):
            np.testing.assert_allclose(replicas[0], want[0], rtol=1e-5, atol=1e-6)
            for r in replicas[1:]:  # Adam's step counter is kept per context
                np.testing.assert_array_equal(r, replicas[0])


def _train_embedding(ctxs, sparse_weight, steps=3):
    mx.random.seed(0)
    if sparse_weight:
        emb = gluon.contrib.nn.SparseEmbedding(20, 3)
    else:
        emb = gluon.nn.Embedding(20, 3, sparse_grad=True)
    emb.initialize(mx.init.Uniform(), ctx=ctxs)
    trainer = gluon.Trainer(emb.collect_params(), 'adam', {'learning_rate': 0.1})
    ids = np.array([1, 5, 5, 7, 19, 0], dtype='f4')
    for s in range(steps):
        xs = gluon.utils.split_and_load(mx.nd.array((ids + s) % 20), ctxs)
        with autograd.record():
            losses = [emb(x).sum() for x in xs]
        autograd.backward(losses)
        trainer.step(6)
    if sparse_weight:
        return [emb.weight.row_sparse_data(mx.nd.arange(20, ctx=c)).asnumpy() for c in ctxs]
    return [emb.weight.data(c).asnumpy() for c in ctxs]


@pytest.mark.parametrize("sparse_weight", [False, True])
def test_row_sparse_gradients_over_contexts_equal_one_context(sparse_weight):
    ref = _train_embedding(CTX_SETS[0], sparse_weight)[0]
    for ctxs in CTX_SETS[1:]:
        replicas = _train_embedding(ctxs, sparse_weight)
        np.testing.assert_allclose(replicas[0], ref, rtol=1e-6, atol=1e-7)
        for r in replicas[1:]:
            np.testing.assert_array_equal(r, replicas[0])


def test_sgd_over_two_contexts_matches_numpy():
    # one linear layer, loss = sum(x @ w.T): the gradient is the column sum of the batch
    ctxs = [mx.cpu(1), mx.cpu(2)]
    net = gluon.nn.Dense(1, in_units=3, use_bias=False)
    net.initialize(mx.init.One(), ctx=ctxs)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5})
    x = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 0, 1]], dtype='f4')
    xs = gluon.utils.split_and_load(mx.nd.array(x), ctxs)
    with autograd.record():
        losses = [net(a).sum() for a in xs]
    autograd.backward(losses)
    trainer.step(4)
    want = 1 - 0.5 * x.sum(axis=0) / 4
    for c in ctxs:
        assert net.weight.data(c).context == c
        np.testing.assert_allclose(net.weight.data(c).asnumpy()[0], want, rtol=1e-6)
    assert [g.context for g in net.weight.list_grad()] == ctxs
    assert [d.context for d in net.weight.list_data()] == ctxs


def test_row_sparse_parameter_living_only_on_other_contexts():
    p = gluon.Parameter('emb', shape=(6, 2), init=mx.init.Constant(3.0), stype='row_sparse',
                        grad_stype='row_sparse')
    p.initialize(ctx=[mx.cpu(1), mx.cpu(2)])
    rows = p.row_sparse_data(mx.nd.array([4, 1, 4], ctx=mx.cpu(2)))
    assert rows.context == mx.cpu(2)
    np.testing.assert_array_equal(rows.indices.asnumpy(), [1, 4])
    np.testing.assert_array_equal(rows.data.asnumpy(), np.full((2, 2), 3.0))
    with pytest.raises(RuntimeError, match="only initialized on"):
        p.row_sparse_data(mx.nd.array([1]))  # cpu(0): the parameter is not there

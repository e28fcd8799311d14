"""gluon.Trainer through a KVStore object (update_on_kvstore as MXNet defines it)."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet import autograd, gluon


def _linear_step(kv, update_on_kvstore, ctxs, steps=2):
    net = gluon.nn.Dense(1, in_units=3, use_bias=False)
    net.initialize(mx.init.One(), ctx=ctxs)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5, 'momentum': 0.9},
                            kvstore=kv, update_on_kvstore=update_on_kvstore)
    x = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 0, 1]], dtype='f4')
    for _ in range(steps):
        xs = gluon.utils.split_and_load(mx.nd.array(x), ctxs)
        with autograd.record():
            losses = [net(a).sum() for a in xs]
        autograd.backward(losses)
        trainer.step(4)
    return net, trainer, x


@pytest.mark.parametrize("update_on_kvstore", [True, False])
@pytest.mark.parametrize("nctx", [1, 2])
def test_dense_sgd_momentum_through_a_local_store_matches_numpy(update_on_kvstore, nctx):
    ctxs = [mx.cpu(i) for i in range(nctx)]
    kv = mx.kv.create('local')
    net, trainer, x = _linear_step(kv, update_on_kvstore, ctxs)
    # NumPy: loss = sum(x @ w), grad = column sums / batch, SGD momentum 0.9, lr 0.5, 2 steps
    g = x.sum(axis=0) / 4
    w, mom = np.ones(3, 'f4'), np.zeros(3, 'f4')
    for _ in range(2):
        mom = 0.9 * mom - 0.5 * g
        w = w + mom
    for c in ctxs:
        np.testing.assert_allclose(net.weight.data(c).asnumpy()[0], w, rtol=1e-6)
    assert trainer._kvstore is kv and trainer._update_on_kvstore == update_on_kvstore
    out = mx.nd.zeros((1, 3))
    kv.pull(0, out=out)  # the store holds the weight (update_on_kvstore) or the summed gradient
    want = w if update_on_kvstore else g * 4
    np.testing.assert_allclose(out.asnumpy()[0], want, rtol=1e-6)


def _train_sparse_embedding(kv, ctxs, steps=3):
    mx.random.seed(0)
    emb = gluon.contrib.nn.SparseEmbedding(10, 2)
    emb.initialize(mx.init.Uniform(), ctx=ctxs)
    trainer = gluon.Trainer(emb.collect_params(), 'adam', {'learning_rate': 0.1}, kvstore=kv)
    for s in range(steps):
        ids = mx.nd.array([s, s + 2, 7])
        xs = gluon.utils.split_and_load(ids, ctxs)
        with autograd.record():
            losses = [emb(a).sum() for a in xs]
        autograd.backward(losses)
        trainer.step(3)
    return emb.weight._reduce().asnumpy()


def test_row_sparse_weight_updated_on_the_store_equals_local_training():
    ref = _train_sparse_embedding(None, [mx.cpu(0)])
    got = _train_sparse_embedding(mx.kv.create('local'), [mx.cpu(0)])
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_update_on_kvstore_false_with_sparse_weight_is_refused():
    emb = gluon.contrib.nn.SparseEmbedding(10, 2)
    emb.initialize()
    trainer = gluon.Trainer(emb.collect_params(), 'sgd', kvstore=mx.kv.create('local'),
                            update_on_kvstore=False)
    # the store is set up at the first row_sparse_data() or step(), as in MXNet
    with pytest.raises(mx.MXNetError, match="update_on_kvstore=False when sparse weights"):
        with autograd.record():
            emb(mx.nd.array([1]))
    assert trainer._kvstore is None

"""What large_word_lm does after each epoch, on a small row_sparse model.

It trains with a ``'device'`` kvstore that owns the row_sparse weights (each batch pulls
only the rows it uses into the executors), saves ``save_checkpoint(prefix, epoch,
save_optimizer_states=False)``, loads the checkpoint into a Module built for another batch
size (batch 1), and binds an evaluation Module of another graph to it with
``bind(shared_module=..., for_training=False)``. Expected weights follow SGD by hand:
``loss = sum(emb[ids])`` gives row ``r`` the gradient ``count(r in ids)`` in every column.
"""
import os
import warnings

import numpy as np
import pytest

import sparsenet as mx

S = mx.sym
V, D, LR = 6, 2, 0.5
W0 = np.arange(V * D, dtype=np.float32).reshape(V, D) / 10
STEPS = [[0, 2, 2], [5, 0, 5]]


def _graph(reduce):
    emb = S.Embedding(S.var('data'), weight=S.var('emb_weight', stype='row_sparse'), input_dim=V,
                      output_dim=D, sparse_grad=True, name='embed')
    return S.make_loss(reduce(emb))


def _trained(tmp_path):
    mod = mx.mod.Module(_graph(S.sum), data_names=['data'], label_names=None)
    mod.bind(data_shapes=[('data', (3,))])
    mod.init_params()
    mod.set_params({'emb_weight': mx.nd.array(W0).tostype('row_sparse')}, {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rescale_grad=1 is intended
        mod.init_optimizer(kvstore=mx.kv.create('device'),
                           optimizer=mx.optimizer.SGD(learning_rate=LR, rescale_grad=1.0))
    for ids in STEPS:
        batch = mx.io.DataBatch(data=[mx.nd.array(ids)], label=None)
        mod.prepare(batch, sparse_row_id_fn=lambda b: {'emb_weight': b.data[0]})
        mod.forward_backward(batch)
        mod.update()
    prefix = os.path.join(str(tmp_path), 'ckp')
    mod.save_checkpoint(prefix, 0, save_optimizer_states=False)
    return prefix


def _expected():
    w = W0.copy()
    for ids in STEPS:
        np.add.at(w, ids, -LR)  # every column of a used row: gradient = its count
    return w


def test_checkpoint_holds_every_trained_row(tmp_path):
    prefix = _trained(tmp_path)
    assert sorted(os.listdir(tmp_path)) == ['ckp-0000.params', 'ckp-symbol.json']
    _, args, aux = mx.model.load_checkpoint(prefix, 0)
    assert sorted(args) == ['emb_weight'] and aux == {}
    assert args['emb_weight'].stype == 'row_sparse'
    # row 2 was updated by the first batch only, so the executors no longer hold it
    np.testing.assert_allclose(args['emb_weight'].asnumpy(), _expected(), rtol=1e-6)


def test_load_into_batch_one_and_share_with_an_eval_graph(tmp_path):
    prefix = _trained(tmp_path)
    _, args, aux = mx.model.load_checkpoint(prefix, 0)
    # the example's CustomModule.load: a Module of the batch-1 graph holding the loaded params
    train1 = mx.mod.Module(_graph(S.sum), data_names=['data'], label_names=None)
    train1._arg_params, train1._aux_params = args, aux
    train1.params_initialized = True
    train1.bind(data_shapes=[('data', (1,))])
    evaluate = mx.mod.Module(_graph(lambda e: S.mean(e * e)), data_names=['data'],
                             label_names=None)
    evaluate.bind(data_shapes=[('data', (1,))], shared_module=train1, for_training=False)
    assert evaluate.params_initialized and not evaluate.for_training
    w = _expected()
    for row in range(V):
        batch = mx.io.DataBatch(data=[mx.nd.array([row])], label=None)
        train1.forward(batch, is_train=False)
        np.testing.assert_allclose(train1.get_outputs()[0].asnumpy(), [w[row].sum()],
                                   rtol=1e-6)
        evaluate.forward(batch, is_train=False)
        np.testing.assert_allclose(evaluate.get_outputs()[0].asnumpy(),
                                   [(w[row] ** 2).mean()], rtol=1e-6)


def test_shared_module_must_be_bound():
    evaluate = mx.mod.Module(_graph(S.sum), data_names=['data'], label_names=None)
    other = mx.mod.Module(_graph(S.sum), data_names=['data'], label_names=None)
    with pytest.raises(mx.MXNetError, match="shared_module must be bound"):
        evaluate.bind(data_shapes=[('data', (1,))], shared_module=other, for_training=False)

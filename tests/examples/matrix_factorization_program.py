"""MXNet 1.9.1's ``example/sparse/matrix_factorization`` program, on sparsenet.

Our own program making the example's calls in its order (``data.py``,
``model.py``, ``train.py``): MovieLens ``user::movie::rating::time`` lines parsed
in Python into NDArrays (user ids int32, item ids and scores float32), an
``NDArrayIter(shuffle=True)`` inside a ``PrefetchingIter``, user and item
``Embedding`` with row_sparse weights and ``sparse_grad``, ReLU and
``FullyConnected`` on each, their inner product under
``LinearRegressionOutput``; a Module initialised with ``Xavier``, SGD with
momentum and ``init_optimizer(kvstore='device')`` (with one context no store is
made, as in MXNet, so the ``Module.prepare`` calls before each step and before
``score`` have nothing to pull and warn so), and the ``MSE`` metric.

The searchable copy of MXNet's repository holds ``data.py`` as 1.9.1 has it but
older ``train.py``/``model.py``; the 1.9.x calls followed here (``Embedding`` with
``sparse_grad`` rather than ``contrib.SparseEmbedding``, the row-id functions,
``kvstore='device'``) are the v1.x branch's as far as could be established.

Differences from MXNet's file, none in the ``mx`` calls: no download (the data
files are given), the initial weights are fixed (:func:`common.fixed_params`)
and ``np.random`` is seeded, :func:`train` takes the command line's options as
arguments and returns its metrics.
"""
import logging
import os

import numpy as np

import sparsenet as mx

from tests.examples.common import Clock, fixed_params, param_summary

MOVIELENS = {
    'dataset': 'ml-10m',
    'train': 'ml-10M100K/r1.train',
    'val': 'ml-10M100K/r1.test',
    'max_user': 71569,
    'max_movie': 65135,
}


def get_movielens_iter(filename, batch_size):
    """A PrefetchingIter over the shuffled (user, item) -> score triples of ``filename``."""
    user, item, score = [], [], []
    with open(filename, 'r') as f:
        for line in f:
            tks = line.strip().split('::')
            if len(tks) != 4:
                continue
            user.append(tks[0])
            item.append(tks[1])
            score.append(tks[2])
    user = mx.nd.array(user, dtype='int32')
    item = mx.nd.array(item)
    score = mx.nd.array(score)
    data_train = {'user': user, 'item': item}
    label_train = {'score': score}
    iter_train = mx.io.NDArrayIter(data=data_train, label=label_train,
                                   batch_size=batch_size, shuffle=True)
    return mx.io.PrefetchingIter(iter_train)


def matrix_fact_net(factor_size, num_hidden, max_user, max_item, dense):
    """Embeddings of user and item, a ReLU + FullyConnected each, inner product, L2 loss."""
    user = mx.symbol.Variable('user')
    item = mx.symbol.Variable('item')
    score = mx.symbol.Variable('score')
    stype = 'default' if dense else 'row_sparse'
    sparse_grad = not dense
    user_weight = mx.symbol.Variable('user_weight', stype=stype)
    item_weight = mx.symbol.Variable('item_weight', stype=stype)
    user = mx.symbol.Embedding(data=user, weight=user_weight, sparse_grad=sparse_grad,
                               input_dim=max_user, output_dim=factor_size)
    item = mx.symbol.Embedding(data=item, weight=item_weight, sparse_grad=sparse_grad,
                               input_dim=max_item, output_dim=factor_size)
    user = mx.symbol.Activation(data=user, act_type='relu')
    user_act = mx.symbol.FullyConnected(data=user, num_hidden=num_hidden)
    item = mx.symbol.Activation(data=item, act_type='relu')
    item_act = mx.symbol.FullyConnected(data=item, num_hidden=num_hidden)
    pred = user_act * item_act
    pred = mx.symbol.sum(data=pred, axis=1)
    pred = mx.symbol.Flatten(data=pred)
    return mx.symbol.LinearRegressionOutput(data=pred, label=score)


def _sigma(name, shape):
    if name.endswith('_bias'):
        return 0.0
    return 1.0 / np.sqrt(shape[1])


def train(data_dir, num_epoch=3, batch_size=128, log_interval=100, factor_size=128,
          dense=False, seed=0):
    """Train as ``train.py`` does; returns per-epoch metrics and training-loop seconds."""
    np.random.seed(seed)

    def batch_row_ids(data_batch):
        item = data_batch.data[0]
        user = data_batch.data[1]
        return {'user_weight': user.astype(np.int64), 'item_weight': item.astype(np.int64)}

    def all_row_ids(data_batch):
        all_users = mx.nd.arange(0, MOVIELENS['max_user'], dtype='int64')
        all_movies = mx.nd.arange(0, MOVIELENS['max_movie'], dtype='int64')
        return {'user_weight': all_users, 'item_weight': all_movies}

    ctx = [mx.cpu()]
    optimizer = 'sgd'
    momentum = 0.9
    learning_rate = 0.1
    max_user = MOVIELENS['max_user']
    max_movies = MOVIELENS['max_movie']
    train_iter = get_movielens_iter(os.path.join(data_dir, MOVIELENS['train']), batch_size)
    val_iter = get_movielens_iter(os.path.join(data_dir, MOVIELENS['val']), batch_size)
    net = matrix_fact_net(factor_size, factor_size, max_user, max_movies, dense=dense)
    mod = mx.module.Module(net, context=ctx, data_names=['user', 'item'],
                           label_names=['score'])
    mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)
    mod.init_params(initializer=mx.init.Xavier(factor_type="in", magnitude=2.34))
    initial = fixed_params(mx, mod, seed, _sigma)
    optim = mx.optimizer.create(optimizer, learning_rate=learning_rate, momentum=momentum,
                                wd=1e-4, rescale_grad=1.0 / batch_size)
    mod.init_optimizer(optimizer=optim, kvstore='device')
    metric = mx.metric.create(['MSE'])
    speedometer = mx.callback.Speedometer(batch_size, log_interval)
    clock = Clock(mx.nd.waitall)
    result = {'train_mse': [], 'eval_mse': [], 'samples': 0}
    for epoch in range(num_epoch):
        nbatch = 0
        metric.reset()
        with clock:
            for batch in train_iter:
                nbatch += 1
                mod.prepare(batch, sparse_row_id_fn=batch_row_ids)
                mod.forward_backward(batch)
                mod.update()
                mod.update_metric(metric, batch.label)
                speedometer_param = mx.model.BatchEndParam(epoch=epoch, nbatch=nbatch,
                                                           eval_metric=metric, locals=locals())
                speedometer(speedometer_param)
        result['samples'] += nbatch * batch_size
        result['train_mse'].append(float(metric.get_name_value()[0][1]))
        mod.prepare(None, sparse_row_id_fn=all_row_ids)
        score = mod.score(val_iter, ['MSE'])
        logging.info('epoch %d, eval MSE = %s ', epoch, score[0][1])
        result['eval_mse'].append(float(score[0][1]))
        train_iter.reset()
        val_iter.reset()
    result['seconds'] = clock.seconds
    result['params'] = param_summary(mod, initial)
    return result

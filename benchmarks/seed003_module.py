"""Seed 003's Module training (the tutorial's code), for ``bench_module.py``: one text, both libraries.

Every function takes the library as ``mx`` (sparsenet, or mxnet in MXNet's own
process). Run as a script, it times MXNet 1.9.1 and prints the epoch times as JSON::

    /tmp/mx/bin/python benchmarks/seed003_module.py loop 5
"""
import json
import logging
import random
import sys
import time

import numpy as np


def make_module(mx):
    """The seed's data iterator and bound, initialised Module with its SGD optimizer."""
    random.seed(42)
    np.random.seed(42)
    mx.random.seed(42)
    feature_dimension, batch_size = 100, 1
    train_data = mx.test_utils.rand_ndarray((1000, feature_dimension), 'csr', 0.01)
    target_weight = mx.nd.arange(1, feature_dimension + 1).reshape((feature_dimension, 1))
    train_label = mx.nd.dot(train_data, target_weight)
    train_iter = mx.io.NDArrayIter(train_data, train_label, batch_size,
                                   last_batch_handle='discard', label_name='label')
    initializer = mx.initializer.Normal(sigma=0.01)
    X = mx.sym.Variable('data', stype='csr')
    Y = mx.symbol.Variable('label')
    weight = mx.symbol.Variable('weight', stype='row_sparse', shape=(feature_dimension, 1),
                                init=initializer)
    bias = mx.symbol.Variable('bias', shape=(1, ))
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(X, weight), bias)
    lro = mx.sym.LinearRegressionOutput(data=pred, label=Y, name="lro")
    mod = mx.mod.Module(symbol=lro, data_names=['data'], label_names=['label'])
    mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)
    mod.init_params(initializer=initializer)
    sgd = mx.optimizer.SGD(learning_rate=0.05, rescale_grad=1.0 / batch_size, momentum=0.9)
    mod.init_optimizer(optimizer=sgd)
    return mod, train_iter


def loop_epoch(mx, mod, train_iter, metric):
    """One epoch of the seed's own loop."""
    train_iter.reset()
    metric.reset()
    for batch in train_iter:
        mod.forward(batch, is_train=True)       # compute predictions
        mod.update_metric(metric, batch.label)  # accumulate prediction accuracy
        mod.backward()                          # compute gradients
        mod.update()                            # update parameters


def fit_epoch(mx, mod, train_iter, epoch):
    """One epoch of ``Module.fit`` on the same module."""
    mod.fit(train_iter, eval_metric='mse', begin_epoch=epoch, num_epoch=epoch + 1)


def timed_epochs(mx, kind, epochs, sync=lambda: None):
    """Seconds of each of ``epochs`` epochs of ``kind`` ('loop' or 'fit') after a warm-up."""
    mod, train_iter = make_module(mx)
    metric = mx.metric.create('MSE')
    times = []
    for e in range(epochs + 1):  # epoch 0 warms up
        t0 = time.perf_counter()
        if kind == 'loop':
            loop_epoch(mx, mod, train_iter, metric)
        else:
            fit_epoch(mx, mod, train_iter, e)
        sync()
        times.append(time.perf_counter() - t0)
    return times[1:]


if __name__ == "__main__":
    import mxnet
    logging.disable(logging.CRITICAL)
    print(json.dumps(timed_epochs(mxnet, sys.argv[1], int(sys.argv[2]), mxnet.nd.waitall)))

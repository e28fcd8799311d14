"""Seed 003's Module training (the tutorial's code) for ``bench_module.py``, for both libraries.

Every function takes the library as ``mx`` (sparsenet, or mxnet in MXNet's own
process). Run as a script under MXNet's Python, it is a worker that trains one
epoch per ``epoch`` line on stdin and answers with the epoch's seconds::

    /tmp/mx/bin/python benchmarks/seed003_module.py loop
"""
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


class Trainer:
    """The seed's module and iterator; :meth:`epoch` trains one epoch ('loop' or 'fit')."""

    def __init__(self, mx, kind, sync=lambda: None):
        self.mx, self.kind, self.sync = mx, kind, sync
        self.mod, self.train_iter = make_module(mx)
        self.metric = mx.metric.create('MSE')
        self.epochs = 0

    def epoch(self):
        """Seconds of one epoch."""
        t0 = time.perf_counter()
        if self.kind == 'loop':
            loop_epoch(self.mx, self.mod, self.train_iter, self.metric)
        else:  # Module.fit on the bound module, one epoch per call
            self.mod.fit(self.train_iter, eval_metric='mse', begin_epoch=self.epochs,
                         num_epoch=self.epochs + 1)
        self.sync()
        self.epochs += 1
        return time.perf_counter() - t0


if __name__ == "__main__":
    import warnings

    import mxnet
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    trainer = Trainer(mxnet, sys.argv[1], mxnet.nd.waitall)
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() != "epoch":
            break
        print(repr(trainer.epoch()), flush=True)

"""MXNet 1.9.1's ``example/sparse/factorization_machine`` program, on sparsenet.

Our own program making the example's calls in its order (``metric.py``,
``model.py``, ``train.py``): Criteo LibSVM data through ``LibSVMIter``, a
factorization machine over a CSR batch with row_sparse ``v`` and ``w``
(``dot``, ``_internal._square_sum``, ``square``, ``Concat``,
``LogisticRegressionOutput``), per-variable ``lr_mult``/``wd_mult``/``init``, Adam
through ``mx.kvstore.create('local')``, ``Module.prepare`` pulling only the
batch's rows before each step and all rows before ``score``, and two metrics
registered by the program itself (``log_loss`` and ``auc``).

Differences from MXNet's file, none in the ``mx`` calls: the initial weights are
fixed (:func:`common.fixed_params`), :func:`train` takes the command line's
options as arguments and returns its metrics, and the batches skipped by the
program's ``try``/``except`` (a one-class batch makes ``auc`` raise) are counted.
"""
import logging
from operator import itemgetter

import numpy as np

import sparsenet as mx

from tests.examples.common import Clock, fixed_params, param_summary


@mx.metric.register
@mx.metric.alias('log_loss')
class LogLossMetric(mx.metric.EvalMetric):
    """Negative log-likelihood of the predicted probability of the true class (binary)."""

    def __init__(self, eps=1e-12, name='log-loss', output_names=None, label_names=None):
        super(LogLossMetric, self).__init__(name, eps=eps, output_names=output_names,
                                            label_names=label_names)
        self.eps = eps

    def update(self, labels, preds):
        mx.metric.check_label_shapes(labels, preds)
        for label, pred in zip(labels, preds):
            label = label.asnumpy().ravel()
            pred = pred.asnumpy()
            pred = np.column_stack((1 - pred, pred))
            n = pred.shape[0]
            assert label.shape[0] == n, (label.shape[0], n)
            prob = pred[np.arange(n, dtype=np.int64), np.int64(label)]
            self.sum_metric += (-np.log(prob + self.eps)).sum()
            self.num_inst += n


@mx.metric.register
@mx.metric.alias('auc')
class AUCMetric(mx.metric.EvalMetric):
    """Area under the ROC curve of each batch, averaged over batches."""

    def __init__(self, eps=1e-12):
        super(AUCMetric, self).__init__('auc')
        self.eps = eps

    def update(self, labels, preds):
        mx.metric.check_label_shapes(labels, preds)
        label = labels[0].asnumpy()
        pred = preds[0].asnumpy()
        ranked = sorted(((label[i], pred[i]) for i in range(pred.shape[0])),
                        key=itemgetter(1), reverse=True)
        positives = label.sum()
        if positives == 0 or positives == label.size:
            raise Exception("AUC with one class is undefined")
        ones = np.count_nonzero(label)
        zeros = len(label) - ones
        height = area = 0.0
        for y, _ in ranked:
            if y == 1.0:
                height += 1.0
            else:
                area += height
        self.sum_metric += area / (zeros * ones)
        self.num_inst += 1


def factorization_machine_model(factor_size, num_features, lr_mult_config, wd_mult_config,
                                init_config):
    """y = w0 + sum(x_i w_i) + 0.5 (sum_ij <v_i, v_j> x_i x_j - sum_i <v_i, v_i> x_i^2)."""
    x = mx.symbol.Variable("data", stype='csr')
    v = mx.symbol.Variable("v", shape=(num_features, factor_size), stype='row_sparse',
                           init=init_config['v'], lr_mult=lr_mult_config['v'],
                           wd_mult=wd_mult_config['v'])
    w = mx.symbol.var('w', shape=(num_features, 1), stype='row_sparse', init=init_config['w'],
                      lr_mult=lr_mult_config['w'], wd_mult=wd_mult_config['w'])
    w0 = mx.symbol.var('w0', shape=(1,), init=init_config['w0'],
                       lr_mult=lr_mult_config['w0'], wd_mult=wd_mult_config['w0'])
    w1 = mx.symbol.broadcast_add(mx.symbol.dot(x, w), w0)
    v_s = mx.symbol._internal._square_sum(data=v, axis=1, keepdims=True)
    x_s = x.square()
    bd_sum = mx.sym.dot(x_s, v_s)
    w2 = mx.symbol.dot(x, v)
    w2_squared = 0.5 * mx.symbol.square(data=w2)
    w_all = mx.symbol.Concat(w1, w2_squared, dim=1)
    sum1 = w_all.sum(axis=1, keepdims=True)
    sum2 = -0.5 * bd_sum
    model = sum1 + sum2
    y = mx.symbol.Variable("softmax_label")
    return mx.symbol.LogisticRegressionOutput(data=model, label=y)


def train(data_dir, data_train, data_test, num_epoch=1, batch_size=1000, input_size=1000000,
          factor_size=16, factor_lr=0.0001, linear_lr=0.001, bias_lr=0.1, factor_wd=0.00001,
          linear_wd=0.001, bias_wd=0.01, factor_sigma=0.001, linear_sigma=0.01,
          bias_sigma=0.01, log_interval=100, kvstore='local', seed=0):
    """Train as ``train.py`` does; returns per-epoch metrics and training-loop seconds."""
    num_features = input_size

    def batch_row_ids(data_batch):
        idx = data_batch.data[0].indices
        return {'w': idx, 'v': idx}

    def all_row_ids(data_batch):
        all_rows = mx.nd.arange(0, num_features, dtype='int64')
        return {'w': all_rows, 'v': all_rows}

    kv = mx.kvstore.create(kvstore)
    train_data = mx.io.LibSVMIter(data_libsvm=data_train, data_shape=(num_features,),
                                  batch_size=batch_size)
    eval_data = mx.io.LibSVMIter(data_libsvm=data_test, data_shape=(num_features,),
                                 batch_size=batch_size)
    lr_config = {'v': factor_lr, 'w': linear_lr, 'w0': bias_lr}
    wd_config = {'v': factor_wd, 'w': linear_wd, 'w0': bias_wd}
    init_config = {'v': mx.initializer.Normal(factor_sigma),
                   'w': mx.initializer.Normal(linear_sigma),
                   'w0': mx.initializer.Normal(bias_sigma)}
    model = factorization_machine_model(factor_size, num_features, lr_config, wd_config,
                                        init_config)
    mod = mx.mod.Module(symbol=model)
    mod.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label)
    mod.init_params()
    sigmas = {'v': factor_sigma, 'w': linear_sigma, 'w0': bias_sigma}
    initial = fixed_params(mx, mod, seed, lambda name, shape: sigmas[name])
    optimizer_params = (('learning_rate', 1), ('wd', 1), ('beta1', 0.9),
                        ('beta2', 0.999), ('epsilon', 1e-8))
    mod.init_optimizer(optimizer='adam', kvstore=kv, optimizer_params=optimizer_params)
    metric = mx.metric.create(['log_loss', 'auc'])
    speedometer = mx.callback.Speedometer(batch_size, log_interval)
    clock = Clock(mx.nd.waitall)
    result = {'train': [], 'eval_log_loss': [], 'skipped': 0, 'samples': 0}
    train_iter = iter(train_data)
    eval_iter = iter(eval_data)
    for epoch in range(num_epoch):
        nbatch = 0
        metric.reset()
        with clock:
            for batch in train_iter:
                try:
                    nbatch += 1
                    mod.prepare(batch, sparse_row_id_fn=batch_row_ids)
                    mod.forward_backward(batch)
                    mod.update()
                    mod.update_metric(metric, batch.label)
                    speedometer_param = mx.model.BatchEndParam(
                        epoch=epoch, nbatch=nbatch, eval_metric=metric, locals=locals())
                    speedometer(speedometer_param)
                except Exception:  # MXNet's program: a bare except, for auc's one-class batches
                    result['skipped'] += 1
                    continue
        result['samples'] += nbatch * batch_size
        result['train'].append([float(v) for _, v in metric.get_name_value()])
        mod.prepare(None, all_row_ids)
        score = mod.score(eval_iter, ['log_loss'])
        logging.info("epoch %d, eval log loss = %s", epoch, score[0][1])
        result['eval_log_loss'].append(float(score[0][1]))
        train_iter.reset()
        eval_iter.reset()
    result['seconds'] = clock.seconds
    result['params'] = param_summary(mod, initial)
    return result

"""MXNet 1.9.1's ``example/sparse/linear_classification`` program, on sparsenet.

Our own program making the example's calls in its order
(``weighted_softmax_ce.py``, ``linear_model.py``, ``train.py``): Avazu LibSVM
data through ``LibSVMIter`` (``num_parts``/``part_index`` from the kvstore), a
linear model ``sparse.dot(csr, row_sparse weight) + bias`` whose loss is a custom
operator (``mx.operator.CustomOp``/``CustomOpProp``/``register``, used through
``mx.sym.Custom`` under ``MakeLoss``) weighting the positive class, SGD with
``rescale_grad``, ``Module.prepare`` with row-id functions, the ``nll_loss``
metric, ``score`` and a checkpoint every epoch.

Differences from MXNet's file, none in the ``mx`` calls: no download (the data
files are given), the initial weights are fixed (:func:`common.fixed_params`),
:func:`train` takes the command line's options as arguments and returns its metrics.
"""
import logging
import os

import sparsenet as mx

from tests.examples.common import Clock, fixed_params, param_summary

AVAZU = {
    'train': 'avazu-app',
    'test': 'avazu-app.t',
    # 1000000 + 1 since LibSVMIter uses zero-based indexing
    'num_features': 1000001,
}


class WeightedSoftmaxCrossEntropyLoss(mx.operator.CustomOp):
    """Softmax cross-entropy whose gradient is scaled by (1 + label * w) / w."""

    def __init__(self, positive_cls_weight):
        self.positive_cls_weight = float(positive_cls_weight)

    def forward(self, is_train, req, in_data, out_data, aux):
        data = in_data[0]
        label = in_data[1]
        pred = mx.nd.SoftmaxOutput(data, label)
        self.assign(out_data[0], req[0], pred)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        label = in_data[1]
        pred = out_data[0]
        dx = pred - mx.nd.one_hot(label, 2)
        w = self.positive_cls_weight
        scale_factor = ((1 + label * w) / w).reshape((pred.shape[0], 1))
        self.assign(in_grad[0], req[0], scale_factor * dx)


@mx.operator.register("weighted_softmax_ce_loss")
class WeightedSoftmaxCrossEntropyLossProp(mx.operator.CustomOpProp):
    """Properties of ``weighted_softmax_ce_loss``: inputs data and label, one output."""

    def __init__(self, positive_cls_weight):
        super(WeightedSoftmaxCrossEntropyLossProp, self).__init__(True)
        self.positive_cls_weight = positive_cls_weight
        assert float(positive_cls_weight) > 0

    def list_arguments(self):
        return ['data', 'label']

    def list_outputs(self):
        return ['output']

    def infer_shape(self, in_shapes):
        return in_shapes, (in_shapes[0],), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return WeightedSoftmaxCrossEntropyLoss(self.positive_cls_weight)


def linear_model(num_features, positive_cls_weight):
    """``MakeLoss(Custom(sparse.dot(csr, row_sparse weight) + bias, label))``."""
    x = mx.symbol.Variable("data", stype='csr')
    norm_init = mx.initializer.Normal(sigma=0.01)
    weight = mx.symbol.Variable("weight", shape=(num_features, 2), init=norm_init,
                                stype='row_sparse')
    bias = mx.symbol.Variable("bias", shape=(2,))
    pred = mx.symbol.broadcast_add(mx.symbol.sparse.dot(x, weight), bias)
    y = mx.symbol.Variable("softmax_label")
    model = mx.sym.Custom(pred, y, op_type='weighted_softmax_ce_loss',
                          positive_cls_weight=positive_cls_weight, name='out')
    return mx.sym.MakeLoss(model)


def train(data_dir, num_epoch=5, batch_size=8192, kvstore=None, optimizer='sgd', seed=0,
          checkpoint=None):
    """Train as ``train.py`` does; returns per-epoch metrics and training-loop seconds.

    ``checkpoint``: the checkpoint prefix (default ``<data_dir>/checkpoint``).
    """
    def batch_row_ids(data_batch):
        return {'weight': data_batch.data[0].indices}

    def all_row_ids(data_batch):
        all_rows = mx.nd.arange(0, AVAZU['num_features'], dtype='int64')
        return {'weight': all_rows}

    kv = mx.kvstore.create(kvstore) if kvstore else None
    rank = kv.rank if kv else 0
    num_worker = kv.num_workers if kv else 1
    num_features = AVAZU['num_features']
    train_path = os.path.join(data_dir, AVAZU['train'])
    val_path = os.path.join(data_dir, AVAZU['test'])
    train_data = mx.io.LibSVMIter(data_libsvm=train_path, data_shape=(num_features,),
                                  batch_size=batch_size, num_parts=num_worker,
                                  part_index=rank)
    eval_data = mx.io.LibSVMIter(data_libsvm=val_path, data_shape=(num_features,),
                                 batch_size=batch_size)
    positive_class_weight = 2
    model = linear_model(num_features, positive_class_weight)
    mod = mx.mod.Module(symbol=model, data_names=['data'], label_names=['softmax_label'])
    mod.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label)
    mod.init_params()
    initial = fixed_params(mx, mod, seed, lambda name, shape: 0.01 if name == 'weight' else 0.0)
    optim = mx.optimizer.create(optimizer, learning_rate=0.01,
                                rescale_grad=1.0 / batch_size / num_worker)
    mod.init_optimizer(optimizer=optim, kvstore=kv)
    metric = mx.metric.create(['nll_loss'])
    speedometer = mx.callback.Speedometer(batch_size, 100)
    clock = Clock(mx.nd.waitall)
    result = {'train_nll': [], 'eval_nll': [], 'samples': 0}
    for epoch in range(num_epoch):
        nbatch = 0
        metric.reset()
        with clock:
            for batch in train_data:
                nbatch += 1
                mod.prepare(batch, sparse_row_id_fn=batch_row_ids)
                mod.forward_backward(batch)
                mod.update()
                mod.update_metric(metric, batch.label)
                speedometer_param = mx.model.BatchEndParam(epoch=epoch, nbatch=nbatch,
                                                           eval_metric=metric, locals=locals())
                speedometer(speedometer_param)
        result['samples'] += nbatch * batch_size
        result['train_nll'].append(float(metric.get_name_value()[0][1]))
        mod.prepare(None, all_row_ids)
        score = mod.score(eval_data, ['nll_loss'])
        logging.info('epoch %d, eval nll = %s ', epoch, score[0][1])
        result['eval_nll'].append(float(score[0][1]))
        mod.prepare(None, all_row_ids)
        mod.save_checkpoint(checkpoint or os.path.join(data_dir, "checkpoint"), epoch)
        train_data.reset()
        eval_data.reset()
    result['seconds'] = clock.seconds
    result['params'] = param_summary(mod, initial)
    return result

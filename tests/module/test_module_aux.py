"""Module with auxiliary states (BatchNorm): initialisation, training, get/set_params, checkpoints.

Expected values measured with MXNet 1.9.1 (``/tmp/mx/bin/python``): the same module, data,
``Constant(0.5)`` initialisation and one SGD step (learning rate 0.1).
"""
import os

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.ndarray import serialization

X = np.array([[1, 2], [3, 4], [0, 1], [2, -1]], 'float32')


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


def _net():
    fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc')
    return mx.sym.LinearRegressionOutput(mx.sym.BatchNorm(fc, name='bn', fix_gamma=False),
                                         name='lro')


def _module(init=True):
    mod = mx.mod.Module(_net(), label_names=['lro_label'])
    mod.bind(data_shapes=[('data', (4, 2))], label_shapes=[('lro_label', (4, 3))])
    if init:
        mod.init_params(mx.init.Constant(0.5))
    return mod


def _batch():
    return mx.io.DataBatch([mx.nd.array(X)], [mx.nd.ones((4, 3))])


def _np(params):
    return {k: v.asnumpy() for k, v in params.items()}


def test_get_params_returns_auxiliary_states_initialised_by_their_init():
    # measured with MXNet 1.9.1: the moving statistics start at zeros and ones whatever the
    # initializer (their __init__ attribute), gamma and beta follow the initializer
    args, aux = _module().get_params()
    assert sorted(args) == ['bn_beta', 'bn_gamma', 'fc_bias', 'fc_weight']
    assert sorted(aux) == ['bn_moving_mean', 'bn_moving_var']
    np.testing.assert_array_equal(aux['bn_moving_mean'].asnumpy(), [0, 0, 0])
    np.testing.assert_array_equal(aux['bn_moving_var'].asnumpy(), [1, 1, 1])
    mod = mx.mod.Module(_net(), label_names=['lro_label'])
    mod.bind(data_shapes=[('data', (4, 2))], label_shapes=[('lro_label', (4, 3))])
    mod.init_params(mx.init.Uniform(0.5))
    args, aux = mod.get_params()
    np.testing.assert_array_equal(args['bn_gamma'].asnumpy(), [1, 1, 1])
    np.testing.assert_array_equal(args['bn_beta'].asnumpy(), [0, 0, 0])
    np.testing.assert_array_equal(aux['bn_moving_var'].asnumpy(), [1, 1, 1])


def test_training_step_updates_auxiliary_states_not_through_the_optimizer():
    # measured with MXNet 1.9.1
    mod = _module()
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1})
    mod.forward(_batch(), is_train=True)
    mod.backward()
    mod.update()
    args, aux = mod.get_params()
    np.testing.assert_allclose(aux['bn_moving_mean'].asnumpy(), [0.15000004] * 3, rtol=1e-6)
    np.testing.assert_allclose(aux['bn_moving_var'].asnumpy(), [1.0500001] * 3, rtol=1e-6)
    np.testing.assert_allclose(args['fc_weight'].asnumpy(), [[0.49998522, 0.4999704]] * 3,
                               rtol=1e-6)
    np.testing.assert_allclose(args['bn_gamma'].asnumpy(), [0.9666889] * 3, rtol=1e-6)
    np.testing.assert_allclose(args['bn_beta'].asnumpy(), [0.03333334] * 3, rtol=1e-6)
    np.testing.assert_allclose(args['fc_bias'].asnumpy(), [0.0] * 3, atol=1e-8)
    mod.forward(_batch(), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy()[:, 0],
                               [1.3062363, 3.1920383, 0.36333537, 0.36336327], rtol=1e-5)


def test_set_params_and_init_params_with_aux_params():
    # measured with MXNet 1.9.1: a dict without a state raises RuntimeError ("bn_moving_mean is
    # not presented") unless allow_missing; aux_params=None runs the initializer
    mod = _module()
    args, aux = mod.get_params()
    aux = {'bn_moving_mean': mx.nd.full((3,), 2.0), 'bn_moving_var': mx.nd.full((3,), 3.0)}
    mod.set_params(args, aux)
    np.testing.assert_array_equal(mod.get_params()[1]['bn_moving_var'].asnumpy(), [3, 3, 3])
    with pytest.raises(RuntimeError, match="'bn_moving_mean' is not in aux_params"):
        mod.set_params(args, {})
    mod.set_params(args, {'bn_moving_var': mx.nd.full((3,), 4.0)}, allow_missing=True)
    np.testing.assert_array_equal(_np(mod.get_params()[1])['bn_moving_mean'], [2, 2, 2])  # kept
    mod.init_params(arg_params=args, force_init=True)  # Uniform(0.01) default: __init__ wins
    np.testing.assert_array_equal(_np(mod.get_params()[1])['bn_moving_mean'], [0, 0, 0])
    np.testing.assert_array_equal(_np(mod.get_params()[1])['bn_moving_var'], [1, 1, 1])
    # MXNet 1.9.1 raises TypeError ("'NoneType' object is not callable"): it calls the None
    # initializer on every auxiliary state; sparsenet keeps their values
    mod.set_params(args, {'bn_moving_mean': mx.nd.full((3,), 5.0),
                          'bn_moving_var': mx.nd.full((3,), 6.0)})
    mod.set_params(args, None)
    np.testing.assert_array_equal(_np(mod.get_params()[1])['bn_moving_var'], [6, 6, 6])
    extra = dict(aux, zzz=mx.nd.ones(3))
    with pytest.raises(ValueError, match=r"\['zzz'\] are not auxiliary states"):
        mod.set_params(args, extra)
    mod.set_params(args, extra, allow_extra=True)


def test_checkpoint_keeps_auxiliary_states(tmp_path):
    mod = _module()
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1})
    mod.forward(_batch(), is_train=True)
    mod.backward()
    mod.update()
    prefix = os.path.join(tmp_path, 'bn')
    mod.save_checkpoint(prefix, 3)
    # as MXNet's files: arg: and aux: keys
    assert sorted(serialization.load(f'{prefix}-0003.params')) == [
        'arg:bn_beta', 'arg:bn_gamma', 'arg:fc_bias', 'arg:fc_weight', 'aux:bn_moving_mean',
        'aux:bn_moving_var']
    sym, args, aux = mx.model.load_checkpoint(prefix, 3)
    assert sym.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    np.testing.assert_allclose(aux['bn_moving_var'].asnumpy(), [1.0500001] * 3, rtol=1e-6)
    loaded = mx.mod.Module.load(prefix, 3, label_names=['lro_label'])
    loaded.bind(data_shapes=[('data', (4, 2))], label_shapes=[('lro_label', (4, 3))],
                for_training=False)
    np.testing.assert_allclose(loaded.get_params()[1]['bn_moving_mean'].asnumpy(),
                               [0.15000004] * 3, rtol=1e-6)
    loaded.forward(_batch(), is_train=False)
    np.testing.assert_allclose(loaded.get_outputs()[0].asnumpy()[:, 0],
                               [1.3062363, 3.1920383, 0.36333537, 0.36336327], rtol=1e-5)
    # mx.model's own helpers write the same keys
    mx.model.save_checkpoint(prefix, 4, sym, args, aux)
    assert mx.model.load_params(prefix, 4)[1].keys() == aux.keys()


def test_fit_trains_with_batchnorm():
    data = mx.io.NDArrayIter(np.tile(X, (3, 1)), np.ones((12, 3), 'float32'), batch_size=4,
                             label_name='lro_label')
    mod = mx.mod.Module(_net(), label_names=['lro_label'])
    mod.fit(data, num_epoch=2, initializer=mx.init.Constant(0.5), eval_metric='mse',
            optimizer_params={'learning_rate': 0.1})
    args, aux = mod.get_params()
    # measured with MXNet 1.9.1 (six steps)
    np.testing.assert_allclose(aux['bn_moving_mean'].asnumpy(), [0.7027588] * 3, rtol=1e-5)
    np.testing.assert_allclose(aux['bn_moving_var'].asnumpy(), [1.2341022] * 3, rtol=1e-5)
    np.testing.assert_allclose(args['bn_gamma'].asnumpy(), [0.8160567] * 3, rtol=1e-5)

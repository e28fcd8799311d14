"""Hybridized BatchNorm: running statistics as auxiliary states in export() and imports().

Expected values measured with MXNet 1.9.1 (``/tmp/mx/bin/python``): the same network,
``Constant(0.5)`` initialisation, and one recorded forward/backward.
"""
import os

import numpy as np

import sparsenet as mx
from sparsenet.ndarray import serialization

X = np.array([[1, 2], [3, 4], [0, 1], [2, -1]], 'float32')


def _trained_net():
    net = mx.gluon.nn.HybridSequential(prefix='net_')
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(3, in_units=2), mx.gluon.nn.BatchNorm(in_channels=3))
    net.initialize(mx.init.Constant(0.5))
    net.hybridize()
    with mx.autograd.record():
        y = net(mx.nd.array(X))
    y.backward()
    return net


def _running(params):
    return {k.rsplit('_', 2)[-2] + '_' + k.rsplit('_', 1)[-1]: v.data().asnumpy()
            for k, v in params.items() if 'running' in k}


def test_hybridized_batchnorm_updates_running_statistics():
    net = _trained_net()
    got = _running(net.collect_params())
    np.testing.assert_allclose(got['running_mean'], [0.15000004] * 3, rtol=1e-6)
    np.testing.assert_allclose(got['running_var'], [1.05] * 3, rtol=1e-6)
    sym = net._cached_graph.symbol
    assert sym.list_auxiliary_states() == ['net_batchnorm0_running_mean',
                                           'net_batchnorm0_running_var']
    assert sym.list_arguments() == ['data', 'net_dense0_weight', 'net_dense0_bias',
                                    'net_batchnorm0_gamma', 'net_batchnorm0_beta']


def test_export_writes_aux_keys_and_imports_reads_them(tmp_path):
    net = _trained_net()
    path = os.path.join(tmp_path, 'n')
    sym_file, params_file = net.export(path, epoch=3)
    # measured with MXNet 1.9.1: the running statistics are saved under aux:
    assert sorted(serialization.load(params_file)) == [
        'arg:net_batchnorm0_beta', 'arg:net_batchnorm0_gamma', 'arg:net_dense0_bias',
        'arg:net_dense0_weight', 'aux:net_batchnorm0_running_mean',
        'aux:net_batchnorm0_running_var']
    blk = mx.gluon.SymbolBlock.imports(sym_file, ['data'], params_file)
    params = blk.collect_params()
    assert sorted(params.keys()) == [
        'net_batchnorm0_beta', 'net_batchnorm0_gamma', 'net_batchnorm0_running_mean',
        'net_batchnorm0_running_var', 'net_dense0_bias', 'net_dense0_weight']
    # measured with MXNet 1.9.1: the imported statistics take no gradient
    assert params['net_batchnorm0_running_mean'].grad_req == 'null'
    assert params['net_batchnorm0_gamma'].grad_req == 'write'
    np.testing.assert_allclose(_running(params)['running_var'], [1.05] * 3, rtol=1e-6)
    out = blk(mx.nd.array(X)).asnumpy()
    np.testing.assert_allclose(out[:, 0], [1.3174587, 3.2692497, 0.34156337, 0.34156337],
                               rtol=1e-5)
    with mx.autograd.record():
        y = blk(mx.nd.array(X))
    y.backward()
    got = _running(params)
    np.testing.assert_allclose(got['running_mean'], [0.2850001] * 3, rtol=1e-6)
    np.testing.assert_allclose(got['running_var'], [1.095] * 3, rtol=1e-6)


def test_symbol_block_makes_auxiliary_states_null_grad_parameters():
    # measured with MXNet 1.9.1
    data = mx.sym.var('data')
    blk = mx.gluon.SymbolBlock(mx.sym.BatchNorm(data, name='bn'), data)
    assert {k: v.grad_req for k, v in blk.collect_params().items()} == {
        'bn_gamma': 'write', 'bn_beta': 'write', 'bn_moving_mean': 'null',
        'bn_moving_var': 'null'}
    blk.initialize(mx.init.Constant(2.0))  # deferred: shapes come from the first batch
    x = mx.nd.array([[1.0, 2.0], [3.0, 6.0]])
    out = blk(x)
    assert [p.shape for p in blk.collect_params().values()] == [(2,)] * 4
    # inference: (x - 2) / sqrt(2 + eps) * 1 (fix_gamma) + 2
    np.testing.assert_allclose(out.asnumpy(), (x.asnumpy() - 2) / np.sqrt(2.001) + 2,
                               rtol=1e-6)

"""Output names of multi-output operators, and inputs created by the chosen parameters.

Expected names measured with MXNet 1.9.1 (``/tmp/mx/bin/python``).
"""
import numpy as np
import pytest

import sparsenet as mx


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


D = mx.sym.var('data')


@pytest.mark.parametrize("make, outputs", [
    (lambda: mx.sym.BatchNorm(D, output_mean_var=True, name='bn'),
     ['bn_output', 'bn_mean', 'bn_var']),
    (lambda: mx.sym.BatchNorm(D, name='bn'), ['bn_output']),
    (lambda: mx.sym.LayerNorm(D, output_mean_var=True, name='ln'),
     ['ln_output', 'ln_mean', 'ln_std']),
    (lambda: mx.sym.GroupNorm(D, output_mean_var=True, name='gn'),
     ['gn_output', 'gn_mean', 'gn_std']),
    (lambda: mx.sym.InstanceNorm(D, name='in'), ['in_output']),
    (lambda: mx.sym.LeakyReLU(D, act_type='rrelu', name='lr'), ['lr_output', 'lr_mask']),
    (lambda: mx.sym.LeakyReLU(D, act_type='elu', name='el'), ['el_output']),
    (lambda: mx.sym.Dropout(D, name='do'), ['do_output']),
    (lambda: mx.sym.SliceChannel(D, num_outputs=3, name='sc'),
     ['sc_output0', 'sc_output1', 'sc_output2']),
    (lambda: mx.sym.SliceChannel(D, num_outputs=1, name='sc'), ['sc_output0']),
    (lambda: mx.sym.split(D, num_outputs=2, name='sp'), ['sp_output0', 'sp_output1']),
    (lambda: mx.sym.topk(D, ret_typ='both', name='tk'), ['tk_output0', 'tk_output1']),
    (lambda: mx.sym.topk(D, ret_typ='value', name='tk'), ['tk_output0']),
    (lambda: mx.sym.topk(D, ret_typ='indices', name='tk'), ['tk_output']),
    (lambda: mx.sym.topk(D, ret_typ='mask', name='tk'), ['tk_output']),
    (lambda: mx.sym.sort(D, name='s'), ['s_output0']),
    (lambda: mx.sym.argsort(D, name='s'), ['s_output']),
    (lambda: mx.sym.SoftmaxOutput(D, name='so'), ['so_output']),
], ids=lambda v: None if callable(v) else v[0])
def test_output_names_as_mxnet(make, outputs):
    s = make()
    assert s.list_outputs() == outputs
    assert [s[name].list_outputs() for name in outputs] == [[n] for n in outputs]


def test_named_outputs_select_and_evaluate():
    bn = mx.sym.BatchNorm(D, output_mean_var=True, name='bn')
    assert bn.get_internals().list_outputs() == [
        'data', 'bn_gamma', 'bn_beta', 'bn_moving_mean', 'bn_moving_var', 'bn_output',
        'bn_mean', 'bn_var']
    # measured with MXNet 1.9.1: infer_shape gives every output's shape
    assert bn.infer_shape(data=(4, 3))[1] == [(4, 3), (3,), (3,)]
    exe = bn.simple_bind(mx.cpu(), data=(4, 3))
    assert list(exe.output_dict) == ['bn_output', 'bn_mean', 'bn_var']
    assert mx.sym.LeakyReLU(D, act_type='rrelu', name='lr').infer_shape(data=(4, 3))[1] == \
        [(4, 3), (4, 3)]


def test_prelu_creates_its_gamma_with_mxnet_initializer():
    # measured with MXNet 1.9.1: gamma is created (other act_types have no gamma input) and
    # starts at 0.25; the node's parameters are copied to it
    pr = mx.sym.LeakyReLU(D, act_type='prelu', name='pr')
    assert pr.list_arguments() == ['data', 'pr_gamma']
    assert pr.attr_dict()['pr_gamma'] == {'__init__': '["Constant", {"value": 0.25}]',
                                          'act_type': 'prelu'}
    assert pr.infer_shape(data=(4, 3)) == ([(4, 3), (3,)], [(4, 3)], [])
    assert mx.sym.LeakyReLU(D, act_type='leaky', name='lk').list_arguments() == ['data']
    # a gamma of the caller's keeps its own initializer
    g = mx.sym.var('g', init=mx.init.One())
    assert mx.sym.LeakyReLU(D, g, act_type='prelu').attr_dict()['g']['__init__'] == \
        mx.init.One().dumps()
    # the created gamma is initialised to 0.25 by a Module (its __init__ wins)
    mod = mx.mod.Module(pr, label_names=None)
    mod.bind(data_shapes=[('data', (2, 3))], for_training=False)
    mod.init_params(mx.init.Uniform(0.5))
    np.testing.assert_array_equal(mod.get_params()[0]['pr_gamma'].asnumpy(), [0.25] * 3)
    mod.forward(mx.io.DataBatch([mx.nd.array([[-4.0, 1.0, -8.0], [2.0, -1.0, 0.0]])]))
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(),
                                  [[-1.0, 1.0, -2.0], [2.0, -0.25, 0.0]])

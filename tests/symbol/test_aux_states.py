"""Auxiliary states (BatchNorm's moving statistics): listing, inference, binding, updates.

Every expected value was measured with MXNet 1.9.1 (``/tmp/mx/bin/python``) unless it is
computed with NumPy in the test.
"""
import json

import numpy as np
import pytest

import sparsenet as mx

X = np.array([[1, 2, 3], [3, 6, 1], [0, 1, 2], [5, 5, 5]], 'float32')


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


def _bn(**kw):
    return mx.sym.BatchNorm(mx.sym.var('data'), name='bn', **kw)


def test_batchnorm_lists_moving_statistics_as_auxiliary_states():
    # measured with MXNet 1.9.1
    bn = _bn()
    assert bn.list_arguments() == ['data', 'bn_gamma', 'bn_beta']
    assert bn.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    assert bn.list_inputs() == ['data', 'bn_gamma', 'bn_beta', 'bn_moving_mean', 'bn_moving_var']
    assert bn.list_outputs() == ['bn_output']
    auto = mx.sym.BatchNorm(mx.sym.var('data'))
    assert auto.list_auxiliary_states() == ['batchnorm0_moving_mean', 'batchnorm0_moving_var']
    # two layers and a plain variable: inputs in graph order, states in graph order
    g = mx.sym.BatchNorm(_bn(), name='b') + mx.sym.var('z')
    assert g.list_inputs() == ['data', 'bn_gamma', 'bn_beta', 'bn_moving_mean', 'bn_moving_var',
                               'b_gamma', 'b_beta', 'b_moving_mean', 'b_moving_var', 'z']
    assert g.list_arguments() == ['data', 'bn_gamma', 'bn_beta', 'b_gamma', 'b_beta', 'z']
    assert g.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var', 'b_moving_mean',
                                         'b_moving_var']
    assert g.get_internals().list_outputs()[:6] == [
        'data', 'bn_gamma', 'bn_beta', 'bn_moving_mean', 'bn_moving_var', 'bn_output']


def test_moving_statistics_get_their_initializers():
    # measured with MXNet 1.9.1 (FSetInputVarAttrOnCompose): zero and one, also on a variable
    # the caller passes, unless it has its own __init__; the node's parameters are copied
    assert _bn().attr_dict() == {'bn_moving_mean': {'__init__': '["zero", {}]'},
                                 'bn_moving_var': {'__init__': '["one", {}]'}}
    s = mx.sym.BatchNorm(mx.sym.var('data'), moving_mean=mx.sym.var('mm'),
                         moving_var=mx.sym.var('mv', init=mx.init.Constant(2.0)), name='bn')
    attrs = s.attr_dict()
    assert attrs['mm'] == {'__init__': '["zero", {}]'}
    assert json.loads(attrs['mv']['__init__']) == ['constant', {'value': 2.0}]
    assert _bn(eps=0.01).attr_dict() == {
        'bn_gamma': {'eps': '0.01'}, 'bn_beta': {'eps': '0.01'},
        'bn_moving_mean': {'__init__': '["zero", {}]', 'eps': '0.01'},
        'bn_moving_var': {'__init__': '["one", {}]', 'eps': '0.01'}, 'bn': {'eps': '0.01'}}


def test_infer_shape_type_and_storage_return_auxiliary_states():
    # measured with MXNet 1.9.1
    bn = _bn()
    assert bn.infer_shape(data=(4, 3)) == ([(4, 3), (3,), (3,)], [(4, 3)], [(3,), (3,)])
    assert bn.infer_shape_partial() == ([(), (), ()], [()], [(), ()])
    assert bn.infer_shape_partial(bn_moving_mean=(3,)) == ([(), (), ()], [()], [(3,), ()])
    assert bn.infer_type(data='float64') == ([np.float64] * 3, [np.float64], [np.float64] * 2)
    assert bn.infer_storage_type() == (['default'] * 3, ['default'], ['default'] * 2)
    with pytest.raises(ValueError, match=r"\['zz'\] are not arguments.*auxiliary states"):
        bn.infer_shape(zz=(1,))


def test_json_marks_auxiliary_inputs_as_mxnet_does():
    # measured with MXNet 1.9.1: the node entries of mutated inputs carry version 1; the nodes
    # are written exactly as MXNet writes them, and MXNet's file reads back the same
    s = mx.sym.LeakyReLU(_bn(fix_gamma=False), act_type='prelu', name='pr')
    nodes = json.loads(s.tojson())['nodes']
    assert nodes[5] == {'op': 'BatchNorm', 'name': 'bn', 'attrs': {'fix_gamma': 'False'},
                        'inputs': [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]}
    assert nodes[6] == {'op': 'null', 'name': 'pr_gamma',
                        'attrs': {'__init__': '["Constant", {"value": 0.25}]',
                                  'act_type': 'prelu'}, 'inputs': []}
    back = mx.sym.load_json(s.tojson())
    assert back.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    assert back.list_arguments() == ['data', 'bn_gamma', 'bn_beta', 'pr_gamma']


def test_simple_bind_allocates_auxiliary_states_without_gradients():
    # measured with MXNet 1.9.1: zero arrays of the inferred shape and dtype, no gradient, an
    # auxiliary state named in grad_req is ignored
    exe = _bn().simple_bind(mx.cpu(), data=(4, 3), type_dict={'data': 'float64'},
                            grad_req={'data': 'write', 'bn_gamma': 'write',
                                      'bn_moving_mean': 'write'})
    assert sorted(exe.aux_dict) == ['bn_moving_mean', 'bn_moving_var']
    assert [a.shape for a in exe.aux_arrays] == [(3,), (3,)]
    assert all(a.dtype == np.float64 for a in exe.aux_arrays)
    assert all((a.asnumpy() == 0).all() for a in exe.aux_arrays)
    assert sorted(exe.grad_dict) == ['bn_beta', 'bn_gamma', 'data']
    assert exe.grad_dict['bn_beta'] is None


def test_training_step_updates_moving_statistics_in_backward():
    # measured with MXNet 1.9.1: forward(is_train=True) leaves them, backward updates them
    # with momentum 0.9 and the biased batch variance; eval then normalises with them
    exe = _bn().simple_bind(mx.cpu(), data=(4, 3))
    exe.arg_dict['data'][:] = X
    exe.arg_dict['bn_gamma'][:] = 1
    exe.aux_dict['bn_moving_var'][:] = 1
    out = exe.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(out, [[-0.6508564, -0.72752136, 0.16899224],
                                     [0.3905138, 1.2125356, -1.1829456],
                                     [-1.1715415, -1.2125356, -0.5069767],
                                     [1.4318839, 0.72752136, 1.5209302]], rtol=1e-5)
    np.testing.assert_array_equal(exe.aux_dict['bn_moving_mean'].asnumpy(), [0, 0, 0])
    exe.backward(mx.nd.ones((4, 3)))
    np.testing.assert_allclose(exe.aux_dict['bn_moving_mean'].asnumpy(),
                               [0.22500005, 0.35000008, 0.27500007], rtol=1e-6)
    np.testing.assert_allclose(exe.aux_dict['bn_moving_var'].asnumpy(),
                               [1.26875, 1.325, 1.11875], rtol=1e-6)
    # NumPy: 0.9 * moving + 0.1 * batch statistics (biased variance)
    np.testing.assert_allclose(exe.aux_dict['bn_moving_var'].asnumpy(),
                               0.9 + 0.1 * X.var(axis=0), rtol=1e-6)
    out = exe.forward(is_train=False)[0].asnumpy()
    np.testing.assert_allclose(out, [[0.68776894, 1.4328877, 2.5751703],
                                     [2.4626565, 4.906555, 0.68513703],
                                     [-0.1996749, 0.5644709, 1.6301537],
                                     [4.2375445, 4.0381384, 4.465204]], rtol=1e-5)


def test_bind_takes_auxiliary_states_as_list_or_dict():
    s = _bn()
    args = {'data': mx.nd.array(X), 'bn_gamma': mx.nd.ones(3), 'bn_beta': mx.nd.zeros(3)}
    mm, mv = mx.nd.zeros(3), mx.nd.ones(3) * 2
    exe = s.bind(mx.cpu(), args, aux_states=[mm, mv])
    assert exe.aux_arrays[0] is mm and exe.aux_dict['bn_moving_var'] is mv
    exe = s.bind(mx.cpu(), args, aux_states={'bn_moving_var': mv, 'bn_moving_mean': mm})
    assert exe.aux_arrays == [mm, mv]
    # eval: (x - 0) / sqrt(2 + eps)
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), X / np.sqrt(2 + 1e-3), rtol=1e-6)
    # MXNet 1.9.1 raises "Length of aux_states does not match the number of arguments" and
    # "key `bn_moving_var` is missing in `aux_states`"
    with pytest.raises(ValueError, match="aux_states is required"):
        s.bind(mx.cpu(), args)
    with pytest.raises(ValueError, match="got 1 aux_states for the 2 auxiliary states"):
        s.bind(mx.cpu(), args, aux_states=[mm])
    with pytest.raises(ValueError, match=r"no array given for auxiliary state\(s\) "
                                         r"\['bn_moving_var'\]"):
        s.bind(mx.cpu(), args, aux_states={'bn_moving_mean': mm})
    with pytest.raises(ValueError, match=r"\['x'\] are not auxiliary states"):
        s.bind(mx.cpu(), args, aux_states={'bn_moving_mean': mm, 'bn_moving_var': mv,
                                           'x': mm})
    with pytest.raises(TypeError, match="'bn_moving_var' must be an NDArray"):
        s.bind(mx.cpu(), args, aux_states=[mm, 1.0])
    # MXNet 1.9.1 binds a (4,) moving_var to 3 channels silently
    with pytest.raises(mx.MXNetError, match="moving_var must have shape"):
        s.bind(mx.cpu(), args, aux_states=[mm, mx.nd.ones(4)])


def test_copy_params_from_fills_auxiliary_states():
    # measured with MXNet 1.9.1: a partial aux dict is fine; an unknown name raises unless
    # allow_extra_params
    exe = _bn().simple_bind(mx.cpu(), data=(4, 3))
    exe.copy_params_from({'bn_gamma': mx.nd.ones(3)}, {'bn_moving_mean': mx.nd.ones(3) * 7})
    np.testing.assert_array_equal(exe.aux_dict['bn_moving_mean'].asnumpy(), [7, 7, 7])
    np.testing.assert_array_equal(exe.aux_dict['bn_moving_var'].asnumpy(), [0, 0, 0])
    with pytest.raises(ValueError, match="'zzz' is not an auxiliary state"):
        exe.copy_params_from({}, {'zzz': mx.nd.ones(3)})
    exe.copy_params_from({}, {'zzz': mx.nd.ones(3)}, allow_extra_params=True)
    with pytest.raises(ValueError, match="'bn_moving_mean' is not an argument"):
        exe.copy_params_from({'bn_moving_mean': mx.nd.ones(3)})


def test_reshape_and_shared_exec_keep_auxiliary_states():
    exe = _bn().simple_bind(mx.cpu(), data=(4, 3))
    exe.aux_dict['bn_moving_var'][:] = 5
    new = exe.reshape(data=(2, 3))
    assert new.aux_arrays[0] is exe.aux_arrays[0] and new.aux_arrays[1] is exe.aux_arrays[1]
    assert new.arg_dict['data'].shape == (2, 3)
    other = _bn().simple_bind(mx.cpu(), data=(8, 3), shared_exec=exe)
    assert other.aux_dict['bn_moving_var'] is exe.aux_dict['bn_moving_var']
    np.testing.assert_array_equal(other.aux_dict['bn_moving_var'].asnumpy(), [5, 5, 5])


def test_no_auxiliary_states_for_other_operators():
    y = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc')
    assert y.list_auxiliary_states() == [] and y.list_inputs() == y.list_arguments()
    assert y.infer_shape(data=(1, 3))[2] == []
    with pytest.raises(ValueError, match="no auxiliary states"):
        y.bind(mx.cpu(), {'data': mx.nd.ones((1, 3)), 'fc_weight': mx.nd.ones((2, 3)),
                          'fc_bias': mx.nd.ones(2)}, aux_states=[mx.nd.ones(1)])

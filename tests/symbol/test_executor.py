"""Executors: binding, forward/backward against hand-computed values, fallback policy, logging."""
import logging
import warnings

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import StorageFallbackError, StorageFallbackWarning


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


def test_simple_bind_allocates_declared_stypes():
    b = mx.sym.var('b', stype='csr')
    c = mx.sym.var('c', stype='row_sparse')
    w = mx.sym.var('w')
    y = mx.sym.Group([mx.sym.dot(b, c), w * 2])
    exe = y.simple_bind(mx.cpu(), b=(2, 3), c=(3, 4), w=(2,))
    assert {k: v.stype for k, v in exe.arg_dict.items()} == \
        {'b': 'csr', 'c': 'row_sparse', 'w': 'default'}
    assert {k: v.stype for k, v in exe.grad_dict.items()} == \
        {'b': 'default', 'c': 'row_sparse', 'w': 'default'}
    assert [o.shape for o in exe.outputs] == [(2, 4), (2,)]
    assert exe.arg_dict['c'].indices.shape == (0,)  # zeros: nothing stored
    assert exe.aux_dict == {} and list(exe.output_dict) == ['dot0_output', '_mulscalar0_output']
    # stype_dict overrides, grad_req 'null' allocates no gradient
    exe2 = y.simple_bind(mx.cpu(), grad_req={'w': 'write'}, stype_dict={'c': 'default'},
                         type_dict={'w': 'float64'}, b=(2, 3), c=(3, 4), w=(2,))
    assert exe2.arg_dict['c'].stype == 'default'
    assert exe2.grad_dict == {'b': None, 'c': None, 'w': exe2.grad_arrays[2]}
    assert exe2.arg_dict['w'].dtype == np.float64 and exe2.outputs[1].dtype == np.float64


def test_simple_bind_errors():
    y = mx.sym.dot(mx.sym.var('a'), mx.sym.var('b'))
    with pytest.raises(ValueError, match=r"cannot infer the shape of argument\(s\) \['b'\]"):
        y.simple_bind(mx.cpu(), a=(2, 3))
    with pytest.raises(ValueError, match=r"\['z'\] are not arguments"):
        y.simple_bind(mx.cpu(), a=(2, 3), b=(3, 1), z=(1,))
    dup = mx.sym.var('a') + mx.sym.var('a')
    with pytest.raises(ValueError, match="share the name"):
        dup.simple_bind(mx.cpu(), a=(2,))
    with pytest.raises(ValueError, match="grad_req for 'a' must be one of"):
        y.simple_bind(mx.cpu(), grad_req={'a': 'sometimes'}, a=(2, 3), b=(3, 1))


def test_variable_outputs_are_the_bound_arrays():
    b = mx.sym.var('b', stype='csr')
    exe = b.simple_bind(ctx=mx.cpu(), b=(2, 2))
    assert exe.outputs[0] is exe.arg_dict['b']
    exe.arg_dict['b'][:] = mx.nd.ones((2, 2)).tostype('csr')
    exe.forward()
    assert exe.outputs[0].stype == 'csr'
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), np.ones((2, 2)))


def test_outputs_are_stable_objects_updated_by_forward():
    a = mx.sym.var('a')
    exe = (a * 3).simple_bind(mx.cpu(), a=(2,))
    out = exe.outputs[0]
    exe.forward(a=mx.nd.array([1.0, 2.0]))
    assert exe.outputs[0] is out
    np.testing.assert_array_equal(out.asnumpy(), [3.0, 6.0])
    exe.forward(a=np.array([0.0, 1.0]))
    np.testing.assert_array_equal(out.asnumpy(), [0.0, 3.0])
    with pytest.raises(ValueError, match="'q' is not an argument"):
        exe.forward(q=mx.nd.ones((2,)))


def test_forward_backward_hand_computed():
    # y = sum((x * w + b)^2), dy/dw = 2 (xw+b) x, dy/db = 2 (xw+b)
    x, w, b = mx.sym.var('x'), mx.sym.var('w'), mx.sym.var('b')
    y = mx.sym.sum(mx.sym.square(x * w + b))
    exe = y.simple_bind(mx.cpu(), grad_req={'w': 'write', 'b': 'add'}, x=(3,), w=(3,), b=(3,))
    xv, wv, bv = np.array([1.0, 2, 3]), np.array([0.5, -1, 2]), np.array([1.0, 0, -1])
    exe.copy_params_from({'x': mx.nd.array(xv), 'w': mx.nd.array(wv), 'b': mx.nd.array(bv)})
    out = exe.forward(is_train=True)[0]
    r = xv * wv + bv
    np.testing.assert_allclose(out.asnumpy(), [np.sum(r ** 2)], rtol=1e-6)
    exe.backward()
    np.testing.assert_allclose(exe.grad_dict['w'].asnumpy(), 2 * r * xv, rtol=1e-6)
    np.testing.assert_allclose(exe.grad_dict['b'].asnumpy(), 2 * r, rtol=1e-6)
    assert exe.grad_dict['x'] is None
    exe.backward()  # 'add' accumulates, 'write' overwrites
    np.testing.assert_allclose(exe.grad_dict['w'].asnumpy(), 2 * r * xv, rtol=1e-6)
    np.testing.assert_allclose(exe.grad_dict['b'].asnumpy(), 4 * r, rtol=1e-6)


def test_backward_needs_a_training_forward():
    exe = (mx.sym.var('a') * 2).simple_bind(mx.cpu(), a=(1,))
    exe.forward(is_train=False)
    with pytest.raises(mx.base.SparsenetError, match=r"forward\(is_train=True\) first"):
        exe.backward()


def test_out_grads_and_unused_arguments():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    y = mx.sym.Group([a * 2, mx.sym.BlockGrad(b)])
    exe = y.simple_bind(mx.cpu(), a=(2,), b=(2,))
    exe.grad_dict['b'][:] = 5  # 'write' with no gradient flowing clears it
    exe.forward(is_train=True)
    exe.backward([mx.nd.array([1.0, 10.0]), mx.nd.array([1.0, 1.0])])
    np.testing.assert_array_equal(exe.grad_dict['a'].asnumpy(), [2.0, 20.0])
    np.testing.assert_array_equal(exe.grad_dict['b'].asnumpy(), [0.0, 0.0])
    with pytest.raises(ValueError, match="2 outputs but 1 out_grads"):
        exe.backward([mx.nd.ones((2,))])


def test_row_sparse_weight_gradient_touches_only_batch_columns():
    x = mx.sym.var('data', stype='csr')
    w = mx.sym.var('weight', stype='row_sparse')
    b = mx.sym.var('bias')
    y = mx.sym.LinearRegressionOutput(mx.sym.broadcast_add(mx.sym.dot(x, w), b), name='lro')
    exe = y.simple_bind(mx.cpu(), data=(3, 6), weight=(6, 2), bias=(1, 2), lro_label=(3, 2))
    dense_x = np.array([[0, 1, 0, 0, 0, 2], [0, 0, 0, 0, 0, 0], [3, 0, 0, 0, 0, 1]], 'f')
    wv = np.arange(12, dtype='f').reshape(6, 2) / 10
    label = np.ones((3, 2), 'f')
    exe.arg_dict['data'][:] = mx.nd.array(dense_x).tostype('csr')
    exe.arg_dict['weight'][:] = mx.nd.array(wv)          # all rows stored
    exe.arg_dict['lro_label'][:] = label
    assert exe.arg_dict['weight'].indices.shape == (6,)
    pred = exe.forward(is_train=True)[0]
    np.testing.assert_allclose(pred.asnumpy(), dense_x @ wv, rtol=1e-6)
    exe.backward()
    g = exe.grad_dict['weight']
    assert g.stype == 'row_sparse'
    np.testing.assert_array_equal(g.indices.asnumpy(), [0, 1, 5])   # columns the batch uses
    expected = dense_x.T @ ((dense_x @ wv - label) / 2)  # LinearRegressionOutput: / outputs
    np.testing.assert_allclose(g.asnumpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(exe.grad_dict['bias'].asnumpy(),
                               ((dense_x @ wv - label) / 2).sum(0, keepdims=True), rtol=1e-5)


def test_fallback_warns_once_per_node_and_error_policy_raises():
    a = mx.sym.var('a')
    b = mx.sym.var('b', stype='csr')
    c = mx.sym.var('c', stype='row_sparse')
    g = mx.sym.Group([mx.sym.elemwise_add(b, c), mx.sym.log(a), mx.sym.elemwise_sub(b, c)])
    mx.config.reset_fallback_counts()
    with mx.config.storage_fallback('warn'):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            exe = g.simple_bind(ctx=mx.cpu(), a=(2, 2), b=(2, 2), c=(2, 2))
            exe.forward()
            exe.forward()
    msgs = [str(w.message) for w in caught if issubclass(w.category, StorageFallbackWarning)]
    assert len(msgs) == 2  # one per falling-back node, none from log(dense)
    assert "node 'elemwise_add0'" in msgs[0] and "node 'elemwise_sub0'" in msgs[1]
    # every execution is counted
    assert mx.config.fallback_counts()[('elemwise_add', ('csr', 'row_sparse'))] == 2
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(exe.outputs[1].asnumpy(), np.full((2, 2), -np.inf))
    with pytest.raises(StorageFallbackError, match="elemwise_add.*csr, row_sparse"):
        g.simple_bind(ctx=mx.cpu(), a=(2, 2), b=(2, 2), c=(2, 2))


@pytest.mark.parametrize("env", ["MXNET_INFER_STORAGE_TYPE_VERBOSE_LOGGING",
                                 "SPARSENET_INFER_STORAGE_TYPE_VERBOSE_LOGGING"])
def test_verbose_storage_logging(monkeypatch, caplog, env):
    monkeypatch.setenv(env, "1")
    data = mx.sym.var('data', stype='csr', shape=(32, 100))
    weight = mx.sym.var('weight', stype='row_sparse', shape=(100, 2))
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(data, weight), mx.sym.var('bias', shape=(2,)))
    out = mx.sym.SoftmaxOutput(pred, mx.sym.var('label'), name='output')
    with caplog.at_level(logging.INFO, logger='sparsenet.executor'):
        out.simple_bind(ctx=mx.cpu())
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "node 0 var 'data': csr",
        "node 1 var 'weight': row_sparse",
        "node 2 dot 'dot0': sparse kernel; inputs (csr, row_sparse) -> outputs (default)",
        "node 3 var 'bias': default",
        "node 4 broadcast_add 'broadcast_add0': dense kernel; inputs (default, default) -> "
        "outputs (default)",
        "node 5 var 'label': default",
        "node 6 SoftmaxOutput 'output': dense kernel; inputs (default, default) -> "
        "outputs (default)",
    ]


def test_no_logging_without_the_variable(monkeypatch, caplog):
    monkeypatch.delenv("MXNET_INFER_STORAGE_TYPE_VERBOSE_LOGGING", raising=False)
    monkeypatch.delenv("SPARSENET_INFER_STORAGE_TYPE_VERBOSE_LOGGING", raising=False)
    with caplog.at_level(logging.INFO, logger='sparsenet.executor'):
        (mx.sym.var('a') * 2).simple_bind(mx.cpu(), a=(1,))
    assert caplog.records == []


def test_bind_with_given_arrays_and_errors():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    y = a * b
    exe = y.bind(mx.cpu(), args=[mx.nd.array([2.0]), mx.nd.array([3.0])],
                 args_grad=[mx.nd.zeros((1,)), None], grad_req='write')
    exe.forward(is_train=True)
    exe.backward()
    assert exe.grad_dict['a'].asnumpy().tolist() == [3.0] and exe.grad_dict['b'] is None
    with pytest.raises(ValueError, match=r"no array given for argument\(s\) \['b'\]"):
        y.bind(mx.cpu(), args={'a': mx.nd.ones((1,))})
    with pytest.raises(TypeError, match="'a' must be an NDArray"):
        y.bind(mx.cpu(), args={'a': 1.0, 'b': mx.nd.ones((1,))})
    with pytest.raises(ValueError, match="gradient buffer of 'a' has shape"):
        y.bind(mx.cpu(), args={'a': mx.nd.ones((1,)), 'b': mx.nd.ones((1,))},
               args_grad={'a': mx.nd.ones((2,))})
    with pytest.raises(ValueError, match="no auxiliary states"):
        y.bind(mx.cpu(), args={'a': mx.nd.ones((1,)), 'b': mx.nd.ones((1,))},
               aux_states={'m': mx.nd.ones((1,))})


def test_copy_params_from_keeps_stype_and_checks_names():
    w = mx.sym.var('w', stype='row_sparse')
    exe = mx.sym.sparse.elemwise_add(w, w).simple_bind(mx.cpu(), w=(3, 2))
    exe.copy_params_from({'w': mx.nd.array([[1, 1], [0, 0], [2, 2]])})
    assert exe.arg_dict['w'].stype == 'row_sparse'
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), [[2, 2], [0, 0], [4, 4]])
    with pytest.raises(ValueError, match="'v' is not an argument"):
        exe.copy_params_from({'v': mx.nd.ones((1,))})
    exe.copy_params_from({'v': mx.nd.ones((1,))}, allow_extra_params=True)


def test_reshape_shares_unchanged_arrays():
    x = mx.sym.var('data')
    fc = mx.sym.FullyConnected(x, num_hidden=2, name='fc')
    exe = fc.simple_bind(mx.cpu(), data=(4, 3))
    exe.arg_dict['fc_weight'][:] = 1
    new = exe.reshape(data=(7, 3))
    assert new.arg_dict['fc_weight'] is exe.arg_dict['fc_weight']
    assert new.arg_dict['data'].shape == (7, 3)
    assert new.forward(data=mx.nd.ones((7, 3)))[0].shape == (7, 2)
    with pytest.raises(ValueError, match="shape of 'fc_weight' changes"):
        exe.reshape(data=(4, 5))
    assert exe.reshape(partial_shaping=True, data=(4, 5)).arg_dict['fc_weight'].shape == (2, 5)


def test_dropout_follows_is_train():
    d = mx.sym.Dropout(mx.sym.var('x'), p=0.5)
    exe = d.simple_bind(mx.cpu(), x=(1000,))
    exe.arg_dict['x'][:] = 1
    np.testing.assert_array_equal(exe.forward(is_train=False)[0].asnumpy(), np.ones(1000))
    out = exe.forward(is_train=True)[0].asnumpy()
    assert set(np.unique(out)) <= {0.0, 2.0} and 300 < (out == 0).sum() < 700


def test_debug_str_lists_the_plan():
    y = mx.sym.dot(mx.sym.var('x', stype='csr'), mx.sym.var('w'), transpose_a=True, name='g')
    exe = y.simple_bind(mx.cpu(), x=(2, 3), w=(2, 4))
    assert "dot 'g': (csr, default) -> row_sparse [sparse kernel]" in exe.debug_str()
    assert exe.outputs[0].stype == 'row_sparse'


def test_run_time_operator_errors_name_the_node():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    y = mx.sym.elemwise_add(a, b, name='adder')
    exe = y.bind(mx.cpu(), args={'a': mx.nd.ones((2,)), 'b': mx.nd.ones((2,))})
    exe.arg_dict['b']._replace(mx.nd.ones((3,)))  # a shape the graph was not bound for
    with pytest.raises(ValueError, match="operator elemwise_add at symbol node 'adder'"):
        exe.forward()


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs CUDA")
def test_executor_on_gpu_keeps_device_and_sparse_gradient():
    x = mx.sym.var('x', stype='csr')
    w = mx.sym.var('w', stype='row_sparse')
    exe = mx.sym.sum(mx.sym.dot(x, w)).simple_bind(mx.gpu(0), x=(2, 4), w=(4, 1))
    exe.arg_dict['x'][:] = mx.nd.array([[0, 1, 0, 0], [0, 0, 0, 2]]).tostype('csr')
    exe.arg_dict['w'][:] = mx.nd.ones((4, 1))
    out = exe.forward(is_train=True)[0]
    assert out.context == mx.gpu(0) and out.asnumpy().tolist() == [3.0]
    exe.backward()
    g = exe.grad_dict['w']
    assert g.context == mx.gpu(0) and g.indices.asnumpy().tolist() == [1, 3]

"""Module: training against a NumPy reference, sparse updates, score/predict, checkpoints."""
import logging
import os

import numpy as np
import pytest

import sparsenet as mx


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


def _regression_data(n=40, d=3, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, d).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5]], "float32") + 0.5).astype("float32")
    return x, y


def _dense_net():
    fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=1, name='fc')
    return mx.sym.LinearRegressionOutput(fc, name='lro')


def _sparse_net(d):
    x = mx.sym.var('data', stype='csr')
    w = mx.sym.var('weight', stype='row_sparse', shape=(d, 1))
    b = mx.sym.var('bias', shape=(1,))
    return mx.sym.LinearRegressionOutput(mx.sym.broadcast_add(mx.sym.dot(x, w), b), name='lro')


def _sparse_data(n=30, d=12, seed=1):
    rng = np.random.RandomState(seed)
    dense = np.where(rng.rand(n, d) < 0.2, rng.uniform(0.5, 1.5, (n, d)), 0).astype("float32")
    y = (dense @ np.arange(1, d + 1, dtype="float32").reshape(d, 1)).astype("float32")
    return dense, y


def test_fit_equals_numpy_minibatch_sgd():
    x, y = _regression_data()
    it = mx.io.NDArrayIter(x, y, batch_size=8, label_name='lro_label')
    mod = mx.mod.Module(_dense_net(), label_names=['lro_label'])
    mod.fit(it, num_epoch=3, eval_metric='mse', optimizer='sgd',
            optimizer_params={'learning_rate': 0.1}, initializer=mx.init.Zero(),
            progress_bar=False)
    w, b = np.zeros((1, 3)), np.zeros(1)
    for _ in range(3):
        for i in range(0, 40, 8):
            xb, yb = x[i:i + 8].astype('f8'), y[i:i + 8].astype('f8')
            g = xb @ w.T + b - yb          # LinearRegressionOutput's gradient (1 output)
            w -= 0.1 * (g.T @ xb) / 8      # rescale_grad = 1 / batch_size
            b -= 0.1 * g.sum(0) / 8
    args, aux = mod.get_params()
    np.testing.assert_allclose(args['fc_weight'].asnumpy(), w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(args['fc_bias'].asnumpy(), b, rtol=1e-4, atol=1e-5)
    assert aux == {}


def test_classification_fit_and_score():
    rng = np.random.RandomState(3)
    x = np.concatenate([rng.randn(50, 2) + 2, rng.randn(50, 2) - 2]).astype('f')
    y = np.array([0] * 50 + [1] * 50, 'f')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2,
                                                     name='fc'), name='softmax')
    train = mx.io.NDArrayIter(x, y, batch_size=10, shuffle=True)
    mod = mx.mod.Module(net)
    mod.fit(train, num_epoch=5, optimizer_params={'learning_rate': 0.5},
            initializer=mx.init.Xavier(), progress_bar=False)
    [(name, acc)] = mod.score(mx.io.NDArrayIter(x, y, batch_size=10), 'acc')
    probs = mod.predict(mx.io.NDArrayIter(x, y, batch_size=10)).asnumpy()
    assert name == 'accuracy' and acc == pytest.approx(np.mean(probs.argmax(1) == y))
    assert acc > 0.95


def test_sparse_step_updates_touched_rows_only():
    dense, y = _sparse_data()
    it = mx.io.NDArrayIter(mx.nd.array(dense).tostype('csr'), y, batch_size=5,
                           label_name='lro_label')
    mod = mx.mod.Module(_sparse_net(12), label_names=['lro_label'])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(mx.init.Constant(0.5))
    w0 = mod.get_params()[0]['weight'].asnumpy()
    b0 = mod.get_params()[0]['bias'].asnumpy()
    assert (w0 == 0.5).all() and (b0 == 0).all()  # Constant fills weights; biases get 0
    assert mod.get_params()[0]['weight'].indices.shape == (12,)  # all rows stored
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.01,
                                                          'momentum': 0.9})
    batch = next(iter(it))
    assert batch.data[0].stype == 'csr'
    mod.forward_backward(batch)
    grad = mod._exec.grad_dict['weight']
    xb = dense[:5]
    touched = np.flatnonzero(xb.any(0))
    assert grad.stype == 'row_sparse'
    np.testing.assert_array_equal(grad.indices.asnumpy(), touched)
    g = xb.T @ (xb @ w0 + b0 - y[:5])
    np.testing.assert_allclose(grad.asnumpy(), g, rtol=1e-5)
    mod.update()
    w1 = mod.get_params()[0]['weight']
    assert w1.stype == 'row_sparse'
    expected = w0.copy()
    expected[touched] -= 0.01 * g[touched] / 5  # first step: momentum = -lr * grad
    np.testing.assert_allclose(w1.asnumpy(), expected, rtol=1e-5)


def test_predict_removes_padding_and_iter_predict():
    x, _ = _regression_data(n=10)
    mod = mx.mod.Module(_dense_net(), label_names=['lro_label'])
    mod.bind(data_shapes=[('data', (4, 3))], for_training=False)
    w, b = np.array([[1.0, 2.0, 3.0]], 'f'), np.array([0.5], 'f')
    mod.set_params({'fc_weight': mx.nd.array(w), 'fc_bias': mx.nd.array(b)})
    it = mx.io.NDArrayIter(x, batch_size=4, last_batch_handle='pad')
    out = mod.predict(it)
    assert out.shape == (10, 1)
    np.testing.assert_allclose(out.asnumpy(), x @ w.T + b, rtol=1e-5)
    per_batch = mod.predict(it, merge_batches=False)
    assert [o[0].shape for o in per_batch] == [(4, 1), (4, 1), (2, 1)]
    assert isinstance(mod.predict(it, always_output_list=True), list)
    assert [n for _, n, _ in mod.iter_predict(it, num_batch=2)] == [0, 1]


def test_checkpoint_round_trip_with_optimizer_states(tmp_path):
    dense, y = _sparse_data()
    csr = mx.nd.array(dense).tostype('csr')

    def iterator():
        return mx.io.NDArrayIter(csr, y, batch_size=5, label_name='lro_label')

    opt_params = {'learning_rate': 0.005, 'momentum': 0.9}
    mod = mx.mod.Module(_sparse_net(12), label_names=['lro_label'])
    mod.fit(iterator(), num_epoch=1, optimizer='sgd', optimizer_params=opt_params,
            initializer=mx.init.Normal(0.1), eval_metric='mse', progress_bar=False)
    prefix = str(tmp_path / 'lin')
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    assert sorted(os.listdir(tmp_path)) == ['lin-0001.params', 'lin-0001.states',
                                            'lin-symbol.json']

    def resumed(load_states):
        m = mx.mod.Module.load(prefix, 1, load_optimizer_states=load_states,
                               label_names=['lro_label'])
        m.bind(data_shapes=iterator().provide_data, label_shapes=iterator().provide_label)
        m.init_optimizer(optimizer='sgd', optimizer_params=opt_params)
        return m

    again = resumed(True)
    for name, arr in mod.get_params()[0].items():
        loaded = again.get_params()[0][name]
        assert loaded.stype == arr.stype
        np.testing.assert_array_equal(loaded.asnumpy(), arr.asnumpy())
    cold = resumed(False)
    for m in (mod, again, cold):
        for batch in iterator():
            m.forward_backward(batch)
            m.update()
    w, w_again, w_cold = (m.get_params()[0]['weight'].asnumpy() for m in (mod, again, cold))
    np.testing.assert_allclose(w_again, w, rtol=1e-6)
    assert not np.allclose(w_cold, w, rtol=1e-4)  # the momentum mattered


def test_init_params_rules():
    w = mx.sym.var('w', stype='row_sparse', shape=(4, 2), init=mx.init.One())
    net = mx.sym.LinearRegressionOutput(
        mx.sym.broadcast_add(mx.sym.dot(mx.sym.var('data', stype='csr'), w),
                             mx.sym.var('bias', shape=(1, 2))), name='lro')
    mod = mx.mod.Module(net, label_names=['lro_label'])
    mod.bind(data_shapes=[('data', (3, 4))], label_shapes=[('lro_label', (3, 2))])
    mod.init_params(mx.init.Zero())
    args, _ = mod.get_params()
    assert args['w'].stype == 'row_sparse'
    np.testing.assert_array_equal(args['w'].indices.asnumpy(), [0, 1, 2, 3])
    np.testing.assert_array_equal(args['w'].asnumpy(), np.ones((4, 2)))  # its own init wins
    np.testing.assert_array_equal(args['bias'].asnumpy(), np.zeros((1, 2)))
    with pytest.warns(UserWarning, match="already initialized"):
        mod.init_params(mx.init.Zero())
    mod.init_params(mx.init.Zero(), arg_params={'bias': mx.nd.ones((1, 2))},
                    allow_missing=True, force_init=True)
    assert mod.get_params()[0]['bias'].asnumpy().tolist() == [[1.0, 1.0]]
    with pytest.raises(RuntimeError, match="'w' is not in arg_params"):
        mod.init_params(arg_params={'bias': mx.nd.ones((1, 2))}, force_init=True)
    with pytest.raises(ValueError, match=r"\['zzz'\] are not parameters"):
        mod.set_params({'w': mx.nd.ones((4, 2)), 'bias': mx.nd.ones((1, 2)),
                        'zzz': mx.nd.ones((1,))})
    with pytest.raises(ValueError, match="does not match the bound shape"):
        mod.set_params({'w': mx.nd.ones((5, 2)), 'bias': mx.nd.ones((1, 2))})


def test_fit_callbacks_logging_and_progress_bar(tmp_path, caplog, capsys):
    x, y = _regression_data()
    train = mx.io.NDArrayIter(x, y, batch_size=8, label_name='lro_label')
    val = mx.io.NDArrayIter(x, y, batch_size=8, label_name='lro_label')
    seen = []
    mod = mx.mod.Module(_dense_net(), label_names=['lro_label'])
    with caplog.at_level(logging.INFO):
        mod.fit(train, eval_data=val, eval_metric='mse', num_epoch=2,
                batch_end_callback=[lambda p: seen.append((p.epoch, p.nbatch)),
                                    mx.callback.Speedometer(8, frequent=2)],
                epoch_end_callback=mx.callback.do_checkpoint(str(tmp_path / 'ck')),
                optimizer_params={'learning_rate': 0.05}, progress_bar=True)
    assert seen == [(e, b) for e in range(2) for b in range(5)]
    msgs = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Epoch[1] Train-mse=") for m in msgs)
    assert any(m.startswith("Epoch[1] Validation-mse=") for m in msgs)
    assert any("Speed:" in m for m in msgs)
    assert os.path.exists(tmp_path / 'ck-0002.params')
    err = capsys.readouterr().err
    assert "Epoch 0" in err and "Epoch 1" in err and "5/5" in err


def test_inputs_need_grad_fixed_params_and_reshape():
    x, y = _regression_data(n=8)
    mod = mx.mod.Module(_dense_net(), label_names=['lro_label'], fixed_param_names=['fc_bias'])
    mod.bind(data_shapes=[('data', (8, 3))], label_shapes=[('lro_label', (8, 1))],
             inputs_need_grad=True)
    w = np.array([[1.0, 0.0, -1.0]], 'f')
    mod.set_params({'fc_weight': mx.nd.array(w), 'fc_bias': mx.nd.array([0.25])})
    mod.init_optimizer(optimizer_params={'learning_rate': 1.0})
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    mod.forward_backward(batch)
    g = x @ w.T + 0.25 - y
    np.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(), g @ w, rtol=1e-5)
    mod.update()
    assert mod.get_params()[0]['fc_bias'].asnumpy().tolist() == [0.25]
    # a batch of another size re-binds, keeping the parameters
    small = mx.io.DataBatch([mx.nd.array(x[:3])], [mx.nd.array(y[:3])])
    mod.forward(small, is_train=False)
    assert mod.get_outputs()[0].shape == (3, 1)
    assert mod.output_shapes == [('lro_output', (3, 1))]


def test_prepare_without_kvstore_warns():
    mod = mx.mod.Module(_dense_net(), label_names=['lro_label'])
    mod.bind(data_shapes=[('data', (2, 3))], label_shapes=[('lro_label', (2, 1))])
    mod.init_params()
    with pytest.warns(UserWarning, match="not updated in the KVStore"):
        mod.prepare(None, sparse_row_id_fn=lambda b: {'fc_weight': mx.nd.array([0])})
    mod.prepare(None)  # no row id function: nothing to do


def test_module_errors():
    net = _dense_net()
    with pytest.raises(ValueError, match=r"data_names \['x'\] are not arguments"):
        mx.mod.Module(net, data_names=['x'])
    with pytest.raises(ValueError, match="work_load_list has 1 entries for 2 contexts"):
        mx.mod.Module(net, context=[mx.cpu(0), mx.cpu(1)], work_load_list=[1])
    with pytest.warns(UserWarning, match="label_names .* will be ignored"):
        mx.mod.Module(net, label_names=['softmax_label'])
    mod = mx.mod.Module(net, label_names=['lro_label'])
    batch = mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.ones((2, 1))])
    with pytest.raises(RuntimeError, match="call bind"):
        mod.forward(batch)
    with pytest.raises(ValueError, match="data shapes are given for"):
        mod.bind(data_shapes=[('x', (2, 3))])
    mod.bind(data_shapes=[('data', (2, 3))], label_shapes=[('lro_label', (2, 1))])
    with pytest.raises(RuntimeError, match="init_params"):
        mod.forward(batch)
    mod.init_params()
    with pytest.raises(RuntimeError, match="init_optimizer"):
        mod.update()
    with pytest.raises(ValueError, match="num_epoch"):
        mod.fit(mx.io.NDArrayIter(np.ones((2, 3)), batch_size=2))

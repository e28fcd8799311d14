"""The executor's row_sparse weights: gradients over the batch's columns, no dense copy per step.

Expected values measured with MXNet 1.9.1 (``/tmp/mx/bin/python``).
"""
import numpy as np
import pytest

import sparsenet as mx

XD = [[0, 1, 0, 2, 0], [3, 0, 0, 0, 0]]


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


def _exe():
    x = mx.sym.var('x', stype='csr')
    w = mx.sym.var('w', stype='row_sparse')
    exe = mx.sym.dot(x, w).simple_bind(mx.cpu(), x=(2, 5), w=(5, 1),
                                       grad_req={'w': 'write', 'x': 'null'})
    exe.arg_dict['x'][:] = mx.nd.array(XD).tostype('csr')
    return exe


def test_weight_storing_every_row_gets_the_rows_of_the_batch_columns():
    # measured with MXNet 1.9.1: rows 1 and 3 are touched by the batch, their gradient is zero
    # (the first sample's head gradient is zero), and they are stored all the same
    exe = _exe()
    exe.arg_dict['w'][:] = mx.nd.ones((5, 1)).tostype('row_sparse')
    assert exe.arg_dict['w'].indices.shape == (5,)
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy().ravel(), [3, 3])
    w = exe.arg_dict['w']
    assert w._gt is None and w._data.requires_grad  # differentiated through its stored rows
    exe.backward(mx.nd.array([[0.0], [1.0]]))
    g = exe.grad_dict['w']
    assert g.stype == 'row_sparse'
    np.testing.assert_array_equal(g.indices.asnumpy(), [0, 1, 3])
    np.testing.assert_array_equal(g.data.asnumpy().ravel(), [3, 0, 0])
    # NumPy: x.T @ head gradient on those rows
    np.testing.assert_array_equal(g.asnumpy(), np.array(XD, 'f').T @ [[0.0], [1.0]])


def test_weight_storing_some_rows_and_an_empty_batch():
    # measured with MXNet 1.9.1: forward [10, 3], gradient rows [0, 1, 3] = [6, 1, 2]; a batch
    # without values writes an empty gradient
    exe = _exe()
    exe.arg_dict['w'][:] = mx.nd.sparse.row_sparse_array(([[1.0], [5.0]], [0, 3]),
                                                         shape=(5, 1))
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy().ravel(), [10, 3])
    exe.backward(mx.nd.array([[1.0], [2.0]]))
    g = exe.grad_dict['w']
    np.testing.assert_array_equal(g.indices.asnumpy(), [0, 1, 3])
    np.testing.assert_array_equal(g.data.asnumpy().ravel(), [6, 1, 2])
    exe.arg_dict['x'][:] = mx.nd.zeros((2, 5)).tostype('csr')
    exe.forward(is_train=True)
    exe.backward(mx.nd.array([[1.0], [2.0]]))
    assert exe.grad_dict['w'].indices.shape == (0,)


def test_module_steps_keep_the_weight_a_leaf_of_its_rows():
    # the optimizer updates the stored rows in place; the next forward reuses them as the leaf
    x = mx.sym.var('data', stype='csr')
    w = mx.sym.var('weight', stype='row_sparse', shape=(5, 1))
    net = mx.sym.LinearRegressionOutput(mx.sym.dot(x, w), name='lro')
    mod = mx.mod.Module(net, label_names=['lro_label'])
    mod.bind(data_shapes=[('data', (2, 5))], label_shapes=[('lro_label', (2, 1))])
    mod.init_params(mx.init.One())
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1})
    batch = mx.io.DataBatch([mx.nd.array(XD).tostype('csr')], [mx.nd.zeros((2, 1))])
    weights = []
    for _ in range(2):
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
        weights.append(mod.get_params()[0]['weight'].asnumpy().ravel())
    # NumPy: w -= 0.1 / 2 * x.T @ (x @ w - 0), twice (rescale_grad = 1 / batch size)
    xd, wn = np.array(XD, 'f'), np.ones((5, 1), 'f')
    for expect in weights:
        wn = wn - 0.05 * xd.T @ (xd @ wn)
        np.testing.assert_allclose(expect, wn.ravel(), rtol=1e-6)
    assert mod._exec.arg_dict['weight']._gt is None

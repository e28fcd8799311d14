"""Gluon's SoftmaxCrossEntropyLoss called on Symbols, as MXNet's large_word_lm model.py does.

``criterion = SoftmaxCrossEntropyLoss(weight=rescale_loss); loss = criterion(logits, labels)``
with Symbols builds a graph that a Module binds and trains, and whose ``-symbol.json`` (saved
in every checkpoint) MXNet 1.9.1 can load: it must be made of MXNet's operators. It used to
hold sparsenet's fused ``softmax_ce_loss``, which MXNet rejects ("Operator softmax_ce_loss is
not registered"). Values and gradients are checked against NumPy in float64.
"""
import json

import numpy as np

import sparsenet as mx

S = mx.sym
P = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 2.0], [0.0, 0.0, 0.0]], dtype=np.float32)
L = np.array([1, 2, 0], dtype=np.float32)
# operators MXNet 1.9.1 registers (its own graph for this loss holds the first four)
MXNET_OPS = {'log_softmax', 'pick', '_mul_scalar', 'mean', 'negative', 'broadcast_mul'}


def _log_softmax(p):
    p = p.astype(np.float64)
    return p - np.log(np.exp(p).sum(axis=1, keepdims=True))


def _ops(symbol):
    return [n['op'] for n in json.loads(symbol.tojson())['nodes'] if n['op'] != 'null']


def test_value_gradient_and_operators():
    loss = mx.gluon.loss.SoftmaxCrossEntropyLoss(weight=3.0)(S.var('pred'), S.var('label'))
    assert set(_ops(loss)) <= MXNET_OPS
    ex = loss.simple_bind(mx.cpu(), pred=P.shape, label=L.shape)
    out = ex.forward(is_train=True, pred=mx.nd.array(P), label=mx.nd.array(L))[0]
    want = -3.0 * _log_softmax(P)[np.arange(3), L.astype(int)]
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)
    ex.backward(mx.nd.ones((3,)))
    soft = np.exp(_log_softmax(P))
    np.testing.assert_allclose(ex.grad_dict['pred'].asnumpy(),
                               3.0 * (soft - np.eye(3)[L.astype(int)]), rtol=1e-5, atol=1e-6)


def test_sample_weight_and_no_weight():
    sw = np.array([[2.0], [0.0], [0.5]], dtype=np.float32)
    loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()(S.var('pred'), S.var('label'), S.var('sw'))
    assert set(_ops(loss)) <= MXNET_OPS
    out = loss.eval(pred=mx.nd.array(P), label=mx.nd.array(L), sw=mx.nd.array(sw))[0]
    want = -_log_softmax(P)[np.arange(3), L.astype(int)] * sw[:, 0]
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)


def test_masked_mean_under_make_loss_trains_in_a_module():
    # model.py's cross_entropy_loss: mean(loss * mask) under make_loss
    loss = mx.gluon.loss.SoftmaxCrossEntropyLoss(weight=2.0)(S.var('data'), S.var('label'))
    loss = S.make_loss((loss * S.reshape(S.var('mask'), shape=(-1,))).mean())
    mask = np.array([1.0, 0.0, 1.0], dtype=np.float32)
    mod = mx.mod.Module(loss, data_names=['data', 'mask'], label_names=['label'])
    mod.bind(data_shapes=[('data', P.shape), ('mask', (3,))], label_shapes=[('label', (3,))],
             inputs_need_grad=True)
    mod.init_params()
    mod.forward(mx.io.DataBatch(data=[mx.nd.array(P), mx.nd.array(mask)],
                                label=[mx.nd.array(L)]), is_train=True)
    per_row = -2.0 * _log_softmax(P)[np.arange(3), L.astype(int)]
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), [(per_row * mask).mean()],
                               rtol=1e-6)
    mod.backward()
    soft = np.exp(_log_softmax(P))
    want = 2.0 * (soft - np.eye(3)[L.astype(int)]) * mask[:, None] / 3
    np.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(), want, rtol=1e-5, atol=1e-7)

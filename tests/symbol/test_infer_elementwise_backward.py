"""Shape inference runs backwards through elementwise operators, as MXNet 1.9.1's does.

MXNet's ``example/rnn/large_word_lm`` declares ``prob_target = S.var('prob_target')`` without a
shape and uses it only as ``true_pred - S.log(prob_target)`` with ``true_pred`` of shape
``(n, 1)``: MXNet sizes it ``(n, 1)`` (``elemwise_sub`` makes its inputs equal, ``log`` its
input equal to its output). sparsenet's inference used to run forwards only and left it
unknown, so ``Module.bind`` failed. Expected shapes are worked out by hand from the graphs.
"""
import numpy as np
import pytest

import sparsenet as mx

S = mx.sym


def test_unknown_variable_under_unary_takes_the_binary_partners_shape():
    a = S.var('a')
    b = S.var('b')
    y = S.sum(a, axis=1, keepdims=True) - S.log(b)
    arg_shapes, out_shapes, _ = y.infer_shape(a=(6, 4))
    assert dict(zip(y.list_arguments(), arg_shapes)) == {'a': (6, 4), 'b': (6, 1)}
    assert out_shapes == [(6, 1)]


def test_chain_of_unary_and_scalar_operators():
    # b -> exp -> *2 -> sqrt -> + a: every link elementwise, so b is a's shape
    a, b = S.var('a'), S.var('b')
    y = a + S.sqrt(S.exp(b) * 2)
    arg_shapes, out_shapes, _ = y.infer_shape(a=(3, 5))
    assert arg_shapes == [(3, 5), (3, 5)]
    assert out_shapes == [(3, 5)]


def test_known_output_partner_on_either_side():
    a, b = S.var('a'), S.var('b')
    y = S.log(b) * S.FullyConnected(a, num_hidden=7, name='fc')
    shapes = dict(zip(y.list_arguments(), y.infer_shape(a=(2, 3))[0]))
    assert shapes == {'b': (2, 7), 'a': (2, 3), 'fc_weight': (7, 3), 'fc_bias': (7,)}


def test_broadcast_operators_do_not_guess():
    # broadcast_sub allows many shapes for the other input: it stays unknown, as in MXNet
    a, b = S.var('a'), S.var('b')
    y = S.broadcast_sub(a, S.log(b))
    with pytest.warns(UserWarning, match="Cannot decide shape"):
        assert y.infer_shape(a=(2, 3)) == (None, None, None)


def test_simple_bind_sizes_the_variable_and_runs():
    # the example's sampled-softmax target term: (n, 1) - log(prob_target)
    inputs, w = S.var('inputs'), S.var('w')
    prob_target = S.var('prob_target')
    true_pred = S.sum(w * inputs, axis=1, keepdims=True)
    y = true_pred - S.log(prob_target)
    ex = y.simple_bind(mx.cpu(), inputs=(4, 3), w=(4, 3))
    assert ex.arg_dict['prob_target'].shape == (4, 1)
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    p = np.array([[0.5], [0.25], [0.125], [1.0]], dtype=np.float32)
    out = ex.forward(inputs=mx.nd.array(x), w=mx.nd.array(x), prob_target=mx.nd.array(p))[0]
    want = (x * x).sum(axis=1, keepdims=True) - np.log(p)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)

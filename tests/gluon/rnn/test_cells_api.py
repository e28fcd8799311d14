"""Recurrent cells' API as MXNet 1.9.1 defines it: names, begin states, modifiers, masks,
valid lengths, deferred input sizes, and the errors a caller can cause."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet import gluon


def test_automatic_prefixes_and_parameter_names():
    a, b = gluon.rnn.LSTMCell(3), gluon.rnn.LSTMCell(3)
    assert b.prefix != a.prefix and b.prefix.startswith("lstm")
    assert gluon.rnn.GRUCell(2).prefix.startswith("gru")
    assert gluon.rnn.RNNCell(2).prefix.startswith("rnn")
    assert gluon.contrib.rnn.LSTMPCell(2, 1).prefix.startswith("lstmp")
    stack = gluon.rnn.HybridSequentialRNNCell(prefix="net_")
    with stack.name_scope():
        stack.add(gluon.rnn.LSTMCell(3))
        stack.add(gluon.rnn.LSTMCell(3))
    assert sorted(stack.collect_params()) == [
        "net_lstm0_h2h_bias", "net_lstm0_h2h_weight", "net_lstm0_i2h_bias",
        "net_lstm0_i2h_weight", "net_lstm1_h2h_bias", "net_lstm1_h2h_weight",
        "net_lstm1_i2h_bias", "net_lstm1_i2h_weight"]
    assert stack[1] is list(stack._children.values())[1] and len(stack) == 2


def test_begin_state_with_symbol_var_and_state_info():
    cell = gluon.rnn.LSTMCell(4, prefix="l_")
    assert cell.state_info(2) == [{"shape": (2, 4), "__layout__": "NC"}] * 2
    states = cell.begin_state(func=mx.sym.var)
    assert [s.name for s in states] == ["l_begin_state_0", "l_begin_state_1"]
    zeros = cell.begin_state(batch_size=3, func=mx.nd.ones)
    assert [z.shape for z in zeros] == [(3, 4), (3, 4)]
    assert float(zeros[0].sum().asscalar()) == 12


def test_unrolled_output_names_follow_mxnet():
    cell = gluon.rnn.GRUCell(5, prefix="rnn_")
    outputs, _ = cell.unroll(2, [mx.sym.var("a"), mx.sym.var("b")])
    assert mx.sym.Group(outputs).list_outputs() == ["rnn_t0_out_output", "rnn_t1_out_output"]


def test_deferred_input_size():
    cell = gluon.rnn.GRUCell(4)
    cell.initialize()
    assert cell.i2h_weight.shape == (12, 0)
    cell.unroll(3, mx.nd.ones((2, 3, 7)))
    assert cell.i2h_weight.shape == (12, 7)


def test_modifier_rules():
    base = gluon.rnn.RNNCell(3)
    zone = gluon.rnn.ZoneoutCell(base, 0.2, 0.2)
    with pytest.raises(mx.MXNetError, match="cannot be called directly"):
        base.begin_state(batch_size=1)
    assert len(zone.begin_state(batch_size=1, func=mx.nd.zeros)) == 1
    with pytest.raises(mx.MXNetError, match="cannot be modified twice"):
        gluon.rnn.ResidualCell(base)
    assert zone.params is base.params
    bi = gluon.rnn.BidirectionalCell(gluon.rnn.RNNCell(2), gluon.rnn.RNNCell(2))
    with pytest.raises(mx.MXNetError, match="cannot be stepped"):
        bi(mx.nd.ones((1, 2)), [])
    with pytest.raises(mx.MXNetError, match="doesn't support zoneout"):
        gluon.rnn.ZoneoutCell(bi)


@pytest.mark.parametrize("call, match", [
    (lambda c: c.unroll(3, mx.nd.ones((2, 3, 4)), layout="NC"), "layout must name"),
    (lambda c: c.unroll(2, mx.nd.ones((2, 3, 4)), merge_outputs=False), "length=2"),
    (lambda c: c.unroll(2, [mx.nd.ones((2, 4))] * 3), "3 step inputs"),
    (lambda c: c.unroll(2, None), "inputs=None"),
])
def test_unroll_bad_arguments(call, match):
    cell = gluon.rnn.RNNCell(3, input_size=4)
    cell.initialize()
    with pytest.raises(mx.MXNetError, match=match) as info:
        call(cell)
    assert isinstance(info.value, (ValueError, TypeError))


def test_bad_constructor_arguments():
    with pytest.raises(mx.MXNetError, match="hidden_size must be a positive"):
        gluon.rnn.LSTMCell(0)
    with pytest.raises(mx.MXNetError, match="rate must lie in"):
        gluon.rnn.DropoutCell(1.5)
    with pytest.raises(TypeError):
        gluon.rnn.DropoutCell("0.5")
    with pytest.raises(mx.MXNetError, match="drop_inputs must lie in"):
        gluon.contrib.rnn.VariationalDropoutCell(gluon.rnn.RNNCell(2), drop_inputs=1.0)


@pytest.mark.parametrize("make", [
    lambda: gluon.rnn.LSTMCell(4),
    lambda: gluon.rnn.BidirectionalCell(gluon.rnn.GRUCell(4), gluon.rnn.GRUCell(4)),
    lambda: gluon.contrib.rnn.LSTMPCell(4, 2),
])
@pytest.mark.parametrize("layout", ["NTC", "TNC"])
def test_valid_length_equals_unrolling_each_sequence(make, layout):
    cell = make()
    cell.initialize()
    lengths = [3, 6, 1]
    shape = (3, 6, 5) if layout == "NTC" else (6, 3, 5)
    x = mx.nd.array(np.random.RandomState(0).normal(size=shape))
    outs, states = cell.unroll(6, x, layout=layout, merge_outputs=True,
                               valid_length=mx.nd.array(lengths))
    for i, ln in enumerate(lengths):
        xi = x[i:i + 1, :ln] if layout == "NTC" else x[:ln, i:i + 1]
        oi, si = cell.unroll(ln, xi, layout=layout, merge_outputs=True)
        got = outs[i:i + 1, :ln] if layout == "NTC" else outs[:ln, i:i + 1]
        pad = outs[i:i + 1, ln:] if layout == "NTC" else outs[ln:, i:i + 1]
        np.testing.assert_allclose(got.asnumpy(), oi.asnumpy(), rtol=1e-5, atol=1e-6)
        assert not pad.asnumpy().any()
        for s, r in zip(states, si):
            np.testing.assert_allclose(s[i:i + 1].asnumpy(), r.asnumpy(), rtol=1e-5, atol=1e-6)


def test_zoneout_keeps_previous_values_while_training():
    base = gluon.rnn.RNNCell(50, input_size=50)
    cell = gluon.rnn.ZoneoutCell(base, zoneout_outputs=0.5)
    cell.initialize()
    x = mx.nd.array(np.random.RandomState(0).normal(size=(4, 3, 50)))
    with mx.autograd.record():     # training mode: masks are drawn
        outs, _ = cell.unroll(3, x, merge_outputs=False)
    with mx.autograd.predict_mode():
        clean, _ = gluon.rnn.RNNCell(50, input_size=50, params=base.params).unroll(
            3, x, merge_outputs=False, begin_state=None)
    first = outs[0].asnumpy()
    # step 0: each element is the cell's output or the previous output (zeros)
    assert set(np.unique(np.isclose(first, clean[0].asnumpy()) | (first == 0))) == {True}
    assert (first == 0).mean() > 0.2


def test_variational_dropout_shares_its_mask_across_steps():
    base = gluon.rnn.RNNCell(8, input_size=8, i2h_weight_initializer=mx.init.One(),
                             h2h_weight_initializer=mx.init.Zero())
    cell = gluon.contrib.rnn.VariationalDropoutCell(base, drop_inputs=0.5, drop_states=0.5)
    cell.initialize()
    x = mx.nd.ones((2, 4, 8))
    seen = []
    orig = base.hybrid_forward

    def spy(F, inputs, states, **kw):
        seen.append(inputs.asnumpy() != 0)
        return orig(F, inputs, states, **kw)

    base.hybrid_forward = spy
    with mx.autograd.record():
        cell.unroll(4, x, merge_outputs=True)
    assert len(seen) == 4 and all((m == seen[0]).all() for m in seen)
    assert 0 < seen[0].mean() < 1


def test_sequential_states_and_hybrid_stack_inside_a_block():
    class Net(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                stack = gluon.rnn.HybridSequentialRNNCell()
                stack.add(gluon.rnn.LSTMCell(6))
                stack.add(gluon.rnn.GRUCell(6))
                self.rnn = stack

        def hybrid_forward(self, F, x):
            return self.rnn.unroll(3, x, layout="NTC", merge_outputs=True)[0]

    net = Net()
    net.initialize()
    x = mx.nd.ones((2, 3, 4))
    eager = net(x).asnumpy()
    net.hybridize()
    net(x)
    np.testing.assert_allclose(net(x).asnumpy(), eager, rtol=1e-5, atol=1e-6)
    assert len(net.rnn.state_info(2)) == 3


def test_symbol_begin_state_with_unknown_batch_names_the_remedy():
    """MXNet infers a begin state's 0 batch dimension backwards; sparsenet asks for it."""
    cell = gluon.rnn.RNNCell(3, input_size=2)
    states = cell.begin_state(func=mx.sym.zeros)
    out, _ = cell.unroll(2, mx.sym.var("data"), begin_state=states, merge_outputs=True)
    with pytest.raises(mx.MXNetError, match=r"begin_state\(batch_size=N\)"):
        out.simple_bind(mx.cpu(), data=(4, 2, 2))
    sized = cell.begin_state(func=mx.sym.zeros, batch_size=4)
    out, _ = cell.unroll(2, mx.sym.var("data"), begin_state=sized, merge_outputs=True)
    assert out.infer_shape(data=(4, 2, 2))[1] == [(4, 2, 3)]

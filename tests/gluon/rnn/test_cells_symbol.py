"""Recurrent cells unrolled on Symbols: the graph equals the eager unroll, binds in an executor
and a Module, trains, and its gradients match torch's.
"""
import numpy as np
import pytest
import torch

import sparsenet as mx
from sparsenet import gluon

N, T, C, H = 4, 5, 3, 6


def _fill(cell, seed=3, scale=0.5):
    """Initialize ``cell`` with reproducible values; return {name: np array}."""
    rng = np.random.RandomState(seed)
    cell.initialize(force_reinit=True)
    values = {}
    for name, p in sorted(cell.collect_params().items()):
        values[name] = rng.uniform(-scale, scale, size=p.shape).astype("float32")
        p.set_data(mx.nd.array(values[name]))
    return values


def _compare_graph_to_eager(cell, x, layout="NTC", valid_length=None, length=T):
    values = _fill(cell)
    vl = mx.nd.array(valid_length) if valid_length is not None else None
    out_nd, states_nd = cell.unroll(length, mx.nd.array(x), layout=layout, merge_outputs=True,
                                    valid_length=vl)
    data = mx.sym.var("data")
    vl_sym = mx.sym.var("valid_length") if valid_length is not None else None
    out_sym, states_sym = cell.unroll(length, data, layout=layout, merge_outputs=True,
                                      valid_length=vl_sym)
    graph = mx.sym.Group([out_sym] + list(states_sym))
    args = {k: mx.nd.array(v) for k, v in values.items()}
    args["data"] = mx.nd.array(x)
    if valid_length is not None:
        args["valid_length"] = mx.nd.array(valid_length)
    results = graph.eval(**args)
    np.testing.assert_allclose(results[0].asnumpy(), out_nd.asnumpy(), rtol=1e-5, atol=1e-6)
    assert len(results) - 1 == len(states_nd)
    for got, want in zip(results[1:], states_nd):
        np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)


def _stack():
    stack = gluon.rnn.HybridSequentialRNNCell(prefix="stack_")
    with stack.name_scope():
        stack.add(gluon.rnn.LSTMCell(H, input_size=C))
        stack.add(gluon.rnn.ResidualCell(gluon.rnn.GRUCell(H, input_size=H)))
        stack.add(gluon.rnn.DropoutCell(0.3))
        stack.add(gluon.rnn.RNNCell(H, input_size=H))
    return stack


CASES = {
    "lstm": lambda: gluon.rnn.LSTMCell(H, input_size=C),
    "gru": lambda: gluon.rnn.GRUCell(H, input_size=C),
    "rnn": lambda: gluon.rnn.RNNCell(H, input_size=C, activation="relu"),
    "lstmp": lambda: gluon.contrib.rnn.LSTMPCell(H, 2, input_size=C),
    "stack": _stack,
    "bidirectional": lambda: gluon.rnn.BidirectionalCell(gluon.rnn.LSTMCell(H, input_size=C),
                                                         gluon.rnn.GRUCell(H, input_size=C)),
    "zoneout": lambda: gluon.rnn.ZoneoutCell(gluon.rnn.LSTMCell(H, input_size=C), 0.3, 0.3),
    "vardrop": lambda: gluon.contrib.rnn.VariationalDropoutCell(
        gluon.rnn.GRUCell(H, input_size=C), 0.2, 0.2, 0.2),
}


@pytest.mark.parametrize("layout", ["NTC", "TNC"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_symbol_unroll_equals_eager_unroll(case, layout):
    rng = np.random.RandomState(1)
    shape = (N, T, C) if layout == "NTC" else (T, N, C)
    _compare_graph_to_eager(CASES[case](), rng.uniform(-1, 1, shape).astype("float32"), layout)


@pytest.mark.parametrize("case", ["lstm", "gru", "bidirectional", "stack", "lstmp"])
def test_symbol_unroll_valid_length_equals_eager(case):
    rng = np.random.RandomState(2)
    _compare_graph_to_eager(CASES[case](), rng.uniform(-1, 1, (N, T, C)).astype("float32"),
                            valid_length=[2, 5, 1, 4])


def test_lstmp_graph_as_large_word_lm_builds_it():
    """MXNet's example/rnn/large_word_lm/model.py: states given as shaped variables."""
    batch, bptt, vocab, emb, nhid, proj = 4, 5, 20, 3, 6, 2
    data = mx.sym.var("data")
    embed = mx.sym.Embedding(data, input_dim=vocab, output_dim=emb, name="embed")
    outputs, states, cells = mx.sym.Dropout(embed, p=0.0), [], []
    for i in range(2):
        prefix = "lstmp%d_" % i
        init_h = mx.sym.var(prefix + "init_h", shape=(batch, proj), init=mx.init.Zero())
        init_c = mx.sym.var(prefix + "init_c", shape=(batch, nhid), init=mx.init.Zero())
        cell = gluon.contrib.rnn.LSTMPCell(nhid, proj, prefix=prefix)
        outputs, next_states = cell.unroll(bptt, outputs, begin_state=[init_h, init_c],
                                           layout="NTC", merge_outputs=True)
        outputs = mx.sym.Dropout(outputs, p=0.0)
        states += [mx.sym.stop_gradient(s) for s in next_states]
        cells.append(cell)
    outputs = mx.sym.reshape(outputs, shape=(-1, proj))
    args = outputs.list_arguments()
    assert [a for a in args if "lstmp" in a and "init" not in a] == [
        "lstmp0_i2h_weight", "lstmp0_i2h_bias", "lstmp0_h2h_weight", "lstmp0_h2h_bias",
        "lstmp0_h2r_weight", "lstmp1_i2h_weight", "lstmp1_i2h_bias", "lstmp1_h2h_weight",
        "lstmp1_h2h_bias", "lstmp1_h2r_weight"]
    graph = mx.sym.Group([outputs] + states)
    exe = graph.simple_bind(mx.cpu(), data=(batch, bptt))
    shapes = dict(zip(graph.list_arguments(), graph.infer_shape(data=(batch, bptt))[0]))
    assert shapes["lstmp0_h2r_weight"] == (proj, nhid)
    assert shapes["lstmp0_i2h_weight"] == (4 * nhid, emb)
    assert shapes["lstmp1_i2h_weight"] == (4 * nhid, proj)
    rng = np.random.RandomState(5)
    feed = {}
    for name in graph.list_arguments():
        if name == "data":
            feed[name] = rng.randint(0, vocab, size=(batch, bptt)).astype("float32")
        else:
            feed[name] = rng.uniform(-0.5, 0.5, size=shapes[name]).astype("float32")
        exe.arg_dict[name][:] = feed[name]
    outs = exe.forward(is_train=False)
    # the eager reference: the same cells on NDArrays
    x = mx.nd.Embedding(mx.nd.array(feed["data"]), mx.nd.array(feed["embed_weight"]),
                        input_dim=vocab, output_dim=emb)
    want_states = []
    for i, cell in enumerate(cells):
        prefix = "lstmp%d_" % i
        cell.initialize(force_reinit=True)
        for name, p in cell.collect_params().items():
            p.set_data(mx.nd.array(feed[name]))
        x, st = cell.unroll(bptt, x, begin_state=[mx.nd.array(feed[prefix + "init_h"]),
                                                  mx.nd.array(feed[prefix + "init_c"])],
                            layout="NTC", merge_outputs=True)
        want_states += st
    np.testing.assert_allclose(outs[0].asnumpy(), x.reshape((-1, proj)).asnumpy(), rtol=1e-5,
                               atol=1e-6)
    for got, want in zip(outs[1:], want_states):
        np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)


def test_executor_gradients_of_unrolled_lstm_match_torch():
    rng = np.random.RandomState(11)
    cell = gluon.rnn.LSTMCell(H, prefix="lstm0_")
    data = mx.sym.var("data")
    h0, c0 = mx.sym.var("h0"), mx.sym.var("c0")
    out, states = cell.unroll(T, data, begin_state=[h0, c0], layout="TNC", merge_outputs=True)
    loss = mx.sym.make_loss(mx.sym.sum(out * mx.sym.var("head")) + mx.sym.sum(states[1]))
    shapes = {"data": (T, N, C), "h0": (N, H), "c0": (N, H), "head": (T, N, H)}
    exe = loss.simple_bind(mx.cpu(), **shapes)
    feed = {}
    for name, arr in exe.arg_dict.items():
        feed[name] = rng.uniform(-0.7, 0.7, size=arr.shape).astype("float32")
        arr[:] = feed[name]
    exe.forward(is_train=True)
    exe.backward()

    ref = torch.nn.LSTMCell(C, H)
    with torch.no_grad():
        ref.weight_ih.copy_(torch.tensor(feed["lstm0_i2h_weight"]))
        ref.weight_hh.copy_(torch.tensor(feed["lstm0_h2h_weight"]))
        ref.bias_ih.copy_(torch.tensor(feed["lstm0_i2h_bias"]))
        ref.bias_hh.copy_(torch.tensor(feed["lstm0_h2h_bias"]))
    x = torch.tensor(feed["data"], requires_grad=True)
    h = torch.tensor(feed["h0"], requires_grad=True)
    c = torch.tensor(feed["c0"], requires_grad=True)
    st, outs = (h, c), []
    for t in range(T):
        st = ref(x[t], st)
        outs.append(st[0])
    total = (torch.stack(outs) * torch.tensor(feed["head"])).sum() + st[1].sum()
    total.backward()
    want = {"data": x.grad, "h0": h.grad, "c0": c.grad, "lstm0_i2h_weight": ref.weight_ih.grad,
            "lstm0_h2h_weight": ref.weight_hh.grad, "lstm0_i2h_bias": ref.bias_ih.grad,
            "lstm0_h2h_bias": ref.bias_hh.grad}
    for name, g in want.items():
        np.testing.assert_allclose(exe.grad_dict[name].asnumpy(), g.numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name)


def test_module_trains_an_unrolled_lstm():
    """A Module over an unrolled LSTM (default zero begin states) learns a running sum."""
    rng = np.random.RandomState(0)
    batch = 16
    x = rng.uniform(-1, 1, size=(64, T, 1)).astype("float32")
    y = np.cumsum(x, axis=1).reshape(64, T) * 0.5
    cell = gluon.rnn.LSTMCell(8, prefix="lstm0_")
    out, _ = cell.unroll(T, mx.sym.var("data"), layout="NTC", merge_outputs=True)
    pred = mx.sym.FullyConnected(mx.sym.reshape(out, shape=(-1, 8)), num_hidden=1, name="fc")
    net = mx.sym.LinearRegressionOutput(mx.sym.reshape(pred, shape=(-1, T)),
                                        mx.sym.var("label"), name="lro")
    it = mx.io.NDArrayIter(x, y, batch_size=batch, label_name="label")
    mod = mx.mod.Module(net, data_names=["data"], label_names=["label"], context=mx.cpu())
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer="adam", optimizer_params={"learning_rate": 0.02})

    def mse():
        it.reset()
        errs = []
        for b in it:
            mod.forward(b, is_train=False)
            errs.append(((mod.get_outputs()[0].asnumpy() - b.label[0].asnumpy()) ** 2).mean())
        return float(np.mean(errs))

    before = mse()
    for _ in range(30):
        it.reset()
        for b in it:
            mod.forward_backward(b)
            mod.update()
    after = mse()
    assert after < 0.2 * before, (before, after)


def test_module_initializes_lstm_forget_bias():
    stack = gluon.rnn.SequentialRNNCell()
    stack.add(gluon.rnn.LSTMCell(4, i2h_bias_initializer=mx.init.LSTMBias(2.0), prefix="l0_"))
    out, _ = stack.unroll(1, mx.sym.var("data"), merge_outputs=True)
    mod = mx.mod.Module(out, label_names=None, context=mx.cpu())
    mod.bind(data_shapes=[("data", (3, 1, 5))], label_shapes=None)
    mod.init_params()
    np.testing.assert_array_equal(mod.get_params()[0]["l0_i2h_bias"].asnumpy(),
                                  [0, 0, 0, 0, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0])


def test_hybridized_block_around_unroll_equals_eager():
    class Net(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.cell = gluon.rnn.BidirectionalCell(gluon.rnn.LSTMCell(H),
                                                        gluon.rnn.GRUCell(H))

        def hybrid_forward(self, F, x, valid_length):
            out, _ = self.cell.unroll(T, x, layout="NTC", merge_outputs=True,
                                      valid_length=valid_length)
            return out

    x = mx.nd.array(np.random.RandomState(4).uniform(-1, 1, (N, T, C)))
    vl = mx.nd.array([5, 1, 3, 2])
    net = Net()
    net.initialize()
    eager = net(x, vl).asnumpy()
    net.hybridize()
    net(x, vl)
    hybrid = net(x, vl)
    assert net._cached_graph is not None
    np.testing.assert_allclose(hybrid.asnumpy(), eager, rtol=1e-5, atol=1e-6)

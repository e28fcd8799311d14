"""``mx.nd.contrib.foreach`` and ``mx.sym.contrib.foreach`` (MXNet 1.9.1's ``_foreach`` loop).

References: torch (``cumsum``, a hand-written RNN loop and torch.autograd), and a graph
MXNet 1.9.1 exported (its JSON and the values MXNet computed from it, pasted below).
"""
import json

import numpy as np
import pytest
import torch

import sparsenet as mx
from sparsenet.symbol.program import Program

RNG = np.random.RandomState(7)
T, N, I, H = 5, 3, 4, 6
X = RNG.normal(size=(T, N, I)).astype(np.float32)
H0 = RNG.normal(size=(N, H)).astype(np.float32)
W = RNG.normal(scale=0.5, size=(H, I)).astype(np.float32)
U = RNG.normal(scale=0.5, size=(H, H)).astype(np.float32)
B = RNG.normal(size=(H,)).astype(np.float32)


def torch_rnn(x, h0, w, u, b):
    """Values and gradients (of sum(outputs * k) + sum(h_T)) of a tanh RNN, in torch."""
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (x, h0, w, u, b)]
    x_, h, w_, u_, b_ = ts
    outs = []
    for t in range(x_.shape[0]):
        h = torch.tanh(x_[t] @ w_.T + h @ u_.T + b_)
        outs.append(h)
    outs = torch.stack(outs)
    weight = torch.arange(outs.numel(), dtype=torch.float64).reshape(outs.shape) / outs.numel()
    ((outs * weight).sum() + h.sum()).backward()
    return outs.detach().numpy(), h.detach().numpy(), [t.grad.numpy() for t in ts], weight.numpy()


def rnn_step(F, w, u, b):
    def step(x, states):
        h = F.tanh(F.FullyConnected(x, w, b, num_hidden=H)
                   + F.FullyConnected(states[0], u, no_bias=True, num_hidden=H))
        return h, [h]
    return step


def nd_arrays(*arrays):
    out = []
    for a in arrays:
        v = mx.nd.array(a)
        v.attach_grad()
        out.append(v)
    return out


# ---------------------------------------------------------------------- NDArray loop
def test_nd_foreach_cumulative_sum_values_and_gradients():
    data = RNG.normal(size=(6, 2, 3)).astype(np.float32)
    x, s0 = nd_arrays(data, np.zeros((2, 3), np.float32))
    with mx.autograd.record():
        outs, states = mx.nd.contrib.foreach(lambda d, s: (d + s[0], [d + s[0]]), x, [s0])
        loss = (outs * outs).sum() + states[0].sum()
    loss.backward()
    tx = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    ref = torch.cumsum(tx, dim=0)
    ((ref * ref).sum() + ref[-1].sum()).backward()
    np.testing.assert_allclose(outs.asnumpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(states[0].asnumpy(), ref[-1].detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_nd_foreach_rnn_step_matches_torch():
    x, h0, w, u, b = nd_arrays(X, H0, W, U, B)
    ref_out, ref_h, ref_grads, weight = torch_rnn(X, H0, W, U, B)
    with mx.autograd.record():
        outs, states = mx.nd.contrib.foreach(rnn_step(mx.nd, w, u, b), x, [h0])
        loss = (outs * mx.nd.array(weight)).sum() + states[0].sum()
    loss.backward()
    np.testing.assert_allclose(outs.asnumpy(), ref_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(states[0].asnumpy(), ref_h, rtol=1e-5, atol=1e-5)
    for got, want in zip((x, h0, w, u, b), ref_grads):
        np.testing.assert_allclose(got.grad.asnumpy(), want, rtol=1e-4, atol=1e-4)


def test_nd_foreach_nested_data_and_states():
    a, c = np.arange(6, dtype=np.float32).reshape(3, 2), np.ones((3, 2), np.float32)

    def body(d, s):
        (p, q), (s1, [s2]) = d, s
        return [p * q, [p + s1]], [s1 + p, [s2 * 2]]
    (o1, [o2]), (st1, [st2]) = mx.nd.contrib.foreach(
        body, [mx.nd.array(a), [mx.nd.array(c)]][:1] + [mx.nd.array(c)],
        [mx.nd.zeros((2,)), [mx.nd.ones((2,))]])
    np.testing.assert_allclose(o1.asnumpy(), a)
    np.testing.assert_allclose(o2.asnumpy(), np.cumsum(a, 0))
    np.testing.assert_allclose(st1.asnumpy(), a.sum(0))
    np.testing.assert_allclose(st2.asnumpy(), [8.0, 8.0])


@pytest.mark.parametrize("data, match", [
    (lambda: [mx.nd.zeros((3, 2)), mx.nd.zeros((4, 2))], "same length"),
    (lambda: mx.nd.zeros((0, 2)), "at least one element"),
])
def test_nd_foreach_rejects_bad_lengths(data, match):
    with pytest.raises(mx.MXNetError, match=match) as info:
        mx.nd.contrib.foreach(lambda d, s: (d, s), data(), [])
    assert isinstance(info.value, ValueError)


def test_nd_foreach_rejects_non_arrays():
    with pytest.raises(TypeError, match="foreach states"):
        mx.nd.contrib.foreach(lambda d, s: (d, s), mx.nd.zeros((2, 1)), [1.0])


# ---------------------------------------------------------------------- the symbolic loop
def rnn_symbol():
    x, h0 = mx.sym.var("x"), mx.sym.var("h0")
    w, u, b = mx.sym.var("w"), mx.sym.var("u"), mx.sym.var("b")
    outs, states = mx.sym.contrib.foreach(rnn_step(mx.sym, w, u, b), x, [h0])
    return mx.sym.Group([outs, states[0]])


def test_sym_foreach_graph_arguments_and_inference():
    y = rnn_symbol()
    assert y.list_arguments() == ["x", "h0", "w", "b", "u"]
    assert len(y.list_outputs()) == 2
    # the body's parameters are sized from the data slice and the states, through the loop
    arg_shapes, out_shapes, _ = y.infer_shape(x=(T, N, I), h0=(N, H))
    assert dict(zip(y.list_arguments(), arg_shapes)) == {
        "x": (T, N, I), "h0": (N, H), "w": (H, I), "b": (H,), "u": (H, H)}
    assert out_shapes == [(T, N, H), (N, H)]
    _, out_types, _ = y.infer_type(x="float64")
    assert out_types == [np.float64, np.float64]
    assert y.infer_storage_type()[1] == ["default", "default"]


def test_sym_foreach_one_program_many_lengths_matches_nd():
    """One compiled graph; the loop length comes from the data when it runs."""
    prog = Program(rnn_symbol(), {})
    assert prog.names == ["x", "h0", "w", "b", "u"]
    for length in (1, 3, 5):
        x, h0, w, u, b = nd_arrays(X[:length], H0, W, U, B)
        ref_out, ref_h, ref_grads, weight = torch_rnn(X[:length], H0, W, U, B)
        with mx.autograd.record():
            outs, h_last = prog.run([x, h0, w, b, u])
            loss = (outs * mx.nd.array(weight)).sum() + h_last.sum()
        loss.backward()
        assert outs.shape == (length, N, H)
        np.testing.assert_allclose(outs.asnumpy(), ref_out, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(h_last.asnumpy(), ref_h, rtol=1e-5, atol=1e-5)
        for got, want in zip((x, h0, w, u, b), ref_grads):
            np.testing.assert_allclose(got.grad.asnumpy(), want, rtol=1e-4, atol=1e-4)


def test_sym_foreach_bound_executor_forward_backward():
    y = rnn_symbol()
    ref_out, ref_h, ref_grads, weight = torch_rnn(X, H0, W, U, B)
    args = dict(zip(["x", "h0", "w", "u", "b"], (mx.nd.array(a) for a in (X, H0, W, U, B))))
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
    exe = y.bind(mx.cpu(), args=args, args_grad=grads)
    outs = exe.forward(is_train=True)
    np.testing.assert_allclose(outs[0].asnumpy(), ref_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[1].asnumpy(), ref_h, rtol=1e-5, atol=1e-5)
    exe.backward([mx.nd.array(weight), mx.nd.ones((N, H))])
    for k, want in zip(["x", "h0", "w", "u", "b"], ref_grads):
        np.testing.assert_allclose(exe.grad_dict[k].asnumpy(), want, rtol=1e-4, atol=1e-4)
    # simple_bind sizes the body's parameters through the loop
    exe2 = y.simple_bind(mx.cpu(), x=(T, N, I), h0=(N, H))
    assert exe2.arg_dict["u"].shape == (H, H) and exe2.grad_dict["w"].shape == (H, I)


def test_sym_foreach_cuts_outer_entries_and_passes_states_through():
    x, s, w = mx.sym.var("x"), mx.sym.var("s"), mx.sym.var("w")
    pre = mx.sym.relu(w, name="pre")       # an outer node the body reads
    outs, states = mx.sym.contrib.foreach(lambda d, st: ([d * pre, d], [st[0], st[1] + d]),
                                          x, [s, s])
    y = mx.sym.Group(outs + states)
    data = np.arange(6, dtype=np.float32).reshape(3, 2)
    got = y.eval(x=mx.nd.array(data), s=mx.nd.ones((2,)), w=mx.nd.array([-1.0, 2.0]))
    np.testing.assert_allclose(got[0].asnumpy(), data * [0.0, 2.0])
    np.testing.assert_allclose(got[1].asnumpy(), data)
    np.testing.assert_allclose(got[2].asnumpy(), [1.0, 1.0])
    np.testing.assert_allclose(got[3].asnumpy(), 1.0 + data.sum(0))


def test_sym_foreach_nested_loops():
    x = mx.sym.var("x")   # (T1, T2, 2): the inner loop sums over axis 1 of each slice

    def outer(d, st):
        inner, [tot] = mx.sym.contrib.foreach(lambda e, s: (e + s[0], [e + s[0]]), d, [st[0]])
        return inner, [tot]
    outs, [tot] = mx.sym.contrib.foreach(outer, x, [mx.sym.var("z")])
    data = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    got = mx.sym.Group([outs, tot]).eval(x=mx.nd.array(data), z=mx.nd.zeros((2,)))
    flat = np.cumsum(data.reshape(6, 2), axis=0).reshape(2, 3, 2)
    np.testing.assert_allclose(got[0].asnumpy(), flat)
    np.testing.assert_allclose(got[1].asnumpy(), data.reshape(6, 2).sum(0))
    again = mx.sym.load_json(mx.sym.Group([outs, tot]).tojson())
    np.testing.assert_allclose(again.eval(x=mx.nd.array(data), z=mx.nd.zeros((2,)))[0].asnumpy(),
                               flat)


def test_sym_foreach_json_round_trip():
    y = rnn_symbol()
    doc = json.loads(y.tojson())
    loop = [n for n in doc["nodes"] if n["op"] == "_foreach"]
    assert len(loop) == 1 and len(loop[0]["subgraphs"]) == 1
    assert loop[0]["attrs"]["num_out_data"] == "1" and loop[0]["attrs"]["num_outputs"] == "2"
    again = mx.sym.load_json(y.tojson())
    assert again.list_arguments() == y.list_arguments()
    assert again.tojson() == y.tojson()
    args = dict(zip(["x", "h0", "w", "u", "b"], (mx.nd.array(a) for a in (X, H0, W, U, B))))
    ref_out, ref_h, _, _ = torch_rnn(X, H0, W, U, B)
    got = again.eval(**args)
    np.testing.assert_allclose(got[0].asnumpy(), ref_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1].asnumpy(), ref_h, rtol=1e-5, atol=1e-5)


# Exported by MXNet 1.9.1 (mxnet-venv) from:
#   pre = relu(w); body(x, s) = (o, [o * 2]) with o = x * pre + s[0] + w
#   outs, st = mx.sym.contrib.foreach(body, data, [s0]); Group([outs, st[0]]).tojson()
MXNET_FOREACH_JSON = """{"nodes": [
 {"op": "null", "name": "data", "inputs": []},
 {"op": "null", "name": "s0", "inputs": []},
 {"op": "null", "name": "w", "inputs": []},
 {"op": "relu", "name": "pre", "inputs": [[2, 0, 0]]},
 {"op": "_foreach", "name": "_foreach0",
  "attrs": {"in_data_locs": "[0]", "in_state_locs": "[2]", "num_args": "5",
            "num_out_data": "1", "num_outputs": "2", "remain_locs": "[1, 3]"},
  "inputs": [[0, 0, 0], [1, 0, 0], [3, 0, 0], [2, 0, 0]],
  "subgraphs": [{"nodes": [
    {"op": "null", "name": "data-0", "attrs": {"__subgraph_name__": "foreach0"}, "inputs": []},
    {"op": "null", "name": "pre_output", "inputs": []},
    {"op": "elemwise_mul", "name": "_mul0", "attrs": {"__subgraph_name__": "foreach0"},
     "inputs": [[0, 0, 0], [1, 0, 0]]},
    {"op": "null", "name": "s0-0", "attrs": {"__subgraph_name__": "foreach0"}, "inputs": []},
    {"op": "elemwise_add", "name": "_plus0", "attrs": {"__subgraph_name__": "foreach0"},
     "inputs": [[2, 0, 0], [3, 0, 0]]},
    {"op": "null", "name": "w", "inputs": []},
    {"op": "elemwise_add", "name": "_plus1", "attrs": {"__subgraph_name__": "foreach0"},
     "inputs": [[4, 0, 0], [5, 0, 0]]},
    {"op": "_mul_scalar", "name": "_mulscalar0",
     "attrs": {"__subgraph_name__": "foreach0", "scalar": "2"}, "inputs": [[6, 0, 0]]}],
   "arg_nodes": [0, 1, 3, 5], "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7, 8],
   "heads": [[6, 0, 0], [7, 0, 0]]}]}],
 "arg_nodes": [0, 1, 2], "node_row_ptr": [0, 1, 2, 3, 4, 6],
 "heads": [[4, 0, 0], [4, 1, 0]], "attrs": {"mxnet_version": ["int", 10901]}}"""
# MXNet 1.9.1's g.eval(data=arange(6).reshape(3, 2), s0=ones(2), w=[-1, 2]) (also by hand)
MXNET_OUTS = [[0.0, 5.0], [-1.0, 18.0], [-3.0, 48.0]]
MXNET_STATE = [-6.0, 96.0]


def test_sym_foreach_loads_mxnet_exported_graph():
    g = mx.sym.load_json(MXNET_FOREACH_JSON)
    assert g.list_arguments() == ["data", "s0", "w"]
    assert g.list_outputs() == ["_foreach0_output0", "_foreach0_output1"]
    args = dict(data=mx.nd.array(np.arange(6).reshape(3, 2)), s0=mx.nd.ones((2,)),
                w=mx.nd.array([-1.0, 2.0]))
    got = g.eval(**args)
    np.testing.assert_allclose(got[0].asnumpy(), MXNET_OUTS)
    np.testing.assert_allclose(got[1].asnumpy(), MXNET_STATE)
    got = mx.sym.load_json(g.tojson()).eval(**args)
    np.testing.assert_allclose(got[1].asnumpy(), MXNET_STATE)


def test_sym_foreach_json_without_subgraph_is_rejected():
    doc = json.loads(MXNET_FOREACH_JSON)
    del doc["nodes"][4]["subgraphs"]
    with pytest.raises(mx.MXNetError, match="needs 1 subgraph"):
        mx.sym.load_json(json.dumps(doc))
    doc = json.loads(MXNET_FOREACH_JSON)
    doc["nodes"][4]["subgraphs"][0]["nodes"][2]["op"] = "no_such_op"
    with pytest.raises(mx.MXNetError, match="in the subgraph of node '_foreach0'"):
        mx.sym.load_json(json.dumps(doc))


def test_sym_foreach_errors():
    x, s = mx.sym.var("x"), mx.sym.var("s")
    with pytest.raises(ValueError, match="every data array must be used"):
        mx.sym.contrib.foreach(lambda d, st: (st[0] * 2, [st[0] + 1]), x, [s])
    with pytest.raises(ValueError, match="nested as init_states"):
        mx.sym.contrib.foreach(lambda d, st: (d, [st[0], st[0]]), x, [s])
    outs, _ = mx.sym.contrib.foreach(lambda d, st: (d + st[0], [st[0]]), x, [s])
    with pytest.raises(mx.MXNetError, match="at least one element"):
        outs.eval(x=mx.nd.zeros((0, 2)), s=mx.nd.zeros((2,)))

"""The fused recurrent layers ``RNN``, ``LSTM``, ``GRU`` and the ``RNN`` operator.

``mxnet_1_9_1_rnn/`` holds what MXNet 1.9.1 produced (``make_fixtures.py`` there, run with
MXNet's own Python): each case's parameters as ``net.save_parameters`` wrote them, and in
``measured.json`` the input, begin states, output, final states and the gradients of
``sum(out * wout)`` with respect to the input and every parameter; the ``op_*`` cases are
``mx.nd.RNN`` on a packed parameter vector. Other references are torch's own
``nn.LSTM``/``nn.GRU``/``nn.RNN`` modules and NumPy loops written here.
"""
import json
import os
import warnings

import numpy as np
import pytest
import torch

import sparsenet as mx
from sparsenet.gluon.rnn.rnn_layer import GRU, LSTM, RNN
from sparsenet.ops.rnn import RNN as rnn_op  # the operator; .fn is its torch definition
from sparsenet.ops.rnn import rnn_param_size

HERE = os.path.join(os.path.dirname(__file__), "mxnet_1_9_1_rnn")
with open(os.path.join(HERE, "measured.json")) as _f:
    REF = json.load(_f)  # measured with MXNet 1.9.1 (make_fixtures.py)

LAYER_CASES = sorted(k for k in REF if not k.startswith("op_") and k != "lstm_clip")
OP_CASES = sorted(k for k in REF if k.startswith("op_"))
CLASSES = {"rnn": RNN, "lstm": LSTM, "gru": GRU}


def _arr(v):
    return mx.nd.array(np.asarray(v, dtype="float32"))


def _close(got, expected, atol=1e-5, rtol=1e-5):
    got = got.asnumpy() if isinstance(got, mx.nd.NDArray) else np.asarray(got)
    np.testing.assert_allclose(got, np.asarray(expected, dtype=np.float64), atol=atol, rtol=rtol)


def _layer_of(name, **extra):
    case = REF[name]
    c_in = np.asarray(case["input"]).shape[-1]
    return CLASSES[name.split("_")[0]](input_size=c_in, prefix=name + "_", **case["kwargs"],
                                       **extra)


# ---------------------------------------------------------------- MXNet 1.9.1's own files
@pytest.mark.parametrize("hybridize", [False, True], ids=["ndarray", "hybridized"])
@pytest.mark.parametrize("name", LAYER_CASES)
def test_mxnet_saved_parameters_give_mxnet_outputs_and_gradients(name, hybridize):
    case = REF[name]
    net = _layer_of(name)
    net.load_parameters(os.path.join(HERE, name + ".params"))
    if hybridize:
        net.hybridize()
    x = _arr(case["input"])
    x.attach_grad()
    states = [_arr(s) for s in case["states"]]
    with mx.autograd.record():
        res = net(x, states) if states else net(x)
        out, out_states = res if states else (res, [])
        loss = (out * _arr(case["wout"])).sum()
    loss.backward()
    if hybridize:
        assert net._cached_graph is not None  # ran as a graph
    _close(out, case["output"])
    assert len(out_states) == len(case["out_states"])
    for got, expected in zip(out_states, case["out_states"]):
        _close(got, expected)
    if case["input_grad"] is not None:  # MXNet has no LSTMP backward on CPU
        _close(x.grad, case["input_grad"])
        for key, grad in case["param_grads"].items():
            _close(getattr(net, key).grad(), grad)


@pytest.mark.parametrize("name", LAYER_CASES)
def test_save_parameters_writes_mxnet_keys(name, tmp_path):
    net = _layer_of(name)
    net.load_parameters(os.path.join(HERE, name + ".params"))
    path = str(tmp_path / "ours.params")
    net.save_parameters(path)
    saved = mx.nd.load(path)
    assert sorted(saved) == REF[name]["saved_keys"]
    theirs = mx.nd.load(os.path.join(HERE, name + ".params"))
    for k in saved:
        np.testing.assert_array_equal(saved[k].asnumpy(), theirs[k].asnumpy())


def test_state_clip_is_ignored_by_mxnet_cpu_and_applied_here():
    # MXNet 1.9.1's CPU kernel ignores state_clip_*: its output equals the unclipped LSTM's
    case = REF["lstm_clip"]
    plain = LSTM(4, input_size=3, prefix="lstm_clip_")
    plain.load_parameters(os.path.join(HERE, "lstm_clip.params"))
    out, _ = plain(_arr(case["input"]), [_arr(s) for s in case["states"]])
    _close(out, case["output"])
    clipped = _layer_of("lstm_clip")
    clipped.load_parameters(os.path.join(HERE, "lstm_clip.params"))
    out, (h, c) = clipped(_arr(case["input"]), [_arr(s) for s in case["states"]])
    ref_out, ref_h, ref_c = _numpy_lstm(case["input"], [
        {k: getattr(clipped, f"l0_{k}").data().asnumpy() for k in
         ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")}],
        np.asarray(case["states"][0]), np.asarray(case["states"][1]), clip=(-0.3, 0.3))
    _close(out, ref_out)
    _close(h, ref_h)
    _close(c, ref_c)
    assert np.abs(c.asnumpy()).max() <= 0.3 + 1e-7


def _numpy_lstm(x, layer_weights, h0, c0, clip=None):
    """One-direction LSTM stack in NumPy (gates i, f, g, o), clipping the cell state."""
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    inp = np.asarray(x, dtype=np.float64)
    hs, cs = [], []
    for k, w in enumerate(layer_weights):
        h, c, ys = h0[k].astype(np.float64), c0[k].astype(np.float64), []
        for t in range(inp.shape[0]):
            g = inp[t] @ w["i2h_weight"].T + w["i2h_bias"] + h @ w["h2h_weight"].T + w["h2h_bias"]
            i, f, gg, o = np.split(g, 4, axis=-1)
            c = sig(f) * c + sig(i) * np.tanh(gg)
            if clip is not None:
                c = np.clip(c, *clip)
            h = sig(o) * np.tanh(c)
            ys.append(h)
        inp = np.stack(ys)
        hs.append(h)
        cs.append(c)
    return inp, np.stack(hs), np.stack(cs)


@pytest.mark.parametrize("name", OP_CASES)
def test_rnn_operator_on_mxnet_packed_vector(name):
    case = REF[name]
    outs = mx.nd.RNN(*[_arr(a) for a in case["inputs"]], state_outputs=True, **case["kwargs"])
    assert len(outs) == len(case["outputs"])
    for got, expected in zip(outs, case["outputs"]):
        _close(got, expected)


@pytest.mark.parametrize("name", OP_CASES)
def test_rnn_symbol_arguments_outputs_and_shapes(name):
    case = REF[name]
    data = mx.sym.var("data")
    sym = mx.sym.RNN(data, name="rnn", state_outputs=True, **case["kwargs"])
    assert sym.list_arguments() == case["arg_names"]
    assert sym.list_outputs() == case["output_names"]
    arg_shapes, out_shapes, _ = sym.infer_shape(data=np.asarray(case["inputs"][0]).shape)
    assert arg_shapes == [np.asarray(a).shape for a in case["inputs"]]
    assert out_shapes == [np.asarray(o).shape for o in case["outputs"]]
    # bound and run as an executor, the graph gives MXNet's values
    exe = sym.bind(mx.cpu(), args={n: _arr(a) for n, a in zip(case["arg_names"],
                                                                case["inputs"])})
    for got, expected in zip(exe.forward(), case["outputs"]):
        _close(got, expected)


def test_rnn_param_size_matches_mxnet():
    # MXNet 1.9.1's sym.RNN(...).infer_shape: (5, 2, 4) data -> parameters (360,) for a
    # 2-layer bidirectional GRU of 3, (102,) for an LSTM of 3 projected to 2
    assert rnn_param_size("gru", 4, 3, num_layers=2, bidirectional=True) == 360
    assert rnn_param_size("lstm", 4, 3, projection_size=2) == 102


# ---------------------------------------------------------------- against torch's modules
def _torch_module(mode, ni, nh, layers, bidir, proj=0):
    kw = dict(num_layers=layers, bidirectional=bidir)
    if mode == "lstm":
        return torch.nn.LSTM(ni, nh, proj_size=proj, **kw)
    if mode == "gru":
        return torch.nn.GRU(ni, nh, **kw)
    return torch.nn.RNN(ni, nh, nonlinearity=mode[4:], **kw)


@pytest.mark.parametrize("mode,layers,bidir,proj,layout", [
    ("lstm", 2, True, 0, "TNC"), ("lstm", 2, False, 3, "NTC"), ("gru", 3, True, 0, "NTC"),
    ("rnn_tanh", 2, True, 0, "TNC"), ("rnn_relu", 1, False, 0, "TNC")])
def test_values_and_every_gradient_match_torch(mode, layers, bidir, proj, layout):
    ni, nh, t, n = 3, 5, 6, 4
    if mode == "lstm":
        net = LSTM(nh, layers, layout=layout, bidirectional=bidir, input_size=ni,
                   projection_size=proj or None)
    elif mode == "gru":
        net = GRU(nh, layers, layout=layout, bidirectional=bidir, input_size=ni)
    else:
        net = RNN(nh, layers, activation=mode[4:], layout=layout, bidirectional=bidir,
                  input_size=ni)
    net.initialize(mx.init.Uniform(0.5))
    ref = _torch_module(mode, ni, nh, layers, bidir, proj).double()
    names = {"i2h_weight": "weight_ih", "h2h_weight": "weight_hh", "i2h_bias": "bias_ih",
             "h2h_bias": "bias_hh", "h2r_weight": "weight_hr"}
    with torch.no_grad():
        for key, p in net._reg_params.items():
            d, rest = key[0], key[1:]
            layer, what = rest.split("_", 1)
            tname = f"{names[what]}_l{layer}" + ("_reverse" if d == "r" else "")
            getattr(ref, tname).copy_(torch.from_numpy(p.data().asnumpy().astype(np.float64)))
    rng = np.random.RandomState(1)
    x = rng.uniform(-1, 1, (t, n, ni)).astype("float32")
    states = [rng.uniform(-1, 1, s["shape"]).astype("float32") for s in net.state_info(n)]
    wout = rng.uniform(-1, 1, (t, n, (proj or nh) * (2 if bidir else 1))).astype("float32")
    # ours
    xin = x.transpose(1, 0, 2) if layout == "NTC" else x
    xs = mx.nd.array(xin)
    xs.attach_grad()
    with mx.autograd.record():
        out, new_states = net(xs, [mx.nd.array(s) for s in states])
        w = wout.transpose(1, 0, 2) if layout == "NTC" else wout
        loss = (out * mx.nd.array(w)).sum() + sum((s * s).sum() for s in new_states)
    loss.backward()
    # torch
    xt = torch.from_numpy(x.astype(np.float64)).requires_grad_()
    hx = [torch.from_numpy(s.astype(np.float64)) for s in states]
    tout, tstates = ref(xt, tuple(hx) if mode == "lstm" else hx[0])
    tstates = list(tstates) if mode == "lstm" else [tstates]
    tloss = (tout * torch.from_numpy(wout.astype(np.float64))).sum() + \
        sum((s * s).sum() for s in tstates)
    tloss.backward()
    got_out = out.asnumpy().transpose(1, 0, 2) if layout == "NTC" else out.asnumpy()
    _close(got_out, tout.detach().numpy())
    for a, b in zip(new_states, tstates):
        _close(a, b.detach().numpy())
    got_dx = xs.grad.asnumpy().transpose(1, 0, 2) if layout == "NTC" else xs.grad.asnumpy()
    _close(got_dx, xt.grad.numpy())
    for key, p in net._reg_params.items():
        d, rest = key[0], key[1:]
        layer, what = rest.split("_", 1)
        tname = f"{names[what]}_l{layer}" + ("_reverse" if d == "r" else "")
        _close(p.grad(), getattr(ref, tname).grad.numpy(), atol=2e-5)


# ---------------------------------------------------------------- the Gluon API
def test_begin_state_and_state_info():
    lstm = LSTM(4, num_layers=2, bidirectional=True, projection_size=3, prefix="l_")
    assert [s["shape"] for s in lstm.state_info(7)] == [(4, 7, 3), (4, 7, 4)]
    states = lstm.begin_state(7)
    assert [s.shape for s in states] == [(4, 7, 3), (4, 7, 4)]
    assert all(float(s.abs().sum().asscalar()) == 0 for s in states)
    ones = GRU(2).begin_state(3, func=mx.nd.ones)
    assert ones[0].shape == (1, 3, 2) and float(ones[0].sum().asscalar()) == 6
    assert RNN(2, 3).state_info(5) == [{"shape": (3, 5, 2), "__layout__": "LNC",
                                        "dtype": "float32"}]


def test_parameter_names_shapes_and_repr():
    net = LSTM(4, num_layers=2, bidirectional=True, input_size=3, projection_size=2,
               prefix="lstm_")
    shapes = {k: v.shape for k, v in net.collect_params().items()}
    assert shapes["lstm_l0_i2h_weight"] == (16, 3)
    assert shapes["lstm_r0_h2h_weight"] == (16, 2)
    assert shapes["lstm_l0_h2r_weight"] == (2, 4)
    assert shapes["lstm_l1_i2h_weight"] == (16, 4)  # projection * directions
    assert repr(RNN(10, 2, "tanh", bidirectional=True, dropout=0.5)) == \
        "RNN(None -> 10, TNC, num_layers=2, dropout=0.5, bidirectional)"  # MXNet's repr
    assert repr(LSTM(3, input_size=2)) == "LSTM(2 -> 3, TNC)"


def test_layer_fill_shape_from_first_call():
    layer = LSTM(10)
    layer.hybridize()
    layer.initialize()
    out = layer(mx.nd.ones((3, 2, 7)))
    assert out.shape == (3, 2, 10)
    assert layer.l0_i2h_weight.shape == (40, 7)
    layer(mx.nd.ones((3, 2, 7)))
    assert layer._cached_graph is not None


def test_call_without_states_returns_output_only_and_with_states_a_pair():
    net = GRU(3, input_size=2)
    net.initialize()
    x = mx.nd.ones((4, 2, 2))
    for _ in range(2):  # imperative, then hybridized (the cached graph serves both forms)
        out = net(x)
        assert isinstance(out, mx.nd.NDArray) and out.shape == (4, 2, 3)
        out2, states = net(x, net.begin_state(2))
        assert isinstance(states, list) and states[0].shape == (1, 2, 3)
        np.testing.assert_allclose(out.asnumpy(), out2.asnumpy(), atol=1e-7)
        out3 = net(x)
        assert isinstance(out3, mx.nd.NDArray)
        net.hybridize()


def test_nested_in_hybrid_sequential_builds_zero_states_in_the_graph(tmp_path):
    seq = mx.gluon.nn.HybridSequential(prefix="net_")
    with seq.name_scope():
        seq.add(LSTM(3, input_size=4, layout="NTC", bidirectional=True))
        seq.add(mx.gluon.nn.Dense(2, flatten=False))
    seq.initialize(mx.init.Uniform(0.5))
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (2, 5, 4)))
    expected = seq(x).asnumpy()
    seq.hybridize()
    np.testing.assert_allclose(seq(x).asnumpy(), expected, atol=1e-6)
    assert seq._cached_graph.symbol.list_arguments()[0] == "data"
    sym_file, params_file = seq.export(str(tmp_path / "m"))
    back = mx.gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_allclose(back(x).asnumpy(), expected, atol=1e-6)


def test_save_load_roundtrip_and_float64(tmp_path):
    net = LSTM(3, num_layers=2, input_size=2, dtype="float64")
    net.initialize(mx.init.Uniform(0.5))
    x = mx.nd.array(np.ones((4, 1, 2)), dtype="float64")
    out = net(x)
    assert out.dtype == np.float64
    path = str(tmp_path / "l.params")
    net.save_parameters(path)
    other = LSTM(3, num_layers=2, input_size=2, dtype="float64")
    other.load_parameters(path)
    np.testing.assert_array_equal(other(x).asnumpy(), out.asnumpy())


def test_dropout_only_while_training():
    net = LSTM(8, num_layers=3, dropout=0.5, input_size=4)
    net.initialize(mx.init.Uniform(0.5))
    x = mx.nd.ones((5, 3, 4))
    a, b = net(x).asnumpy(), net(x).asnumpy()
    np.testing.assert_array_equal(a, b)  # predict mode: no dropout
    with mx.autograd.record():
        c = net(x).asnumpy()
    assert not np.allclose(a, c)


def test_sequence_length_matches_torch_on_truncated_sequences():
    net = LSTM(3, input_size=2, bidirectional=True, use_sequence_length=True)
    net.initialize(mx.init.Uniform(0.5))
    ref = torch.nn.LSTM(2, 3, bidirectional=True)
    names = {"i2h_weight": "weight_ih", "h2h_weight": "weight_hh", "i2h_bias": "bias_ih",
             "h2h_bias": "bias_hh"}
    with torch.no_grad():
        for key, p in net._reg_params.items():
            what = key.split("_", 1)[1]
            getattr(ref, f"{names[what]}_l0" + ("_reverse" if key[0] == "r" else "")).copy_(
                torch.from_numpy(p.data().asnumpy()))
    x = np.random.RandomState(2).uniform(-1, 1, (6, 3, 2)).astype("float32")
    lengths = [6, 2, 4]
    out, (h, c) = net(mx.nd.array(x), net.begin_state(3), mx.nd.array(lengths))
    for j, n in enumerate(lengths):
        with torch.no_grad():
            tout, (th, tc) = ref(torch.from_numpy(x[:n, j:j + 1]))
        _close(out.asnumpy()[:n, j], tout.numpy()[:, 0])
        assert not out.asnumpy()[n:, j].any()  # past its length: zeros
        _close(h.asnumpy()[:, j], th.numpy()[:, 0])
        _close(c.asnumpy()[:, j], tc.numpy()[:, 0])


def test_trains_with_the_trainer():
    net = GRU(4, input_size=3, bidirectional=True)
    net.initialize(mx.init.Uniform(0.3))
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    x = mx.nd.array(np.random.RandomState(3).uniform(-1, 1, (5, 2, 3)))
    losses = []
    for _ in range(20):
        with mx.autograd.record():
            loss = (net(x) - 0.5).square().mean()
        loss.backward()
        trainer.step(1)
        losses.append(float(loss.asscalar()))
    assert losses[-1] < losses[0] * 0.5


# ---------------------------------------------------------------- errors
def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="Invalid layout 'NCT'"):
        LSTM(3, layout="NCT")
    with pytest.raises(mx.MXNetError, match="activation must be 'relu' or 'tanh'"):
        RNN(3, activation="sigmoid")
    with pytest.raises(ValueError, match="state_clip_min and state_clip_max go together"):
        LSTM(3, state_clip_min=-1.0)
    net = LSTM(3, input_size=2)
    net.initialize()
    with pytest.raises(ValueError, match=r"Invalid recurrent state shape. Expecting "
                                         r"\(1, 2, 3\), got \(1, 4, 3\)"):
        net(mx.nd.ones((5, 2, 2)), [mx.nd.zeros((1, 4, 3)), mx.nd.zeros((1, 2, 3))])
    with pytest.raises(mx.MXNetError, match=r"parameters must be a vector of 63 values"):
        mx.nd.RNN(mx.nd.ones((4, 1, 2)), mx.nd.zeros((60,)), mx.nd.zeros((1, 1, 3)),
                  state_size=3, mode="gru")
    with pytest.raises(ValueError, match="mode must be one of"):
        mx.nd.RNN(mx.nd.ones((4, 1, 2)), mx.nd.zeros((60,)), mx.nd.zeros((1, 1, 3)),
                  state_size=3, mode="elman")
    with pytest.raises(ValueError, match=r"state must have shape \(1, 1, 3\)"):
        mx.nd.RNN(mx.nd.ones((4, 1, 2)), mx.nd.zeros((63,)), mx.nd.zeros((2, 1, 3)),
                  state_size=3, mode="gru")
    seq = LSTM(3, input_size=2, use_sequence_length=True)
    seq.initialize()
    with pytest.raises(ValueError, match="pass sequence_length"):
        seq(mx.nd.ones((4, 1, 2)))
    with pytest.raises(ValueError, match=r"sequence_length values must lie in \[1, 4\]"):
        seq(mx.nd.ones((4, 1, 2)), seq.begin_state(1), mx.nd.array([5]))


# ---------------------------------------------------------------- GPU
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("cls", [LSTM, GRU, RNN])
def test_runs_on_gpu_with_cpu_values(cls):
    net = cls(6, num_layers=2, bidirectional=True, input_size=4)
    net.initialize(mx.init.Uniform(0.5), ctx=[mx.cpu(), mx.gpu(0)])
    x = np.random.RandomState(4).uniform(-1, 1, (7, 3, 4)).astype("float32")
    outs = {}
    for ctx in (mx.cpu(), mx.gpu(0)):
        xs = mx.nd.array(x, ctx=ctx)
        xs.attach_grad()
        with mx.autograd.record():
            out = net(xs)
            out.sum().backward()
        assert out.context == ctx
        outs[ctx.device_type] = (out.asnumpy(), xs.grad.asnumpy())
    np.testing.assert_allclose(outs["gpu"][0], outs["cpu"][0], atol=1e-4)
    np.testing.assert_allclose(outs["gpu"][1], outs["cpu"][1], atol=1e-4)


# ---------------------------------------------------------------- the operator in graphs
def _pack_numpy(blocks):
    """MXNet's flat vector from ``[(weights...), (biases...)]`` (its layout, written out)."""
    weights, biases = blocks
    return np.concatenate([w.ravel() for w in weights] + [b.ravel() for b in biases])


def test_executor_backward_matches_torch_for_a_bidirectional_lstm():
    c_in, nh, t, n = 2, 3, 4, 2
    rng = np.random.RandomState(5)
    ref = torch.nn.LSTM(c_in, nh, bidirectional=True).double()
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, tuple(p.shape))))
    names = ["weight_ih_l0", "weight_hh_l0", "weight_ih_l0_reverse", "weight_hh_l0_reverse",
             "bias_ih_l0", "bias_hh_l0", "bias_ih_l0_reverse", "bias_hh_l0_reverse"]
    flat = _pack_numpy([[getattr(ref, k).detach().numpy() for k in names[:4]],
                        [getattr(ref, k).detach().numpy() for k in names[4:]]])
    x = rng.uniform(-1, 1, (t, n, c_in))
    h0, c0 = rng.uniform(-1, 1, (2, n, nh)), rng.uniform(-1, 1, (2, n, nh))
    head = rng.uniform(-1, 1, (t, n, 2 * nh))
    sym = mx.sym.RNN(mx.sym.var("data"), state_size=nh, num_layers=1, bidirectional=True,
                     mode="lstm", name="rnn")
    values = {"data": x, "rnn_parameters": flat, "rnn_state": h0, "rnn_state_cell": c0}
    args = {k: mx.nd.array(v.astype("float32")) for k, v in values.items()}
    grads = {k: mx.nd.zeros(v.shape) for k, v in values.items()}
    exe = sym.bind(mx.cpu(), args=args, args_grad=grads)
    out = exe.forward(is_train=True)[0]
    exe.backward(mx.nd.array(head.astype("float32")))
    xt = torch.from_numpy(x).requires_grad_()
    ht, ct = torch.from_numpy(h0).requires_grad_(), torch.from_numpy(c0).requires_grad_()
    tout, _ = ref(xt, (ht, ct))
    (tout * torch.from_numpy(head)).sum().backward()
    _close(out, tout.detach().numpy())
    _close(grads["data"], xt.grad.numpy())
    _close(grads["rnn_state"], ht.grad.numpy())
    _close(grads["rnn_state_cell"], ct.grad.numpy())
    expected_flat = _pack_numpy([[getattr(ref, k).grad.numpy() for k in names[:4]],
                                 [getattr(ref, k).grad.numpy() for k in names[4:]]])
    _close(grads["rnn_parameters"], expected_flat)


def test_gru_symbol_with_sequence_length_takes_mxnet_input_order(tmp_path):
    sym = mx.sym.RNN(mx.sym.var("data"), state_size=2, mode="gru", use_sequence_length=True,
                     name="g")
    # MXNet's order for a GRU: data, parameters, state, sequence_length (no state_cell)
    assert sym.list_arguments() == ["data", "g_parameters", "g_state", "g_sequence_length"]
    arg_shapes, out_shapes, _ = sym.infer_shape(data=(5, 3, 4))
    assert arg_shapes == [(5, 3, 4), (rnn_param_size("gru", 4, 2),), (1, 3, 2), (3,)]
    assert out_shapes == [(5, 3, 2)]
    path = str(tmp_path / "g.json")
    sym.save(path)
    back = mx.sym.load(path)
    rng = np.random.RandomState(6)
    args = {"data": mx.nd.array(rng.uniform(-1, 1, (5, 3, 4))),
            "g_parameters": mx.nd.array(rng.uniform(-1, 1, arg_shapes[1])),
            "g_state": mx.nd.zeros((1, 3, 2)), "g_sequence_length": mx.nd.array([5, 1, 3])}
    out = back.bind(mx.cpu(), args=args).forward()[0].asnumpy()
    direct = mx.nd.RNN(*[args[k] for k in ["data", "g_parameters", "g_state",
                                           "g_sequence_length"]],
                       state_size=2, mode="gru", use_sequence_length=True).asnumpy()
    np.testing.assert_array_equal(out, direct)
    assert not out[1:, 1].any() and out[0, 1].any()


def test_unfused_cells_give_the_fused_output():
    assert mx.gluon.rnn.LSTM is LSTM and mx.gluon.rnn.GRU is GRU and mx.gluon.rnn.RNN is RNN
    for cls in (LSTM, GRU):
        net = cls(3, num_layers=2, bidirectional=True, input_size=2)
        net.initialize(mx.init.Uniform(0.5))
        x = mx.nd.array(np.random.RandomState(8).uniform(-1, 1, (4, 2, 2)))
        stack = net._unfuse()  # cells sharing the layer's parameters
        out, _ = stack.unroll(4, x, layout="TNC", merge_outputs=True)
        _close(out, net(x).asnumpy())


def test_one_layer_with_dropout_warns_nothing():
    net = GRU(3, dropout=0.4, input_size=2)
    net.initialize()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with mx.autograd.record():
            net(mx.nd.ones((3, 1, 2)))


@pytest.mark.parametrize("hybridize", [False, True], ids=["ndarray", "hybridized"])
def test_sparse_embedding_into_lstm_gives_row_sparse_gradient(hybridize):
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(mx.gluon.nn.Embedding(50, 4, sparse_grad=True))
        net.add(LSTM(3, input_size=4))
    net.initialize(mx.init.Uniform(0.5))
    if hybridize:
        net.hybridize()
    ids = mx.nd.array([[3, 7], [7, 11], [40, 3]])  # (T, N) word ids
    with mx.autograd.record():
        out = net(ids)
    out.backward()
    grad = net[0].weight.grad()
    assert grad.stype == "row_sparse"
    assert grad.indices.asnumpy().tolist() == [3, 7, 11, 40]
    assert net[1].l0_i2h_weight.grad().abs().sum().asscalar() > 0


def test_clipped_lstm_gradient_passes_finite_differences():
    rng = np.random.RandomState(9)
    n_par = rnn_param_size("lstm", 2, 2, bidirectional=True)
    inputs = [torch.from_numpy(rng.uniform(-1, 1, s)).requires_grad_()
              for s in [(3, 2, 2), (n_par,), (2, 2, 2), (2, 2, 2)]]

    def f(x, w, h, c):
        return rnn_op.fn(x, w, h, c, state_size=2, bidirectional=True, mode="lstm",
                         state_outputs=True, lstm_state_clip_min=-0.4,
                         lstm_state_clip_max=0.4)
    assert torch.autograd.gradcheck(f, inputs, atol=1e-6)

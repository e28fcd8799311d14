"""mx.rnn (MXNet's legacy symbolic cells) bound as executors, against torch's cells and
against mx.gluon.rnn's cells with the same weights; FusedRNNCell against its unfuse().

torch.nn.LSTMCell/GRUCell/RNNCell use MXNet's gate orders (LSTM i, f, g, o; GRU r, z, n,
the reset gate applied after W_hn h + b_hn), so ``<prefix>i2h_weight`` etc. are torch's
``weight_ih``/``weight_hh``/``bias_ih``/``bias_hh`` as they are.
"""
import numpy as np
import pytest
import torch

import sparsenet as mx
from sparsenet.base import InvalidArgumentTypeError, StateError, UnsupportedError

T, N, C, H = 4, 3, 5, 6
KINDS = ["lstm", "gru", "rnn_tanh", "rnn_relu"]


def _legacy(kind, prefix="c_"):
    return {"lstm": lambda: mx.rnn.LSTMCell(H, prefix=prefix),
            "gru": lambda: mx.rnn.GRUCell(H, prefix=prefix),
            "rnn_tanh": lambda: mx.rnn.RNNCell(H, prefix=prefix),
            "rnn_relu": lambda: mx.rnn.RNNCell(H, activation="relu", prefix=prefix)}[kind]()


def _torch_cell(kind, params):
    cell = {"lstm": lambda: torch.nn.LSTMCell(C, H), "gru": lambda: torch.nn.GRUCell(C, H),
            "rnn_tanh": lambda: torch.nn.RNNCell(C, H, nonlinearity="tanh"),
            "rnn_relu": lambda: torch.nn.RNNCell(C, H, nonlinearity="relu")}[kind]()
    with torch.no_grad():
        cell.weight_ih.copy_(torch.tensor(params["i2h_weight"]))
        cell.weight_hh.copy_(torch.tensor(params["h2h_weight"]))
        cell.bias_ih.copy_(torch.tensor(params["i2h_bias"]))
        cell.bias_hh.copy_(torch.tensor(params["h2h_bias"]))
    return cell, {"i2h_weight": cell.weight_ih, "h2h_weight": cell.weight_hh,
                  "i2h_bias": cell.bias_ih, "h2h_bias": cell.bias_hh}


def _random_case(kind, rng):
    gates = {"lstm": 4, "gru": 3}.get(kind, 1)
    params = {"i2h_weight": (gates * H, C), "h2h_weight": (gates * H, H),
              "i2h_bias": (gates * H,), "h2h_bias": (gates * H,)}
    params = {k: rng.uniform(-0.6, 0.6, size=s).astype("float32") for k, s in params.items()}
    x = rng.uniform(-1, 1, size=(T, N, C)).astype("float32")
    states = [rng.uniform(-1, 1, size=(N, H)).astype("float32")
              for _ in range(2 if kind == "lstm" else 1)]
    head = rng.uniform(-1, 1, size=(T, N, H)).astype("float32")
    return params, x, states, head


def _torch_reference(kind, params, x, states, head):
    """Outputs (T, N, H), final states and gradients of torch's cell unrolled over x."""
    cell, tp = _torch_cell(kind, params)
    xt = torch.tensor(x, requires_grad=True)
    st_in = [torch.tensor(s, requires_grad=True) for s in states]
    st = tuple(st_in) if kind == "lstm" else st_in[0]
    outs = []
    for t in range(T):
        st = cell(xt[t], st)
        outs.append(st[0] if kind == "lstm" else st)
    out = torch.stack(outs)
    (out * torch.tensor(head)).sum().backward()
    final = [s.detach().numpy() for s in (st if kind == "lstm" else [st])]
    grads = {k: v.grad.numpy() for k, v in tp.items()}
    grads["data"] = xt.grad.numpy()
    for i, s in enumerate(st_in):
        grads[f"s{i}"] = s.grad.numpy()
    return out.detach().numpy(), final, grads


def _bind_legacy(cell, layout, x_tnc, params, states, prefix="c_", begin_state=True):
    """Unroll ``cell`` over a variable 'data' in ``layout``, bind it, run forward."""
    data = mx.sym.var("data")
    begin = [mx.sym.var(f"s{i}") for i in range(len(states))] if begin_state else None
    out, final = cell.unroll(T, data, begin_state=begin, layout=layout, merge_outputs=True)
    graph = mx.sym.Group([out] + [mx.sym.BlockGrad(s) for s in final])
    x = x_tnc if layout == "TNC" else np.swapaxes(x_tnc, 0, 1)
    shapes = {"data": x.shape}
    if begin_state:
        shapes.update({f"s{i}": s.shape for i, s in enumerate(states)})
    exe = graph.simple_bind(mx.cpu(), grad_req="write", **shapes)
    exe.arg_dict["data"][:] = x
    for k, v in params.items():
        exe.arg_dict[prefix + k][:] = v
    if begin_state:
        for i, s in enumerate(states):
            exe.arg_dict[f"s{i}"][:] = s
    exe.forward(is_train=True)
    return exe


@pytest.mark.parametrize("layout", ["TNC", "NTC"])
@pytest.mark.parametrize("kind", KINDS)
def test_unrolled_legacy_cell_matches_torch(kind, layout):
    rng = np.random.RandomState(11)
    params, x, states, head = _random_case(kind, rng)
    ref_out, ref_final, ref_grads = _torch_reference(kind, params, x, states, head)

    exe = _bind_legacy(_legacy(kind), layout, x, params, states)
    out = exe.outputs[0].asnumpy()
    out_tnc = out if layout == "TNC" else np.swapaxes(out, 0, 1)
    np.testing.assert_allclose(out_tnc, ref_out, rtol=1e-5, atol=1e-5)
    for got, want in zip(exe.outputs[1:], ref_final):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-5)

    h = head if layout == "TNC" else np.swapaxes(head, 0, 1)
    exe.backward([mx.nd.array(h)] + [mx.nd.zeros(s.shape) for s in states])
    for k in params:
        np.testing.assert_allclose(exe.grad_dict["c_" + k].asnumpy(), ref_grads[k],
                                   rtol=1e-4, atol=1e-5, err_msg=k)
    gx = exe.grad_dict["data"].asnumpy()
    gx = gx if layout == "TNC" else np.swapaxes(gx, 0, 1)
    np.testing.assert_allclose(gx, ref_grads["data"], rtol=1e-4, atol=1e-5)
    for i in range(len(states)):
        np.testing.assert_allclose(exe.grad_dict[f"s{i}"].asnumpy(), ref_grads[f"s{i}"],
                                   rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_default_begin_state_is_zeros_sized_from_the_batch(kind):
    rng = np.random.RandomState(3)
    params, x, states, head = _random_case(kind, rng)
    zeros = [np.zeros_like(s) for s in states]
    ref_out, _, _ = _torch_reference(kind, params, x, zeros, head)
    exe = _bind_legacy(_legacy(kind), "NTC", x, params, states, begin_state=False)
    np.testing.assert_allclose(np.swapaxes(exe.outputs[0].asnumpy(), 0, 1), ref_out,
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_legacy_cell_matches_gluon_cell_with_the_same_parameters(kind):
    rng = np.random.RandomState(5)
    params, x, states, head = _random_case(kind, rng)
    gluon = {"lstm": lambda: mx.gluon.rnn.LSTMCell(H, input_size=C, prefix="c_"),
             "gru": lambda: mx.gluon.rnn.GRUCell(H, input_size=C, prefix="c_"),
             "rnn_tanh": lambda: mx.gluon.rnn.RNNCell(H, input_size=C, prefix="c_"),
             "rnn_relu": lambda: mx.gluon.rnn.RNNCell(H, activation="relu", input_size=C,
                                                      prefix="c_")}[kind]()
    gluon.initialize()
    for name, p in gluon.collect_params().items():
        p.set_data(mx.nd.array(params[name[len("c_"):]]))
    xs = mx.nd.array(x)
    xs.attach_grad()
    with mx.autograd.record():
        g_out, _ = gluon.unroll(T, xs, [mx.nd.array(s) for s in states], layout="TNC",
                                merge_outputs=True)
    g_out.backward(mx.nd.array(head))

    exe = _bind_legacy(_legacy(kind), "TNC", x, params, states)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), g_out.asnumpy(), rtol=1e-5, atol=1e-6)
    exe.backward([mx.nd.array(head)] + [mx.nd.zeros(s.shape) for s in states])
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), xs.grad.asnumpy(),
                               rtol=1e-5, atol=1e-6)
    for name, p in gluon.collect_params().items():
        np.testing.assert_allclose(exe.grad_dict[name].asnumpy(), p.grad().asnumpy(),
                                   rtol=1e-5, atol=1e-6, err_msg=name)


def test_parameter_and_output_names_are_mxnets():
    stack = mx.rnn.SequentialRNNCell()
    for i in range(2):
        stack.add(mx.rnn.LSTMCell(num_hidden=H, prefix="lstm_l%d_" % i))
    stack.reset()
    outputs, states = stack.unroll(3, inputs=[mx.sym.var("t%d" % i) for i in range(3)])
    assert [o.name for o in outputs] == ["lstm_l1_t0_out", "lstm_l1_t1_out", "lstm_l1_t2_out"]
    assert sorted(stack.params._params) == sorted(
        f"lstm_l{i}_{g}_{k}" for i in range(2) for g in ("i2h", "h2h")
        for k in ("weight", "bias"))
    assert len(states) == 4


def test_lstm_forget_bias_initializes_the_forget_quarter():
    cell = mx.rnn.LSTMCell(3, prefix="l0_", forget_bias=2.5)
    out, _ = cell.unroll(2, mx.sym.var("data"), merge_outputs=True)
    mod = mx.mod.Module(out, label_names=None, context=mx.cpu())
    mod.bind(data_shapes=[("data", (2, 2, 4))], label_shapes=None)
    mod.init_params(mx.init.Uniform(0.1))
    bias = mod.get_params()[0]["l0_i2h_bias"].asnumpy()
    np.testing.assert_array_equal(bias, [0, 0, 0, 2.5, 2.5, 2.5, 0, 0, 0, 0, 0, 0])


def test_unpack_then_pack_weights_round_trips_and_splits_by_gate():
    cell = mx.rnn.GRUCell(2, prefix="g_")
    w = np.arange(6 * 3, dtype="float32").reshape(6, 3)
    args = {"g_i2h_weight": mx.nd.array(w), "g_i2h_bias": mx.nd.arange(6),
            "g_h2h_weight": mx.nd.ones((6, 2)), "g_h2h_bias": mx.nd.zeros((6,))}
    unpacked = cell.unpack_weights(args)
    assert "g_i2h_weight" in args  # the caller's dict is not modified
    np.testing.assert_array_equal(unpacked["g_i2h_z_weight"].asnumpy(), w[2:4])
    np.testing.assert_array_equal(unpacked["g_i2h_o_bias"].asnumpy(), [4, 5])
    packed = cell.pack_weights(unpacked)
    assert sorted(packed) == sorted(args)
    np.testing.assert_array_equal(packed["g_i2h_weight"].asnumpy(), w)


FUSED = [(mode, bi) for mode in KINDS for bi in (False, True)]


@pytest.mark.parametrize("mode,bidirectional", FUSED)
def test_fused_cell_matches_its_unfused_stack(mode, bidirectional):
    rng = np.random.RandomState(2)
    layers = 2
    fused = mx.rnn.FusedRNNCell(H, num_layers=layers, mode=mode, bidirectional=bidirectional,
                                prefix="f_", get_next_state=True)
    stack = fused.unfuse()
    data = mx.sym.var("data")
    f_out, f_states = fused.unroll(T, data, layout="TNC", merge_outputs=True)
    s_out, _ = stack.unroll(T, data, layout="TNC", merge_outputs=True)
    assert len(f_states) == (2 if mode == "lstm" else 1)
    f_exe = f_out.simple_bind(mx.cpu(), data=(T, N, C))
    s_exe = s_out.simple_bind(mx.cpu(), data=(T, N, C))
    n_params = f_exe.arg_dict["f_parameters"].shape[0]
    flat = rng.uniform(-0.5, 0.5, size=(n_params,)).astype("float32")
    x = rng.uniform(-1, 1, size=(T, N, C)).astype("float32")
    f_exe.arg_dict["f_parameters"][:] = flat
    f_exe.arg_dict["data"][:] = x
    unpacked = fused.unpack_weights({"f_parameters": mx.nd.array(flat)})
    for name, value in stack.pack_weights(unpacked).items():
        s_exe.arg_dict[name][:] = value
    s_exe.arg_dict["data"][:] = x
    f_exe.forward(is_train=True)
    s_exe.forward(is_train=True)
    width = H * (2 if bidirectional else 1)
    assert f_exe.outputs[0].shape == (T, N, width)
    np.testing.assert_allclose(f_exe.outputs[0].asnumpy(), s_exe.outputs[0].asnumpy(),
                               rtol=1e-5, atol=1e-5)
    head = mx.nd.array(rng.uniform(-1, 1, size=(T, N, width)).astype("float32"))
    f_exe.backward([head])
    s_exe.backward([head])
    np.testing.assert_allclose(f_exe.grad_dict["data"].asnumpy(),
                               s_exe.grad_dict["data"].asnumpy(), rtol=1e-4, atol=1e-5)
    f_grads = fused.unpack_weights({"f_parameters": f_exe.grad_dict["f_parameters"]})
    s_grads = stack.unpack_weights({k: v for k, v in s_exe.grad_dict.items() if k != "data"})
    assert sorted(f_grads) == sorted(s_grads)
    for k in f_grads:
        np.testing.assert_allclose(f_grads[k].asnumpy(), s_grads[k].asnumpy(),
                                   rtol=1e-4, atol=1e-5, err_msg=k)


def test_fused_pack_is_the_inverse_of_unpack():
    fused = mx.rnn.FusedRNNCell(3, num_layers=2, mode="gru", bidirectional=True, prefix="")
    # hand count: layer 0 per direction (3 gates x 3 rows) x (4 inputs + 3 + 2 biases),
    # layer 1 per direction 9 x (6 + 3 + 2)
    size = 2 * 9 * (4 + 3 + 2) + 2 * 9 * (6 + 3 + 2)
    flat = mx.nd.arange(size)
    unpacked = fused.unpack_weights({"parameters": flat})
    assert unpacked["l0_i2h_r_weight"].shape == (3, 4)
    assert unpacked["r1_i2h_o_weight"].shape == (3, 6)
    np.testing.assert_array_equal(unpacked["l0_i2h_r_weight"].asnumpy().ravel(), np.arange(12))
    np.testing.assert_array_equal(fused.pack_weights(unpacked)["parameters"].asnumpy(),
                                  np.arange(size))


def test_fused_initializer_sets_both_forget_biases():
    fused = mx.rnn.FusedRNNCell(2, num_layers=1, mode="lstm", prefix="f_", forget_bias=1.5)
    out, _ = fused.unroll(3, mx.sym.var("data"), layout="TNC", merge_outputs=True)
    mod = mx.mod.Module(out, label_names=None, context=mx.cpu())
    mod.bind(data_shapes=[("data", (3, 2, 4))], label_shapes=None)
    mod.init_params(mx.init.Zero())
    args = fused.unpack_weights(mod.get_params()[0])
    for name, value in args.items():
        want = 1.5 if name.endswith("_f_bias") else 0.0
        np.testing.assert_array_equal(value.asnumpy(), np.full(value.shape, want), err_msg=name)


def test_bidirectional_and_residual_shapes_and_values():
    cell = mx.rnn.ResidualCell(mx.rnn.BidirectionalCell(
        mx.rnn.GRUCell(2, prefix="l_"), mx.rnn.GRUCell(2, prefix="r_")))
    out, _ = cell.unroll(2, [mx.sym.var("x0"), mx.sym.var("x1")], merge_outputs=False)
    zeros = {f"{d}_{g}_{k}": mx.nd.zeros((6, 4 if g == "i2h" and k == "weight" else 2)
                                         if k == "weight" else (6,))
             for d in "lr" for g in ("i2h", "h2h") for k in ("weight", "bias")}
    # zero weights: every GRU output is 0.5 * candidate(0) + 0.5 * h = 0, so out = input
    res = mx.sym.Group(out).eval(x0=mx.nd.ones((3, 4)) * 2, x1=mx.nd.ones((3, 4)) * 3, **zeros)
    np.testing.assert_array_equal(res[0].asnumpy(), np.full((3, 4), 2.0))
    np.testing.assert_array_equal(res[1].asnumpy(), np.full((3, 4), 3.0))


def test_zoneout_in_inference_is_the_base_cell():
    rng = np.random.RandomState(9)
    params, x, states, head = _random_case("rnn_tanh", rng)
    ref_out, _, _ = _torch_reference("rnn_tanh", params, x, states, head)
    cell = mx.rnn.ZoneoutCell(mx.rnn.RNNCell(H, prefix="c_"), zoneout_outputs=0.5,
                              zoneout_states=0.5)
    exe = _bind_legacy(cell, "TNC", x, params, states)
    exe.forward(is_train=False)
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), ref_out, rtol=1e-5, atol=1e-5)


def test_misuse_raises_mxnet_errors():
    with pytest.raises(InvalidArgumentTypeError):
        mx.rnn.LSTMCell(2).unroll(2, mx.nd.ones((1, 2, 3)))
    with pytest.raises(UnsupportedError):
        mx.rnn.FusedRNNCell(2)(mx.sym.var("x"), [])
    with pytest.raises(UnsupportedError):
        mx.rnn.ZoneoutCell(mx.rnn.FusedRNNCell(2), 0.5)
    base = mx.rnn.GRUCell(2)
    mx.rnn.ResidualCell(base)
    with pytest.raises(StateError):
        base.begin_state()
    with pytest.raises(mx.MXNetError):
        mx.rnn.FusedRNNCell(2, mode="lstm").unpack_weights({"lstm_parameters": mx.nd.ones((7,))})


def test_encode_sentences_hand_computed():
    ids, vocab = mx.rnn.encode_sentences([["a", "b", "c"], ["c", "a"]], start_label=-1)
    # -1 is the invalid label, so the ids start at 0
    assert ids == [[0, 1, 2], [2, 0]]
    assert vocab == {"\n": -1, "a": 0, "b": 1, "c": 2}
    given = {"a": 1, "b": 2}
    ids, vocab = mx.rnn.encode_sentences([["a", "x"], ["y", "b"]], vocab=given,
                                         unknown_token="UNK")
    assert ids == [[1, 0], [0, 2]]           # every unknown token is UNK, id 0
    assert vocab == {"a": 1, "b": 2, "UNK": 0}
    assert given == {"a": 1, "b": 2}         # the caller's vocab is not modified
    with pytest.raises(mx.MXNetError):
        mx.rnn.encode_sentences([["z"]], vocab={"a": 0})


def test_bucket_sentence_iter_hand_computed():
    sentences = [[1, 2], [3, 4], [5, 6, 7], [8, 9, 10], [1, 2, 3, 4, 5, 6]]
    it = mx.rnn.BucketSentenceIter(sentences, batch_size=2, buckets=[3, 2], invalid_label=0)
    assert it.buckets == [2, 3] and it.default_bucket_key == 3
    assert it.provide_data[0].shape == (2, 3)
    batches = {b.bucket_key: b for b in it}
    assert sorted(batches) == [2, 3]   # the 6-token sentence is discarded
    data = batches[2].data[0].asnumpy()
    label = batches[2].label[0].asnumpy()
    assert sorted(map(tuple, data)) == [(1, 2), (3, 4)]
    for row, lab in zip(data, label):
        np.testing.assert_array_equal(lab, [row[1], 0])
    data = batches[3].data[0].asnumpy()
    assert sorted(map(tuple, data)) == [(5, 6, 7), (8, 9, 10)]
    it.reset()
    tn = mx.rnn.BucketSentenceIter(sentences[:4], batch_size=2, layout="TN")
    assert tn.buckets == [2, 3]       # default buckets: lengths shared by >= 2 sentences
    shapes = sorted(b.data[0].shape for b in tn)
    assert shapes == [(2, 2), (3, 2)]
    with pytest.raises(mx.MXNetError):
        mx.rnn.BucketSentenceIter(sentences, batch_size=2, buckets=[3], layout="NCT")


def test_rnn_checkpoint_saves_unpacked_and_loads_packed(tmp_path):
    cell = mx.rnn.LSTMCell(2, prefix="l0_")
    out, _ = cell.unroll(2, mx.sym.var("data"), merge_outputs=True)
    rng = np.random.RandomState(0)
    args = {f"l0_{g}_{k}": mx.nd.array(rng.uniform(size=(8, 3 if g == "i2h" else 2)
                                                   if k == "weight" else (8,)))
            for g in ("i2h", "h2h") for k in ("weight", "bias")}
    prefix = str(tmp_path / "model")
    mx.rnn.do_rnn_checkpoint(cell, prefix, period=2)(1, out, args, {})
    saved = mx.nd.load(prefix + "-0002.params")
    assert "arg:l0_i2h_f_weight" in saved and "arg:l0_i2h_weight" not in saved
    np.testing.assert_array_equal(saved["arg:l0_i2h_f_weight"].asnumpy(),
                                  args["l0_i2h_weight"].asnumpy()[2:4])
    sym, loaded, aux = mx.rnn.load_rnn_checkpoint(cell, prefix, 2)
    assert sorted(loaded) == sorted(args) and aux == {}
    for k in args:
        np.testing.assert_array_equal(loaded[k].asnumpy(), args[k].asnumpy())
    assert sym.list_arguments() == out.list_arguments()

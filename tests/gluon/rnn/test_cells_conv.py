"""Convolutional recurrent cells against a torch reference built from ``torch.nn.functional``
convolutions (values and input gradients), and their shapes as MXNet 1.9.1's tests state."""
import numpy as np
import pytest
import torch
import torch.nn.functional as tF

import sparsenet as mx
from sparsenet.gluon.contrib import rnn as crnn


def _reference_step(kind, x, states, w, dims, pad):
    conv = {1: tF.conv1d, 2: tF.conv2d}[dims]
    i2h = conv(x, w["i2h_weight"], w["i2h_bias"])
    h2h = conv(states[0], w["h2h_weight"], w["h2h_bias"], padding=pad)
    if kind == "rnn":
        out = torch.tanh(i2h + h2h)
        return out, [out]
    if kind == "lstm":
        i, f, g, o = torch.chunk(i2h + h2h, 4, dim=1)
        c = torch.sigmoid(f) * states[1] + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, [h, c]
    ir, iz, in_ = torch.chunk(i2h, 3, dim=1)
    hr, hz, hn = torch.chunk(h2h, 3, dim=1)
    r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
    n = torch.tanh(in_ + r * hn)
    h = (1 - z) * n + z * states[0]
    return h, [h]


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_conv_cell_matches_torch(kind, dims):
    rng = np.random.RandomState(3)
    spatial = (9,) if dims == 1 else (7, 6)
    cls = getattr(crnn, f"Conv{dims}D{kind.upper()}Cell")
    cell = cls((3,) + spatial, 4, i2h_kernel=3, h2h_kernel=3, prefix="c_")
    cell.initialize()
    w = {}
    for name, p in cell.collect_params().items():
        v = rng.uniform(-0.4, 0.4, size=p.shape).astype("float32")
        p.set_data(mx.nd.array(v))
        w[name[2:]] = torch.tensor(v)
    x_np = rng.uniform(-1, 1, size=(2, 3, 3) + spatial).astype("float32")   # (N, T, C, ...)
    x = mx.nd.array(x_np)
    x.attach_grad()
    with mx.autograd.record():
        out, states = cell.unroll(3, x, layout="NTC", merge_outputs=True)
        loss = (out * out).sum()
    loss.backward()

    xt = torch.tensor(x_np, requires_grad=True)
    st = [torch.zeros((2,) + s["shape"][1:]) for s in cell.state_info(2)]
    outs = []
    for t in range(3):
        o, st = _reference_step(kind, xt[:, t], st, w, dims, 1)
        outs.append(o)
    ref = torch.stack(outs, dim=1)
    (ref * ref).sum().backward()
    np.testing.assert_allclose(out.asnumpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    for s, r in zip(states, st):
        np.testing.assert_allclose(s.asnumpy(), r.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_conv_cell_symbol_shapes_and_names():
    cell = crnn.Conv2DLSTMCell((10, 20, 50), 100, 3, 3, prefix="rnn_")
    outs, _ = cell.unroll(3, [mx.sym.var("rnn_t%d_data" % i) for i in range(3)])
    group = mx.sym.Group(outs)
    assert group.list_outputs() == ["rnn_t0_out_output", "rnn_t1_out_output",
                                    "rnn_t2_out_output"]
    shapes = {"rnn_t%d_data" % i: (1, 10, 20, 50) for i in range(3)}
    assert group.infer_shape(**shapes)[1] == [(1, 100, 18, 48)] * 3


def test_conv_cell_bad_arguments():
    with pytest.raises(mx.MXNetError, match="h2h_kernel must be odd"):
        crnn.Conv1DRNNCell((3, 9), 4, 3, 2)
    with pytest.raises(mx.MXNetError, match="input_shape must have 2 entries"):
        crnn.Conv1DRNNCell((3, 9, 9), 4, 3, 3)
    with pytest.raises(mx.MXNetError, match="conv_layout must be one of"):
        crnn.Conv2DGRUCell((3, 9, 9), 4, 3, 3, conv_layout="NCW")


def test_dynamic_unroll_matches_unroll_with_valid_length():
    cell = mx.gluon.rnn.LSTMCell(5, input_size=3)
    cell.initialize()
    x = mx.nd.array(np.random.RandomState(0).normal(size=(6, 4, 3)))
    states = [mx.nd.array(np.random.RandomState(1).normal(size=(4, 5))) for _ in range(2)]
    vl = mx.nd.array([6, 2, 4, 1])
    out, st = crnn.rnn_cell.dynamic_unroll(cell, x, states, valid_length=vl, layout="TNC")
    ref_out, ref_st = cell.unroll(6, x, begin_state=states, layout="TNC", merge_outputs=True,
                                  valid_length=vl)
    np.testing.assert_allclose(out.asnumpy(), ref_out.asnumpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(st, ref_st):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)

"""Recurrent cells against torch's own cells: values and every gradient.

torch.nn.LSTMCell stacks its gates input, forget, cell, output and torch.nn.GRUCell
reset, update, new with the reset gate applied after ``W_hn h + b_hn``: MXNet's
orders and formulas, so MXNet's ``i2h``/``h2h`` weights and biases are torch's
``weight_ih``/``weight_hh``/``bias_ih``/``bias_hh`` as they are. The LSTMP cell is
checked against ``torch.nn.LSTM(proj_size=...)`` (``h2r_weight`` is ``weight_hr_l0``).
"""
import numpy as np
import pytest
import torch

import sparsenet as mx

T, N, C, H, P = 4, 3, 5, 6, 2


def _torch_unroll(kind, params, x, states):
    """Outputs (T, N, out) and final states of torch's cell over x (T, N, C)."""
    if kind == "lstmp":
        lstm = torch.nn.LSTM(C, H, proj_size=P)
        with torch.no_grad():
            lstm.weight_ih_l0.copy_(params["i2h_weight"])
            lstm.weight_hh_l0.copy_(params["h2h_weight"])
            lstm.bias_ih_l0.copy_(params["i2h_bias"])
            lstm.bias_hh_l0.copy_(params["h2h_bias"])
            lstm.weight_hr_l0.copy_(params["h2r_weight"])
        tp = {"i2h_weight": lstm.weight_ih_l0, "h2h_weight": lstm.weight_hh_l0,
              "i2h_bias": lstm.bias_ih_l0, "h2h_bias": lstm.bias_hh_l0,
              "h2r_weight": lstm.weight_hr_l0}
        out, (h, c) = lstm(x, (states[0].unsqueeze(0), states[1].unsqueeze(0)))
        return out, [h[0], c[0]], tp
    cell = {"lstm": lambda: torch.nn.LSTMCell(C, H),
            "gru": lambda: torch.nn.GRUCell(C, H),
            "rnn_tanh": lambda: torch.nn.RNNCell(C, H, nonlinearity="tanh"),
            "rnn_relu": lambda: torch.nn.RNNCell(C, H, nonlinearity="relu")}[kind]()
    with torch.no_grad():
        cell.weight_ih.copy_(params["i2h_weight"])
        cell.weight_hh.copy_(params["h2h_weight"])
        cell.bias_ih.copy_(params["i2h_bias"])
        cell.bias_hh.copy_(params["h2h_bias"])
    tp = {"i2h_weight": cell.weight_ih, "h2h_weight": cell.weight_hh,
          "i2h_bias": cell.bias_ih, "h2h_bias": cell.bias_hh}
    outs = []
    st = tuple(states) if kind == "lstm" else states[0]
    for t in range(x.shape[0]):
        st = cell(x[t], st)
        outs.append(st[0] if kind == "lstm" else st)
    final = list(st) if kind == "lstm" else [st]
    return torch.stack(outs), final, tp


def _ours(kind):
    if kind == "lstmp":
        return mx.gluon.contrib.rnn.LSTMPCell(H, P, input_size=C, prefix="c_")
    return {"lstm": lambda: mx.gluon.rnn.LSTMCell(H, input_size=C, prefix="c_"),
            "gru": lambda: mx.gluon.rnn.GRUCell(H, input_size=C, prefix="c_"),
            "rnn_tanh": lambda: mx.gluon.rnn.RNNCell(H, input_size=C, prefix="c_"),
            "rnn_relu": lambda: mx.gluon.rnn.RNNCell(H, activation="relu", input_size=C,
                                                     prefix="c_")}[kind]()


@pytest.mark.parametrize("layout", ["TNC", "NTC"])
@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_tanh", "rnn_relu", "lstmp"])
def test_cell_values_and_gradients_match_torch(kind, layout):
    rng = np.random.RandomState(7)
    cell = _ours(kind)
    cell.initialize()
    params = {}
    for name, p in cell.collect_params().items():
        value = rng.uniform(-0.6, 0.6, size=p.shape).astype("float32")
        p.set_data(mx.nd.array(value))
        params[name[len("c_"):]] = torch.tensor(value)
    x_tnc = rng.uniform(-1, 1, size=(T, N, C)).astype("float32")
    shapes = [info["shape"] for info in cell.state_info(N)]
    states_np = [rng.uniform(-1, 1, size=s).astype("float32") for s in shapes]
    out_width = P if kind == "lstmp" else H
    head = rng.uniform(-1, 1, size=(T, N, out_width)).astype("float32")

    # torch reference
    xt = torch.tensor(x_tnc, requires_grad=True)
    st = [torch.tensor(s, requires_grad=True) for s in states_np]
    out_t, final_t, tp = _torch_unroll(kind, params, xt, st)
    loss_t = (out_t * torch.tensor(head)).sum() + sum((f * f).sum() for f in final_t)
    loss_t.backward()

    # ours
    x_in = x_tnc if layout == "TNC" else x_tnc.transpose(1, 0, 2)
    x = mx.nd.array(x_in)
    x.attach_grad()
    states = [mx.nd.array(s) for s in states_np]
    for s in states:
        s.attach_grad()
    with mx.autograd.record():
        out, final = cell.unroll(T, x, begin_state=states, layout=layout, merge_outputs=True)
        out_tnc = out if layout == "TNC" else mx.nd.swapaxes(out, dim1=0, dim2=1)
        loss = (out_tnc * mx.nd.array(head)).sum() + mx.nd.add_n(*[(f * f).sum()
                                                                     for f in final])
    loss.backward()

    tol = dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out_tnc.asnumpy(), out_t.detach().numpy(), **tol)
    for f, ft in zip(final, final_t):
        np.testing.assert_allclose(f.asnumpy(), ft.detach().numpy(), **tol)
    grad_x = x.grad.asnumpy() if layout == "TNC" else x.grad.asnumpy().transpose(1, 0, 2)
    np.testing.assert_allclose(grad_x, xt.grad.numpy(), **tol)
    for s, ref in zip(states, st):
        np.testing.assert_allclose(s.grad.asnumpy(), ref.grad.numpy(), **tol)
    for name, p in cell.collect_params().items():
        np.testing.assert_allclose(p.grad().asnumpy(), tp[name[len("c_"):]].grad.numpy(),
                                   err_msg=name, **tol)

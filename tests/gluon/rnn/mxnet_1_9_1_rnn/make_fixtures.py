"""Writes the fixtures in this folder with MXNet 1.9.1 (run with MXNet's own Python, not sparsenet's).

    OMP_NUM_THREADS=1 /work/mxnet-venv/bin/python tests/gluon/rnn/mxnet_1_9_1_rnn/make_fixtures.py \
        tests/gluon/rnn/mxnet_1_9_1_rnn

For each case a fused layer (``mx.gluon.rnn.RNN/LSTM/GRU``) is built with uniform random weights
and biases, its parameters are written with ``net.save_parameters('<case>.params')``, and the
input, the begin states, the outputs, the final states and the gradients of
``sum(out * wout)`` with respect to the input and every parameter (under ``autograd.record``)
go to ``measured.json``. The ``op_*`` cases call ``mx.nd.RNN`` directly on a packed parameter
vector (MXNet's flat layout) and record its outputs.
"""
import json
import os
import sys

import mxnet as mx
import numpy as np

os.chdir(sys.argv[1])
rng = np.random.RandomState(7)
mx.random.seed(7)
measured = {}

CASES = {
    # name: (class, constructor kwargs, (T, N, C) of the TNC input, give states?)
    "rnn_relu_2l": (mx.gluon.rnn.RNN, dict(hidden_size=4, num_layers=2, activation="relu"),
                    (5, 2, 3), True),
    "rnn_tanh_bi_ntc": (mx.gluon.rnn.RNN, dict(hidden_size=4, activation="tanh",
                                               bidirectional=True, layout="NTC"),
                        (5, 2, 3), False),
    "lstm_2l_bi": (mx.gluon.rnn.LSTM, dict(hidden_size=4, num_layers=2, bidirectional=True),
                   (5, 2, 3), True),
    "lstm_proj": (mx.gluon.rnn.LSTM, dict(hidden_size=4, num_layers=2, projection_size=2),
                  (5, 2, 3), True),
    "lstm_clip": (mx.gluon.rnn.LSTM, dict(hidden_size=4, state_clip_min=-0.3,
                                          state_clip_max=0.3), (5, 2, 3), True),
    "gru_2l_bi": (mx.gluon.rnn.GRU, dict(hidden_size=4, num_layers=2, bidirectional=True),
                  (5, 2, 3), True),
    "gru_ntc": (mx.gluon.rnn.GRU, dict(hidden_size=4, layout="NTC"), (5, 2, 3), False),
}

for name, (cls, kw, (T, N, C), with_states) in CASES.items():
    init = mx.init.Uniform(0.6)
    net = cls(input_size=C, prefix=name + "_", i2h_weight_initializer=init,
              h2h_weight_initializer=init, i2h_bias_initializer=init,
              h2h_bias_initializer=init, **kw)
    if "projection_size" in kw:
        net = cls(input_size=C, prefix=name + "_", i2h_weight_initializer=init,
                  h2h_weight_initializer=init, i2h_bias_initializer=init,
                  h2h_bias_initializer=init, h2r_weight_initializer=init, **kw)
    net.initialize()
    net.save_parameters(name + ".params")
    x = rng.uniform(-1, 1, (T, N, C)).astype("float32")
    if kw.get("layout") == "NTC":
        x = x.transpose(1, 0, 2).copy()
    states = [rng.uniform(-0.5, 0.5, s["shape"][:1] + (N,) + s["shape"][2:]).astype("float32")
              for s in net.state_info(N)] if with_states else []
    xs = mx.nd.array(x)
    xs.attach_grad()
    params = net.collect_params()
    trains = "projection_size" not in kw  # "No training support for LSTM with projection on CPU"
    with (mx.autograd.record() if trains else mx.autograd.pause()):
        res = net(xs, [mx.nd.array(s) for s in states]) if with_states else net(xs)
        out, out_states = (res if with_states else (res, []))
        wout = mx.nd.array(rng.uniform(-1, 1, out.shape).astype("float32"))
        loss = (out * wout).sum()
    if trains:
        loss.backward()
    measured[name] = {
        "kwargs": kw, "input": x.tolist(), "states": [s.tolist() for s in states],
        "output": out.asnumpy().tolist(), "out_states": [s.asnumpy().tolist() for s in out_states],
        "wout": wout.asnumpy().tolist(), "input_grad": xs.grad.asnumpy().tolist() if trains else None,
        "param_grads": {k[len(name) + 1:]: p.grad().asnumpy().tolist()
                        for k, p in params.items()} if trains else None,
        "saved_keys": sorted(mx.nd.load(name + ".params").keys()),
    }

# mx.nd.RNN on a packed vector: MXNet's flat parameter layout
for name, kw, (T, N, C) in [
        ("op_lstm_bi", dict(mode="lstm", state_size=3, num_layers=2, bidirectional=True), (4, 2, 3)),
        ("op_gru", dict(mode="gru", state_size=3, num_layers=1), (4, 2, 2)),
        ("op_rnn_tanh_bi", dict(mode="rnn_tanh", state_size=3, num_layers=1, bidirectional=True),
         (4, 2, 2)),
        ("op_lstm_proj", dict(mode="lstm", state_size=3, num_layers=1, projection_size=2),
         (4, 2, 2))]:
    data = mx.sym.var("data")
    sym = mx.sym.RNN(data, name="rnn", state_outputs=True, **kw)
    arg_shapes, _, _ = sym.infer_shape(data=(T, N, C))
    arrays = {n: rng.uniform(-0.5, 0.5, s).astype("float32")
              for n, s in zip(sym.list_arguments(), arg_shapes)}
    inputs = [mx.nd.array(arrays[n]) for n in sym.list_arguments()]
    outs = mx.nd.RNN(*inputs, state_outputs=True, **kw)
    measured[name] = {"kwargs": kw, "arg_names": sym.list_arguments(),
                      "output_names": sym.list_outputs(),
                      "inputs": [arrays[n].tolist() for n in sym.list_arguments()],
                      "outputs": [o.asnumpy().tolist() for o in outs]}



def short(v):
    """Floats to 8 significant digits (float32 values to within 1e-7 relative)."""
    if isinstance(v, float):
        return float(f"{v:.8g}")
    if isinstance(v, list):
        return [short(x) for x in v]
    if isinstance(v, dict):
        return {k: short(x) for k, x in v.items()}
    return v


with open("measured.json", "w") as f:
    json.dump(short(measured), f, separators=(",", ":"))

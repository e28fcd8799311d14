"""Recurrent cells against MXNet 1.9.1's measured outputs (``mxnet_1_9_1_cells/``).

``measure.py`` there says how the figures were measured: each cell gets deterministic
weights, is unrolled over a fixed (2, 3, 2) NTC input with and without
``valid_length=[2, 3]``; the LSTM's and LSTMP's parameters were saved by MXNet
(``collect_params().save``) and must load here and give the same outputs.
"""
import json
import os

import numpy as np
import pytest

import sparsenet as mx

HERE = os.path.join(os.path.dirname(__file__), "mxnet_1_9_1_cells")
with open(os.path.join(HERE, "measured.json")) as fh:
    MEASURED = json.load(fh)

X = np.cos(np.arange(12) * 0.9).reshape(2, 3, 2).astype("float32")


def _weights(shape, k):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + k) * 0.5).reshape(shape).astype("float32")


def _cell(name):
    if name == "lstmp":
        return mx.gluon.contrib.rnn.LSTMPCell(3, 2, input_size=2, prefix="lstmp0_")
    cls, kw = {"lstm": (mx.gluon.rnn.LSTMCell, {}), "gru": (mx.gluon.rnn.GRUCell, {}),
               "rnn": (mx.gluon.rnn.RNNCell, {}),
               "rnnrelu": (mx.gluon.rnn.RNNCell, {"activation": "relu"})}[name]
    return cls(3, input_size=2, prefix=name + "0_", **kw)


def _check(cell, name):
    ref = MEASURED[name]
    out, states = cell.unroll(3, mx.nd.array(X), layout="NTC", merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), ref["out"], rtol=1e-5, atol=1e-6)
    assert len(states) == len(ref["states"])
    for s, r in zip(states, ref["states"]):
        np.testing.assert_allclose(s.asnumpy(), r, rtol=1e-5, atol=1e-6)
    out, states = cell.unroll(3, mx.nd.array(X), layout="NTC", merge_outputs=True,
                              valid_length=mx.nd.array([2, 3]))
    np.testing.assert_allclose(out.asnumpy(), ref["vl_out"], rtol=1e-5, atol=1e-6)
    for s, r in zip(states, ref["vl_states"]):
        np.testing.assert_allclose(s.asnumpy(), r, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["lstm", "gru", "rnn", "rnnrelu", "lstmp"])
def test_cell_matches_mxnet(name):
    cell = _cell(name)
    cell.initialize()
    for k, (_, p) in enumerate(sorted(cell.collect_params().items())):
        p.set_data(mx.nd.array(_weights(p.shape, k)))
    _check(cell, name)


@pytest.mark.parametrize("name", ["lstm", "lstmp"])
def test_mxnet_saved_parameters_load(name):
    cell = _cell(name)
    cell.collect_params().load(os.path.join(HERE, name + ".params"))
    _check(cell, name)


@pytest.mark.parametrize("name", ["lstm", "gru", "lstmp"])
def test_symbol_unroll_matches_mxnet(name):
    """The same cell unrolled on Symbols, bound and run, gives MXNet's figures."""
    cell = _cell(name)
    data = mx.sym.var("data")
    out, states = cell.unroll(3, data, layout="NTC", merge_outputs=True)
    graph = mx.sym.Group([out] + list(states))
    args = {"data": mx.nd.array(X)}
    for k, (pname, p) in enumerate(sorted(cell.collect_params().items())):
        args[pname] = mx.nd.array(_weights(p.shape, k))
    results = graph.eval(**args)
    ref = MEASURED[name]
    np.testing.assert_allclose(results[0].asnumpy(), ref["out"], rtol=1e-5, atol=1e-6)
    for s, r in zip(results[1:], ref["states"]):
        np.testing.assert_allclose(s.asnumpy(), r, rtol=1e-5, atol=1e-6)

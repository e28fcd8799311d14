"""``gluon.contrib.rnn.rnn_cell.dynamic_unroll`` in a hybridized block: one ``_foreach`` node.

The reference is the eager ``cell.unroll`` (a Python loop of cell calls on NDArrays), as in
MXNet 1.9.1's ``test_contrib_unroll``: outputs, states, gradients and the weights after a
Trainer step agree; the loop length changes between calls of one cached graph.
"""
import json
import os

import numpy as np
import pytest

import sparsenet as mx
from sparsenet import gluon
from sparsenet.gluon.contrib.rnn import rnn_cell

T, N, I, H = 6, 4, 3, 5
CELLS = [(gluon.rnn.RNNCell, 1), (gluon.rnn.LSTMCell, 2), (gluon.rnn.GRUCell, 1)]


class UnrollLayer(gluon.HybridBlock):
    def __init__(self, cell_type, layout, **kwargs):
        super().__init__(**kwargs)
        self.cell = cell_type(H, prefix="rnn_")
        self.layout = layout

    def hybrid_forward(self, F, inputs, states, valid_length):
        if isinstance(valid_length, list) and not valid_length:
            valid_length = None
        return rnn_cell.dynamic_unroll(self.cell, inputs, states, valid_length=valid_length,
                                       layout=self.layout)


def data(layout, length=T, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.normal(size=(length, N, I) if layout == "TNC" else (N, length, I))
    states = [mx.nd.array(rng.normal(size=(N, H))) for _ in range(2)]
    return mx.nd.array(x), states


def copy_params(src, dst):
    for key, p in src.collect_params().items():
        dst.collect_params()[key].set_data(p.data().copy())


@pytest.mark.parametrize("layout", ["TNC", "NTC"])
@pytest.mark.parametrize("cell_type, num_states", CELLS, ids=["rnn", "lstm", "gru"])
@pytest.mark.parametrize("with_length", [True, False], ids=["valid_length", "full"])
def test_hybridized_dynamic_unroll_matches_eager_unroll(cell_type, num_states, layout,
                                                        with_length):
    x, states = data(layout)
    states = states[:num_states]
    valid_length = mx.nd.array([6, 2, 4, 1]) if with_length else None
    weight = mx.nd.array(np.random.RandomState(3).normal(size=(N, T, H) if layout == "NTC"
                                                         else (T, N, H)))

    cell = cell_type(H, prefix="rnn_")
    cell.initialize(mx.init.Uniform(0.5))
    cell(x[0] if layout == "TNC" else x[:, 0, :], states)
    layer = UnrollLayer(cell_type, layout)
    layer.initialize()
    layer.hybridize()
    layer(x, states, valid_length if with_length else [])  # finishes deferred init
    copy_params(cell, layer.cell)

    trainer1 = gluon.Trainer(cell.collect_params(), "sgd", {"learning_rate": 0.1})
    with mx.autograd.record():
        ref, ref_states = cell.unroll(T, x, states, layout=layout, merge_outputs=True,
                                      valid_length=valid_length)
        loss1 = (ref * weight).sum() + sum(s.sum() for s in ref_states)
    loss1.backward()
    trainer2 = gluon.Trainer(layer.collect_params(), "sgd", {"learning_rate": 0.1})
    with mx.autograd.record():
        out, out_states = layer(x, states, valid_length if with_length else [])
        loss2 = (out * weight).sum() + sum(s.sum() for s in out_states)
    loss2.backward()
    assert "_foreach" in layer._cached_graph.symbol.tojson()
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-5)
    assert len(out_states) == num_states
    for a, b in zip(out_states, ref_states):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-5)
    for key, p in cell.collect_params().items():
        np.testing.assert_allclose(layer.collect_params()[key].grad().asnumpy(),
                                   p.grad().asnumpy(), rtol=1e-4, atol=1e-5, err_msg=key)
    trainer1.step(N)
    trainer2.step(N)
    for key, p in cell.collect_params().items():
        np.testing.assert_allclose(layer.collect_params()[key].data().asnumpy(),
                                   p.data().asnumpy(), rtol=1e-5, atol=1e-6, err_msg=key)


def test_one_cached_graph_runs_any_length():
    layer = UnrollLayer(gluon.rnn.LSTMCell, "NTC")
    layer.initialize(mx.init.Uniform(0.5))
    layer.hybridize()
    x, states = data("NTC")
    layer(x, states, mx.nd.array([6, 2, 4, 1]))  # deferred init: runs eagerly
    layer(x, states, mx.nd.array([6, 2, 4, 1]))  # traces the graph
    graph = layer._cached_graph
    assert graph is not None
    for length in (1, 3, 9):
        x, _ = data("NTC", length=length, seed=length)
        valid = mx.nd.array([length, 1, length, 1])
        out, out_states = layer(x, states, valid)
        assert layer._cached_graph is graph
        ref, ref_states = layer.cell.unroll(length, x, states, layout="NTC", merge_outputs=True,
                                            valid_length=valid)
        assert out.shape == (N, length, H)
        np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out_states[1].asnumpy(), ref_states[1].asnumpy(), rtol=1e-5,
                                   atol=1e-5)


def test_export_and_import_of_the_loop(tmp_path):
    layer = UnrollLayer(gluon.rnn.GRUCell, "TNC")
    layer.initialize(mx.init.Uniform(0.5))
    layer.hybridize()
    x, states = data("TNC")
    valid = mx.nd.array([6, 2, 4, 1])
    layer(x, states[:1], valid)
    out, out_states = layer(x, states[:1], valid)
    sym_file, params_file = layer.export(os.path.join(tmp_path, "unroll"))
    doc = json.load(open(sym_file))
    assert [n["op"] for n in doc["nodes"]].count("_foreach") == 1
    block = gluon.SymbolBlock.imports(sym_file, ["data0", "data1", "data2"], params_file)
    got = block(x, states[0], valid)
    np.testing.assert_allclose(got[0].asnumpy(), out.asnumpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[1].asnumpy(), out_states[0].asnumpy(), rtol=1e-6, atol=1e-6)


def test_dynamic_unroll_symbol_graph_binds_in_module_style_executor():
    cell = gluon.rnn.RNNCell(H, input_size=I, prefix="rnn_")
    cell.initialize(mx.init.Uniform(0.5))
    x, states = mx.sym.var("x"), [mx.sym.var("h")]
    out, _ = rnn_cell.dynamic_unroll(cell, x, states, layout="TNC")
    assert out.list_arguments() == ["x", "h", "rnn_i2h_weight", "rnn_i2h_bias",
                                    "rnn_h2h_weight", "rnn_h2h_bias"]
    exe = out.simple_bind(mx.cpu(), x=(T, N, I), h=(N, H))
    xv, hv = data("TNC")
    exe.arg_dict["x"][:] = xv
    exe.arg_dict["h"][:] = hv[0]
    for k, p in cell.collect_params().items():
        exe.arg_dict[k][:] = p.data()
    got = exe.forward(is_train=True)[0]
    exe.backward(mx.nd.ones((T, N, H)))
    ref, _ = cell.unroll(T, xv, [hv[0]], layout="TNC", merge_outputs=True)
    np.testing.assert_allclose(got.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-5)
    assert float(exe.grad_dict["rnn_h2h_weight"].abs().sum().asscalar()) > 0


def test_module_trains_a_loop_graph_like_the_eager_cell():
    """Module binds the ``_foreach`` graph; one SGD step moves the body's weights as the
    eager unroll's gradients say."""
    cell = gluon.rnn.GRUCell(H, input_size=I, prefix="rnn_")
    cell.initialize(mx.init.Uniform(0.5))
    out, _ = rnn_cell.dynamic_unroll(cell, mx.sym.var("x"), [mx.sym.var("h")], layout="NTC")
    loss = mx.sym.MakeLoss(mx.sym.sum(out * out))
    mod = mx.mod.Module(loss, data_names=["x", "h"], label_names=None)
    mod.bind(data_shapes=[("x", (N, T, I)), ("h", (N, H))])
    start = {k: p.data().copy() for k, p in cell.collect_params().items()}
    mod.init_params(arg_params=start)
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    xv, hv = data("NTC")
    mod.forward(mx.io.DataBatch(data=[xv, hv[0]]), is_train=True)
    mod.backward()
    mod.update()
    with mx.autograd.record():
        ref, _ = cell.unroll(T, xv, [hv[0]], layout="NTC", merge_outputs=True)
        ref_loss = (ref * ref).sum()
    ref_loss.backward()
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy().ravel(),
                               ref_loss.asnumpy().ravel(), rtol=1e-5)
    arg_params, _ = mod.get_params()
    for k, p in cell.collect_params().items():
        # Module's optimizer rescales gradients by 1 / batch size, as MXNet's
        want = start[k].asnumpy() - 0.1 * p.grad().asnumpy() / N
        np.testing.assert_allclose(arg_params[k].asnumpy(), want, rtol=1e-4, atol=1e-5,
                                   err_msg=k)

"""MXNet 1.9.1's model files: a Module checkpoint, a Gluon export, save_parameters, .states.

The fixtures and ``measured.json`` were written by MXNet 1.9.1
(``tests/data/mxnet_1_9_1/make_fixtures.py``); the outputs compared here are MXNet's.
"""
import json
import os

import numpy as np
import pytest

import sparsenet as mx

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "mxnet_1_9_1")
with open(os.path.join(DATA, "measured.json")) as _f:
    MEASURED = json.load(_f)  # measured with MXNet 1.9.1


def _x():
    return mx.nd.array(np.arange(6).reshape(2, 3) / 5.0)


def _p(name):
    return os.path.join(DATA, name)


def test_module_checkpoint_gives_mxnet_outputs(tmp_path):
    sym, arg, aux = mx.model.load_checkpoint(_p("mod"), 7)
    assert sorted(aux) == ["bn_moving_mean", "bn_moving_var"]
    np.testing.assert_allclose(aux["bn_moving_var"].asnumpy(), [1.5, 0.5, 2.0, 1.0])
    mod = mx.mod.Module(sym, data_names=["data"], label_names=["softmax_label"])
    mod.bind(data_shapes=[("data", (2, 3))], label_shapes=[("softmax_label", (2,))],
             for_training=False)
    mod.set_params(arg, aux)
    mod.forward(mx.io.DataBatch([_x()]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), MEASURED["module_output"],
                               rtol=1e-5, atol=1e-6)
    # re-saved by sparsenet: the same bytes MXNet wrote
    mx.model.save_checkpoint(str(tmp_path / "again"), 7, sym, arg, aux)
    assert mx.nd.load(str(tmp_path / "again-0007.params")).keys() == mx.nd.load(
        _p("mod-0007.params")).keys()
    assert open(tmp_path / "again-0007.params", "rb").read() == open(
        _p("mod-0007.params"), "rb").read()


def test_gluon_export_and_save_parameters_give_mxnet_outputs():
    net = mx.gluon.SymbolBlock.imports(_p("gnet-symbol.json"), ["data"], _p("gnet-0000.params"))
    np.testing.assert_allclose(net(_x()).asnumpy(), MEASURED["gluon_output"], rtol=1e-5, atol=1e-6)
    g = mx.gluon.nn.HybridSequential()
    g.add(mx.gluon.nn.Dense(3, activation="relu", in_units=3), mx.gluon.nn.Dense(2, in_units=3))
    g.load_parameters(_p("gnet.params"))
    np.testing.assert_allclose(g(_x()).asnumpy(), MEASURED["gluon_output"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["adam", "sgd"])
def test_training_after_load_states_gives_mxnet_weights(name):
    w = mx.gluon.Parameter("w", shape=(3, 2), init=mx.init.Constant(1.0))
    w.initialize()
    w.set_data(mx.nd.load(_p(f"{name}_w.params"))["w"])
    tr = mx.gluon.Trainer([w], name, {"learning_rate": 0.5})  # the file's 0.1 replaces it
    tr.load_states(_p(f"{name}.states"))
    assert tr.learning_rate == pytest.approx(0.1)
    with mx.autograd.record():
        loss = (w.data() * mx.nd.array([[1, 2], [3, 4], [5, 6]])).sum() * 2
    loss.backward()
    tr.step(1)
    np.testing.assert_allclose(w.data().asnumpy(), MEASURED[f"{name}_w_after_step2"],
                               rtol=1e-5, atol=1e-6)

"""export() right after the first call of a hybridized block whose parameters waited for shapes.

That first call runs imperatively to finish the deferred initialisation; export traces the
graph then (MXNet 1.9.1 exports after one call; its test_rnn_cells_export_import does so).
"""
import numpy as np
import pytest

import sparsenet as mx


def _stack():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4, activation="relu", flatten=False), mx.gluon.nn.Dense(2))
    return net


@pytest.mark.parametrize("make", [lambda: mx.gluon.nn.Dense(2), _stack])
def test_export_after_first_call_round_trips(tmp_path, make):
    net = make()
    net.initialize()
    net.hybridize()
    x = mx.nd.array(np.random.default_rng(0).normal(size=(2, 4, 5)).astype(np.float32))
    y = net(x)
    prefix = str(tmp_path / "m")
    sym_file, params_file = net.export(prefix)
    block = mx.gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_allclose(block(x).asnumpy(), y.asnumpy(), rtol=1e-6, atol=1e-6)


def test_dense_export_values_against_numpy(tmp_path):
    net = mx.gluon.nn.Dense(2)
    net.initialize()
    net.hybridize()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    net(mx.nd.array(x))
    sym_file, params_file = net.export(str(tmp_path / "d"))
    w, b = net.weight.data().asnumpy(), net.bias.data().asnumpy()
    block = mx.gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_allclose(block(mx.nd.array(x)).asnumpy(), x @ w.T + b, rtol=1e-6)


def test_export_before_any_call_still_refused(tmp_path):
    net = mx.gluon.nn.Dense(2)
    net.initialize()
    net.hybridize()
    with pytest.raises(mx.MXNetError, match="hybridize"):
        net.export(str(tmp_path / "n"))

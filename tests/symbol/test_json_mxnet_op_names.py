"""Symbol JSON written by MXNet 1.9.1 names some operators by a second name of theirs.

MXNet registers ``make_loss`` as an operator of its own (sparsenet's ``MakeLoss`` under
another name) and writes that name into ``-symbol.json``; every ``large_word_lm`` checkpoint
holds one. ``load_json`` used to reject it ("uses operator 'make_loss', which sparsenet does
not have"), so ``mx.model.load_checkpoint`` could not open MXNet's checkpoints of the example.
"""
import numpy as np
import pytest

import sparsenet as mx

# written by MXNet 1.9.1: mx.sym.make_loss(mx.sym.mean(x * x) * 0.5).tojson()
MXNET_JSON = """{
  "nodes": [
    {"op": "null", "name": "x", "inputs": []},
    {"op": "elemwise_mul", "name": "_mul0", "inputs": [[0, 0, 0], [0, 0, 0]]},
    {"op": "mean", "name": "mean0", "inputs": [[1, 0, 0]]},
    {"op": "_mul_scalar", "name": "_mulscalar0", "attrs": {"scalar": "0.5"},
     "inputs": [[2, 0, 0]]},
    {"op": "make_loss", "name": "make_loss0", "inputs": [[3, 0, 0]]}
  ],
  "arg_nodes": [0],
  "node_row_ptr": [0, 1, 2, 3, 4, 5],
  "heads": [[4, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10901]}
}"""


def test_make_loss_node_loads_and_trains():
    y = mx.sym.load_json(MXNET_JSON)
    assert y.list_outputs() == ['make_loss0_output']
    x = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    ex = y.simple_bind(mx.cpu(), x=(2, 2))
    out = ex.forward(is_train=True, x=mx.nd.array(x))[0]
    # 0.5 * mean(x^2) = 0.5 * 30 / 4; make_loss ignores the head gradient: d/dx = x / 4
    np.testing.assert_allclose(out.asnumpy(), [3.75], rtol=1e-7)
    ex.backward()
    np.testing.assert_allclose(ex.grad_dict['x'].asnumpy(), x / 4, rtol=1e-7)


def test_checkpoint_with_make_loss_loads(tmp_path):
    prefix = str(tmp_path / "ckp")
    (tmp_path / "ckp-symbol.json").write_text(MXNET_JSON)
    mx.nd.save(prefix + "-0001.params", {"arg:x": mx.nd.ones((2, 2))})
    sym, args, aux = mx.model.load_checkpoint(prefix, 1)
    assert sym.list_arguments() == ['x'] and sorted(args) == ['x'] and aux == {}


def test_unknown_operator_is_still_named():
    doc = MXNET_JSON.replace('"make_loss"', '"no_such_operator"')
    with pytest.raises(mx.MXNetError, match="node 4 'make_loss0' uses operator "
                                            "'no_such_operator'"):
        mx.sym.load_json(doc)

"""A backward never writes into the caller's head gradient: an Embedding's sparse backward
hands the head gradient on as its values rows, and summing repeated ids in place would
overwrite the caller's array (MXNet's ``test_sparse_embedding`` calls ``backward([g])`` three
times with one ``g``; MXNet 1.9.1 gives row 1 the gradient 4 each time)."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet import autograd, gluon
from sparsenet.ops import row_kernels

IDS = [1, 3, 1, 0]
HEAD = [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]]


def _expected_rows():
    """The weight gradient by hand: each id's row gets the sum of its head gradient rows."""
    want = np.zeros((10, 2), dtype=np.float32)
    for i, row in zip(IDS, HEAD):
        want[i] += row
    return want


@pytest.mark.parametrize("native", [True, False])
def test_executor_backward_keeps_the_head_gradient(monkeypatch, native):
    monkeypatch.setattr(row_kernels, "ENABLED", native and row_kernels.ENABLED)
    data = mx.sym.Variable("data")
    weight = mx.sym.Variable("embed_weight", stype="row_sparse")
    embed = mx.sym.sparse.Embedding(data=data, weight=weight, input_dim=10, output_dim=2,
                                    sparse_grad=True, name="embed")
    exe = embed.simple_bind(mx.cpu(), grad_req={"data": "null", "embed_weight": "write"},
                            data=(4,))
    exe.arg_dict["data"][:] = np.array(IDS)
    exe.arg_dict["embed_weight"][:] = np.random.uniform(-1, 1, (10, 2))
    g = mx.nd.array(HEAD)
    for _ in range(3):
        exe.forward(is_train=True)
        exe.backward([g])
        np.testing.assert_array_equal(g.asnumpy(), np.array(HEAD, dtype=np.float32))
        np.testing.assert_array_equal(exe.grad_dict["embed_weight"].asnumpy(), _expected_rows())


def test_gluon_backward_keeps_the_head_gradient():
    net = gluon.nn.Embedding(10, 2, sparse_grad=True)
    net.initialize()
    x = mx.nd.array(IDS)
    g = mx.nd.array(HEAD)
    for _ in range(3):
        with autograd.record():
            y = net(x)
        y.backward(g)
        np.testing.assert_array_equal(g.asnumpy(), np.array(HEAD, dtype=np.float32))
        np.testing.assert_array_equal(net.weight.grad().asnumpy(), _expected_rows())


def test_autograd_backward_keeps_a_dense_head_gradient():
    w = mx.nd.array(np.arange(20, dtype=np.float32).reshape(10, 2))
    w.attach_grad(stype="row_sparse")
    g = mx.nd.array(HEAD)
    for _ in range(2):
        with autograd.record():
            y = mx.nd.Embedding(mx.nd.array(IDS), w, input_dim=10, output_dim=2,
                                sparse_grad=True)
        autograd.backward([y], [g])
        np.testing.assert_array_equal(g.asnumpy(), np.array(HEAD, dtype=np.float32))
        np.testing.assert_array_equal(w.grad.asnumpy(), _expected_rows())

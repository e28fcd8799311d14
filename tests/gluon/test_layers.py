"""Layers: outputs and gradients of every layer against dense torch equivalents."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import sparsenet as mx
from sparsenet.gluon import contrib, nn


def _csr(rng, rows, cols, density=0.3):
    dense = rng.random((rows, cols)).astype(np.float32)
    dense[rng.random((rows, cols)) > density] = 0
    return mx.nd.array(dense).tostype("csr"), dense


def _torch_params(block):
    return {k: torch.tensor(p.data().asnumpy(), requires_grad=True)
            for k, p in block._collect_params_with_prefix().items()}


def _check_grads(block, tparams, rtol=1e-5, atol=1e-6):
    for k, p in block._collect_params_with_prefix().items():
        g = p.grad()
        ref = tparams[k].grad.numpy()
        np.testing.assert_allclose(g.asnumpy(), ref, rtol=rtol, atol=atol, err_msg=k)


@pytest.mark.parametrize("sparse_input", [False, True])
@pytest.mark.parametrize("activation", [None, "relu", "sigmoid", "tanh", "softrelu",
                                        "softsign"])
def test_dense_against_torch(sparse_input, activation):
    rng = np.random.default_rng(0)
    x, xd = _csr(rng, 5, 8) if sparse_input else (None, rng.standard_normal((5, 8)).astype(
        np.float32))
    if x is None:
        x = mx.nd.array(xd)
    d = nn.Dense(4, activation=activation, in_units=8)
    d.initialize(init=mx.init.Normal(0.5))
    with mx.autograd.record():
        y = d(x)
    head = rng.standard_normal((5, 4)).astype(np.float32)
    y.backward(mx.nd.array(head))
    tp = _torch_params(d)
    acts = {None: lambda t: t, "relu": torch.relu, "sigmoid": torch.sigmoid,
            "tanh": torch.tanh, "softrelu": F.softplus, "softsign": F.softsign}
    ref = acts[activation](torch.tensor(xd) @ tp["weight"].T + tp["bias"])
    (ref * torch.tensor(head)).sum().backward()
    np.testing.assert_allclose(y.asnumpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    _check_grads(d, tp)
    assert d.weight.grad().stype == "default"


def test_dense_without_bias_and_flatten_false():
    d = nn.Dense(3, use_bias=False, flatten=False, in_units=4)
    d.initialize(init="ones")
    assert d.bias is None
    y = d(mx.nd.ones((2, 5, 4)))
    assert y.shape == (2, 5, 3)
    np.testing.assert_allclose(y.asnumpy(), 4.0)


@pytest.mark.parametrize("grad_stype", ["row_sparse", "default"])
def test_sparse_dense_against_torch(grad_stype):
    rng = np.random.default_rng(1)
    x, xd = _csr(rng, 6, 30, density=0.1)
    layer = contrib.nn.SparseDense(5, in_units=30, activation="sigmoid",
                                   weight_grad_stype=grad_stype)
    layer.initialize(init=mx.init.Normal(0.3))
    with mx.autograd.record():
        y = layer(x)
    y.backward()
    tp = _torch_params(layer)
    ref = torch.sigmoid(torch.tensor(xd) @ tp["weight"] + tp["bias"])
    ref.sum().backward()
    np.testing.assert_allclose(y.asnumpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    _check_grads(layer, tp)
    g = layer.weight.grad()
    assert g.stype == grad_stype
    if grad_stype == "row_sparse":
        np.testing.assert_array_equal(g.indices.asnumpy(), np.unique(x.indices.asnumpy()))
    assert repr(layer) == "SparseDense(30 -> 5, Activation(sigmoid))"


def test_sparse_dense_deferred_in_units():
    layer = contrib.nn.SparseDense(2)
    layer.initialize()
    layer(mx.nd.sparse.csr_matrix(([1.0], [4], [0, 1]), shape=(1, 9)))
    assert layer.weight.shape == (9, 2)


@pytest.mark.parametrize("sparse_grad", [False, True])
def test_embedding_against_torch(sparse_grad):
    e = nn.Embedding(7, 3, sparse_grad=sparse_grad)
    e.initialize(init=mx.init.Normal(1.0))
    ids = np.array([[6, 0], [2, 6]])
    with mx.autograd.record():
        y = e(mx.nd.array(ids))
    y.backward()
    tp = _torch_params(e)
    ref = F.embedding(torch.tensor(ids), tp["weight"])
    ref.sum().backward()
    np.testing.assert_allclose(y.asnumpy(), ref.detach().numpy())
    _check_grads(e, tp)
    assert e.weight.grad().stype == ("row_sparse" if sparse_grad else "default")
    if sparse_grad:
        assert e.weight.grad().indices.asnumpy().tolist() == [0, 2, 6]


def test_sparse_embedding_against_torch():
    e = contrib.nn.SparseEmbedding(50, 4)
    e.initialize(init=mx.init.Normal(1.0))
    full = e.weight._data[0]
    assert full.stype == "row_sparse" and full.indices.asnumpy().size == 50
    ids = np.array([[9, 40], [9, 3]])
    with mx.autograd.record():
        y = e(mx.nd.array(ids))
    y.backward(mx.nd.array(np.arange(16, dtype=np.float32).reshape(2, 2, 4)))
    w = torch.tensor(full.asnumpy(), requires_grad=True)
    ref = F.embedding(torch.tensor(ids), w)
    (ref * torch.arange(16.0).reshape(2, 2, 4)).sum().backward()
    np.testing.assert_allclose(y.asnumpy(), ref.detach().numpy())
    g = e.weight.grad()
    assert g.stype == "row_sparse" and g.indices.asnumpy().tolist() == [3, 9, 40]
    np.testing.assert_allclose(g.asnumpy(), w.grad.numpy())


@pytest.mark.parametrize("block, ref", [
    (nn.LeakyReLU(0.1), lambda t: F.leaky_relu(t, 0.1)),
    (nn.ELU(0.7), lambda t: F.elu(t, 0.7)),
    (nn.SELU(), F.selu),
    (nn.GELU(), F.gelu),
    (nn.Swish(2.0), lambda t: t * torch.sigmoid(2.0 * t)),
    (nn.Flatten(), lambda t: t.reshape(t.shape[0], -1)),
])
def test_activation_blocks_against_torch(block, ref):
    xd = np.random.default_rng(2).standard_normal((3, 2, 2)).astype(np.float32)
    x = mx.nd.array(xd)
    x.attach_grad()
    with mx.autograd.record():
        y = block(x)
    y.backward()
    t = torch.tensor(xd, requires_grad=True)
    r = ref(t)
    r.sum().backward()
    np.testing.assert_allclose(y.asnumpy(), r.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_leaky_relu_rejects_negative_alpha():
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        nn.LeakyReLU(-1)


def test_dropout_block_scales_in_training_only():
    d = nn.Dropout(0.25)
    x = mx.nd.ones((2000,))
    np.testing.assert_array_equal(d(x).asnumpy(), x.asnumpy())
    x.attach_grad()
    with mx.autograd.record():
        y = d(x)
    y.backward()
    kept = y.asnumpy() != 0
    np.testing.assert_allclose(y.asnumpy()[kept], 1 / 0.75, rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), kept / 0.75, rtol=1e-6)
    assert repr(d) == "Dropout(p = 0.25, axes=())"
    np.testing.assert_array_equal(nn.Dropout(0.0)(x).asnumpy(), x.asnumpy())


def test_lambda_blocks():
    assert nn.Lambda(lambda x: x * 2)(mx.nd.ones((1,))).asnumpy().tolist() == [2.0]
    with pytest.raises(ValueError, match="Function name nope is not found"):
        nn.Lambda("nope")
    with pytest.raises(ValueError, match="Function name nope is not found"):
        nn.HybridLambda("nope")
    np.testing.assert_allclose(nn.HybridLambda("exp")(mx.nd.zeros((1,))).asnumpy(), [1.0])


def test_seed_three_layer_model_gradients_against_torch():
    """The seed's network (SparseDense -> sigmoid -> Dense -> sigmoid -> Dense -> sigmoid + BCE)."""
    rng = np.random.default_rng(3)
    x, xd = _csr(rng, 10, 200, density=0.05)
    label = (rng.random(10) > 0.5).astype(np.float32)
    net = nn.Sequential()
    net.add(contrib.nn.SparseDense(16, in_units=200), nn.Activation("sigmoid"),
            nn.Dense(8, in_units=16), nn.Activation("sigmoid"), nn.Dense(1, in_units=8),
            nn.Activation("sigmoid"))
    net.initialize(init=mx.init.Normal(0.5))
    loss_fn = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss()
    with mx.autograd.record():
        loss = loss_fn(net(x), mx.nd.array(label))
    loss.backward()
    tp = _torch_params(net)
    h = torch.sigmoid(torch.tensor(xd) @ tp["0.weight"] + tp["0.bias"])
    h = torch.sigmoid(h @ tp["2.weight"].T + tp["2.bias"])
    p = torch.sigmoid(h @ tp["4.weight"].T + tp["4.bias"])
    ref = F.binary_cross_entropy_with_logits(p, torch.tensor(label).reshape(10, 1),
                                             reduction="none").mean(1)
    ref.sum().backward()
    np.testing.assert_allclose(loss.asnumpy(), ref.detach().numpy(), rtol=1e-5)
    _check_grads(net, tp, rtol=1e-4, atol=1e-6)
    assert net[0].weight.grad().stype == "row_sparse"

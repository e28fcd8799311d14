"""Dense Gluon layers (norm, convolution, pooling, padding, PReLU, Concurrent) and their
combination with sparse inputs.

``mxnet_1_9_1_dense_layers.json`` holds outputs, running statistics, gradients,
parameter shapes and representations measured with MXNet 1.9.1
(the probe script that produced it is stored in the file under ``"probe"``; it
builds the same deterministic inputs as here).
"""
import json
import os
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import sparsenet as mx
from sparsenet.base import StorageFallbackError, StorageFallbackWarning
from sparsenet.gluon import contrib, nn

with open(os.path.join(os.path.dirname(__file__), "mxnet_1_9_1_dense_layers.json")) as _f:
    REF = json.load(_f)  # measured with MXNet 1.9.1

X = (np.arange(24).reshape(2, 3, 2, 2) ** 1.2 / 10.0).astype(np.float32)
HEAD = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 2, 2)
XC = (np.arange(2 * 3 * 6 * 6).reshape(2, 3, 6, 6) % 9 / 9.0).astype(np.float32)


def _close(got, expected, atol=2e-5, rtol=1e-5):
    got = got.asnumpy() if isinstance(got, mx.nd.NDArray) else np.asarray(got)
    np.testing.assert_allclose(got, np.asarray(expected, dtype=np.float64), atol=atol, rtol=rtol)


def _suffixes(block):
    return [(k[len(block.prefix):], p.shape, p.grad_req)
            for k, p in block.collect_params().items()]


# ---------------------------------------------------------------------------------- BatchNorm
def test_batchnorm_deferred_init_inference_and_training_step():
    bn = nn.BatchNorm()
    bn.initialize()
    assert repr(bn) == REF["bn_repr0"]
    assert _suffixes(bn) == [(n.split("_", 1)[1], tuple(s), r) for n, s, r in REF["bn_params"]]
    _close(bn(mx.nd.array(X)), REF["bn_infer"])
    assert repr(bn) == REF["bn_repr1"]
    with mx.autograd.record():
        y = bn(mx.nd.array(X))
    y.backward(mx.nd.array(HEAD))
    ref = REF["bn_train"]
    _close(y, ref["y"])
    _close(bn.running_mean.data(), ref["rm"])
    _close(bn.running_var.data(), ref["rv"])  # biased batch variance
    _close(bn.gamma.grad(), ref["gg"], atol=1e-5)
    _close(bn.beta.grad(), ref["gb"])
    _close(bn(mx.nd.array(X)), REF["bn_after"])  # inference with the updated statistics


def test_batchnorm_fixed_gamma_and_momentum():
    x = mx.nd.array(X)
    x.attach_grad()
    bn = nn.BatchNorm(scale=False, center=False, momentum=0.5, epsilon=1e-3, in_channels=3)
    bn.initialize()
    assert repr(bn) == REF["bn2_repr"]
    assert [r for _, _, r in _suffixes(bn)] == ["null"] * 4
    with mx.autograd.record():
        y = bn(x)
    y.backward(mx.nd.array(HEAD))
    ref = REF["bn2"]
    _close(y, ref["y"])
    _close(bn.running_mean.data(), ref["rm"])
    _close(bn.running_var.data(), ref["rv"])
    _close(x.grad.asnumpy()[0, 0], ref["gx"], atol=1e-5)


def test_batchnorm_hybridized_updates_running_stats():
    bn = nn.BatchNorm()
    bn.initialize()
    bn.hybridize()
    bn(mx.nd.array(X))
    with mx.autograd.record():
        y = bn(mx.nd.array(X))
    y.backward(mx.nd.array(HEAD))
    _close(y, REF["bn3"]["y"])
    _close(bn.running_mean.data(), REF["bn3"]["rm"])
    _close(bn.running_var.data(), REF["bn3"]["rv"])


def test_batchnorm_channel_last_axis_and_cast():
    bn = nn.BatchNorm(axis=-1)
    bn.initialize()
    with mx.autograd.record():
        y = bn(mx.nd.array(X))
    y.backward()
    assert bn.gamma.shape == tuple(REF["bn_last"]["shape"])
    _close(bn.running_mean.data(), REF["bn_last"]["rm"])
    _close(bn.running_var.data(), REF["bn_last"]["rv"])
    bn.cast("float16")  # BatchNorm keeps float32 parameters
    assert bn.gamma.data().dtype == np.float32


def test_batchnormrelu():
    layer = nn.BatchNormReLU(in_channels=3)
    layer.initialize()
    with mx.autograd.record():
        y = layer(mx.nd.array(X))
    ref = np.maximum(np.asarray(REF["bn_train"]["y"]), 0)
    _close(y, ref)


# --------------------------------------------------------------------- Layer/Instance/Group
def test_layernorm_instancenorm_groupnorm_match_mxnet():
    ln = nn.LayerNorm()
    ln.initialize()
    _close(ln(mx.nd.array(X)), REF["ln"])
    assert repr(ln) == REF["ln_repr"]
    assert [(k, s) for k, s, _ in _suffixes(ln)] == [(n.split("_", 1)[1], tuple(s))
                                                     for n, s in REF["ln_params"]]
    inn = nn.InstanceNorm()
    inn.initialize()
    _close(inn(mx.nd.array(X)), REF["in"])
    assert repr(inn) == REF["in_repr"]
    assert _suffixes(inn) == [(n.split("_", 1)[1], tuple(s), r) for n, s, r in REF["in_params"]]
    inn2 = nn.InstanceNorm(axis=2, scale=True, epsilon=1e-3)
    inn2.initialize()
    _close(inn2(mx.nd.array(X)), REF["in_axis2"])
    assert inn2.gamma.shape == tuple(REF["in_axis2_shape"])
    gn = nn.GroupNorm(num_groups=3)
    gn.initialize()
    _close(gn(mx.nd.array(X)), REF["gn"])
    assert repr(gn) == REF["gn_repr"]
    assert gn.gamma.shape == (3,)


# ---------------------------------------------------------------------------- convolutions
def test_conv_layers_shapes_reprs_and_values():
    reprs = REF["reprs"]
    c = nn.Conv2D(4, 3, padding=1)
    c.initialize(mx.init.Constant(0.1))
    y = c(mx.nd.array(XC))
    assert c.weight.shape == tuple(REF["c2_w"]) and repr(c) == reprs["c2"]
    assert abs(float(y.asnumpy().sum()) - REF["c2_sum"]) < 1e-2
    assert repr(nn.Conv1D(4, 3, strides=2, dilation=2, use_bias=False,
                          activation="relu")) == reprs["c1"]
    c3 = nn.Conv3D(4, (1, 2, 3), in_channels=2)
    assert c3.weight.shape == tuple(REF["c3_w"]) and repr(c3) == reprs["c3"]
    ct = nn.Conv2DTranspose(4, 3, strides=2, output_padding=1)
    ct.initialize()
    assert ct(mx.nd.array(XC)).shape == tuple(REF["ct_shape"])
    assert ct.weight.shape == tuple(REF["ct_w"]) and repr(ct) == reprs["ct"]
    cg = nn.Conv2D(6, 3, groups=3, in_channels=3)
    assert cg.weight.shape == tuple(REF["cg_w"]) and repr(cg) == reprs["cg"]


@pytest.mark.parametrize("hybridize", [False, True])
def test_conv_block_against_torch(hybridize):
    rng = np.random.default_rng(0)
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, strides=2, padding=1, activation="relu"),
                nn.MaxPool2D(2, 1), nn.Conv2DTranspose(2, 2, strides=2),
                nn.GlobalAvgPool2D(), nn.Flatten())
    net.initialize(mx.init.Normal(0.5))
    if hybridize:
        net.hybridize()
    xd = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    x = mx.nd.array(xd)
    x.attach_grad()
    with mx.autograd.record():
        y = net(x)
    y.backward()
    assert [b.name for b in net._children.values()] == ["net_conv0", "net_pool0", "net_conv1",
                                                         "net_pool1", "net_flatten0"]
    p = {k: torch.tensor(v.data().asnumpy(), requires_grad=True)
         for k, v in net.collect_params().items()}
    tx = torch.tensor(xd, requires_grad=True)
    t = torch.relu(F.conv2d(tx, p["net_conv0_weight"], p["net_conv0_bias"], stride=2, padding=1))
    t = F.max_pool2d(t, 2, 1)
    t = F.conv_transpose2d(t, p["net_conv1_weight"], p["net_conv1_bias"], stride=2)
    t = t.mean(dim=(2, 3))
    t.sum().backward()
    _close(y, t.detach().numpy(), atol=1e-5)
    _close(x.grad, tx.grad.numpy(), atol=1e-5)
    for k, v in net.collect_params().items():
        _close(v.grad(), p[k].grad.numpy(), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("make", [
    lambda: nn.LayerNorm(), lambda: nn.GroupNorm(2), lambda: nn.InstanceNorm(axis=2, scale=True),
    lambda: nn.ReflectionPad2D(1), lambda: nn.PReLU(in_channels=4),
    lambda: nn.AvgPool2D(3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda: nn.Conv2DTranspose(3, 3, strides=2, output_padding=1),
    lambda: nn.Conv2D(3, 3, layout="NHWC"), lambda: nn.BatchNormReLU()])
def test_hybridized_equals_imperative(make):
    rng = np.random.default_rng(10)
    x = mx.nd.array(rng.standard_normal((2, 4, 6, 6)).astype(np.float32))
    block = make()
    block.initialize(mx.init.Normal(0.5))
    imperative = block(x).asnumpy()
    block.hybridize()
    block(x)
    assert block._cached_graph is not None
    _close(block(x), imperative, atol=1e-6)


# -------------------------------------------------------------------------- pooling, padding
def test_pool_layer_reprs_and_values():
    reprs = REF["reprs"]
    layers = {"mp1": nn.MaxPool1D(), "mp2": nn.MaxPool2D(), "mp3": nn.MaxPool3D(),
              "ap1": nn.AvgPool1D(count_include_pad=False),
              "ap2": nn.AvgPool2D(3, 2, 1, ceil_mode=True), "ap3": nn.AvgPool3D(),
              "gm1": nn.GlobalMaxPool1D(), "gm2": nn.GlobalMaxPool2D(),
              "gm3": nn.GlobalMaxPool3D(), "ga1": nn.GlobalAvgPool1D(),
              "ga2": nn.GlobalAvgPool2D(), "ga3": nn.GlobalAvgPool3D(),
              "mp2s": nn.MaxPool2D(3, 1, 1, layout="NHWC")}
    for key, layer in layers.items():
        assert repr(layer) == reprs[key], key
    _close(nn.AvgPool2D(3, 2, 1, ceil_mode=True)(mx.nd.array(XC)).asnumpy()[0, 0],
           REF["ap2_out"])
    _close(nn.AvgPool1D(3, 2, 1, count_include_pad=False)(
        mx.nd.array(XC.reshape(2, 3, 36))).asnumpy()[0, 0], REF["ap1_out"])
    _close(nn.ReflectionPad2D(1)(mx.nd.array(XC[:1, :1, :3, :3])), REF["rp"])
    assert nn.GlobalMaxPool3D()(mx.nd.ones((2, 3, 4, 4, 4))).shape == (2, 3, 1, 1, 1)
    with pytest.raises(ValueError, match="layout must be one of"):
        nn.MaxPool2D(layout="NCW")


# ------------------------------------------------------------------------ activations, misc
def test_prelu_matches_mxnet():
    pr = nn.PReLU(prefix="prelu_")
    pr.initialize()
    _close(pr(mx.nd.array(X) - 1).asnumpy().ravel()[:4], REF["pr"])
    assert [(k, s) for k, s, _ in _suffixes(pr)] == [("alpha", (1,))]
    pr3 = nn.PReLU(alpha_initializer=mx.init.Constant(0.1), in_channels=3)
    pr3.initialize()
    x = mx.nd.array(X) - 1
    x.attach_grad()
    with mx.autograd.record():
        y = pr3(x)
    y.backward()
    _close(y.asnumpy()[:, :, 0, 0], REF["pr3"]["y"])
    _close(pr3.alpha.grad(), REF["pr3"]["ga"])


def test_reprs_and_names_match_mxnet():
    reprs = REF["reprs"]
    got = [repr(a) for a in (nn.ELU(), nn.SELU(), nn.GELU(), nn.Swish(), nn.LeakyReLU(0.1),
                             nn.Flatten(), nn.ReflectionPad2D(1), nn.PReLU())]
    assert got == reprs["acts"]
    hc = contrib.nn.HybridConcurrent(axis=1)
    hc.add(nn.Dense(2), nn.Dense(3))
    assert repr(hc) == reprs["hc"]
    parent = nn.HybridSequential(prefix="p_")
    with parent.name_scope():
        blocks = [nn.Conv2D(2, 1), nn.MaxPool2D(), nn.GlobalAvgPool2D(), nn.ReflectionPad2D(1),
                  nn.PReLU(), nn.BatchNorm(), nn.LayerNorm(), nn.InstanceNorm(), nn.GroupNorm(),
                  contrib.nn.HybridConcurrent(), contrib.nn.Concurrent(),
                  nn.Conv1DTranspose(2, 1)]
    # MXNet's aliases: conv*, pool*, and the class name for the others
    assert [b.name for b in blocks] == [
        "p_conv0", "p_pool0", "p_pool1", "p_reflectionpad2d0", "p_prelu0", "p_batchnorm0",
        "p_layernorm0", "p_instancenorm0", "p_groupnorm0", "p_hybridconcurrent0",
        "p_concurrent0", "p_conv1"]


@pytest.mark.parametrize("hybridize", [False, True])
def test_concurrent_containers(hybridize):
    net = contrib.nn.HybridConcurrent(axis=1)
    net.add(nn.Dense(2, in_units=3), nn.Dense(3, in_units=3), contrib.nn.Identity())
    net.initialize(init="ones")
    if hybridize:
        net.hybridize()
    out = net(mx.nd.array([[1.0, 2.0, 3.0]]))
    np.testing.assert_array_equal(out.asnumpy(), [[6, 6, 6, 6, 6, 1, 2, 3]])
    cc = contrib.nn.Concurrent(axis=0)
    cc.add(nn.Dense(2, in_units=3), nn.Dense(2, in_units=3))
    cc.initialize(init="ones")
    assert cc(mx.nd.ones((2, 3))).shape == (4, 2)


def test_lambda_layers_take_operator_names():
    _close(nn.Lambda("Flatten")(mx.nd.ones((2, 3, 4))), np.ones((2, 12)))
    _close(nn.HybridLambda("tanh")(mx.nd.zeros((2,))), [0, 0])
    with pytest.raises(ValueError, match="Function name no_such_op is not found in ndarray"):
        nn.Lambda("no_such_op")


# --------------------------------------------------------------------------- sparse models
def _csr_batch(rng, rows=8, cols=20, density=0.2):
    dense = rng.random((rows, cols)).astype(np.float32)
    dense[rng.random((rows, cols)) > density] = 0
    dense[:, 0] = 0  # feature 0 never appears: its weight row gets no gradient
    return mx.nd.array(dense).tostype("csr"), dense


@pytest.mark.parametrize("hybridize", [False, True])
def test_sparse_dense_batchnorm_activation_trains(hybridize):
    rng = np.random.default_rng(7)
    net = nn.HybridSequential()
    net.add(contrib.nn.SparseDense(4, in_units=20), nn.BatchNorm(), nn.Activation("tanh"),
            nn.Dense(1))
    net.initialize(mx.init.Normal(0.3))
    if hybridize:
        net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = mx.gluon.loss.L2Loss()
    x, xd = _csr_batch(rng)
    label = mx.nd.array(rng.standard_normal((8, 1)).astype(np.float32))
    w_before = net[0].weight.data().asnumpy().copy()
    losses = []
    for _ in range(3):
        with mx.autograd.record():
            loss = loss_fn(net(x), label)
        loss.backward()
        grad = net[0].weight.grad()
        trainer.step(8)
        losses.append(float(loss.mean().asscalar()))
    assert grad.stype == "row_sparse"
    touched = np.flatnonzero(xd.any(axis=0))
    np.testing.assert_array_equal(grad.indices.asnumpy(), touched)
    w_after = net[0].weight.data().asnumpy()
    np.testing.assert_array_equal(w_after[0], w_before[0])  # an absent feature's row stays
    assert not np.allclose(w_after[touched], w_before[touched])
    assert losses[-1] < losses[0]
    assert not np.allclose(net[1].running_mean.data().asnumpy(), 0)  # updated by backward

    # the same model on the dense batch gives the same first-step output (reference)
    ref = nn.HybridSequential()
    ref.add(contrib.nn.SparseDense(4, in_units=20), nn.BatchNorm(), nn.Activation("tanh"),
            nn.Dense(1))
    ref.initialize()
    for (_, p), (_, q) in zip(sorted(ref._collect_params_with_prefix().items()),
                              sorted(net._collect_params_with_prefix().items())):
        p.set_data(q.data())
    with mx.config.storage_fallback("silent"):
        _close(ref(x), ref(mx.nd.array(xd)), atol=1e-5)


def test_dense_on_csr_then_batchnorm_gradients_against_torch():
    rng = np.random.default_rng(8)
    x, xd = _csr_batch(rng)
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=20), nn.BatchNorm(in_channels=3), nn.Activation("relu"))
    net.initialize(mx.init.Normal(0.5))
    with mx.autograd.record():
        y = net(x)
    y.backward()
    p = {k: torch.tensor(v.data().asnumpy(), requires_grad=True)
         for k, v in net._collect_params_with_prefix().items()}
    t = F.linear(torch.tensor(xd), p["0.weight"], p["0.bias"])
    t = torch.relu(F.batch_norm(t, None, None, p["1.gamma"], p["1.beta"], training=True,
                                eps=1e-5))
    t.sum().backward()
    _close(y, t.detach().numpy(), atol=1e-5)
    for k in ("0.weight", "0.bias", "1.gamma", "1.beta"):
        _close(net._collect_params_with_prefix()[k].grad(), p[k].grad.numpy(), atol=1e-4,
               rtol=1e-4)


@pytest.mark.parametrize("layer", [lambda: nn.BatchNorm(in_channels=20),
                                   lambda: nn.LayerNorm(in_channels=20),
                                   lambda: nn.GlobalAvgPool1D(),
                                   lambda: nn.Conv1D(2, 1, in_channels=20)])
def test_csr_into_dense_layer_falls_back(layer):
    rng = np.random.default_rng(9)
    x, xd = _csr_batch(rng)
    block = layer()
    block.initialize()
    with mx.config.storage_fallback("error"):
        with pytest.raises(StorageFallbackError):
            block(x)
    mx.config.reset_fallback_counts()  # warnings come once per signature
    with mx.config.storage_fallback("warn"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                got = block(x)
            except ValueError:  # a 2-D batch does not fit a 1-D conv/pooling: a clear error
                got = None
    assert any(issubclass(w.category, StorageFallbackWarning) for w in caught)
    if got is not None:
        _close(got, block(mx.nd.array(xd)), atol=1e-6)

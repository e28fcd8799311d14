"""mx.gluon.contrib.cnn: DeformableConvolution and ModulatedDeformableConvolution layers.

``mxnet_1_9_1_deformable_layers.json`` holds the parameter names, shapes, outputs and
(v1) gradients of the layers measured with MXNet 1.9.1 on the CPU, hybridized (the probe
script is stored in the file under ``"probe"``; :func:`_layer` and :func:`_data` build
the same layer and input). Zero-initialised offsets are checked against torch's conv2d.
"""
import json
import os

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import sparsenet as mx
from sparsenet.base import InvalidArgumentError
from sparsenet.gluon import nn
from sparsenet.gluon.contrib import cnn

with open(os.path.join(os.path.dirname(__file__), "mxnet_1_9_1_deformable_layers.json")) as _f:
    REF = json.load(_f)  # measured with MXNet 1.9.1 (CPU)

LAYERS = (cnn.DeformableConvolution, cnn.ModulatedDeformableConvolution)


def _close(got, expected, atol=2e-5, rtol=1e-5):
    got = got.asnumpy() if isinstance(got, mx.nd.NDArray) else np.asarray(got)
    np.testing.assert_allclose(got, np.asarray(expected, dtype=np.float64), atol=atol, rtol=rtol)


def _layer(cls):
    return cls(4, kernel_size=(3, 2), strides=(1, 2), padding=1, num_deformable_group=2,
               activation="relu", weight_initializer=mx.init.Constant(0.1),
               bias_initializer=mx.init.Constant(0.2),
               offset_weight_initializer=mx.init.Constant(0.05),
               offset_bias_initializer=mx.init.Constant(0.3))


def _data():
    return (((np.arange(240, dtype=np.float32) * 7) % 13) / 13.0 - 0.5).reshape(2, 4, 5, 6)


def _suffixes(names, prefix):
    return [n[len(prefix):] for n in names]


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("cls", LAYERS, ids=lambda c: c.__name__)
def test_layer_matches_mxnet_1_9_1(cls, hybridize):
    ref = REF[cls.__name__]
    layer = _layer(cls)
    ref_prefix = ref["params"][0][:ref["params"][0].index("0_") + 2]
    assert _suffixes(layer.collect_params().keys(), layer.prefix) == \
        _suffixes(ref["params"], ref_prefix)
    layer.initialize()
    if hybridize:
        layer.hybridize()
    x = mx.nd.array(_data())
    x.attach_grad()
    with mx.autograd.record():
        y = layer(x)
    _close(y, ref["out"])
    shapes = {k[len(layer.prefix):]: tuple(p.shape) for k, p in layer.collect_params().items()}
    assert shapes == {k[len(ref_prefix):]: tuple(v) for k, v in ref["shapes"].items()}
    if "grads" in ref:
        y.backward()
        _close(x.grad, ref["grad_data"], atol=1e-4)
        for k, p in layer.collect_params().items():
            expected = ref["grads"][ref_prefix + k[len(layer.prefix):]]
            _close(p.grad(), expected, atol=2e-4, rtol=2e-5)


def test_modulated_layer_backward_runs_on_cpu():
    """MXNet 1.9.1 has no CPU backward for the modulated operator; here it runs, and the
    zero-initialised offset convolution still gets a gradient (through offsets and mask)."""
    layer = _layer(cnn.ModulatedDeformableConvolution)
    layer.initialize()
    layer.hybridize()
    with mx.autograd.record():
        y = layer(mx.nd.array(_data()))
    y.backward()
    grads = {k[len(layer.prefix):]: p.grad().asnumpy() for k, p in layer.collect_params().items()}
    assert set(grads) == {"deformable_conv_weight", "deformable_conv_bias", "offset_weight",
                          "offset_bias"}
    assert all(np.isfinite(g).all() and np.abs(g).sum() > 0 for g in grads.values())


@pytest.mark.parametrize("cls", LAYERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("use_bias", [True, False])
def test_zero_offset_init_equals_conv2d(cls, use_bias):
    """Offset weights and bias start at zero (and the mask at 2 * sigmoid(0) = 1): the
    layer is then the plain convolution of its weight."""
    layer = cls(6, kernel_size=3, strides=2, padding=1, dilation=(1, 2), groups=2,
                num_deformable_group=2, use_bias=use_bias, bias_initializer="ones")
    layer.initialize(mx.init.Uniform(0.5))
    x = np.random.default_rng(0).standard_normal((2, 4, 9, 10)).astype(np.float32)
    got = layer(mx.nd.array(x))
    w = torch.from_numpy(layer.deformable_conv_weight.data().asnumpy())
    b = torch.ones(6) if use_bias else None
    expected = F.conv2d(torch.from_numpy(x), w, b, stride=2, padding=1, dilation=(1, 2),
                        groups=2)
    _close(got, expected.numpy(), atol=1e-4)
    if layer.offset_weight.data().asnumpy().any():
        pytest.fail("offset_weight must start at zero")


@pytest.mark.parametrize("cls", LAYERS, ids=lambda c: c.__name__)
def test_deferred_and_given_in_channels(cls):
    share = 2 if cls is cnn.DeformableConvolution else 3
    deferred = cls(5, kernel_size=(3, 1), groups=1)
    assert deferred.offset_weight.shape == (share * 3, 0, 3, 1)
    assert deferred.deformable_conv_weight.shape == (5, 0, 3, 1)
    deferred.initialize()
    assert deferred(mx.nd.ones((1, 6, 4, 4))).shape == (1, 5, 2, 4)
    assert deferred.offset_weight.shape == (share * 3, 6, 3, 1)
    assert deferred.deformable_conv_weight.shape == (5, 6, 3, 1)
    given = cls(4, kernel_size=2, groups=2, in_channels=6, num_deformable_group=3,
                offset_use_bias=False, use_bias=False)
    assert given.offset_weight.shape == (share * 4 * 3, 3, 2, 2)
    assert given.deformable_conv_weight.shape == (4, 3, 2, 2)
    assert given.offset_bias is None and given.deformable_conv_bias is None
    assert sorted(k[len(given.prefix):] for k in given.collect_params()) == \
        ["deformable_conv_weight", "offset_weight"]


def test_mxnet_gluon_contrib_test_network():
    """The network of MXNet 1.9.1's test_gluon_contrib.py::test_ModulatedDeformableConvolution
    (hybridized, forward under autograd.record), then a backward pass."""
    net = nn.HybridSequential()
    net.add(
        cnn.DeformableConvolution(10, kernel_size=(3, 3), strides=1, padding=0),
        cnn.DeformableConvolution(10, kernel_size=(1, 1), strides=1, padding=0),
        cnn.DeformableConvolution(10, kernel_size=(5, 5), strides=1, padding=0),
        cnn.DeformableConvolution(10, kernel_size=(3, 5), strides=1, padding=0),
        cnn.DeformableConvolution(10, kernel_size=(5, 1), strides=1, padding=0,
                                  num_deformable_group=2),
        cnn.DeformableConvolution(12, kernel_size=(3, 2), strides=1, padding=0,
                                  activation="relu", offset_use_bias=False, use_bias=False),
        cnn.DeformableConvolution(12, kernel_size=(3, 2), strides=1, padding=0, use_bias=False,
                                  num_deformable_group=4),
    )
    net.initialize(force_reinit=True)
    net.hybridize()
    x = mx.nd.random.uniform(shape=(2, 5, 20, 21))
    with mx.autograd.record():
        y = net(x)
    # 20 - 2 - 0 - 4 - 2 - 4 - 2 - 2 = 4 rows; 21 - 2 - 0 - 4 - 4 - 0 - 1 - 1 = 9 columns
    assert y.shape == (2, 12, 4, 9)
    y.backward()
    assert np.isfinite(net[0].deformable_conv_weight.grad().asnumpy()).all()


def test_repr():
    layer = cnn.DeformableConvolution(4, kernel_size=(3, 2), padding=1, groups=2,
                                      use_bias=False, activation="relu")
    assert repr(layer) == ("DeformableConvolution(None -> 4, kernel_size=(3, 2), "
                           "stride=(1, 1), padding=(1, 1), groups=2, bias=False, "
                           "Activation(relu))")


BAD = [
    (dict(layout="NHWC"), "layout must be 'NCHW'"),
    (dict(adj=(1, 1)), "adj is for transposed convolution"),
    (dict(channels=0), "channels must be a positive int"),
    (dict(kernel_size=(3, 3, 3)), "kernel_size must be an int or a tuple of 2 ints"),
    (dict(strides="x"), "strides must be an int or a tuple of 2 ints"),
    (dict(num_deformable_group=0), "num_deformable_group must be a positive int"),
    (dict(in_channels=-1), "in_channels must be an int >= 0"),
]


@pytest.mark.parametrize("cls", LAYERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("over,match", BAD, ids=[m for _, m in BAD])
def test_bad_constructor_arguments(cls, over, match):
    kwargs = dict(channels=4, kernel_size=3)
    kwargs.update(over)
    with pytest.raises(InvalidArgumentError, match=match) as info:
        cls(**kwargs)
    assert isinstance(info.value, mx.MXNetError) and isinstance(info.value, ValueError)


def test_deformable_group_not_dividing_channels_raises_at_forward():
    layer = cnn.DeformableConvolution(4, kernel_size=3, num_deformable_group=2)
    layer.initialize()
    with pytest.raises(mx.MXNetError, match="num_deformable_group=2 must divide"):
        layer(mx.nd.ones((1, 3, 5, 5)))

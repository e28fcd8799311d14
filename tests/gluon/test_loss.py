"""gluon.loss: values and gradients against MXNet 1.9.1 and against torch formulas.

``mxnet_1_9_1_losses.json`` holds inputs, losses and input gradients measured
with MXNet 1.9.1 (the probe script that produced it is stored in the file under
``"probe"``). Each loss is also checked against an independent torch
implementation of its formula.
"""
import json
import os

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import sparsenet as mx
from sparsenet.gluon import loss as L

with open(os.path.join(os.path.dirname(__file__), "mxnet_1_9_1_losses.json")) as _f:
    REF = json.load(_f)
A = {k: np.asarray(v, dtype=np.float32) for k, v in REF.items() if k not in ("out", "probe")}

CASES = {
    "l2": (L.L2Loss(), "pred", "lab01", ()),
    "l2_w_sw": (L.L2Loss(weight=0.7), "pred", "lab01", ("sw",)),
    "l1": (L.L1Loss(), "pred", "lab01", ()),
    "sbce": (L.SigmoidBCELoss(), "pred", "lab01", ()),
    "sbce_sw": (L.SigmoidBCELoss(weight=2.0), "pred", "lab01", ("sw",)),
    "sbce_pos": (L.SigmoidBCELoss(), "pred", "lab01", ("ones", "posw")),
    "sbce_fromsig": (L.SigmoidBCELoss(from_sigmoid=True), "prob", "lab01", ()),
    "sce": (L.SoftmaxCELoss(), "pred", "cls", ()),
    "sce_dense": (L.SoftmaxCELoss(sparse_label=False), "pred", "onehot", ()),
    "sce_axis0": (L.SoftmaxCELoss(axis=0, batch_axis=1), "pred", "cls_axis0", ()),
    "logistic": (L.LogisticLoss(), "pred", "labpm", ()),
    "logistic_bin": (L.LogisticLoss(label_format="binary"), "pred", "lab01", ()),
    "hinge": (L.HingeLoss(), "pred", "labpm", ()),
    "sqhinge": (L.SquaredHingeLoss(margin=2), "pred", "labpm", ()),
    "huber": (L.HuberLoss(rho=0.5), "pred", "lab01", ()),
    "kldiv": (L.KLDivLoss(from_logits=False), "pred", "third", ()),
}
EXTRA = {"ones": np.ones((4, 1), np.float32), "posw": np.array([[0.5, 2.0, 3.0]], np.float32),
         "onehot": np.eye(3, dtype=np.float32)[A["cls"].astype(int)],
         "cls_axis0": np.array([0, 3, 1], np.float32), "third": np.full((4, 3), 1 / 3, np.float32)}


def _arr(name):
    return EXTRA[name] if name in EXTRA else A[name]


def _run(block, pred, label, extra):
    x = mx.nd.array(pred)
    x.attach_grad()
    with mx.autograd.record():
        y = block(x, mx.nd.array(label), *[mx.nd.array(e) for e in extra])
    y.backward()
    return y.asnumpy(), x.grad.asnumpy()


@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_matches_mxnet_1_9_1(name):
    block, p, lab, extra = CASES[name]
    loss, grad = _run(block, _arr(p), _arr(lab), [_arr(e) for e in extra])
    np.testing.assert_allclose(loss, REF["out"][name]["loss"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad, REF["out"][name]["grad"], rtol=1e-4, atol=1e-6)


def _torch_ref(name, x, z, sw):
    """Independent torch versions of MXNet's formulas (per-sample mean over axis 1)."""
    if name == "l2":
        return ((z - x) ** 2 / 2).mean(1)
    if name == "l1":
        return (z - x).abs().mean(1)
    if name == "sbce":
        return (torch.clamp(x, min=0) - x * z + torch.log1p(torch.exp(-x.abs()))).mean(1)
    if name == "sbce_sw":
        return ((torch.clamp(x, min=0) - x * z + torch.log1p(torch.exp(-x.abs()))) * sw).mean(1)
    if name == "logistic":
        z01 = (z + 1) / 2
        return (torch.clamp(x, min=0) - x * z01 + torch.log1p(torch.exp(-x.abs()))).mean(1)
    if name == "hinge":
        return torch.clamp(1 - x * z, min=0).mean(1)
    if name == "sce":
        return -torch.log_softmax(x, 1).gather(1, z.long().reshape(-1, 1)).reshape(-1)
    raise KeyError(name)


@pytest.mark.parametrize("name", ["l2", "l1", "sbce", "sbce_sw", "logistic", "hinge", "sce"])
def test_loss_matches_torch_formula(name):
    rng = np.random.default_rng(7)
    pred = rng.standard_normal((6, 5)).astype(np.float32) * 3
    if name == "sce":
        label = rng.integers(0, 5, 6).astype(np.float32)
    elif name in ("logistic", "hinge"):
        label = np.sign(rng.standard_normal((6, 5))).astype(np.float32)
    else:
        label = (rng.random((6, 5)) > 0.5).astype(np.float32)
    sw = rng.random((6, 1)).astype(np.float32)
    blocks = {"l2": L.L2Loss(), "l1": L.L1Loss(), "sbce": L.SigmoidBCELoss(),
              "sbce_sw": L.SigmoidBCELoss(), "logistic": L.LogisticLoss(),
              "hinge": L.HingeLoss(), "sce": L.SoftmaxCELoss()}
    extra = [sw] if name == "sbce_sw" else []
    loss, grad = _run(blocks[name], pred, label, extra)
    x = torch.tensor(pred, requires_grad=True)
    ref = _torch_ref(name, x, torch.tensor(label), torch.tensor(sw))
    ref.sum().backward()
    np.testing.assert_allclose(loss, ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad, x.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_label_is_reshaped_like_prediction_and_sizes_checked():
    l2 = L.L2Loss()
    np.testing.assert_allclose(l2(mx.nd.zeros((3, 1)), mx.nd.ones((3,))).asnumpy(), [0.5] * 3)
    with pytest.raises(ValueError, match="label of shape \\(4,\\) .* cannot be reshaped like "
                                         "prediction of shape \\(3, 1\\)"):
        l2(mx.nd.zeros((3, 1)), mx.nd.ones((4,)))
    # same size, other layout: the label is read in row-major order, as MXNet reshapes it
    pred = mx.nd.zeros((3, 2, 1))
    label = mx.nd.array(np.arange(6.0).reshape(2, 3))
    want = (0.5 * np.arange(6.0).reshape(3, 2) ** 2).mean(axis=1)
    np.testing.assert_allclose(l2(pred, label).asnumpy(), want, rtol=1e-6)


def test_loss_repr_and_bad_arguments():
    assert repr(L.L1Loss(batch_axis=1)) == "L1Loss(batch_axis=1, w=None)"
    with pytest.raises(ValueError, match="label_format can only be signed or binary"):
        L.LogisticLoss(label_format="pm")
    with pytest.raises(TypeError, match="loss weight must be a number"):
        L.L2Loss(weight="big")


def test_bce_is_stable_for_large_logits():
    y = L.SigmoidBCELoss()(mx.nd.array([[100.0], [-100.0]]), mx.nd.array([0.0, 1.0]))
    np.testing.assert_allclose(y.asnumpy(), [100.0, 100.0], rtol=1e-6)
    assert F.softplus(torch.tensor(-100.0)).item() >= 0

"""contrib.DeformableConvolution and contrib.ModulatedDeformableConvolution.

References, all from outside the code under test:

* zero offsets (and a unit mask) give torch's ``conv2d``;
* integer offsets give ``conv2d`` of the input shifted (zero filled) by the offset;
* fractional offsets against a NumPy loop written here from MXNet 1.9.1's CPU
  kernels' border rules (``deformable_im2col.h``, ``modulated_deformable_im2col.h``);
* ``mxnet_1_9_1_deformable_conv.json``: values and gradients measured with MXNet 1.9.1
  on the CPU (the probe script is stored in the file under ``"probe"``; it builds the
  same inputs as :func:`_inputs`). MXNet's ModulatedDeformableConvolution has no CPU
  backward ("only implemented in GPU"), so its gradients are checked against finite
  differences (``torch.autograd.gradcheck``) instead.
"""
import json
import os

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import sparsenet as mx
from sparsenet.ops.deformable_conv import DeformableConvolution as _V1
from sparsenet.ops.deformable_conv import ModulatedDeformableConvolution as _V2
from sparsenet.ops.layer_common import LayerParameterError

with open(os.path.join(os.path.dirname(__file__), "mxnet_1_9_1_deformable_conv.json")) as _f:
    REF = json.load(_f)  # measured with MXNet 1.9.1 (CPU)

OPS = ("DeformableConvolution", "ModulatedDeformableConvolution")


def _close(got, expected, atol=2e-5, rtol=1e-5):
    got = got.asnumpy() if isinstance(got, mx.nd.NDArray) else np.asarray(got)
    np.testing.assert_allclose(got, np.asarray(expected, dtype=np.float64), atol=atol, rtol=rtol)


def _call(name, x, off, w, b=None, mask=None, **kw):
    """Run the operator ``name`` on NumPy inputs (mask ones for the modulated form)."""
    nd = mx.nd.array
    if b is None:
        kw["no_bias"] = True
    if name == "DeformableConvolution":
        args = [nd(x), nd(off), nd(w)]
    else:
        if mask is None:
            n, _, ho, wo = off.shape
            mask = np.ones((n, off.shape[1] // 2, ho, wo), dtype=np.float32)
        args = [nd(x), nd(off), nd(mask), nd(w)]
    if b is not None:
        args.append(nd(b))
    return getattr(mx.nd.contrib, name)(*args, **kw)


def _out_hw(hw, k, s, d, p):
    return tuple((n + 2 * pp - dd * (kk - 1) - 1) // ss + 1
                 for n, kk, ss, dd, pp in zip(hw, k, s, d, p))


GEOMETRIES = [
    dict(kernel=(3, 3), stride=(1, 1), dilate=(1, 1), pad=(0, 0), num_group=1, dg=1),
    dict(kernel=(3, 2), stride=(2, 1), dilate=(1, 2), pad=(1, 2), num_group=2, dg=2),
    dict(kernel=(1, 1), stride=(1, 1), dilate=(1, 1), pad=(0, 0), num_group=1, dg=4),
    dict(kernel=(2, 3), stride=(1, 2), dilate=(2, 1), pad=(1, 0), num_group=4, dg=1),
]


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("geo", GEOMETRIES, ids=lambda g: "k{kernel}s{stride}d{dilate}p{pad}"
                         "g{num_group}dg{dg}".format(**g))
def test_zero_offsets_equal_conv2d(name, geo):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 7, 8)).astype(np.float32)
    k, s, d, p = geo["kernel"], geo["stride"], geo["dilate"], geo["pad"]
    w = rng.standard_normal((6 if geo["num_group"] != 4 else 8, 4 // geo["num_group"]) + k)
    w = w.astype(np.float32)
    b = rng.standard_normal(w.shape[0]).astype(np.float32)
    ho, wo = _out_hw((7, 8), k, s, d, p)
    off = np.zeros((2, geo["dg"] * 2 * k[0] * k[1], ho, wo), dtype=np.float32)
    got = _call(name, x, off, w, b, kernel=k, stride=s, dilate=d, pad=p, num_filter=w.shape[0],
                num_group=geo["num_group"], num_deformable_group=geo["dg"])
    expected = F.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), stride=s,
                        padding=p, dilation=d, groups=geo["num_group"])
    _close(got, expected.numpy(), atol=1e-4)


def _shifted_conv(x, w, shifts, k, s, d, p, dg):
    """conv2d of ``x`` with deformable group ``g``'s channels read at ``+shifts[g]``."""
    m = p[0] + p[1] + max(abs(v) for sh in shifts for v in sh) + 1
    xp = F.pad(torch.from_numpy(x), (m, m, m, m))
    cg = x.shape[1] // dg
    h, wd = x.shape[2:]
    parts = []
    for g, (dy, dx) in enumerate(shifts):
        r0, c0 = m - p[0] + dy, m - p[1] + dx
        parts.append(xp[:, g * cg:(g + 1) * cg, r0:r0 + h + 2 * p[0], c0:c0 + wd + 2 * p[1]])
    return F.conv2d(torch.cat(parts, 1), torch.from_numpy(w), stride=s, dilation=d).numpy()


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("shifts", [[(1, -2)], [(-1, 0), (2, 3)], [(0, 7), (-9, 0)]])
def test_integer_offsets_equal_conv2d_of_shifted_input(name, shifts):
    rng = np.random.default_rng(1)
    dg = len(shifts)
    x = rng.standard_normal((2, 4, 6, 7)).astype(np.float32)
    w = rng.standard_normal((3, 4, 3, 2)).astype(np.float32)
    k, s, d, p = (3, 2), (1, 2), (2, 1), (1, 1)
    ho, wo = _out_hw((6, 7), k, s, d, p)
    off = np.zeros((2, dg, k[0] * k[1], 2, ho, wo), dtype=np.float32)
    for g, (dy, dx) in enumerate(shifts):
        off[:, g, :, 0], off[:, g, :, 1] = dy, dx
    off = off.reshape(2, -1, ho, wo)
    got = _call(name, x, off, w, kernel=k, stride=s, dilate=d, pad=p, num_filter=3,
                num_deformable_group=dg)
    _close(got, _shifted_conv(x, w, shifts, k, s, d, p, dg), atol=1e-4)


def _bilinear_np(img, h, w, modulated):
    """One sample of a 2-D ``img`` at ``(h, w)`` by MXNet 1.9.1's CPU border rules."""
    height, width = img.shape
    if modulated:   # inside (-1, H) x (-1, W); neighbours outside the image read 0
        if not (-1 < h < height and -1 < w < width):
            return 0.0
    else:           # inside [0, H) x [0, W); from the last row/column on, that row/column
        if not (0 <= h < height and 0 <= w < width):
            return 0.0
        h, w = min(h, height - 1), min(w, width - 1)
    h0, w0 = int(np.floor(h)), int(np.floor(w))
    total = 0.0
    for r, wr in ((h0, 1 - (h - h0)), (h0 + 1, h - h0)):
        for c, wc in ((w0, 1 - (w - w0)), (w0 + 1, w - w0)):
            if 0 <= r < height and 0 <= c < width:
                total += wr * wc * float(img[r, c])
    return total


def _deform_np(x, off, w, mask, k, s, d, p, num_group, dg):
    """Deformable convolution by loops over every output element (float64)."""
    n, c, height, width = x.shape
    f = w.shape[0]
    ho, wo = off.shape[2:]
    out = np.zeros((n, f, ho, wo))
    cg, cgroup, fgroup = c // dg, c // num_group, f // num_group
    for b in range(n):
        for ch in range(c):
            g = ch // cg
            for i in range(k[0]):
                for j in range(k[1]):
                    t = i * k[1] + j
                    for y in range(ho):
                        for xx in range(wo):
                            oc = g * 2 * k[0] * k[1] + 2 * t     # dy channel; dx is next
                            hh = y * s[0] - p[0] + i * d[0] + off[b, oc, y, xx]
                            ww = xx * s[1] - p[1] + j * d[1] + off[b, oc + 1, y, xx]
                            v = _bilinear_np(x[b, ch], float(hh), float(ww), mask is not None)
                            if mask is not None:
                                v *= mask[b, g * k[0] * k[1] + t, y, xx]
                            grp = ch // cgroup
                            for fo in range(grp * fgroup, (grp + 1) * fgroup):
                                out[b, fo, y, xx] += w[fo, ch % cgroup, i, j] * v
    return out


@pytest.mark.parametrize("name", OPS)
def test_fractional_offsets_match_numpy_bilinear(name):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 4, 5, 6)).astype(np.float32)
    w = rng.standard_normal((4, 2, 2, 3)).astype(np.float32)
    k, s, d, p = (2, 3), (1, 1), (1, 2), (1, 1)
    ho, wo = _out_hw((5, 6), k, s, d, p)
    off = rng.uniform(-2.5, 2.5, (1, 2 * 2 * 6, ho, wo)).astype(np.float32)
    mask = rng.uniform(0, 2, (1, 2 * 6, ho, wo)).astype(np.float32)
    modulated = name != "DeformableConvolution"
    got = _call(name, x, off, w, mask=mask if modulated else None, kernel=k, stride=s, dilate=d,
                pad=p, num_filter=4, num_group=2, num_deformable_group=2)
    expected = _deform_np(x, off, w, mask if modulated else None, k, s, d, p, 2, 2)
    _close(got, expected, atol=1e-4)


# Border rule, by hand: 1x1 kernel on [[1, 2], [3, 4]] read at one offset position.
BORDER = [
    # (dy, dx) at output (0, 0),  v1 value,  v2 value
    ((-0.5, 0.0), 0.0, 0.5),       # h in (-1, 0): v1 reads 0, v2 fades toward 0
    ((1.5, 0.0), 3.0, 1.5),        # h in (H-1, H): v1 holds the last row, v2 fades
    ((1.0, 1.0), 4.0, 4.0),        # exactly the last pixel
    ((0.25, 1.5), 2.5, 1.25),      # w in (W-1, W)
    ((-1.0, 0.0), 0.0, 0.0),       # h = -1: outside for both
    ((2.0, 0.0), 0.0, 0.0),        # h = H: outside for both
    ((0.5, -0.5), 0.0, 1.0),       # v2: 0.5 * 0.5 * (1 + 3)
]


@pytest.mark.parametrize("shift,v1,v2", BORDER)
def test_border_rules_by_hand(shift, v1, v2):
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], dtype=np.float32)
    off = np.zeros((1, 2, 2, 2), dtype=np.float32)
    off[0, :, 0, 0] = shift
    w = np.ones((1, 1, 1, 1), dtype=np.float32)
    for name, value in (("DeformableConvolution", v1), ("ModulatedDeformableConvolution", v2)):
        got = _call(name, x, off, w, kernel=(1, 1), num_filter=1).asnumpy()[0, 0, 0, 0]
        assert got == pytest.approx(value, abs=1e-6), name


def _inputs(case):
    """The inputs of MXNet's probe (the ``probe`` script in the JSON file)."""
    if case == "small":
        x = (np.arange(40, dtype=np.float32).reshape(1, 2, 4, 5) % 7) / 7.0 - 0.3
        scale = np.array([0.5, -0.25, 1.3, -0.7, -0.6, 0.2, 2.6, 0.9], dtype=np.float32)
        grid = 1 + 0.1 * np.arange(12, dtype=np.float32).reshape(3, 4)
        off = np.stack([scale[c] * grid - np.float32(0.05 * c) for c in range(8)])[None]
        w = ((np.arange(24, dtype=np.float32).reshape(3, 2, 2, 2) % 5) - 2) / 4.0
        b = np.array([0.1, -0.2, 0.3], dtype=np.float32)
        mask = 0.5 + 0.1 * (np.arange(48, dtype=np.float32).reshape(1, 4, 3, 4) % 9)
        kw = dict(kernel=(2, 2), num_filter=3)
    else:
        x = (((np.arange(64, dtype=np.float32) * 7) % 11) / 11.0 - 0.4).reshape(1, 4, 4, 4)
        off = (((np.arange(192, dtype=np.float32) * 0.37) % 3.4) - 1.7).reshape(1, 16, 4, 3)
        w = ((((np.arange(16, dtype=np.float32) * 5) % 7) - 3) / 3.0).reshape(2, 2, 2, 2)
        b = np.array([0.25, -0.5], dtype=np.float32)
        mask = ((np.arange(96, dtype=np.float32) % 5) / 4.0).reshape(1, 8, 4, 3)
        kw = dict(kernel=(2, 2), stride=(1, 2), pad=(1, 1), dilate=(2, 1), num_filter=2,
                  num_group=2, num_deformable_group=2)
    return [a.astype(np.float32) for a in (x, off, w, b, mask)], kw


@pytest.mark.parametrize("case", ["small", "grouped"])
@pytest.mark.parametrize("name", OPS)
def test_matches_mxnet_1_9_1(case, name):
    ref = REF[f"{case}/{name}"]
    (x, off, w, b, mask), kw = _inputs(case)
    arrays = [mx.nd.array(v) for v in (x, off, w, b, mask)]
    for a in arrays[:4]:
        a.attach_grad()
    X, O, W, B, M = arrays
    with mx.autograd.record():
        if name == "DeformableConvolution":
            y = mx.nd.contrib.DeformableConvolution(X, O, W, B, **kw)
        else:
            y = mx.nd.contrib.ModulatedDeformableConvolution(X, O, M, W, B, **kw)
    _close(y, ref["out"])
    if "grad_data" in ref:
        head = np.linspace(-1, 1, y.size, dtype=np.float32).reshape(y.shape)
        y.backward(mx.nd.array(head))
        _close(X.grad, ref["grad_data"])
        _close(O.grad, ref["grad_offset"])
        _close(W.grad, ref["grad_weight"])
        _close(B.grad, ref["grad_bias"], atol=1e-4)


def test_offset_gradient_is_zero_from_the_last_row_on():
    """MXNet's v1 offset gradient is 0 where the sample holds the last row (h >= H - 1),
    also at exactly H - 1 (the ``small`` probe case hits it; measured 1.4e-9, i.e. 0; a
    clamp passing the gradient at H - 1 gives -0.0658 there)."""
    (x, off, w, b, _), kw = _inputs("small")
    O = mx.nd.array(off)
    O.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.DeformableConvolution(mx.nd.array(x), O, mx.nd.array(w),
                                                mx.nd.array(b), **kw)
    y.backward(mx.nd.array(np.linspace(-1, 1, y.size, dtype=np.float32).reshape(y.shape)))
    assert 2 + off[0, 0, 2, 2] == 3.0                     # tap (0, 0) at output (2, 2): h = H - 1
    assert O.grad.asnumpy()[0, 0, 2, 2] == 0.0
    assert abs(REF["small/DeformableConvolution"]["grad_offset"][0][0][2][2]) < 1e-8


@pytest.mark.parametrize("name", OPS)
def test_gradients_match_finite_differences(name):
    """Gradients to data, offset, mask, weight and bias (float64, away from kinks)."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(1, 4, 4, 5, generator=g, dtype=torch.float64)
    off = (torch.rand(1, 2 * 2 * 4, 3, 3, generator=g, dtype=torch.float64) * 3 - 1.5)
    off = off + 0.137   # keep sample positions off the integer grid
    mask = torch.rand(1, 2 * 4, 3, 3, generator=g, dtype=torch.float64) * 2
    w = torch.randn(2, 2, 2, 2, generator=g, dtype=torch.float64)
    b = torch.randn(2, generator=g, dtype=torch.float64)
    kw = dict(kernel=(2, 2), stride=(1, 2), pad=(0, 1), num_filter=2, num_group=2,
              num_deformable_group=2)
    tensors = [t.requires_grad_() for t in (x, off, mask, w, b)]
    if name == "DeformableConvolution":
        fn = lambda x, o, m, w, b: _V1.fn(x, o, w, b, **kw)  # noqa: E731
    else:
        fn = lambda x, o, m, w, b: _V2.fn(x, o, m, w, b, **kw)  # noqa: E731
    assert torch.autograd.gradcheck(fn, tensors, eps=1e-6, atol=1e-5)


def test_mask_gradient_is_the_sampled_value():
    """d out / d mask = weight * sample; with a 1x1 unit kernel, the sample itself."""
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], dtype=np.float32)
    off = np.full((1, 2, 2, 2), 0.5, dtype=np.float32)
    X, O, M, W = (mx.nd.array(v) for v in (x, off, np.ones((1, 1, 2, 2), np.float32),
                                           np.ones((1, 1, 1, 1), np.float32)))
    M.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.ModulatedDeformableConvolution(X, O, M, W, kernel=(1, 1),
                                                         num_filter=1, no_bias=True)
    y.backward()
    # samples at (0.5, 0.5), (0.5, 1.5), (1.5, 0.5), (1.5, 1.5), neighbours outside read 0
    _close(M.grad, [[[[2.5, 1.5], [1.75, 1.0]]]])


def test_symbol_arguments_and_shapes_as_mxnet():
    """Measured with MXNet 1.9.1: ``mx.sym.contrib.DeformableConvolution(data, offset,
    kernel=(2, 2), num_filter=3, name='dc')`` lists ``['data', 'offset', 'dc_weight',
    'dc_bias']`` and infers ``(3, 2, 2, 2)``, ``(3,)``, output ``(1, 3, 3, 3)``; the modulated
    form with ``no_bias=True`` lists ``['data', 'offset', 'mask', 'mdc_weight']``."""
    dc = mx.sym.contrib.DeformableConvolution(mx.sym.var("data"), mx.sym.var("offset"),
                                              kernel=(2, 2), num_filter=3, name="dc")
    assert dc.list_arguments() == ["data", "offset", "dc_weight", "dc_bias"]
    args, outs, _ = dc.infer_shape(data=(1, 2, 4, 4), offset=(1, 8, 3, 3))
    assert args == [(1, 2, 4, 4), (1, 8, 3, 3), (3, 2, 2, 2), (3,)] and outs == [(1, 3, 3, 3)]
    mdc = mx.sym.contrib.ModulatedDeformableConvolution(
        mx.sym.var("data"), mx.sym.var("offset"), mx.sym.var("mask"), kernel=(2, 2),
        num_filter=3, no_bias=True, name="mdc")
    assert mdc.list_arguments() == ["data", "offset", "mask", "mdc_weight"]
    args, outs, _ = mdc.infer_shape(data=(1, 2, 4, 4), offset=(1, 8, 3, 3), mask=(1, 4, 3, 3))
    assert args[3] == (3, 2, 2, 2) and outs == [(1, 3, 3, 3)]
    assert mx.sym.contrib.DeformableConvolution(
        mx.sym.var("data"), mx.sym.var("offset"), kernel=(2, 2),
        num_filter=3).name.startswith("deformableconvolution")


def test_bound_symbol_matches_mxnet_values_and_gradients():
    (x, off, w, b, _), kw = _inputs("small")
    ref = REF["small/DeformableConvolution"]
    sym = mx.sym.contrib.DeformableConvolution(mx.sym.var("data"), mx.sym.var("offset"),
                                               name="dc", **kw)
    args = {"data": mx.nd.array(x), "offset": mx.nd.array(off), "dc_weight": mx.nd.array(w),
            "dc_bias": mx.nd.array(b)}
    grads = {k: mx.nd.zeros(v.shape) for k, v in args.items()}
    ex = sym.bind(mx.cpu(), args, args_grad=grads)
    out = ex.forward(is_train=True)[0]
    _close(out, ref["out"])
    ex.backward(mx.nd.array(np.linspace(-1, 1, out.size, dtype=np.float32).reshape(out.shape)))
    _close(grads["data"], ref["grad_data"])
    _close(grads["offset"], ref["grad_offset"])
    _close(grads["dc_weight"], ref["grad_weight"])


def _base(**over):
    x = np.ones((1, 4, 5, 5), np.float32)
    off = np.zeros((1, 8, 4, 4), np.float32)
    w = np.ones((3, 4, 2, 2), np.float32)
    b = np.zeros(3, np.float32)
    args = dict(x=x, off=off, w=w, b=b, kernel=(2, 2), num_filter=3)
    args.update(over)
    return args


BAD = [
    (dict(off=np.zeros((1, 6, 4, 4), np.float32)), "offset must have shape"),
    (dict(off=np.zeros((1, 8, 3, 4), np.float32)), "offset must have shape"),
    (dict(w=np.ones((3, 2, 2, 2), np.float32)), "weight must have shape"),
    (dict(b=np.zeros(2, np.float32)), r"bias must have shape \(3,\)"),
    (dict(num_deformable_group=3), "num_deformable_group=3 must divide"),
    (dict(num_group=2), "num_group=2 must divide"),
    (dict(num_deformable_group=0), "num_deformable_group must be a positive integer"),
    (dict(layout="NHWC"), "layout must be 'NCHW'"),
    (dict(kernel=(2, 2, 2)), "kernel must have 2 entries"),
    (dict(kernel=(7, 2)), "kernel .* exceeds the padded input size"),
    (dict(stride=(0, 1)), "stride entries must be >= 1"),
    (dict(x=np.ones((4, 5, 5), np.float32)), "data must be 4-D"),
]


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("over,match", BAD, ids=[m for _, m in BAD])
def test_bad_arguments_raise_naming_the_argument(name, over, match):
    a = _base(**over)
    x, off, w, b = a.pop("x"), a.pop("off"), a.pop("w"), a.pop("b")
    with pytest.raises(LayerParameterError, match=match) as info:
        _call(name, x, off, w, b, **a)
    assert isinstance(info.value, mx.MXNetError) and isinstance(info.value, ValueError)
    assert name in str(info.value)


def test_bad_mask_and_missing_bias_raise():
    a = _base()
    with pytest.raises(LayerParameterError, match="mask must have shape"):
        _call("ModulatedDeformableConvolution", a["x"], a["off"], a["w"], a["b"],
              mask=np.ones((1, 3, 4, 4), np.float32), kernel=(2, 2), num_filter=3)
    # MXNet 1.9.1: "expects 4 inputs, but got 3" for a missing bias without no_bias
    with pytest.raises(LayerParameterError, match="bias is required unless no_bias=True"):
        mx.nd.contrib.DeformableConvolution(mx.nd.array(a["x"]), mx.nd.array(a["off"]),
                                            mx.nd.array(a["w"]), kernel=(2, 2), num_filter=3)

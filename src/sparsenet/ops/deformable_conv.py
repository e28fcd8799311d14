"""Deformable convolution: ``contrib.DeformableConvolution`` (v1) and its modulated form (v2).

The operators are ``_contrib_DeformableConvolution`` and
``_contrib_ModulatedDeformableConvolution`` (``mx.nd.contrib.*``, ``mx.sym.contrib.*``).

A 2-D convolution whose kernel samples the input away from the regular grid:
kernel tap ``k = i * kernel_w + j`` of output position ``(y, x)`` reads the input
at ``(y * stride_h - pad_h + i * dilate_h + dy, x * stride_w - pad_w + j * dilate_w + dx)``,
with the fractional offset ``(dy, dx)`` read from ``offset`` and the value found
by bilinear interpolation. The input channels are split into
``num_deformable_group`` groups, each with its own offsets: ``offset`` has
``num_deformable_group * 2 * kernel_h * kernel_w`` channels, laid out as MXNet
1.9.1 lays them (per group, per kernel tap, ``dy`` then ``dx``). The modulated
form multiplies each sample by ``mask`` (``num_deformable_group * kernel_h *
kernel_w`` channels, per group, per tap). The sampled columns then meet the
weight as in a grouped convolution (``num_group``).

The two forms read the border as MXNet 1.9.1's CPU kernels do:

* ``DeformableConvolution``: a position outside ``0 <= h < H`` (or ``0 <= w < W``)
  reads 0; inside, a position past the last row (``H - 1 <= h < H``) reads the
  last row (no fading toward zero), likewise for columns.
* ``ModulatedDeformableConvolution``: a position inside ``-1 < h < H`` and
  ``-1 < w < W`` is interpolated with the four neighbours, a neighbour outside
  the image counting as 0 (so values fade to zero across the border); outside,
  0.

Gradients to data, offset, mask, weight and bias come from torch's autograd.
Only the 2-D, ``NCHW`` form exists (as in MXNet).

>>> import sparsenet as mx
>>> x = mx.nd.array([[[[1.0, 2.0], [3.0, 4.0]]]])
>>> shift = mx.nd.full((1, 2, 2, 2), 0.5)              # (dy, dx) = (0.5, 0.5) everywhere
>>> mx.nd.contrib.DeformableConvolution(x, shift, mx.nd.ones((1, 1, 1, 1)), kernel=(1, 1),
...                                     num_filter=1, no_bias=True).asnumpy()
array([[[[2.5, 3. ],
         [3.5, 4. ]]]], dtype=float32)
"""
import torch

from .layer_common import LayerParameterError, expand_tuple
from .registry import defop, input_shapes

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]

_V1 = "DeformableConvolution"
_V2 = "ModulatedDeformableConvolution"


def _positive_int(value, name, opname):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise LayerParameterError(f"{opname}: {name} must be a positive integer, got {value!r}")
    return value


def _geometry(opname, kernel, stride, dilate, pad, layout):
    """``(kernel, stride, dilate, pad)`` as 2-tuples, checked."""
    if layout not in (None, "NCHW"):
        raise LayerParameterError(f"{opname}: layout must be 'NCHW' (or None), got {layout!r}; "
                                  f"only the 2-D channel-first form exists, as in MXNet")
    k = kernel if isinstance(kernel, (tuple, list)) else (kernel,)
    if len(k) != 2:
        raise LayerParameterError(f"{opname}: kernel must have 2 entries (kernel_h, kernel_w), "
                                  f"got {kernel!r}; only 2-D deformable convolution exists")
    k = expand_tuple(k, 2, 1, "kernel", opname)
    s = expand_tuple(stride, 2, 1, "stride", opname)
    d = expand_tuple(dilate, 2, 1, "dilate", opname)
    p = expand_tuple(pad, 2, 0, "pad", opname)
    for name, t, low in (("kernel", k, 1), ("stride", s, 1), ("dilate", d, 1), ("pad", p, 0)):
        if any(v < low for v in t):
            raise LayerParameterError(f"{opname}: {name} entries must be >= {low}, got {t}")
    return k, s, d, p


def _output_hw(opname, hw, k, s, d, p):
    out = []
    for axis, (n, kk, ss, dd, pp) in enumerate(zip(hw, k, s, d, p)):
        span = dd * (kk - 1) + 1
        if n + 2 * pp < span:
            raise LayerParameterError(f"{opname}: kernel {k} (dilated to {span} along spatial "
                                      f"axis {axis}) exceeds the padded input size {n + 2 * pp}")
        out.append((n + 2 * pp - span) // ss + 1)
    return tuple(out)


def _check(opname, data, offset, mask, weight, bias, k, s, d, p, num_filter, num_group, dg):
    """Check every input's shape; return ``(Ho, Wo)``."""
    _positive_int(num_filter, "num_filter", opname)
    _positive_int(num_group, "num_group", opname)
    _positive_int(dg, "num_deformable_group", opname)
    if data.dim() != 4:
        raise LayerParameterError(f"{opname}: data must be 4-D (batch, channels, height, width), "
                                  f"got shape {tuple(data.shape)}")
    n, c = data.shape[0], data.shape[1]
    if c % num_group or num_filter % num_group:
        raise LayerParameterError(f"{opname}: num_group={num_group} must divide the input "
                                  f"channels ({c}) and num_filter ({num_filter})")
    if c % dg:
        raise LayerParameterError(f"{opname}: num_deformable_group={dg} must divide the input "
                                  f"channels ({c})")
    ho, wo = _output_hw(opname, tuple(data.shape[2:]), k, s, d, p)
    taps = k[0] * k[1]
    expected = (n, dg * 2 * taps, ho, wo)
    if tuple(offset.shape) != expected:
        raise LayerParameterError(f"{opname}: offset must have shape {expected} (batch, "
                                  f"num_deformable_group * 2 * kernel_h * kernel_w, out_h, "
                                  f"out_w), got {tuple(offset.shape)}")
    if mask is not None and tuple(mask.shape) != (n, dg * taps, ho, wo):
        raise LayerParameterError(f"{opname}: mask must have shape {(n, dg * taps, ho, wo)} "
                                  f"(batch, num_deformable_group * kernel_h * kernel_w, out_h, "
                                  f"out_w), got {tuple(mask.shape)}")
    expected = (num_filter, c // num_group) + k
    if tuple(weight.shape) != expected:
        raise LayerParameterError(f"{opname}: weight must have shape {expected} (num_filter, "
                                  f"channels / num_group, kernel_h, kernel_w), got "
                                  f"{tuple(weight.shape)}")
    if bias is not None and tuple(bias.shape) != (num_filter,):
        raise LayerParameterError(f"{opname}: bias must have shape ({num_filter},), got "
                                  f"{tuple(bias.shape)}")
    return ho, wo


def _positions(offset, k, s, d, p, dg, out_hw):
    """Sampling rows and columns, each ``(N, dg, taps, Ho, Wo)``, in the offset's dtype."""
    n = offset.shape[0]
    ho, wo = out_hw
    taps = k[0] * k[1]
    dev, dt = offset.device, offset.dtype
    tap_i = torch.arange(k[0], device=dev).repeat_interleave(k[1]) * d[0]   # row of tap
    tap_j = torch.arange(k[1], device=dev).repeat(k[0]) * d[1]              # column of tap
    rows = torch.arange(ho, device=dev) * s[0] - p[0]
    cols = torch.arange(wo, device=dev) * s[1] - p[1]
    base_h = (tap_i[:, None, None] + rows[None, :, None]).to(dt)           # (taps, Ho, 1)
    base_w = (tap_j[:, None, None] + cols[None, None, :]).to(dt)           # (taps, 1, Wo)
    off = offset.reshape(n, dg, taps, 2, ho, wo)
    return base_h + off[:, :, :, 0], base_w + off[:, :, :, 1]


def _corner(flat, rows, cols, weight, height, width):
    """``weight * data[rows, cols]`` per channel, 0 where the pixel is outside the image.

    ``flat`` is ``(N, dg, Cg, H * W)``; ``rows``/``cols`` (integer-valued) and
    ``weight`` are ``(N, dg, L)``. Returns ``(N, dg, Cg, L)``.
    """
    inside = (rows >= 0) & (rows <= height - 1) & (cols >= 0) & (cols <= width - 1)
    index = (rows.clamp(0, height - 1) * width + cols.clamp(0, width - 1)).long()
    n, g, cg, _ = flat.shape
    values = torch.gather(flat, 3, index[:, :, None, :].expand(n, g, cg, index.shape[-1]))
    return values * (weight * inside.to(weight.dtype))[:, :, None, :]


def _sample(data, h, w, dg, clamp_last):
    """Bilinear samples of ``data`` at ``(h, w)``: ``(N, dg, Cg, taps * Ho * Wo)``.

    ``clamp_last`` selects DeformableConvolution's border (read only inside
    ``[0, H) x [0, W)``, the last row/column held), else the modulated form's
    (inside ``(-1, H) x (-1, W)``, missing neighbours are 0).
    """
    n, c, height, width = data.shape
    flat = data.reshape(n, dg, c // dg, height * width)
    h = h.reshape(n, dg, -1)
    w = w.reshape(n, dg, -1)
    if clamp_last:
        valid = (h >= 0) & (h < height) & (w >= 0) & (w < width)
        # From the last row on, MXNet reads the last row and its offset gradient is 0
        # (also at exactly H - 1, where clamp() would still pass a gradient).
        h = torch.where(h >= height - 1, torch.full_like(h, height - 1), h)
        w = torch.where(w >= width - 1, torch.full_like(w, width - 1), w)
    else:
        valid = (h > -1) & (h < height) & (w > -1) & (w < width)
    h0, w0 = torch.floor(h), torch.floor(w)
    lh, lw = h - h0, w - w0
    hh, hw = 1 - lh, 1 - lw
    valid = valid.to(h.dtype)
    out = _corner(flat, h0, w0, hh * hw * valid, height, width)
    out = out + _corner(flat, h0, w0 + 1, hh * lw * valid, height, width)
    out = out + _corner(flat, h0 + 1, w0, lh * hw * valid, height, width)
    return out + _corner(flat, h0 + 1, w0 + 1, lh * lw * valid, height, width)


def _deformable(opname, data, offset, mask, weight, bias, kernel, stride, dilate, pad,
                num_filter, num_group, num_deformable_group, no_bias, layout):
    k, s, d, p = _geometry(opname, kernel, stride, dilate, pad, layout)
    b = None if no_bias else bias
    if b is None and not no_bias:
        raise LayerParameterError(f"{opname}: bias is required unless no_bias=True")
    dg = num_deformable_group
    ho, wo = _check(opname, data, offset, mask, weight, b, k, s, d, p, num_filter, num_group, dg)
    h, w = _positions(offset.to(data.dtype), k, s, d, p, dg, (ho, wo))
    cols = _sample(data, h, w, dg, clamp_last=mask is None)          # (N, dg, Cg, taps*P)
    n, c = data.shape[:2]
    taps = k[0] * k[1]
    cols = cols.reshape(n, dg, c // dg, taps, ho * wo)
    if mask is not None:
        cols = cols * mask.to(data.dtype).reshape(n, dg, 1, taps, ho * wo)
    cols = cols.reshape(n, num_group, (c // num_group) * taps, ho * wo)
    wmat = weight.reshape(num_group, num_filter // num_group, (c // num_group) * taps)
    out = torch.einsum("gfk,ngkp->ngfp", wmat, cols).reshape(n, num_filter, ho, wo)
    if b is not None:
        out = out + b.reshape(1, num_filter, 1, 1)
    return out


@defop(name="_contrib_DeformableConvolution")
def DeformableConvolution(data, offset, weight, bias=None, *, kernel=(), stride=(),  # noqa: N802
                          dilate=(), pad=(), num_filter=0, num_group=1,
                          num_deformable_group=1, workspace=1024, no_bias=False, layout=None):
    """Deformable convolution v1 (Dai et al., 2017): a convolution sampling at learned offsets.

    Parameters
    ----------
    data : NDArray
        ``(batch, channels, height, width)``.
    offset : NDArray
        ``(batch, num_deformable_group * 2 * kernel_h * kernel_w, out_h, out_w)``: per
        deformable group, per kernel tap ``i * kernel_w + j``, the row offset then the
        column offset.
    weight : NDArray
        ``(num_filter, channels / num_group, kernel_h, kernel_w)``.
    bias : NDArray, optional
        ``(num_filter,)``; left out when ``no_bias``.
    kernel : tuple of 2 int
    stride, dilate, pad : tuple of 2 int
        Empty stride/dilate mean 1, empty pad 0.
    num_filter : int
    num_group : int
        Groups of the convolution (input and output channels).
    num_deformable_group : int
        Groups of input channels sharing one set of offsets.
    no_bias : bool
    layout : {None, 'NCHW'}
    workspace
        Accepted for compatibility; no effect.

    Returns
    -------
    NDArray
        ``(batch, num_filter, out_h, out_w)``, ``out = (in + 2 pad - dilate (kernel - 1) - 1)
        // stride + 1``.

    Examples
    --------
    >>> import sparsenet as mx
    >>> x = mx.nd.ones((1, 2, 5, 5))
    >>> y = mx.nd.contrib.DeformableConvolution(x, mx.nd.zeros((1, 18, 3, 3)),
    ...                                         mx.nd.ones((4, 2, 3, 3)), mx.nd.zeros((4,)),
    ...                                         kernel=(3, 3), num_filter=4)
    >>> y.shape, float(y[0, 0, 1, 1].asscalar())
    ((1, 4, 3, 3), 18.0)
    """
    return _deformable(_V1, data, offset, None, weight, bias, kernel, stride, dilate, pad,
                       num_filter, num_group, num_deformable_group, no_bias, layout)


@defop(name="_contrib_ModulatedDeformableConvolution")
def ModulatedDeformableConvolution(data, offset, mask, weight, bias=None, *,  # noqa: N802
                                   kernel=(), stride=(), dilate=(), pad=(), num_filter=0,
                                   num_group=1, num_deformable_group=1, workspace=1024,
                                   no_bias=False, im2col_step=64, layout=None):
    """Modulated deformable convolution v2 (Zhu et al., 2018): offsets plus a per-sample mask.

    Parameters
    ----------
    data : NDArray
        ``(batch, channels, height, width)``.
    offset : NDArray
        ``(batch, num_deformable_group * 2 * kernel_h * kernel_w, out_h, out_w)``, laid out
        as DeformableConvolution's.
    mask : NDArray
        ``(batch, num_deformable_group * kernel_h * kernel_w, out_h, out_w)``: per
        deformable group, per kernel tap, the factor each sample is multiplied by.
    weight : NDArray
        ``(num_filter, channels / num_group, kernel_h, kernel_w)``.
    bias : NDArray, optional
        ``(num_filter,)``; left out when ``no_bias``.
    kernel, stride, dilate, pad : tuple of 2 int
    num_filter, num_group, num_deformable_group : int
    no_bias : bool
    layout : {None, 'NCHW'}
    workspace, im2col_step
        Accepted for compatibility; no effect (MXNet's batch chunking of the columns).

    Returns
    -------
    NDArray
        ``(batch, num_filter, out_h, out_w)``.

    Examples
    --------
    >>> import sparsenet as mx
    >>> x = mx.nd.ones((1, 1, 3, 3))
    >>> y = mx.nd.contrib.ModulatedDeformableConvolution(
    ...     x, mx.nd.zeros((1, 8, 2, 2)), mx.nd.full((1, 4, 2, 2), 0.5),
    ...     mx.nd.ones((1, 1, 2, 2)), kernel=(2, 2), num_filter=1, no_bias=True)
    >>> y.asnumpy()
    array([[[[2., 2.],
             [2., 2.]]]], dtype=float32)
    """
    return _deformable(_V2, data, offset, mask, weight, bias, kernel, stride, dilate, pad,
                       num_filter, num_group, num_deformable_group, no_bias, layout)


def _weight_bias_shapes(data, params):
    k = tuple(int(v) for v in params["kernel"])
    nf, groups = params["num_filter"], params["num_group"]
    weight = (nf, data[1] // groups) + k if data is not None and nf and len(k) == 2 else None
    bias = (nf,) if nf and not params["no_bias"] else None
    return weight, bias


@input_shapes(DeformableConvolution)
def _deformable_input_shapes(shapes, params):
    data, offset, weight, bias = (list(shapes) + [None] * 4)[:4]
    w, b = _weight_bias_shapes(data, params)
    weight, bias = weight or w, bias or b
    return [data, offset, weight, bias][:max(len(shapes), 3 if params["no_bias"] else 4)]


@input_shapes(ModulatedDeformableConvolution)
def _modulated_input_shapes(shapes, params):
    data, offset, mask, weight, bias = (list(shapes) + [None] * 5)[:5]
    w, b = _weight_bias_shapes(data, params)
    weight, bias = weight or w, bias or b
    return [data, offset, mask, weight, bias][:max(len(shapes), 4 if params["no_bias"] else 5)]

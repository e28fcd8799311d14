"""Pooling and padding as operators: Pooling (max, avg, sum, lp; global) and Pad.

``Pooling`` follows MXNet 1.9.1's conventions exactly:

* output size per spatial axis: ``'valid'`` ``1 + (size + 2*pad - kernel) // stride``,
  ``'full'`` ``1 + ceil((size + 2*pad - kernel) / stride)`` (a last window may
  lie wholly in the padding: max gives the dtype's lowest value there, sum and
  avg ``0``),
  ``'same'`` ``ceil(size / stride)`` with the padding it needs split as
  evenly as possible (left gets the smaller half);
* max pooling ignores padding; avg divides by the window clipped to the padded
  input (``count_include_pad``, the default) or to the input itself, and gives
  0 where that count is 0; ``'lp'`` is ``(sum x**p)**(1/p)`` (no absolute value;
  the cube root of ``p_value=3`` keeps the sign);
* ``global_pool`` pools over all spatial axes whatever ``kernel``, ``stride``
  and ``pad`` say, keeping them as size-1 axes.

Both are dense operators: a sparse input falls back (densified, with the
storage-fallback policy's warning or error).

>>> import sparsenet as mx
>>> x = mx.nd.array([[[1.0, 5.0, 2.0, 4.0, 3.0]]])
>>> mx.nd.Pooling(x, kernel=(2,), stride=(2,)).asnumpy()
array([[[5., 4.]]], dtype=float32)
>>> mx.nd.Pooling(x, kernel=(2,), stride=(2,), pooling_convention='full').asnumpy()
array([[[5., 4., 3.]]], dtype=float32)
"""
import torch
import torch.nn.functional as F

from .layer_common import (LayerParameterError, channel_last, expand_tuple, from_channel_first,
                           to_channel_first)
from .registry import defop

__all__ = ["Pooling", "Pad"]

_POOL_TYPES = ("max", "avg", "sum", "lp")
_CONVENTIONS = ("valid", "full", "same")
_PAD_MODES = {"constant": "constant", "edge": "replicate", "reflect": "reflect"}


def _lowest(dtype):
    """The padding value of max pooling: the lowest finite value, as MXNet (not -inf)."""
    return torch.finfo(dtype).min if dtype.is_floating_point else torch.iinfo(dtype).min


def _global(x, pool_type, p_value):
    dims = tuple(range(2, x.dim()))
    if pool_type == "max":
        return x.amax(dim=dims, keepdim=True)
    if pool_type == "avg":
        return x.mean(dim=dims, keepdim=True)
    if pool_type == "sum":
        return x.sum(dim=dims, keepdim=True)
    return _lp_root(x.pow(p_value).sum(dim=dims, keepdim=True), p_value)


def _lp_root(s, p):
    if p == 1:
        return s
    if p == 2:
        return s.sqrt()
    if p == 3:  # a cube root keeps the sign, as MXNet's
        return s.sign() * s.abs().pow(1.0 / 3)
    return s.pow(1.0 / p)


def _window_plan(sizes, kernel, stride, pad, convention):
    """Per axis: ``(out, lo, hi, counted_lo, counted_hi)``.

    ``lo``/``hi`` pad the input so that torch's unpadded pooling gives ``out``
    windows; ``[-counted_lo, size + counted_hi)`` is the region an average
    with ``count_include_pad`` counts.
    """
    plan = []
    for i, (n, k, s, p) in enumerate(zip(sizes, kernel, stride, pad)):
        if convention == "same":
            out = -(-n // s)
            total = max((out - 1) * s + k - n, 0)
            lo, hi = total // 2, total - total // 2
            plan.append((out, lo, hi, lo, hi))
            continue
        if k > n + 2 * p:
            raise LayerParameterError(f"Pooling: kernel size {k} exceeds the input ({n} padded "
                                      f"to {n + 2 * p}) along spatial axis {i}")
        if convention == "valid":
            out = 1 + (n + 2 * p - k) // s
        else:
            out = 1 + -(-(n + 2 * p - k) // s)
        extra = max((out - 1) * s + k - (n + 2 * p), 0)
        plan.append((out, p, p + extra, p, p))
    return plan


def _counts(plan, sizes, kernel, stride, include_pad, like):
    """Number of elements each average divides by, shaped ``(1, 1, *out)``."""
    total = None
    for axis, ((out, lo, _, c_lo, c_hi), n, k, s) in enumerate(zip(plan, sizes, kernel,
                                                                     stride)):
        start = torch.arange(out, device=like.device, dtype=like.dtype) * s - lo
        if include_pad:
            c = torch.minimum(start + k, torch.full_like(start, n + c_hi)) - \
                torch.maximum(start, torch.full_like(start, -c_lo))
        else:
            c = torch.minimum(start + k, torch.full_like(start, n)) - start.clamp(min=0)
        c = c.clamp(min=0)
        shape = [1] * (len(plan) + 2)
        shape[2 + axis] = out
        c = c.reshape(shape)
        total = c if total is None else total * c
    return total


def _sum_pool(x, kernel, stride):
    if x.dim() == 3:  # torch's 1-D average pooling has no divisor_override
        return F.avg_pool2d(x.unsqueeze(2), (1,) + kernel, (1,) + stride,
                            divisor_override=1).squeeze(2)
    pool = F.avg_pool2d if x.dim() == 4 else F.avg_pool3d
    return pool(x, kernel, stride, divisor_override=1)


_MAX_POOL = {3: F.max_pool1d, 4: F.max_pool2d, 5: F.max_pool3d}


@defop
def Pooling(data, *, kernel=(), pool_type="max", global_pool=False,  # noqa: N802
            cudnn_off=False, pooling_convention="valid", stride=(), pad=(), p_value=None,
            count_include_pad=None, layout=None):
    """Max, average, sum or Lp pooling over the 1, 2 or 3 spatial axes of ``data``.

    Parameters
    ----------
    data : NDArray
        ``(batch, channels, *spatial)``, or channels last (``layout``).
    kernel : tuple of int
        Window size; not needed with ``global_pool``.
    pool_type : {'max', 'avg', 'sum', 'lp'}
    global_pool : bool
        Pool over the whole spatial extent (output spatial size 1).
    pooling_convention : {'valid', 'full', 'same'}
        How the output size is rounded (see the module docstring).
    stride, pad : tuple of int
        Empty means stride 1 and no padding.
    p_value : int
        The ``p`` of ``'lp'`` pooling.
    count_include_pad : bool, optional
        Whether average pooling counts padded elements (default True).
    layout : str, optional
        ``NCW``/``NCHW``/``NCDHW`` (the default) or ``NWC``/``NHWC``/``NDHWC``.
    cudnn_off
        Accepted for compatibility; no effect.

    Examples
    --------
    >>> import sparsenet as mx
    >>> x = mx.nd.arange(16).reshape((1, 1, 4, 4))
    >>> mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type='avg').asnumpy()
    array([[[[ 2.5,  4.5],
             [10.5, 12.5]]]], dtype=float32)
    >>> mx.nd.Pooling(x, pool_type='sum', global_pool=True).asnumpy()
    array([[[[120.]]]], dtype=float32)
    """
    nsp = data.dim() - 2
    if not 1 <= nsp <= 3:
        raise LayerParameterError(f"Pooling: data must be 3-D, 4-D or 5-D (batch, channel, "
                                  f"spatial...), got shape {tuple(data.shape)}")
    if pool_type not in _POOL_TYPES:
        raise LayerParameterError(f"Pooling: pool_type must be one of {_POOL_TYPES}, got "
                                  f"{pool_type!r}")
    if pool_type == "lp" and not p_value:
        raise LayerParameterError("Pooling: pool_type='lp' needs p_value (e.g. p_value=2)")
    if pooling_convention not in _CONVENTIONS:
        raise LayerParameterError(f"Pooling: pooling_convention must be one of {_CONVENTIONS}, "
                                  f"got {pooling_convention!r}")
    last = channel_last(layout, nsp, "Pooling")
    x = to_channel_first(data) if last else data
    if global_pool:
        out = _global(x, pool_type, p_value)
        return from_channel_first(out) if last else out
    if not kernel:
        raise LayerParameterError("Pooling: kernel is required unless global_pool=True")
    kernel = tuple(kernel) if isinstance(kernel, (tuple, list)) else (kernel,)
    if len(kernel) != nsp:
        raise LayerParameterError(f"Pooling: a {len(kernel)}-D kernel {kernel} does not fit "
                                  f"{nsp + 2}-D data of shape {tuple(data.shape)}")
    k = expand_tuple(kernel, nsp, 1, "kernel", "Pooling")
    s = expand_tuple(stride, nsp, 1, "stride", "Pooling")
    p = expand_tuple(pad, nsp, 0, "pad", "Pooling")
    if pooling_convention == "same" and any(p):
        raise LayerParameterError(f"Pooling: pooling_convention='same' chooses the padding "
                                  f"itself; pad must be zero, got {tuple(pad)}")
    sizes = tuple(x.shape[2:])
    plan = _window_plan(sizes, k, s, p, pooling_convention)
    pads = []
    for _, lo, hi, _, _ in reversed(plan):
        pads += [lo, hi]
    if pool_type == "max":
        xp = F.pad(x, pads, value=_lowest(x.dtype)) if any(pads) else x
        out = _MAX_POOL[x.dim()](xp, k, s)
    else:
        base = x.pow(p_value) if pool_type == "lp" and p_value != 1 else x
        xp = F.pad(base, pads) if any(pads) else base
        out = _sum_pool(xp, k, s)
        if pool_type == "avg":
            include = True if count_include_pad is None else bool(count_include_pad)
            count = _counts(plan, sizes, k, s, include, out)
            out = torch.where(count > 0, out / count.clamp(min=1), torch.zeros_like(out))
        elif pool_type == "lp":
            out = _lp_root(out, p_value)
    return from_channel_first(out) if last else out


@defop
def Pad(data, *, mode="constant", pad_width=(), constant_value=0.0):  # noqa: N802
    """Pad ``data``: ``pad_width`` is ``(before_0, after_0, before_1, after_1, ...)``.

    ``mode`` is ``'constant'`` (``constant_value``), ``'edge'`` (repeat the edge
    values) or ``'reflect'`` (mirror without repeating the edge; each pad must
    be smaller than the axis). As in MXNet, ``'edge'`` and ``'reflect'`` pad
    only the axes after the first two of a 4-D or 5-D array; ``'constant'``
    pads any axis of any array. Also available as ``pad``.

    >>> import sparsenet as mx
    >>> x = mx.nd.arange(3).reshape((1, 1, 1, 3))
    >>> mx.nd.pad(x, mode='reflect', pad_width=(0, 0, 0, 0, 0, 0, 2, 1)).asnumpy()
    array([[[[2., 1., 0., 1., 2., 1.]]]], dtype=float32)
    """
    if mode not in _PAD_MODES:
        raise LayerParameterError(f"Pad: mode must be 'constant', 'edge' or 'reflect', got "
                                  f"{mode!r}")
    widths = tuple(int(v) for v in pad_width)
    if len(widths) != 2 * data.dim() or any(v < 0 for v in widths):
        raise LayerParameterError(f"Pad: pad_width must hold 2 non-negative ints per axis "
                                  f"({2 * data.dim()} for a {data.dim()}-D input), got "
                                  f"{tuple(pad_width)}")
    if mode != "constant":
        if data.dim() not in (4, 5) or any(widths[:4]):
            raise LayerParameterError(f"Pad: mode={mode!r} pads the spatial axes of 4-D or "
                                      f"5-D data only (the first 4 entries of pad_width must "
                                      f"be 0); got data shape {tuple(data.shape)} and "
                                      f"pad_width {widths}")
        if mode == "reflect":
            for axis in range(2, data.dim()):
                if max(widths[2 * axis], widths[2 * axis + 1]) >= data.shape[axis]:
                    raise LayerParameterError(f"Pad: reflect padding of axis {axis} must be "
                                              f"smaller than its size {data.shape[axis]}, got "
                                              f"{widths[2 * axis:2 * axis + 2]}")
        first = 2
    else:
        first = next((i for i in range(data.dim()) if widths[2 * i] or widths[2 * i + 1]),
                     data.dim())
    torch_pads = []
    for axis in reversed(range(first, data.dim())):
        torch_pads += [widths[2 * axis], widths[2 * axis + 1]]
    if not torch_pads:
        return data.clone()
    if mode == "constant":
        return F.pad(data, torch_pads, mode="constant", value=constant_value)
    return F.pad(data, torch_pads, mode=_PAD_MODES[mode])

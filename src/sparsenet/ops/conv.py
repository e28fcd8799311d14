"""Convolution layers as operators: Convolution and Deconvolution (1-D, 2-D and 3-D).

Both run torch's convolution kernels; they are dense operators, so a sparse
input falls back (densified, with the storage-fallback policy's warning or
error). Parameters are MXNet 1.9.1's: ``kernel``, ``stride``, ``dilate``,
``pad`` (empty tuples mean ones / zeros), ``num_filter``, ``num_group``,
``no_bias`` and ``layout`` (``None`` is ``NCW``/``NCHW``/``NCDHW``; the
channel-last layouts ``NWC``/``NHWC``/``NDHWC``, GPU-only in MXNet, work here
on every device). Weights are ``(num_filter, channels / num_group, *kernel)``
for Convolution and ``(channels, num_filter / num_group, *kernel)`` for
Deconvolution, as in MXNet (channel-last layouts put the weight's channel axis
last as well).

>>> import sparsenet as mx
>>> x = mx.nd.ones((1, 1, 3, 3))
>>> mx.nd.Convolution(x, mx.nd.ones((1, 1, 2, 2)), mx.nd.zeros((1,)), kernel=(2, 2),
...                   num_filter=1).asnumpy()
array([[[[4., 4.],
         [4., 4.]]]], dtype=float32)
"""
import torch.nn.functional as F

from .layer_common import (LayerParameterError, channel_last, expand_tuple, from_channel_first,
                           to_channel_first)
from .registry import defop, input_shapes

__all__ = ["Convolution", "Deconvolution"]

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def _spatial(kernel, data, opname):
    k = tuple(int(v) for v in (kernel if isinstance(kernel, (tuple, list)) else (kernel,)))
    if not 1 <= len(k) <= 3:
        raise LayerParameterError(f"{opname}: kernel must have 1, 2 or 3 entries, got "
                                  f"{kernel!r}")
    if data is not None and data.dim() != len(k) + 2:
        raise LayerParameterError(f"{opname}: a {len(k)}-D kernel {k} needs {len(k) + 2}-D "
                                  f"data, got shape {tuple(data.shape)}")
    return k


def _check_bias(opname, bias, num_filter):
    if bias.dim() != 1 or bias.shape[0] != num_filter:
        raise LayerParameterError(f"{opname}: bias must have shape ({num_filter},), got "
                                  f"{tuple(bias.shape)}")


def _prepare(opname, kernel, data, weight, layout, num_group, num_filter):
    """``(kernel, ndim, channel_last, data, weight, channels)`` in channel-first layout,
    with the group count checked."""
    k = _spatial(kernel, data, opname)
    n = len(k)
    last = channel_last(layout, n, opname)
    x = to_channel_first(data) if last else data
    w = to_channel_first(weight) if last else weight
    c = x.shape[1]
    if num_group < 1 or c % num_group or num_filter % num_group:
        raise LayerParameterError(f"{opname}: num_group={num_group} must divide the input "
                                  f"channels ({c}) and num_filter ({num_filter})")
    return k, n, last, x, w, c


@defop
def Convolution(data, weight, bias=None, *, kernel=(), stride=(), dilate=(), pad=(),  # noqa: N802
                num_filter=0, num_group=1, workspace=1024, no_bias=False, cudnn_tune=None,
                cudnn_off=False, layout=None):
    """N-D convolution (cross-correlation) of ``data`` with ``weight``, plus ``bias``.

    Parameters
    ----------
    data : NDArray
        ``(batch, channels, *spatial)`` (or channels last, see ``layout``).
    weight : NDArray
        ``(num_filter, channels / num_group, *kernel)``.
    bias : NDArray, optional
        ``(num_filter,)``; left out when ``no_bias``.
    kernel, stride, dilate, pad : tuple of int
        One entry per spatial dimension; empty stride/dilate mean 1, empty pad 0.
    num_filter : int
    num_group : int
        Split input and output channels into this many independent groups.
    no_bias : bool
    layout : str, optional
    workspace, cudnn_tune, cudnn_off
        Accepted for compatibility; no effect.

    Examples
    --------
    >>> import sparsenet as mx
    >>> y = mx.nd.Convolution(mx.nd.ones((2, 3, 8)), mx.nd.ones((4, 3, 3)), kernel=(3,),
    ...                       stride=(2,), pad=(1,), num_filter=4, no_bias=True)
    >>> y.shape
    (2, 4, 4)
    """
    k, n, last, x, w, c = _prepare("Convolution", kernel, data, weight, layout, num_group,
                                   num_filter)
    expected = (num_filter, c // num_group) + k
    if tuple(w.shape) != expected:
        if last:
            expected = (num_filter,) + k + (c // num_group,)
        raise LayerParameterError(f"Convolution: weight must have shape {expected} "
                                  f"(num_filter, channels / num_group, *kernel), got "
                                  f"{tuple(weight.shape)}")
    b = None if no_bias or bias is None else bias
    if b is not None:
        _check_bias("Convolution", b, num_filter)
    out = _CONV[n](x, w, b, stride=expand_tuple(stride, n, 1, "stride", "Convolution"),
                   padding=expand_tuple(pad, n, 0, "pad", "Convolution"),
                   dilation=expand_tuple(dilate, n, 1, "dilate", "Convolution"),
                   groups=num_group)
    return from_channel_first(out) if last else out


@input_shapes(Convolution)
def _conv_input_shapes(shapes, params):
    data, weight, bias = (list(shapes) + [None] * 3)[:3]
    k = _spatial(params["kernel"], None, "Convolution")
    nf, groups = params["num_filter"], params["num_group"]
    if data is not None and weight is None and nf:
        if channel_last(params["layout"], len(k), "Convolution"):
            weight = (nf,) + k + (data[-1] // groups,)
        else:
            weight = (nf, data[1] // groups) + k
    if bias is None and nf and not params["no_bias"]:
        bias = (nf,)
    return [data, weight, bias][:max(len(shapes), 2 if params["no_bias"] else 3)]


def _deconv_padding(params, x, k, stride, dilate):
    """``(pad, adj)``: the given ones, or the ones that give ``target_shape``."""
    n = len(k)
    target = tuple(params["target_shape"] or ())
    if not any(target):
        return (expand_tuple(params["pad"], n, 0, "pad", "Deconvolution"),
                expand_tuple(params["adj"], n, 0, "adj", "Deconvolution"))
    target = expand_tuple(target, n, 0, "target_shape", "Deconvolution")
    pad, adj = [], []
    for i in range(n):
        full = stride[i] * (x.shape[2 + i] - 1) + 1 + (k[i] - 1) * dilate[i]
        if full < target[i]:
            raise LayerParameterError(f"Deconvolution: target_shape {target} is too big; "
                                      f"dimension {i} can reach at most {full}")
        extra = full - target[i]
        adj.append(extra % 2)
        pad.append((extra + 1) // 2)
    return tuple(pad), tuple(adj)


@defop
def Deconvolution(data, weight, bias=None, *, kernel=(), stride=(), dilate=(), pad=(),  # noqa: N802
                  adj=(), target_shape=(), num_filter=0, num_group=1, workspace=512,
                  no_bias=True, cudnn_tune=None, cudnn_off=False, layout=None):
    """Transposed convolution (the gradient of Convolution with respect to its input).

    The output size along each spatial axis is
    ``stride * (in - 1) + dilate * (kernel - 1) + 1 - 2 * pad + adj``; with
    ``target_shape`` the pad and adj giving that size are chosen (as MXNet
    does) and ``pad``/``adj`` are ignored. Note ``no_bias`` defaults to True.

    Parameters
    ----------
    data : NDArray
        ``(batch, channels, *spatial)``.
    weight : NDArray
        ``(channels, num_filter / num_group, *kernel)``.
    bias : NDArray, optional
        ``(num_filter,)``, used when ``no_bias=False``.
    kernel, stride, dilate, pad, adj, target_shape : tuple of int
    num_filter, num_group : int
    no_bias : bool
    layout : str, optional
    workspace, cudnn_tune, cudnn_off
        Accepted for compatibility; no effect.

    Examples
    --------
    >>> import sparsenet as mx
    >>> y = mx.nd.Deconvolution(mx.nd.ones((1, 2, 3, 3)), mx.nd.ones((2, 4, 3, 3)),
    ...                         kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 1),
    ...                         num_filter=4)
    >>> y.shape
    (1, 4, 6, 6)
    """
    k, n, last, x, w, c = _prepare("Deconvolution", kernel, data, weight, layout, num_group,
                                   num_filter)
    expected = (c, num_filter // num_group) + k
    if tuple(w.shape) != expected:
        raise LayerParameterError(f"Deconvolution: weight must have shape {expected} "
                                  f"(channels, num_filter / num_group, *kernel), got "
                                  f"{tuple(weight.shape)}")
    stride_t = expand_tuple(stride, n, 1, "stride", "Deconvolution")
    dilate_t = expand_tuple(dilate, n, 1, "dilate", "Deconvolution")
    params = {"pad": pad, "adj": adj, "target_shape": target_shape}
    pad_t, adj_t = _deconv_padding(params, x, k, stride_t, dilate_t)
    b = None if no_bias or bias is None else bias
    if b is not None:
        _check_bias("Deconvolution", b, num_filter)
    out = _CONV_T[n](x, w, b, stride=stride_t, padding=pad_t, output_padding=adj_t,
                     groups=num_group, dilation=dilate_t)
    return from_channel_first(out) if last else out


@input_shapes(Deconvolution)
def _deconv_input_shapes(shapes, params):
    data, weight, bias = (list(shapes) + [None] * 3)[:3]
    k = _spatial(params["kernel"], None, "Deconvolution")
    nf, groups = params["num_filter"], params["num_group"]
    if data is not None and weight is None and nf:
        if channel_last(params["layout"], len(k), "Deconvolution"):
            weight = (data[-1],) + k + (nf // groups,)
        else:
            weight = (data[1], nf // groups) + k
    if bias is None and nf and not params["no_bias"]:
        bias = (nf,)
    return [data, weight, bias][:max(len(shapes), 2 if params["no_bias"] else 3)]

"""Convolution layers: Conv1D-3D, Conv1DTranspose-3DTranspose (pooling: pool_layers.py).

Same constructor arguments, defaults, parameter names (``weight``, ``bias``),
naming (``conv0``, ``conv1``, ...) and deferred shape inference
(``in_channels=0``) as MXNet 1.9.1's Gluon. They run the ``Convolution`` and
``Deconvolution`` operators (torch's kernels).

>>> import sparsenet as mx
>>> conv = mx.gluon.nn.Conv2D(4, kernel_size=3, padding=1)
>>> conv.initialize()
>>> conv(mx.nd.ones((2, 3, 8, 8))).shape, conv.weight.shape
((2, 4, 8, 8), (4, 3, 3, 3))
"""
from numbers import Integral

from ...base import InvalidArgumentError
from ..block import HybridBlock
from .activations import Activation

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
           "Conv3DTranspose"]


def _ntuple(value, n, name):
    if isinstance(value, Integral):
        return (int(value),) * n
    value = tuple(value)
    if len(value) != n:
        raise InvalidArgumentError(f"{name} must be an int or a tuple of {n} ints, got {value!r}")
    return value


def _check_layout(layout, allowed, cls):
    if layout not in allowed:
        raise InvalidArgumentError(f"{cls}: layout must be one of {allowed}, got {layout!r}")


class _Conv(HybridBlock):
    """N-D convolution or transposed convolution (``op_name``), shared by the ConvND classes."""

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", op_name="Convolution", adj=None, prefix=None,
                 params=None):
        super().__init__(prefix=prefix, params=params)
        n = len(kernel_size)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            self._op_name = op_name
            self._kwargs = {
                "kernel": kernel_size, "stride": _ntuple(strides, n, "strides"),
                "dilate": _ntuple(dilation, n, "dilation"),
                "pad": _ntuple(padding, n, "padding"), "num_filter": channels,
                "num_group": groups, "no_bias": not use_bias, "layout": layout}
            if adj is not None:
                self._kwargs["adj"] = adj
            self.weight = self.params.get("weight", shape=self._weight_shape(in_channels),
                                          init=weight_initializer, allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(channels,), init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def _weight_shape(self, in_channels):
        k = tuple(self._kwargs["kernel"])
        groups, channels = self._kwargs["num_group"], self._channels
        last = self._kwargs["layout"].endswith("C")
        if self._op_name == "Convolution":
            outer, inner = channels, in_channels // groups
        else:
            outer, inner = in_channels, channels // groups
        return (outer,) + k + (inner,) if last else (outer, inner) + k

    def infer_shape(self, x, *args):
        c = x.shape[self._kwargs["layout"].find("C")]
        self.weight.shape = self._weight_shape(c)

    def hybrid_forward(self, F, x, weight, bias=None):
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, **self._kwargs)
        else:
            out = op(x, weight, bias, **self._kwargs)
        if self.act is not None:
            out = self.act(out)
        return out

    def _alias(self):
        return "conv"

    def __repr__(self):
        k = self._kwargs
        n = len(k["kernel"])
        s = f"{type(self).__name__}({{mapping}}, kernel_size={k['kernel']}, stride={k['stride']}"
        if k["pad"] != (0,) * n:
            s += f", padding={k['pad']}"
        if k["dilate"] != (1,) * n:
            s += f", dilation={k['dilate']}"
        if k["num_group"] != 1:
            s += f", groups={k['num_group']}"
        if self.bias is None:
            s += ", bias=False"
        if self.act:
            s += f", {self.act}"
        shape = self.weight.shape
        c = shape[-1] if k["layout"].endswith("C") else shape[1]
        return s.format(mapping=f"{c if c else None} -> {shape[0]}") + ")"


def _conv_init(self, cls, n, layouts, channels, kernel_size, strides, padding, dilation, groups,
               layout, activation, use_bias, weight_initializer, bias_initializer, in_channels,
               kwargs, op_name="Convolution", adj=None):
    _check_layout(layout, layouts, cls)
    kernel_size = _ntuple(kernel_size, n, "kernel_size")
    _Conv.__init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                   in_channels, activation, use_bias, weight_initializer, bias_initializer,
                   op_name=op_name, adj=adj, **kwargs)


class Conv1D(_Conv):
    """1-D convolution over ``(batch, channels, width)`` (``layout='NCW'``) or NWC data.

    Parameters
    ----------
    channels : int
        Output channels (filters).
    kernel_size : int or tuple of 1 int
    strides, padding, dilation : int or tuple of 1 int
    groups : int
    layout : {'NCW', 'NWC'}
    activation : str, optional
    use_bias : bool
    weight_initializer, bias_initializer : str or Initializer
    in_channels : int
        0 infers it at the first forward pass.

    Examples
    --------
    >>> import sparsenet as mx
    >>> layer = mx.gluon.nn.Conv1D(4, 3, strides=2, use_bias=False)
    >>> layer
    Conv1D(None -> 4, kernel_size=(3,), stride=(2,), bias=False)
    """

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
                 layout="NCW", activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        _conv_init(self, "Conv1D", 1, ("NCW", "NWC"), channels, kernel_size, strides,
                   padding, dilation, groups, layout, activation, use_bias,
                   weight_initializer, bias_initializer, in_channels, kwargs)


class Conv2D(_Conv):
    """2-D convolution over ``(batch, channels, height, width)`` (``layout='NCHW'``) or NHWC.

    Arguments as :class:`Conv1D`, with 2-tuples.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.Conv2D(8, (3, 5), padding=(1, 2), in_channels=3, activation='relu')
    Conv2D(3 -> 8, kernel_size=(3, 5), stride=(1, 1), padding=(1, 2), Activation(relu))
    """

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, layout="NCHW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
        _conv_init(self, "Conv2D", 2, ("NCHW", "NHWC"), channels, kernel_size, strides,
                   padding, dilation, groups, layout, activation, use_bias,
                   weight_initializer, bias_initializer, in_channels, kwargs)


class Conv3D(_Conv):
    """3-D convolution over ``(batch, channels, depth, height, width)`` (``'NCDHW'``) or NDHWC.

    Arguments as :class:`Conv1D`, with 3-tuples.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.Conv3D(4, (1, 2, 3), in_channels=2).weight.shape
    (4, 2, 1, 2, 3)
    """

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 dilation=(1, 1, 1), groups=1, layout="NCDHW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
        _conv_init(self, "Conv3D", 3, ("NCDHW", "NDHWC"), channels, kernel_size, strides,
                   padding, dilation, groups, layout, activation, use_bias,
                   weight_initializer, bias_initializer, in_channels, kwargs)


class Conv1DTranspose(_Conv):
    """1-D transposed convolution (``Deconvolution``); weight ``(in_channels, channels, k)``.

    ``output_padding`` adds to one side of the output. As in MXNet, the
    representation shows ``weight.shape[1] -> weight.shape[0]``.

    >>> import sparsenet as mx
    >>> layer = mx.gluon.nn.Conv1DTranspose(2, 3, strides=2, output_padding=1)
    >>> layer.initialize()
    >>> layer(mx.nd.ones((1, 4, 5))).shape
    (1, 2, 12)
    """

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                 dilation=1, groups=1, layout="NCW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
        output_padding = _ntuple(output_padding, 1, "output_padding")
        self.outpad = output_padding
        _conv_init(self, "Conv1DTranspose", 1, ("NCW", "NWC"), channels, kernel_size,
                   strides, padding, dilation, groups, layout, activation, use_bias,
                   weight_initializer, bias_initializer, in_channels, kwargs,
                   op_name="Deconvolution", adj=output_padding)


class Conv2DTranspose(_Conv):
    """2-D transposed convolution (``Deconvolution``); arguments as :class:`Conv1DTranspose`.

    >>> import sparsenet as mx
    >>> layer = mx.gluon.nn.Conv2DTranspose(4, 3, strides=2, output_padding=1)
    >>> layer.initialize()
    >>> layer(mx.nd.ones((2, 3, 2, 2))).shape, layer.weight.shape
    ((2, 4, 6, 6), (3, 4, 3, 3))
    >>> layer
    Conv2DTranspose(4 -> 3, kernel_size=(3, 3), stride=(2, 2))
    """

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 output_padding=(0, 0), dilation=(1, 1), groups=1, layout="NCHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        output_padding = _ntuple(output_padding, 2, "output_padding")
        self.outpad = output_padding
        _conv_init(self, "Conv2DTranspose", 2, ("NCHW", "NHWC"), channels, kernel_size,
                   strides, padding, dilation, groups, layout, activation, use_bias,
                   weight_initializer, bias_initializer, in_channels, kwargs,
                   op_name="Deconvolution", adj=output_padding)


class Conv3DTranspose(_Conv):
    """3-D transposed convolution (``Deconvolution``); arguments as :class:`Conv1DTranspose`.

    >>> import sparsenet as mx
    >>> layer = mx.gluon.nn.Conv3DTranspose(2, 2, strides=2, in_channels=3)
    >>> layer.initialize()
    >>> layer(mx.nd.ones((1, 3, 2, 2, 2))).shape
    (1, 2, 4, 4, 4)
    """

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 output_padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, layout="NCDHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        output_padding = _ntuple(output_padding, 3, "output_padding")
        self.outpad = output_padding
        _conv_init(self, "Conv3DTranspose", 3, ("NCDHW", "NDHWC"), channels, kernel_size,
                   strides, padding, dilation, groups, layout, activation, use_bias,
                   weight_initializer, bias_initializer, in_channels, kwargs,
                   op_name="Deconvolution", adj=output_padding)

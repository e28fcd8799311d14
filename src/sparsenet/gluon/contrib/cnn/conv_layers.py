"""Deformable convolution layers: ``DeformableConvolution`` and its modulated form (v2).

As in MXNet 1.9.1's ``gluon.contrib.cnn``, each layer holds two convolutions. An
ordinary ``Convolution`` (parameters ``offset_weight``, ``offset_bias``, zero
initialised, so the layer starts as a plain convolution) computes the sampling
offsets from the input; the deformable operator
(:mod:`sparsenet.ops.deformable_conv`, parameters ``deformable_conv_weight``,
``deformable_conv_bias``) then convolves the input sampled at those offsets.
The modulated layer's offset convolution has a third share of channels, the
mask, passed through ``2 * sigmoid``. Input channels may be deferred
(``in_channels=0``) to the first forward pass; the layers hybridize.

>>> import sparsenet as mx
>>> layer = mx.gluon.contrib.cnn.DeformableConvolution(4, kernel_size=3, padding=1)
>>> layer.initialize()
>>> layer(mx.nd.ones((2, 3, 8, 8))).shape
(2, 4, 8, 8)
>>> [name[len(layer.prefix):] for name in layer.collect_params()]  # doctest: +NORMALIZE_WHITESPACE
['offset_weight', 'offset_bias', 'deformable_conv_weight', 'deformable_conv_bias']
"""
from numbers import Integral

from ....base import InvalidArgumentError
from ...block import HybridBlock
from ...nn.activations import Activation

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _pair(value, name, cls):
    """An int or a sequence of 2 ints as a 2-tuple of ints."""
    if isinstance(value, Integral) and not isinstance(value, bool):
        return (int(value),) * 2
    try:
        out = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        out = ()
    if len(out) != 2:
        raise InvalidArgumentError(f"{cls}: {name} must be an int or a tuple of 2 ints, got "
                                   f"{value!r}")
    return out


class _DeformableBase(HybridBlock):
    """What the two deformable layers share: arguments, the offset convolution, shapes."""

    # offset-convolution channels per deformable group and kernel tap: (dy, dx) [, mask]
    _OFFSET_SHARES = 2

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups,
                 num_deformable_group, layout, use_bias, in_channels, activation,
                 weight_initializer, bias_initializer, offset_weight_initializer,
                 offset_bias_initializer, offset_use_bias, adj, prefix, params):
        super().__init__(prefix=prefix, params=params)
        cls = type(self).__name__
        if layout != "NCHW":
            raise InvalidArgumentError(f"{cls}: layout must be 'NCHW', got {layout!r} (the "
                                       f"deformable operators exist only for NCHW data)")
        if adj:
            raise InvalidArgumentError(f"{cls}: adj is for transposed convolution; a "
                                       f"deformable convolution takes none, got {adj!r}")
        for name, value in (("channels", channels), ("groups", groups),
                            ("num_deformable_group", num_deformable_group)):
            if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
                raise InvalidArgumentError(f"{cls}: {name} must be a positive int, got "
                                           f"{value!r}")
        if isinstance(in_channels, bool) or not isinstance(in_channels, Integral) \
                or in_channels < 0:
            raise InvalidArgumentError(f"{cls}: in_channels must be an int >= 0 (0: inferred "
                                       f"at the first forward pass), got {in_channels!r}")
        kernel = _pair(kernel_size, "kernel_size", cls)
        self._channels = channels
        self._in_channels = in_channels
        self._offset_channels = self._OFFSET_SHARES * kernel[0] * kernel[1] * num_deformable_group
        common = {"kernel": kernel, "stride": _pair(strides, "strides", cls),
                  "dilate": _pair(dilation, "dilation", cls),
                  "pad": _pair(padding, "padding", cls), "num_group": groups,
                  "layout": layout}
        self._kwargs_offset = dict(common, num_filter=self._offset_channels,
                                   no_bias=not offset_use_bias)
        self._kwargs_deformable_conv = dict(common, num_filter=channels,
                                            num_deformable_group=num_deformable_group,
                                            no_bias=not use_bias)
        self._inits = (weight_initializer, bias_initializer, offset_weight_initializer,
                       offset_bias_initializer)
        self._use_bias, self._offset_use_bias = use_bias, offset_use_bias
        self._activation = activation

    def _make_offset_params(self):
        with self.name_scope():
            self.offset_weight = self.params.get(
                "offset_weight", shape=self._weight_shape(self._offset_channels),
                init=self._inits[2], allow_deferred_init=True)
            self.offset_bias = self.params.get(
                "offset_bias", shape=(self._offset_channels,), init=self._inits[3],
                allow_deferred_init=True) if self._offset_use_bias else None

    def _make_conv_params(self):
        with self.name_scope():
            self.deformable_conv_weight = self.params.get(
                "deformable_conv_weight", shape=self._weight_shape(self._channels),
                init=self._inits[0], allow_deferred_init=True)
            self.deformable_conv_bias = self.params.get(
                "deformable_conv_bias", shape=(self._channels,), init=self._inits[1],
                allow_deferred_init=True) if self._use_bias else None

    def _make_activation(self):
        with self.name_scope():
            act = self._activation
            self.act = Activation(act, prefix=act + "_") if act else None

    def _weight_shape(self, num_filter, in_channels=None):
        c = self._in_channels if in_channels is None else in_channels
        return (num_filter, c // self._kwargs_offset["num_group"]) + \
            self._kwargs_offset["kernel"]

    def infer_shape(self, x, *args):
        """Set the weights' input-channel dimension from ``x`` (``(N, C, H, W)``)."""
        c = x.shape[1]
        self.offset_weight.shape = self._weight_shape(self._offset_channels, c)
        self.deformable_conv_weight.shape = self._weight_shape(self._channels, c)

    def _offsets(self, F, x, offset_weight, offset_bias):
        if offset_bias is None:
            return F.Convolution(x, offset_weight, cudnn_off=True, **self._kwargs_offset)
        return F.Convolution(x, offset_weight, offset_bias, cudnn_off=True,
                             **self._kwargs_offset)

    def _finish(self, out):
        return self.act(out) if self.act is not None else out

    def __repr__(self):
        k = self._kwargs_deformable_conv
        s = f"{type(self).__name__}({{mapping}}, kernel_size={k['kernel']}, stride={k['stride']}"
        if k["pad"] != (0, 0):
            s += f", padding={k['pad']}"
        if k["dilate"] != (1, 1):
            s += f", dilation={k['dilate']}"
        if k["num_group"] != 1:
            s += f", groups={k['num_group']}"
        if self.deformable_conv_bias is None:
            s += ", bias=False"
        if self.act is not None:
            s += f", {self.act}"
        shape = self.deformable_conv_weight.shape
        c = shape[1] if shape and shape[1] else None
        return s.format(mapping=f"{c} -> {shape[0]}") + ")"


class DeformableConvolution(_DeformableBase):
    """2-D deformable convolution v1 (Dai et al., 2017), with its offset convolution.

    Parameters
    ----------
    channels : int
        Output channels.
    kernel_size, strides, padding, dilation : int or tuple of 2 int
        Of both convolutions (default ``(1, 1)``, ``(1, 1)``, ``(0, 0)``, ``(1, 1)``).
    groups : int
        Convolution groups (of both convolutions).
    num_deformable_group : int
        Groups of input channels sharing one set of offsets.
    layout : {'NCHW'}
    use_bias : bool
        Whether the deformable convolution has a bias.
    in_channels : int
        0 infers it at the first forward pass.
    activation : str, optional
        Applied to the output (see :class:`~sparsenet.gluon.nn.Activation`).
    weight_initializer, bias_initializer : str or Initializer
        Of the deformable convolution (default: the global initializer, ``'zeros'``).
    offset_weight_initializer, offset_bias_initializer : str or Initializer
        Of the offset convolution (default ``'zeros'``: the layer starts undeformed).
    offset_use_bias : bool
        Whether the offset convolution has a bias.
    op_name, adj, prefix, params
        As MXNet's; ``adj`` must be None.

    Examples
    --------
    >>> import sparsenet as mx
    >>> layer = mx.gluon.contrib.cnn.DeformableConvolution(2, kernel_size=(3, 2), in_channels=3)
    >>> layer.offset_weight.shape, layer.deformable_conv_weight.shape
    ((12, 3, 3, 2), (2, 3, 3, 2))
    """

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout="NCHW",
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True,
                 op_name="DeformableConvolution", adj=None, prefix=None, params=None):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups,
                         num_deformable_group, layout, use_bias, in_channels, activation,
                         weight_initializer, bias_initializer, offset_weight_initializer,
                         offset_bias_initializer, offset_use_bias, adj, prefix, params)
        self._op_name = op_name
        self._make_offset_params()       # MXNet's creation order (it orders the parameters)
        self._make_conv_params()
        self._make_activation()

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight,  # noqa: N803
                       offset_bias=None, deformable_conv_bias=None):
        """Offsets from the offset convolution, then the deformable convolution."""
        offset = self._offsets(F, x, offset_weight, offset_bias)
        if deformable_conv_bias is None:
            out = F.contrib.DeformableConvolution(data=x, offset=offset,
                                                  weight=deformable_conv_weight,
                                                  **self._kwargs_deformable_conv)
        else:
            out = F.contrib.DeformableConvolution(data=x, offset=offset,
                                                  weight=deformable_conv_weight,
                                                  bias=deformable_conv_bias,
                                                  **self._kwargs_deformable_conv)
        return self._finish(out)

    def _alias(self):
        return "deformable_conv"


class ModulatedDeformableConvolution(_DeformableBase):
    """2-D modulated deformable convolution v2 (Zhu et al., 2018), with its offset convolution.

    The offset convolution has ``3 * kernel_h * kernel_w * num_deformable_group``
    channels: the first two thirds are the offsets, the last third the mask
    (``2 * sigmoid(.)``, so 1 at the zero initialisation).

    Parameters
    ----------
    channels : int
    kernel_size, strides, padding, dilation : int or tuple of 2 int
    groups, num_deformable_group : int
    layout : {'NCHW'}
    use_bias : bool
    in_channels : int
    activation : str, optional
    weight_initializer, bias_initializer : str or Initializer
    offset_weight_initializer, offset_bias_initializer : str or Initializer
    offset_use_bias : bool
    op_name, adj, prefix, params
        As :class:`DeformableConvolution`.

    Examples
    --------
    >>> import sparsenet as mx
    >>> layer = mx.gluon.contrib.cnn.ModulatedDeformableConvolution(2, kernel_size=3)
    >>> layer.initialize()
    >>> layer(mx.nd.ones((1, 3, 5, 5))).shape, layer.offset_weight.shape
    ((1, 2, 3, 3), (27, 3, 3, 3))
    """

    _OFFSET_SHARES = 3

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout="NCHW",
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True,
                 op_name="ModulatedDeformableConvolution", adj=None, prefix=None,
                 params=None):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups,
                         num_deformable_group, layout, use_bias, in_channels, activation,
                         weight_initializer, bias_initializer, offset_weight_initializer,
                         offset_bias_initializer, offset_use_bias, adj, prefix, params)
        self._op_name = op_name
        k = self._kwargs_offset["kernel"]
        self.offset_split_index = num_deformable_group * 2 * k[0] * k[1]
        self._make_conv_params()         # MXNet's creation order (it orders the parameters)
        self._make_offset_params()
        self._make_activation()

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight,  # noqa: N803
                       offset_bias=None, deformable_conv_bias=None):
        """Offsets and mask from the offset convolution, then the modulated convolution."""
        both = self._offsets(F, x, offset_weight, offset_bias)
        offset = F.slice_axis(both, axis=1, begin=0, end=self.offset_split_index)
        mask = F.sigmoid(F.slice_axis(both, axis=1, begin=self.offset_split_index, end=None)) * 2
        if deformable_conv_bias is None:
            out = F.contrib.ModulatedDeformableConvolution(data=x, offset=offset, mask=mask,
                                                           weight=deformable_conv_weight,
                                                           **self._kwargs_deformable_conv)
        else:
            out = F.contrib.ModulatedDeformableConvolution(data=x, offset=offset, mask=mask,
                                                           weight=deformable_conv_weight,
                                                           bias=deformable_conv_bias,
                                                           **self._kwargs_deformable_conv)
        return self._finish(out)

    def _alias(self):
        return "modulated_deformable_conv"

"""Convolutional recurrent cells (MXNet 1.9.1's ``gluon.contrib.rnn.conv_rnn_cell``):
``Conv{1,2,3}D{RNN,LSTM,GRU}Cell``.

The dense products of :class:`~sparsenet.gluon.rnn.RNNCell`,
:class:`~sparsenet.gluon.rnn.LSTMCell` and :class:`~sparsenet.gluon.rnn.GRUCell`
become convolutions: ``i2h`` convolves the step input (kernel ``i2h_kernel``, padding
``i2h_pad``, dilation ``i2h_dilate``), ``h2h`` the hidden state (an odd
``h2h_kernel``, padded to keep the state's size). The gates are stacked on the
channel axis in the same orders. ``input_shape`` is one step's shape without the
batch (``(C, W)`` for ``'NCW'``); a 0 channel count is inferred from the first input.

>>> import sparsenet as mx
>>> cell = mx.gluon.contrib.rnn.Conv1DLSTMCell((4, 9), 6, i2h_kernel=3, h2h_kernel=3)
>>> cell.initialize()
>>> out, states = cell.unroll(2, mx.nd.ones((5, 2, 4, 9)), merge_outputs=True)
>>> out.shape, [s.shape for s in states]
((5, 2, 6, 7), [(5, 6, 7), (5, 6, 7)])
"""
import numbers

from ....base import InvalidArgumentError
from ...rnn.basic_cells import HybridRecurrentCell
from ...rnn.sequence_utils import node_name

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell", "Conv1DLSTMCell",
           "Conv2DLSTMCell", "Conv3DLSTMCell", "Conv1DGRUCell", "Conv2DGRUCell",
           "Conv3DGRUCell"]

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _spec(value, dims, what, cls):
    if isinstance(value, numbers.Integral):
        return (int(value),) * dims
    value = tuple(int(v) for v in value)
    if len(value) != dims:
        raise InvalidArgumentError(f"{cls}: for {dims}D convolution, {what} must be an int or "
                                   f"{dims} ints, got {value}")
    return value


class _BaseConvRNNCell(HybridRecurrentCell):
    """What the convolutional cells share: parameters, shapes, the two convolutions."""

    _dims = 1
    _num_gates = 1

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=0,
                 i2h_dilate=1, h2h_dilate=1, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", conv_layout=None, activation="tanh",
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        cls, dims = type(self).__name__, self._dims
        conv_layout = conv_layout or _LAYOUTS[dims][0]
        if conv_layout not in _LAYOUTS[dims]:
            raise InvalidArgumentError(f"{cls}: conv_layout must be one of {_LAYOUTS[dims]}, "
                                       f"got {conv_layout!r}")
        input_shape = tuple(int(s) for s in input_shape)
        if len(input_shape) != dims + 1:
            raise InvalidArgumentError(f"{cls}: input_shape must have {dims + 1} entries "
                                       f"(channels and {dims} spatial, no batch), got "
                                       f"{input_shape}")
        self._hidden_channels = int(hidden_channels)
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        self._i2h_kernel = _spec(i2h_kernel, dims, "i2h_kernel", cls)
        self._i2h_pad = _spec(i2h_pad, dims, "i2h_pad", cls)
        self._i2h_dilate = _spec(i2h_dilate, dims, "i2h_dilate", cls)
        self._h2h_kernel = _spec(h2h_kernel, dims, "h2h_kernel", cls)
        self._h2h_dilate = _spec(h2h_dilate, dims, "h2h_dilate", cls)
        if any(k % 2 == 0 for k in self._h2h_kernel):
            raise InvalidArgumentError(f"{cls}: h2h_kernel must be odd (the state keeps its "
                                       f"size), got {self._h2h_kernel}")
        self._stride = (1,) * dims
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate,
                                                               self._h2h_kernel))
        self._channel_axis = conv_layout.find("C")
        first = self._channel_axis == 1
        in_channels = input_shape[0] if first else input_shape[-1]
        spatial = input_shape[1:] if first else input_shape[:-1]
        out_size = tuple(x + 2 * p - d * (k - 1) if x else 0 for x, k, p, d in
                         zip(spatial, self._i2h_kernel, self._i2h_pad, self._i2h_dilate))
        hc, total = self._hidden_channels, self._hidden_channels * self._num_gates
        if first:
            i2h_shape = (total, in_channels) + self._i2h_kernel
            h2h_shape = (total, hc) + self._h2h_kernel
            self._state_shape = (hc,) + out_size
        else:
            i2h_shape = (total,) + self._i2h_kernel + (in_channels,)
            h2h_shape = (total,) + self._h2h_kernel + (hc,)
            self._state_shape = out_size + (hc,)
        self.i2h_weight = self.params.get("i2h_weight", shape=i2h_shape,
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=h2h_shape,
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(total,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(total,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size,) + self._state_shape,
                 "__layout__": self._conv_layout}] * self._num_states

    _num_states = 1

    def infer_shape(self, inputs, *args):
        """Take the input channel count from the first step input."""
        shape = list(self.i2h_weight.shape)
        axis = 1 if self._channel_axis == 1 else -1
        shape[axis] = inputs.shape[self._channel_axis]
        self.i2h_weight.shape = tuple(shape)

    def __repr__(self):
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channel_axis == 1 else -1]
        return (f"{type(self).__name__}({in_channels if in_channels else None} -> {shape[0]}, "
                f"{self._activation}, {self._conv_layout})")

    def _conv_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                      prefix):
        total = self._hidden_channels * self._num_gates
        i2h = F.Convolution(inputs, i2h_weight, i2h_bias, num_filter=total,
                            kernel=self._i2h_kernel, stride=self._stride, pad=self._i2h_pad,
                            dilate=self._i2h_dilate, layout=self._conv_layout,
                            **node_name(F, prefix + "i2h"))
        h2h = F.Convolution(states[0], h2h_weight, h2h_bias, num_filter=total,
                            kernel=self._h2h_kernel, stride=self._stride, pad=self._h2h_pad,
                            dilate=self._h2h_dilate, layout=self._conv_layout,
                            **node_name(F, prefix + "h2h"))
        return i2h, h2h


class _ConvRNNCell(_BaseConvRNNCell):
    def _alias(self):
        return "conv_rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        output = self._get_activation(F, F.elemwise_add(i2h, h2h), self._activation,
                                      **node_name(F, prefix + "out"))
        return output, [output]


class _ConvLSTMCell(_BaseConvRNNCell):
    _num_gates = 4
    _num_states = 2

    def _alias(self):
        return "conv_lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        g = F.SliceChannel(F.elemwise_add(i2h, h2h), num_outputs=4, axis=self._channel_axis,
                           **node_name(F, prefix + "slice"))
        in_gate = F.Activation(g[0], act_type="sigmoid", **node_name(F, prefix + "i"))
        forget_gate = F.Activation(g[1], act_type="sigmoid", **node_name(F, prefix + "f"))
        in_transform = self._get_activation(F, g[2], self._activation,
                                            **node_name(F, prefix + "c"))
        out_gate = F.Activation(g[3], act_type="sigmoid", **node_name(F, prefix + "o"))
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1]),
                                F.elemwise_mul(in_gate, in_transform),
                                **node_name(F, prefix + "state"))
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, self._activation),
                                **node_name(F, prefix + "out"))
        return next_h, [next_h, next_c]


class _ConvGRUCell(_BaseConvRNNCell):
    _num_gates = 3

    def _alias(self):
        return "conv_gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        i2h_r, i2h_z, i2h_n = F.SliceChannel(i2h, num_outputs=3, axis=self._channel_axis,
                                             **node_name(F, prefix + "i2h_slice"))
        h2h_r, h2h_z, h2h_n = F.SliceChannel(h2h, num_outputs=3, axis=self._channel_axis,
                                             **node_name(F, prefix + "h2h_slice"))
        reset_gate = F.Activation(F.elemwise_add(i2h_r, h2h_r), act_type="sigmoid",
                                  **node_name(F, prefix + "r_act"))
        update_gate = F.Activation(F.elemwise_add(i2h_z, h2h_z), act_type="sigmoid",
                                   **node_name(F, prefix + "z_act"))
        candidate = self._get_activation(F, F.elemwise_add(i2h_n, F.elemwise_mul(reset_gate,
                                                                                 h2h_n)),
                                         self._activation, **node_name(F, prefix + "h_act"))
        keep = F.elemwise_sub(F.ones_like(update_gate), update_gate)
        next_h = F.elemwise_add(F.elemwise_mul(keep, candidate),
                                F.elemwise_mul(update_gate, states[0]),
                                **node_name(F, prefix + "out"))
        return next_h, [next_h]


def _doc(kind, dims):
    layouts = " or ".join(repr(x) for x in _LAYOUTS[dims])
    return (f"{dims}D convolutional {kind} cell (see the module docstring).\n\n"
            f"    Parameters\n    ----------\n"
            f"    input_shape : tuple of int\n        One step's shape without the batch, "
            f"in ``conv_layout``.\n"
            f"    hidden_channels : int\n"
            f"    i2h_kernel, h2h_kernel : int or tuple of {dims} int\n"
            f"    i2h_pad, i2h_dilate, h2h_dilate : int or tuple of {dims} int\n"
            f"    i2h_weight_initializer, h2h_weight_initializer : optional\n"
            f"    i2h_bias_initializer, h2h_bias_initializer : default 'zeros'\n"
            f"    conv_layout : {layouts}\n"
            f"    activation : str or Block, default 'tanh'\n"
            f"    prefix : str, optional\n    params : ParameterDict, optional\n")


class Conv1DRNNCell(_ConvRNNCell):
    __doc__ = _doc("RNN", 1)
    _dims = 1


class Conv2DRNNCell(_ConvRNNCell):
    __doc__ = _doc("RNN", 2)
    _dims = 2


class Conv3DRNNCell(_ConvRNNCell):
    __doc__ = _doc("RNN", 3)
    _dims = 3


class Conv1DLSTMCell(_ConvLSTMCell):
    __doc__ = _doc("LSTM", 1)
    _dims = 1


class Conv2DLSTMCell(_ConvLSTMCell):
    __doc__ = _doc("LSTM", 2)
    _dims = 2


class Conv3DLSTMCell(_ConvLSTMCell):
    __doc__ = _doc("LSTM", 3)
    _dims = 3


class Conv1DGRUCell(_ConvGRUCell):
    __doc__ = _doc("GRU", 1)
    _dims = 1


class Conv2DGRUCell(_ConvGRUCell):
    __doc__ = _doc("GRU", 2)
    _dims = 2


class Conv3DGRUCell(_ConvGRUCell):
    __doc__ = _doc("GRU", 3)
    _dims = 3

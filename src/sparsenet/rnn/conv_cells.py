"""The legacy convolutional cells :class:`ConvRNNCell`, :class:`ConvLSTMCell` and
:class:`ConvGRUCell` (Shi et al., 2015): the ``i2h``/``h2h`` projections are convolutions.

The step math is ``mx.gluon.contrib.rnn``'s convolutional cells', on ``mx.sym`` with
this cell's variables. ``input_shape`` includes the batch (MXNet's legacy convention).

>>> import sparsenet as mx
>>> cell = mx.rnn.ConvGRUCell(input_shape=(1, 3, 8, 6), num_hidden=4, prefix='g_')
>>> out, _ = cell.unroll(2, [mx.sym.var('x0'), mx.sym.var('x1')])
>>> out[1].infer_shape(x0=(1, 3, 8, 6), x1=(1, 3, 8, 6))[1]
[(1, 4, 8, 6)]
"""
import functools

from .. import symbol as sym
from ..base import InvalidArgumentError, UnsupportedError
from ..gluon.contrib.rnn import conv_rnn_cell as gluon_conv
from .base_cell import BaseRNNCell, gluon_step

__all__ = ["BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell", "ConvGRUCell"]

_LEAKY = functools.partial(sym.LeakyReLU, act_type="leaky", slope=0.2)


class BaseConvRNNCell(BaseRNNCell):
    """What the convolutional cells share: the variables, the state shape, the step.

    Parameters
    ----------
    input_shape : tuple of int
        One step's input shape, batch included (``(N, C, H, W)`` for ``'NCHW'``).
    num_hidden : int
        Channels of the state.
    h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride, i2h_pad, i2h_dilate : tuple of int
        ``h2h_kernel`` must be odd (the state keeps its size); ``i2h_stride`` must be 1.
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
    h2h_bias_initializer : Initializer or str, optional
    activation : str or callable
    prefix : str
    params : RNNParams, optional
    conv_layout : str, default 'NCHW'
    """

    _gluon_cells = {}

    def __init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride,
                 i2h_pad, i2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, activation, prefix="",
                 params=None, conv_layout="NCHW"):
        super().__init__(prefix=prefix, params=params)
        dims = len(conv_layout) - 2
        if dims not in self._gluon_cells:
            raise InvalidArgumentError(f"{type(self).__name__}: conv_layout must have 1 to 3 "
                                       f"spatial axes, got {conv_layout!r}")
        if any(int(s) != 1 for s in i2h_stride):
            raise UnsupportedError(f"{type(self).__name__}: i2h_stride other than 1 is not "
                                   f"supported, got {tuple(i2h_stride)}")
        self._num_hidden = num_hidden
        self._conv_layout = conv_layout
        self._activation = activation
        self._step = self._gluon_cells[dims](
            tuple(input_shape)[1:], num_hidden, i2h_kernel, h2h_kernel, i2h_pad=i2h_pad,
            i2h_dilate=i2h_dilate, h2h_dilate=h2h_dilate, conv_layout=conv_layout,
            activation=activation, prefix=prefix)
        self._state_shape = (0,) + tuple(self._step._state_shape)
        self._iW = self.params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self.params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self.params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self.params.get("h2h_bias", init=h2h_bias_initializer)

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}
                for _ in range(self._step._num_states)]

    def __call__(self, inputs, states):
        return gluon_step(self, inputs, states)


def _conv_cell(name, gluon_cells, gate_names, default_prefix, doc):
    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 activation=_LEAKY, prefix=default_prefix, params=None, conv_layout="NCHW"):
        BaseConvRNNCell.__init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate,
                                 i2h_kernel, i2h_stride, i2h_pad, i2h_dilate,
                                 i2h_weight_initializer, h2h_weight_initializer,
                                 i2h_bias_initializer, h2h_bias_initializer, activation,
                                 prefix=prefix, params=params, conv_layout=conv_layout)

    return type(name, (BaseConvRNNCell,), {
        "__init__": __init__, "__doc__": doc, "_gluon_cells": gluon_cells,
        "_gate_names": property(lambda self: gate_names), "__module__": __name__})


_DOC = """Convolutional {kind} cell (defaults: 3x3 kernels, pad 1, LeakyReLU(0.2) activation,
prefix ``'{prefix}'``). Parameters as :class:`BaseConvRNNCell`."""

ConvRNNCell = _conv_cell(
    "ConvRNNCell", {1: gluon_conv.Conv1DRNNCell, 2: gluon_conv.Conv2DRNNCell,
                    3: gluon_conv.Conv3DRNNCell}, ("",), "ConvRNN_",
    _DOC.format(kind="RNN", prefix="ConvRNN_"))
ConvLSTMCell = _conv_cell(
    "ConvLSTMCell", {1: gluon_conv.Conv1DLSTMCell, 2: gluon_conv.Conv2DLSTMCell,
                     3: gluon_conv.Conv3DLSTMCell}, ("_i", "_f", "_c", "_o"), "ConvLSTM_",
    _DOC.format(kind="LSTM", prefix="ConvLSTM_"))
ConvGRUCell = _conv_cell(
    "ConvGRUCell", {1: gluon_conv.Conv1DGRUCell, 2: gluon_conv.Conv2DGRUCell,
                    3: gluon_conv.Conv3DGRUCell}, ("_r", "_z", "_o"), "ConvGRU_",
    _DOC.format(kind="GRU", prefix="ConvGRU_"))

"""Contributed recurrent cells (``mx.gluon.contrib.rnn``): :class:`LSTMPCell` (an LSTM with a
projection), :class:`VariationalDropoutCell` (one dropout mask for all steps), and the
convolutional cells ``Conv{1,2,3}D{RNN,LSTM,GRU}Cell``.

>>> import sparsenet as mx
>>> cell = mx.gluon.contrib.rnn.LSTMPCell(8, 3, input_size=4, prefix='lstmp0_')
>>> cell.initialize()
>>> out, (r, c) = cell.unroll(2, mx.nd.ones((5, 2, 4)), merge_outputs=True)
>>> out.shape, r.shape, c.shape
((5, 2, 3), (5, 3), (5, 8))
"""
from . import lstmp_cell, variational_dropout, conv_rnn_cell, rnn_cell
from .lstmp_cell import LSTMPCell
from .variational_dropout import VariationalDropoutCell
from .conv_rnn_cell import (Conv1DRNNCell, Conv2DRNNCell, Conv3DRNNCell, Conv1DLSTMCell,
                            Conv2DLSTMCell, Conv3DLSTMCell, Conv1DGRUCell, Conv2DGRUCell,
                            Conv3DGRUCell)
from .rnn_cell import dynamic_unroll

__all__ = ["LSTMPCell", "VariationalDropoutCell", "Conv1DRNNCell", "Conv2DRNNCell",
           "Conv3DRNNCell", "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell",
           "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell", "dynamic_unroll"]

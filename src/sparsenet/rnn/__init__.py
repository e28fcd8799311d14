"""MXNet 1.9.1's legacy symbolic recurrent API, ``mx.rnn``: cells that build Symbols
(``RNNCell``, ``LSTMCell``, ``GRUCell``, ``FusedRNNCell``, the containers and modifiers,
the convolutional cells), the text iterator ``BucketSentenceIter`` and the checkpoint
helpers that save the cells' weights unpacked.

The cells' step math is ``mx.gluon.rnn``'s (same gate order, parameter names as MXNet:
``<prefix>i2h_weight``, ...); bind the graph in a Module or an executor.

>>> import sparsenet as mx
>>> stack = mx.rnn.SequentialRNNCell()
>>> for i in range(2):
...     stack.add(mx.rnn.LSTMCell(num_hidden=4, prefix='lstm_l%d_' % i))
>>> outputs, states = stack.unroll(3, inputs=mx.sym.var('data'), merge_outputs=True)
>>> [a for a in outputs.list_arguments() if a.startswith('lstm_l1')]
['lstm_l1_i2h_weight', 'lstm_l1_i2h_bias', 'lstm_l1_h2h_weight', 'lstm_l1_h2h_bias']
"""
from . import io, rnn_cell
from .checkpoint import do_rnn_checkpoint, load_rnn_checkpoint, save_rnn_checkpoint
from .fused import FusedRNN
from .io import BucketSentenceIter, encode_sentences
from .rnn_cell import (BaseConvRNNCell, BaseRNNCell, BidirectionalCell, ConvGRUCell,
                       ConvLSTMCell, ConvRNNCell, DropoutCell, FusedRNNCell, GRUCell, LSTMCell,
                       ModifierCell, ResidualCell, RNNCell, RNNParams, SequentialRNNCell,
                       ZoneoutCell)

__all__ = rnn_cell.__all__ + ["FusedRNN", "encode_sentences", "BucketSentenceIter",
                              "save_rnn_checkpoint", "load_rnn_checkpoint",
                              "do_rnn_checkpoint", "io", "rnn_cell"]

"""Recurrent networks (``mx.gluon.rnn``): one-step cells, their modifiers and stacks, and the
fused layers ``RNN``, ``LSTM`` and ``GRU``, as MXNet 1.9.1 defines them.

>>> import sparsenet as mx
>>> cell = mx.gluon.rnn.GRUCell(3, input_size=2)
>>> cell.initialize()
>>> outputs, states = cell.unroll(4, mx.nd.ones((1, 4, 2)), merge_outputs=True)
>>> outputs.shape
(1, 4, 3)
"""
from . import basic_cells, sequential, cell_modifiers, bidirectional, rnn_cell
from .basic_cells import RecurrentCell, HybridRecurrentCell, RNNCell, LSTMCell, GRUCell
from .sequential import SequentialRNNCell, HybridSequentialRNNCell, DropoutCell
from .cell_modifiers import ModifierCell, ZoneoutCell, ResidualCell
from .bidirectional import BidirectionalCell
from . import rnn_layer
from .rnn_layer import RNN, LSTM, GRU

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell", "RNN", "LSTM", "GRU"]

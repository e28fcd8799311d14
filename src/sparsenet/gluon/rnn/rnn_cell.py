"""MXNet's module ``gluon.rnn.rnn_cell``: every recurrent cell, gathered from the modules that
define them (:mod:`.basic_cells`, :mod:`.sequential`, :mod:`.cell_modifiers`,
:mod:`.bidirectional`).

>>> import sparsenet as mx
>>> mx.gluon.rnn.rnn_cell.LSTMCell is mx.gluon.rnn.LSTMCell
True
"""
from .basic_cells import RecurrentCell, HybridRecurrentCell, RNNCell, LSTMCell, GRUCell
from .sequential import SequentialRNNCell, HybridSequentialRNNCell, DropoutCell
from .cell_modifiers import ModifierCell, ZoneoutCell, ResidualCell
from .bidirectional import BidirectionalCell

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell"]

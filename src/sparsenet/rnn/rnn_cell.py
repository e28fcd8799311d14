"""MXNet's ``mx.rnn.rnn_cell`` module name: the legacy cells, defined in this package's
small modules.

>>> import sparsenet as mx
>>> mx.rnn.rnn_cell.LSTMCell is mx.rnn.LSTMCell
True
"""
from .base_cell import BaseRNNCell
from .basic_cells import GRUCell, LSTMCell, RNNCell
from .containers import BidirectionalCell, SequentialRNNCell
from .conv_cells import ConvGRUCell, ConvLSTMCell, ConvRNNCell, BaseConvRNNCell
from .fused import FusedRNNCell
from .modifiers import DropoutCell, ModifierCell, ResidualCell, ZoneoutCell
from .params import RNNParams

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell",
           "SequentialRNNCell", "BidirectionalCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell",
           "ConvGRUCell"]

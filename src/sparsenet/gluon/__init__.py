"""Gluon: blocks, parameters, losses and the trainer (``mx.gluon``).

>>> import sparsenet as mx
>>> net = mx.gluon.nn.Dense(1, in_units=2)
>>> net.initialize(init='ones')
>>> net(mx.nd.ones((1, 2))).asnumpy()
array([[2.]], dtype=float32)
"""
from . import parameter, block, nn, rnn, loss, utils, contrib, trainer, data
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict
from .block import Block, HybridBlock
from . import symbol_block
from .symbol_block import SymbolBlock
from .trainer import Trainer

__all__ = ["parameter", "block", "nn", "rnn", "loss", "utils", "contrib", "trainer", "data",
           "symbol_block", "Parameter", "Constant", "ParameterDict", "DeferredInitializationError",
           "Block", "HybridBlock", "SymbolBlock", "Trainer"]

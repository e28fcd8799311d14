"""sparsenet for plain PyTorch users: optimizers for sparse gradients, LibSVM data, sparse layers.

>>> import sparsenet.torch
>>> sparsenet.torch.optim.SGD.__mro__[1].__name__
'BridgedOptimizer'
"""
from . import data, nn, optim

__all__ = ["data", "nn", "optim"]

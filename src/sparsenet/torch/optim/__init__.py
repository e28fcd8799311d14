"""``torch.optim`` optimizers that update from sparse gradients lazily, densely or exactly.

Each is a ``torch.optim.Optimizer`` that runs ``sparsenet.optimizer``'s update
rules (see :mod:`sparsenet.torch.optim.base`).

>>> import torch
>>> from sparsenet.torch import optim
>>> sorted(n for n in optim.__all__ if n[0].isupper())
['Adagrad', 'Adam', 'AdamW', 'BridgedOptimizer', 'FTRL', 'RMSprop', 'SGD']
"""
from .base import BridgedOptimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .adagrad import Adagrad
from .rmsprop import RMSprop
from .ftrl import FTRL
from .clip import clip_grad_norm_, clip_grad_value_

__all__ = ["BridgedOptimizer", "SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "FTRL",
           "clip_grad_norm_", "clip_grad_value_"]

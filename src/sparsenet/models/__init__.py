"""Ready sparse models (``mx.models``): Gluon blocks that take CSR batches and give
row_sparse gradients for their ``(num_features, ·)`` tables.

- :class:`LinearModel`: linear, logistic and softmax regression;
- :class:`FactorizationMachine`: order-2 FM with a linear term;
- :class:`WideAndDeep`: a linear part plus an MLP over a ``SparseDense`` layer;
- :class:`MLP`: the seed 000 network.

Each returns raw scores; :mod:`sparsenet.models.tasks` gives the predictions and losses.

>>> import sparsenet as mx
>>> net = mx.models.LinearModel(3, task='regression', weight_initializer='ones')
>>> net.initialize()
>>> net(mx.nd.sparse.csr_matrix(([2.0], [1], [0, 1]), shape=(1, 3))).asnumpy()
array([[2.]], dtype=float32)
"""
from . import tasks
from .fm import FactorizationMachine
from .linear import LinearModel
from .mlp import MLP
from .wide_deep import WideAndDeep

__all__ = ["tasks", "LinearModel", "FactorizationMachine", "WideAndDeep", "MLP"]

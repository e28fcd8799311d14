"""``mx.optimizer``: optimizers that update only the rows a row_sparse gradient touches.

Every optimizer takes ``lazy_update`` in ``{True, False, 'exact'}`` (see
:mod:`sparsenet.optimizer.optimizer`), works on dense and row_sparse weights,
and calls a fused update operator whose storage-type rows pick the kernel.

>>> import sparsenet as mx
>>> type(mx.optimizer.create('sgd', momentum=0.9)).__name__
'SGD'
"""
from .optimizer import Optimizer, Updater, create, get_updater, register
from .sgd import SGD, ccSGD

__all__ = ["Optimizer", "Updater", "create", "get_updater", "register", "SGD", "ccSGD"]

"""``mx.optimizer``: optimizers that update only the rows a row_sparse gradient touches.

Every optimizer takes ``lazy_update`` in ``{True, False, 'exact'}`` (see
:mod:`sparsenet.optimizer.optimizer`), works on dense and row_sparse weights,
and calls a fused update operator whose storage-type rows pick the kernel.

>>> import sparsenet as mx
>>> sorted(mx.optimizer.Optimizer.opt_registry)[:4]
['adadelta', 'adagrad', 'adam', 'adamax']
"""
from .adadelta import AdaDelta
from .adagrad import AdaGrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .dcasgd import DCASGD
from .ftml import FTML
from .ftrl import Ftrl
from .group_adagrad import GroupAdaGrad
from .lamb import LAMB
from .lars import LARS
from .nadam import Nadam
from .nag import NAG
from .optimizer import Optimizer, Updater, create, get_updater, register
from .rmsprop import RMSProp
from .sgd import SGD, ccSGD
from .sgld import SGLD
from .signum import Signum

__all__ = ["Optimizer", "Updater", "create", "get_updater", "register", "SGD", "ccSGD", "NAG",
           "Signum", "SGLD", "DCASGD", "LARS", "Adam", "AdamW", "Adamax", "Nadam", "AdaGrad",
           "GroupAdaGrad", "AdaDelta", "RMSProp", "Ftrl", "FTML", "LAMB"]

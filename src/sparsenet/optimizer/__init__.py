"""``mx.optimizer``: optimizers that update only the rows a row_sparse gradient touches.

Every optimizer takes ``lazy_update`` in ``{True, False, 'exact'}`` (see
:mod:`sparsenet.optimizer.optimizer`), works on dense and row_sparse weights,
and calls a fused update operator whose storage-type rows pick the kernel.

>>> import sparsenet as mx
>>> sorted(mx.optimizer.Optimizer.opt_registry)[:4]
['adadelta', 'adagrad', 'adam', 'adamax']
"""
from .optimizer import Optimizer, Updater, create, get_updater, register
from .sgd import SGD, ccSGD
from .nag import NAG
from .signum import Signum
from .sgld import SGLD
from .dcasgd import DCASGD
from .lars import LARS
from .adam import Adam
from .adamw import AdamW
from .adamax import Adamax
from .nadam import Nadam
from .adagrad import AdaGrad
from .group_adagrad import GroupAdaGrad
from .adadelta import AdaDelta
from .rmsprop import RMSProp
from .ftrl import Ftrl
from .ftml import FTML
from .lamb import LAMB

__all__ = ["Optimizer", "Updater", "create", "get_updater", "register", "SGD", "ccSGD", "NAG",
           "Signum", "SGLD", "DCASGD", "LARS", "Adam", "AdamW", "Adamax", "Nadam", "AdaGrad",
           "GroupAdaGrad", "AdaDelta", "RMSProp", "Ftrl", "FTML", "LAMB"]

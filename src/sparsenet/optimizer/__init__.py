"""``mx.optimizer``: optimizers that update only the rows a row_sparse gradient touches.

Every optimizer takes ``lazy_update`` in ``{True, False, 'exact'}`` (see
:mod:`sparsenet.optimizer.optimizer`), works on dense and row_sparse weights,
and calls a fused update operator whose storage-type rows pick the kernel.

==============  ============================  ==========================================
optimizer       lazy rule (row_sparse grad)   ``lazy_update='exact'``
==============  ============================  ==========================================
SGD             MXNet's                       closed form
NAG             row-restricted                closed form
Signum          row-restricted                closed form if ``wd == 0`` or no momentum
SGLD            row-restricted (noise too)    none (fresh noise per step): standard
DCASGD          row-restricted                closed form
LARS            MXNet's (full-weight norms)   none (needs every row's norm): standard
Adam            MXNet's (= torch SparseAdam)  closed form if ``wd == 0``
AdamW           row-restricted                closed form
Adamax          row-restricted                closed form if ``wd == 0``
Nadam           row-restricted                closed form if ``wd == 0``
AdaGrad         MXNet's (+ ``wd``)            closed form
GroupAdaGrad    MXNet's                       closed form (a skipped step is a no-op)
AdaDelta        row-restricted                closed form
RMSProp         row-restricted                closed form if ``wd == 0`` (centered: and
                                              no ``clip_weights``)
Ftrl            MXNet's (rsp weight)          closed form
FTML            row-restricted                closed form if ``wd == 0``
LAMB            row-restricted norms          none (trust ratio needs every row): standard
==============  ============================  ==========================================

"standard": runs as ``lazy_update=False``.

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

__all__ = ["DCASGD", "FTML", "LAMB", "LARS", "NAG", "SGD", "SGLD", "AdaDelta", "AdaGrad", "Adam",
           "AdamW", "Adamax", "Ftrl", "GroupAdaGrad", "Nadam", "Optimizer", "RMSProp", "Signum",
           "Updater", "ccSGD", "create", "get_updater", "register"]

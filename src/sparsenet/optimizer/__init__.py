"""``mx.optimizer``: optimizers that update only the rows a row_sparse gradient touches.

Every optimizer takes ``lazy_update`` in ``{True, False, 'exact'}`` (see
:mod:`sparsenet.optimizer.optimizer`), works on dense and row_sparse weights,
and calls a fused update operator whose storage-type rows pick the kernel. The
default is MXNet 1.9.1's behaviour: lazy where MXNet updates lazily, standard
(every row, as MXNet's densified gradient gives) where MXNet densifies.

==============  =======  ============================  ==================================
optimizer       default  lazy rule (``True``)           ``lazy_update='exact'``
==============  =======  ============================  ==================================
SGD             True     MXNet's                       closed form
NAG             False    row-restricted                closed form
Signum          False    row-restricted                closed form if ``wd == 0`` or no
                                                       momentum
SGLD            False    row-restricted (noise too)    none (fresh noise per step):
                                                       standard
DCASGD          False    row-restricted                closed form
LARS            True     MXNet's (full-weight norms)   none (needs every row's norm):
                                                       standard
Adam            True     MXNet's (= torch SparseAdam)  closed form if ``wd == 0``
AdamW           False    row-restricted                closed form
Adamax          False    row-restricted                closed form if ``wd == 0``
Nadam           False    row-restricted                closed form if ``wd == 0``
AdaGrad         True     MXNet's (+ ``wd``)            closed form
GroupAdaGrad    True     MXNet's                       closed form (a skipped step is a
                                                       no-op)
AdaDelta        False    row-restricted                closed form
RMSProp         False    row-restricted                closed form if ``wd == 0`` (centered:
                                                       and no ``clip_weights``)
Ftrl            True     MXNet's (rsp weight)          closed form
FTML            False    row-restricted                closed form if ``wd == 0``
LAMB            False    row-restricted norms          none (trust ratio needs every row):
                                                       standard
LBSGD           True     MXNet's (SGD's, on the        closed form (SGD's); ``'lars'``
                         summed gradient)              warmup: standard
Test            False    the gradient's rows (state    closed form
                         copy: those rows only)
==============  =======  ============================  ==================================

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
from .lbsgd import LBSGD
from .nadam import Nadam
from .nag import NAG
from .optimizer import Optimizer, create, register
from .rmsprop import RMSProp
from .sgd import SGD, ccSGD
from .sgld import SGLD
from .updater import Updater, get_updater
from .signum import Signum
from .test import Test

__all__ = ["DCASGD", "FTML", "LAMB", "LARS", "LBSGD", "NAG", "SGD", "SGLD", "AdaDelta", "AdaGrad",
           "Adam", "AdamW", "Adamax", "Ftrl", "GroupAdaGrad", "Nadam", "Optimizer", "RMSProp",
           "Signum", "Test", "Updater", "ccSGD", "create", "get_updater", "register"]

"""The update operators, one file per optimizer family: each holds the registry operators,
their storage-type rule rows and the kernel variants the rows' implementations pick from
(native CPU rows, torch index ops, torch's fused kernels).

Where is a rule? ``<family>.py``, e.g. the lazy Adam rule is ``adam.py``'s ``_adam_lazy``
(the row's implementation), with its variants ``_adam_lazy_native`` and
``_adam_lazy_torch``. What every update operator shares (the operator class, the generic
rows and kernels, the storage fallback) is in :mod:`~sparsenet.ops.update_rules.core`.

>>> from sparsenet.ops import update_rules
>>> update_rules.adam_update.plan(('default', 'row_sparse', 'default', 'default'),
...                               lazy_update=True).__name__
'_adam_lazy'
"""
from . import core
from .adadelta import adadelta_update
from .adagrad import adagrad_update, group_adagrad_update
from .adam import adam_update, adamax_update, adamw_update, nadam_momentum, nadam_update
from .core import UpdateOperator
from .dcasgd import dcasgd_mom_update, dcasgd_update
from .ftrl import ftml_d, ftml_update, ftrl_update, ftrl_weight
from .lamb import lamb_update_phase1, lamb_update_phase2
from .nag import mp_nag_mom_update, nag_mom_update
from .rmsprop import rmsprop_update, rmspropalex_update
from .sgd import mp_sgd_mom_update, mp_sgd_update, sgd_mom_update, sgd_update
from .sgld import sgld_update
from .signum import signsgd_update, signum_update
from .test import test_update

__all__ = ["core", "UpdateOperator", "adadelta_update", "adagrad_update", "group_adagrad_update",
           "adam_update", "adamax_update", "adamw_update", "nadam_update", "nadam_momentum",
           "dcasgd_update", "dcasgd_mom_update", "ftrl_update", "ftml_update", "ftrl_weight",
           "ftml_d", "lamb_update_phase1", "lamb_update_phase2", "nag_mom_update",
           "mp_nag_mom_update", "rmsprop_update", "rmspropalex_update", "sgd_update",
           "sgd_mom_update", "mp_sgd_update", "mp_sgd_mom_update", "sgld_update",
           "signsgd_update", "signum_update", "test_update"]

"""``mx.sym._internal``: the symbolic forms of the operators ``mx.nd._internal`` names.

The table is read from ``mx.nd._internal``, so both namespaces name the same
operators (``_square_sum``, ``_plus_scalar``, ``_scatter_plus_scalar``,
``_Maximum``, ...); storage types come from the same registry rows. MXNet's
factorization-machine example computes the squared row norms of a
row_sparse weight this way:

>>> import sparsenet as mx
>>> v = mx.sym.var('v', stype='row_sparse')
>>> s = mx.sym._internal._square_sum(data=v, axis=1, keepdims=True)
>>> s.infer_storage_type(v='row_sparse')[1]
['row_sparse']
"""
from ..ndarray import _internal as _nd_internal
from ..ops.registry import Operator
from .op import SYMBOL_OPS


def _internal_table():
    table = {}
    for alias in _nd_internal.__all__:
        obj = getattr(_nd_internal, alias)
        if isinstance(obj, Operator):
            table[alias] = SYMBOL_OPS[obj.name]
    return table


INTERNAL_SYMBOL_OPS = _internal_table()
globals().update(INTERNAL_SYMBOL_OPS)

__all__ = sorted(INTERNAL_SYMBOL_OPS)

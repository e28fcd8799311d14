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
from .op import symbols_of


INTERNAL_SYMBOL_OPS = symbols_of(_nd_internal)
globals().update(INTERNAL_SYMBOL_OPS)

__all__ = sorted(INTERNAL_SYMBOL_OPS)

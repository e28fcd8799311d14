"""``mx.sym.sparse``: the symbolic operators ``mx.nd.sparse`` offers (same objects as ``mx.sym``).

The namespace is filled by a loop over :data:`sparsenet.symbol.op.SPARSE_SYMBOL_OPS`
(built from the operator registry); storage types are decided by the same rule
rows whichever namespace an operator is reached through.

>>> import sparsenet as mx
>>> e = mx.sym.sparse.negative(mx.sym.var('b', stype='csr'))
>>> e.infer_storage_type()
(['csr'], ['csr'], [])
"""
from .op import SPARSE_SYMBOL_OPS

globals().update(SPARSE_SYMBOL_OPS)

__all__ = sorted(SPARSE_SYMBOL_OPS)

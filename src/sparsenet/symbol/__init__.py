"""``mx.sym`` / ``mx.symbol``: symbolic graphs over the operator registry, and their executors.

Every registry operator is available here (and the sparse ones under
``mx.sym.sparse``) as a :class:`~sparsenet.symbol.op.SymbolOperator`; the
table is built from the registry rows, the same rows ``mx.nd`` runs.

>>> import sparsenet as mx
>>> x = mx.sym.var('x', stype='csr')
>>> w = mx.sym.var('w', stype='row_sparse')
>>> y = mx.sym.dot(x, w)
>>> exe = y.simple_bind(mx.cpu(), x=(2, 3), w=(3, 1))
>>> exe.grad_dict['w'].stype
'row_sparse'
"""
from . import name, op, sparse, contrib, _internal
from .symbol import Symbol, Variable, var, Group, load, load_json, fromjson
from .op import SymbolOperator, maximum, minimum, power, pow, hypot
from .executor import Executor
from .creation import zeros, ones

globals().update(op.SYMBOL_OPS)

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json", "fromjson", "Executor",
           "SymbolOperator", "maximum", "minimum", "power", "pow", "hypot", "sparse", "contrib",
           "name", "op", "zeros", "ones"] + sorted(op.SYMBOL_OPS)

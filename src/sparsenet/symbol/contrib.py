"""``mx.sym.contrib``: the symbolic forms of the registry operators ``mx.nd.contrib`` offers.

The table is read from ``mx.nd.contrib``, so both namespaces always name the
same operators (``SparseEmbedding`` is the registry's ``_contrib_SparseEmbedding``).

>>> import sparsenet as mx
>>> e = mx.sym.contrib.SparseEmbedding(mx.sym.var('ids'), input_dim=10, output_dim=4)
>>> e.name.startswith('sparseembedding'), e.list_arguments()[1].endswith('_weight')
(True, True)
"""
from ..ndarray import contrib as _nd_contrib
from .control_flow import foreach
from .op import symbols_of


CONTRIB_SYMBOL_OPS = symbols_of(_nd_contrib)
globals().update(CONTRIB_SYMBOL_OPS)

__all__ = sorted(CONTRIB_SYMBOL_OPS) + ["foreach"]

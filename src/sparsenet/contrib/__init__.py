"""``mx.contrib``: MXNet 1.9.1's contrib namespace, for the parts sparsenet has.

- ``mx.contrib.ndarray`` / ``mx.contrib.nd``: the contrib operators on arrays
  (the same module as ``mx.nd.contrib``: ``SparseEmbedding``, ...).
- ``mx.contrib.symbol`` / ``mx.contrib.sym``: the same operators on symbols
  (``mx.sym.contrib``).
- ``mx.contrib.amp``: importable, as MXNet's own test helpers import it; its
  op-list mixed precision is not provided (each entry point raises
  :class:`~sparsenet.base.UnsupportedError` naming what to use instead).

>>> import sparsenet as mx
>>> mx.contrib.ndarray is mx.nd.contrib, mx.contrib.symbol is mx.sym.contrib
(True, True)
"""
from ..ndarray import contrib as ndarray
from ..symbol import contrib as symbol
from . import amp

nd = ndarray
sym = symbol

__all__ = ["ndarray", "nd", "symbol", "sym", "amp"]

"""Identity checks: do two arrays share memory, do two graphs have one structure.

>>> import sparsenet as mx
>>> x = mx.nd.ones((2, 3))
>>> same_array(x, x[:]), same_array(x, x.copy())
(True, False)
"""
import json

import numpy as np
import torch

__all__ = ["same_array", "same_symbol_structure"]


def _values(arr):
    """The torch tensor holding an array's values (the stored values of a sparse array)."""
    return arr._t if arr.stype == "default" else arr._parts()[0]


def _equal(a, b):
    return a.shape == b.shape and np.array_equal(a.asnumpy(), b.asnumpy())


def same_array(array1, array2):
    """True if the two arrays share memory: adding 1 to ``array1`` changes ``array2`` alike.

    ``array1`` is restored exactly afterwards. Arrays of different shapes
    are never the same array.

    Parameters
    ----------
    array1, array2 : NDArray
        Arrays of any storage type (a sparse array's stored values are probed).

    Examples
    --------
    >>> import sparsenet as mx
    >>> a = mx.nd.ones((4,))
    >>> same_array(a, a[:]), same_array(a, a.reshape((2, 2)))
    (True, False)
    """
    if not _equal(array1, array2):
        return False
    values = _values(array1)
    with torch.no_grad():
        saved = values.clone()
        values.add_(1)
        try:
            return _equal(array1, array2)
        finally:
            values.copy_(saved)


def same_symbol_structure(sym1, sym2):
    """True if the graphs run the same operator at every node position (names and parameters aside).

    >>> import sparsenet as mx
    >>> same_symbol_structure(mx.sym.var('a') + 1, mx.sym.var('b') + 2)
    True
    >>> same_symbol_structure(mx.sym.var('a') + 1, mx.sym.var('b') * 2)
    False
    """
    nodes1 = json.loads(sym1.tojson())["nodes"]
    nodes2 = json.loads(sym2.tojson())["nodes"]
    return all(n1["op"] == n2["op"] for n1, n2 in zip(nodes1, nodes2))

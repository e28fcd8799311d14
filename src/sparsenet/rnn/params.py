"""``RNNParams``: the variables of a legacy symbolic cell, shared between cells by name.

>>> import sparsenet as mx
>>> params = mx.rnn.RNNParams('lstm_')
>>> params.get('i2h_weight') is params.get('i2h_weight')
True
>>> params.get('i2h_weight').name
'lstm_i2h_weight'
"""
from .. import symbol as sym

__all__ = ["RNNParams"]


class RNNParams:
    """Container of the variables (``mx.sym.Variable``) of one or more cells.

    Parameters
    ----------
    prefix : str, default ''
        Prepended to every variable's name.
    """

    def __init__(self, prefix=""):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable ``prefix + name``, created (``mx.sym.Variable(..., **kwargs)``) if new.

        Parameters
        ----------
        name : str
            The name after the prefix (``'i2h_weight'``).
        **kwargs
            More arguments of ``mx.sym.Variable`` (``init``, ``shape``, ...) when it is created.

        Returns
        -------
        Symbol
        """
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = sym.Variable(name, **kwargs)
        return self._params[name]

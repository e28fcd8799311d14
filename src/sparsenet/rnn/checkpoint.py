"""Checkpoints of models built with legacy cells: the weights saved unpacked (one array
per gate, readable by every cell layout) and packed again on loading.

>>> import os, tempfile, sparsenet as mx
>>> cell = mx.rnn.LSTMCell(2, prefix='l0_')
>>> args = {'l0_i2h_weight': mx.nd.ones((8, 3)), 'l0_i2h_bias': mx.nd.zeros((8,)),
...         'l0_h2h_weight': mx.nd.ones((8, 2)), 'l0_h2h_bias': mx.nd.zeros((8,))}
>>> prefix = os.path.join(tempfile.mkdtemp(), 'm')
>>> out, _ = cell.unroll(2, mx.sym.var('data'))
>>> save_rnn_checkpoint(cell, prefix, 1, mx.sym.Group(out), args, {})
>>> sorted(mx.nd.load(prefix + '-0001.params'))[:2]
['arg:l0_h2h_c_bias', 'arg:l0_h2h_c_weight']
>>> _, arg, _ = load_rnn_checkpoint(cell, prefix, 1)
>>> sorted(arg), arg['l0_i2h_weight'].shape
(['l0_h2h_bias', 'l0_h2h_weight', 'l0_i2h_bias', 'l0_i2h_weight'], (8, 3))
"""
from ..model import load_checkpoint, save_checkpoint
from .base_cell import BaseRNNCell

__all__ = ["save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint"]


def _as_cells(cells):
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """Save ``<prefix>-symbol.json`` and ``<prefix>-<epoch>.params`` with the cells' weights
    unpacked (``arg_params`` is not modified).

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
        The cells of the model.
    prefix : str
    epoch : int
    symbol : Symbol or None
    arg_params, aux_params : dict of str to NDArray
    """
    for cell in _as_cells(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """Load a checkpoint saved by :func:`save_rnn_checkpoint`, the cells' weights packed.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
    prefix : str
    epoch : int

    Returns
    -------
    symbol : Symbol
    arg_params, aux_params : dict of str to NDArray
    """
    symbol, arg, aux = load_checkpoint(prefix, epoch)
    for cell in _as_cells(cells):
        arg = cell.pack_weights(arg)
    return symbol, arg, aux


def do_rnn_checkpoint(cells, prefix, period=1):
    """A ``Module.fit`` epoch-end callback that runs :func:`save_rnn_checkpoint` every
    ``period`` epochs.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
    prefix : str
    period : int, default 1

    Returns
    -------
    callable
        ``callback(iter_no, sym, arg, aux)``.
    """
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback

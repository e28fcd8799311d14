"""Checkpoints of a symbol and its parameters (``mx.model``), and ``BatchEndParam``.

A checkpoint is two files: ``<prefix>-symbol.json`` (the graph) and
``<prefix>-<epoch:04d>.params`` (arrays keyed ``arg:<name>`` / ``aux:<name>``,
storage types kept: a row_sparse weight is stored as its indices and rows).
Both are written atomically, so a crash never leaves a truncated file.

>>> import os, tempfile, sparsenet as mx
>>> prefix = os.path.join(tempfile.mkdtemp(), 'lin')
>>> net = mx.sym.dot(mx.sym.var('data', stype='csr'), mx.sym.var('w', stype='row_sparse'))
>>> w = mx.nd.ones((3, 1)).tostype('row_sparse')
>>> mx.model.save_checkpoint(prefix, 1, net, {'w': w}, {})
>>> sym, args, auxs = mx.model.load_checkpoint(prefix, 1)
>>> sym.list_arguments(), args['w'].stype
(['data', 'w'], 'row_sparse')
"""
import collections
import os

from .atomic import atomic_write
from .base import FileFormatError
from .ndarray import serialization
from .symbol.symbol import load as load_symbol

__all__ = ["BatchEndParam", "save_checkpoint", "load_checkpoint", "load_params",
           "checkpoint_paths"]

BatchEndParam = collections.namedtuple("BatchEndParams",
                                       ["epoch", "nbatch", "eval_metric", "locals"])


def checkpoint_paths(prefix, epoch):
    """``(symbol file, params file)`` of checkpoint ``epoch``.

    >>> checkpoint_paths('run/net', 3)
    ('run/net-symbol.json', 'run/net-0003.params')
    """
    return f"{prefix}-symbol.json", f"{prefix}-{int(epoch):04d}.params"


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Write ``<prefix>-symbol.json`` (when ``symbol`` is given) and ``<prefix>-<epoch>.params``.

    Parameters
    ----------
    prefix : str
    epoch : int
    symbol : Symbol or None
    arg_params, aux_params : dict of str to NDArray

    Examples
    --------
    >>> import os, tempfile, sparsenet as mx
    >>> prefix = os.path.join(tempfile.mkdtemp(), 'net')
    >>> save_checkpoint(prefix, 2, mx.sym.var('w') * 2, {'w': mx.nd.ones((1,))}, {})
    >>> sorted(os.listdir(os.path.dirname(prefix)))
    ['net-0002.params', 'net-symbol.json']
    """
    sym_path, params_path = checkpoint_paths(prefix, epoch)
    # everything is built (and checked) before anything is written, and the parameters are
    # written first: a failure never leaves the shared symbol file paired with older params
    text = symbol.tojson().encode("utf-8") if symbol is not None else None
    data = {f"arg:{k}": v for k, v in (arg_params or {}).items()}
    data.update({f"aux:{k}": v for k, v in (aux_params or {}).items()})
    serialization.save(params_path, data)
    if text is not None:
        atomic_write(sym_path, lambda f: f.write(text))


def load_params(prefix, epoch):
    """``(arg_params, aux_params)`` from ``<prefix>-<epoch>.params``.

    >>> import os, tempfile, sparsenet as mx
    >>> prefix = os.path.join(tempfile.mkdtemp(), 'net')
    >>> save_checkpoint(prefix, 1, None, {'w': mx.nd.ones((1,))}, {})
    >>> load_params(prefix, 1)[0]['w'].asnumpy()
    array([1.], dtype=float32)
    """
    _, params_path = checkpoint_paths(prefix, epoch)
    return split_params(serialization.load(params_path), params_path)


def split_params(saved, where):
    """Split a ``{'arg:x': ..., 'aux:y': ...}`` dict; reject other keys naming ``where``.

    >>> split_params({'arg:w': 1, 'aux:m': 2}, 'f.params')
    ({'w': 1}, {'m': 2})
    """
    if not isinstance(saved, dict):
        raise FileFormatError(f"{where}: expected a dict of parameters, found a list")
    arg_params, aux_params = {}, {}
    for key, value in saved.items():
        kind, _, name = key.partition(":")
        if kind == "arg" and name:
            arg_params[name] = value
        elif kind == "aux" and name:
            aux_params[name] = value
        else:
            raise FileFormatError(f"{where}: key {key!r} is neither 'arg:<name>' nor "
                                  f"'aux:<name>'")
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """``(symbol, arg_params, aux_params)`` saved by :func:`save_checkpoint`.

    >>> import os, tempfile, sparsenet as mx
    >>> prefix = os.path.join(tempfile.mkdtemp(), 'net')
    >>> save_checkpoint(prefix, 1, mx.sym.var('w') * 2, {'w': mx.nd.ones((1,))}, {})
    >>> sym, args, aux = load_checkpoint(prefix, 1)
    >>> sym.list_arguments(), list(args), aux
    (['w'], ['w'], {})
    """
    sym_path, _ = checkpoint_paths(prefix, epoch)
    if not os.path.exists(sym_path):
        raise FileNotFoundError(f"no such file: '{sym_path}' (checkpoint prefix {prefix!r})")
    symbol = load_symbol(sym_path)
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params

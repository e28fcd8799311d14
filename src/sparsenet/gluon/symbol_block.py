""":class:`SymbolBlock`: a Gluon block that computes a given Symbol.

The symbol's arguments other than the inputs become the block's Parameters; the
block runs its graph through :class:`~sparsenet.gluon.hybrid.CachedGraph`, as a
hybridized block does. :meth:`SymbolBlock.imports` loads a block ``export()``-ed
by a hybridized block.

>>> import sparsenet as mx
>>> x = mx.sym.var('data')
>>> blk = mx.gluon.SymbolBlock(2 * x, x)
>>> blk(mx.nd.ones((1, 2))).asnumpy()
array([[2., 2.]], dtype=float32)
"""
import numpy as np

from .. import symbol as sym_mod
from ..base import InvalidArgumentTypeError, ParameterAssertionError, ShapeError
from ..symbol.symbol import Group, Symbol, Variable
from .block import HybridBlock
from .hybrid import CachedGraph, params_ready
from .parameter import ParameterDict

__all__ = ["SymbolBlock"]


_CODE_STYPE = {"0": "default", "1": "row_sparse", "2": "csr"}


class SymbolBlock(HybridBlock):
    """A block computing a Symbol: ``outputs`` from ``inputs``; other arguments are Parameters.

    Parameters
    ----------
    outputs : Symbol or list of Symbol
    inputs : Symbol or list of Symbol
        The Variables fed by the call's inputs, in order.
    params : ParameterDict, optional
        Parameters to share (by name).

    Examples
    --------
    >>> import sparsenet as mx
    >>> x = mx.sym.var('data')
    >>> blk = mx.gluon.SymbolBlock(mx.sym.FullyConnected(x, num_hidden=2, name='fc'), x)
    >>> blk.initialize(mx.init.One())
    >>> blk(mx.nd.ones((1, 3))).asnumpy()
    array([[3., 3.]], dtype=float32)
    """

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix="", params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        outputs = Group(list(outputs)) if isinstance(outputs, (list, tuple)) else outputs
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        for x in inputs:
            if not isinstance(x, Symbol) or len(x) != 1 or x._outputs[0][0].op is not None:
                raise InvalidArgumentTypeError(f"SymbolBlock: inputs must be Variables, got {x!r}")
        input_names = [x.name for x in inputs]
        nodes = {n.name: n for n in outputs._input_nodes()}
        aux_names = outputs.list_auxiliary_states()
        for name in outputs.list_arguments() + aux_names:
            if name in input_names:
                continue
            node = nodes[name]
            attrs = node.attrs
            shape = node.shape()
            stype = _CODE_STYPE.get(attrs.get("__storage_type__", "0"), "default")
            if stype == "row_sparse":  # as MXNet 1.9.1: a graph reads its weights whole
                raise ParameterAssertionError(
                    f"SymbolBlock doesn't support Parameter '{name}' because its storage type "
                    f"is 'row_sparse' (a graph reads its weights whole; use a Block whose "
                    f"forward calls row_sparse_data(), e.g. contrib.nn.SparseEmbedding)")
            self.params.get(name, allow_deferred_init=True, shape=shape,
                            dtype=np.dtype(node.dtype() or "float32").type, stype=stype,
                            grad_req="null" if name in aux_names else "write",
                            lr_mult=float(attrs.get("__lr_mult__", 1.0)),
                            wd_mult=float(attrs.get("__wd_mult__", 1.0)))
        self._symbol = outputs
        self._input_names = input_names
        self._cached_graph = CachedGraph(outputs, input_names,
                                         {p.name: p for p in self.params.values()},
                                         "single" if len(outputs) == 1 else "list")
        self._active = True

    def infer_shape(self, *args):
        """Parameter shapes from the input shapes (symbolic shape inference)."""
        arg_shapes, _, aux_shapes = self._symbol.infer_shape(
            **{n: x.shape for n, x in zip(self._input_names, args)})
        if arg_shapes is None:
            raise ShapeError("SymbolBlock: cannot infer the parameter shapes from the inputs")
        names = self._symbol.list_arguments() + self._symbol.list_auxiliary_states()
        for name, shape in zip(names, arg_shapes + aux_shapes):
            if name in self.params:
                self.params[name].shape = shape

    def forward(self, x, *args):
        if isinstance(x, Symbol):
            raise InvalidArgumentTypeError(
                "SymbolBlock cannot be called on Symbols (graph composition is "
                "not supported); call it on NDArrays")
        inputs = (x,) + args
        if not params_ready(self, x.context):
            self._deferred_infer_shape(*inputs)
            for p in self.params.values():
                p._finish_deferred_init()
        return self._cached_graph(*inputs)

    def hybridize(self, active=True, **kwargs):
        """A SymbolBlock always runs its graph."""

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """A SymbolBlock from ``export()``-ed files (symbol JSON and, optionally, parameters).

        >>> import os, tempfile, sparsenet as mx
        >>> net = mx.gluon.nn.Dense(1, in_units=2); net.initialize(mx.init.One())
        >>> net.hybridize(); _ = net(mx.nd.ones((1, 2)))
        >>> path = os.path.join(tempfile.mkdtemp(), 'net')
        >>> sym_file, params_file = net.export(path)
        >>> blk = mx.gluon.SymbolBlock.imports(sym_file, ['data'], params_file)
        >>> blk(mx.nd.ones((1, 2))).asnumpy()
        array([[2.]], dtype=float32)
        """
        symbol = sym_mod.load(symbol_file)
        names = [input_names] if isinstance(input_names, str) else list(input_names)
        block = SymbolBlock(symbol, [Variable(n) for n in names])
        if param_file is not None:
            block.collect_params().load(param_file, ctx=ctx, allow_missing=allow_missing,
                                        ignore_extra=ignore_extra)
        return block

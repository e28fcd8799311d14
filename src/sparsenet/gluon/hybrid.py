"""Hybridized execution: a Gluon block traced once into a symbol graph, then run as one.

``block.hybridize()`` makes a :class:`~sparsenet.gluon.HybridBlock` build its
graph once, by calling ``hybrid_forward`` with ``F = mx.sym`` (children are
traced into the same graph), and then run that graph with the symbolic
executor's :class:`~sparsenet.symbol.executor.Program`: the registry's
operators on the parameters' own arrays, in the caller's autograd state. So
``autograd.record()`` / ``backward()`` and the Trainer work unchanged, and a
parameter with a row_sparse gradient still gets only the rows a batch touches.
``export()`` writes the graph and the parameters;
:meth:`~sparsenet.gluon.SymbolBlock.imports` loads them back as a block.

>>> import sparsenet as mx
>>> net = mx.gluon.nn.Dense(2, in_units=3, prefix='fc_')
>>> net.initialize(mx.init.One())
>>> net.hybridize()
>>> net(mx.nd.ones((1, 3))).asnumpy()
array([[3., 3.]], dtype=float32)
>>> net._cached_graph.symbol.list_arguments()
['data', 'fc_weight', 'fc_bias']
"""
import operator

from .. import symbol as sym_mod
from ..base import InvalidArgumentError, InvalidArgumentTypeError, StateError
from ..ndarray import serialization
from ..ndarray.ndarray import NDArray
from ..symbol.executor import Program
from ..symbol.symbol import Group, Symbol, Variable
from .parameter import DeferredInitializationError

_STYPE_OF = operator.attrgetter("stype")

__all__ = ["CachedGraph", "param_variable", "symbolic_forward", "run_hybridized",
           "export_block", "params_ready"]


def param_variable(param):
    """The symbol Variable standing for a Gluon Parameter (created once per parameter).

    It carries the parameter's name, shape (when known), dtype, storage type,
    ``lr_mult``, ``wd_mult`` and initializer.
    """
    var = getattr(param, "_var", None)
    if var is None:
        shape = param.shape
        known = shape is not None and all(s > 0 for s in shape)
        var = Variable(param.name, shape=shape if known else None, dtype=param.dtype,
                       stype=param.stype, lr_mult=param.lr_mult, wd_mult=param.wd_mult,
                       init=param.init)
        param._var = var
    return var


def symbolic_forward(block, *inputs):
    """``block.hybrid_forward(mx.sym, *inputs, **parameter variables)`` (tracing)."""
    params = {k: param_variable(p) for k, p in block._reg_params.items()}
    return block.hybrid_forward(sym_mod, *inputs, **params)


def _input_names(n):
    return ["data"] if n == 1 else [f"data{i}" for i in range(n)]


class CachedGraph:
    """A block's graph and the parameters its arguments stand for; runs one Program per stypes.

    Parameters
    ----------
    symbol : Symbol
        The graph (a Group when the block returns several outputs).
    input_names : list of str
        Arguments fed by the call's inputs, in order.
    params : dict of str to Parameter
        The Parameter behind each other argument.
    structure : str
        ``'single'``, ``'list'`` or ``'tuple'``: how outputs are returned.
    """

    def __init__(self, symbol, input_names, params, structure="single"):
        self.symbol = symbol
        self.input_names = list(input_names)
        args = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()  # e.g. BatchNorm's running statistics
        missing = [n for n in self.input_names if n not in args]
        if missing:
            raise InvalidArgumentError(
                f"the graph does not use the input(s) {missing}; its arguments are "
                f"{args}")
        unknown = [n for n in args + self.aux_names if n not in self.input_names and
                   n not in params]
        if unknown:
            raise InvalidArgumentError(f"the graph's argument(s) {unknown} are neither inputs nor "
                                       f"parameters of the block")
        self.arg_names = args + self.aux_names  # a Program's inputs: arguments, then aux states
        self.params = params
        self.structure = structure
        self._programs = {}
        # what feeds each Program input, decided once: the call's input k, or a Parameter
        position = {n: k for k, n in enumerate(self.input_names)}
        self._feeds = [(position[n], None) if n in position else (None, params[n])
                       for n in self.arg_names]

    @classmethod
    def trace(cls, block, num_inputs):
        """Build the graph of ``block`` for ``num_inputs`` inputs (``data`` or ``data0``...)."""
        inputs = [Variable(n) for n in _input_names(num_inputs)]
        out = block(*inputs)
        if isinstance(out, Symbol):
            symbol, structure = out, "single" if len(out) == 1 else "list"
        elif isinstance(out, (list, tuple)) and all(isinstance(o, Symbol) for o in out):
            symbol, structure = Group(list(out)), type(out).__name__
        else:
            raise InvalidArgumentTypeError(
                f"{type(block).__name__}.hybrid_forward must return Symbols when "
                f"F is mx.sym, got {type(out).__name__}")
        params = {p.name: p for p in block.collect_params().values()}
        return cls(symbol, _input_names(num_inputs), params, structure)

    def __call__(self, *inputs):
        if len(inputs) != len(self.input_names):
            raise InvalidArgumentError(
                f"the hybridized graph takes {len(self.input_names)} inputs, got "
                f"{len(inputs)}")
        for i, x in enumerate(inputs):
            if not isinstance(x, NDArray):
                raise InvalidArgumentTypeError(
                    f"hybridized block: input {i} must be an NDArray, got "
                    f"{type(x).__name__}")
        x = inputs[0]
        # a parameter's value on the first input's context (its data() there), as the
        # eager forward looks it up
        arrays = [inputs[k] if p is None else p._data_like(x) for k, p in self._feeds]
        key = tuple(map(_STYPE_OF, arrays))  # the program's signature: one per stypes
        program = self._programs.get(key)
        if program is None:
            program = self._programs[key] = Program(self.symbol, dict(zip(self.arg_names, key)))
        outs = program.run(arrays)
        if self.structure == "single":
            return outs[0]
        return tuple(outs) if self.structure == "tuple" else list(outs)


def params_ready(block, ctx):
    """Whether every parameter of ``block`` is initialised on ``ctx`` (no deferred init left)."""
    try:
        for p in block.collect_params().values():
            p.data(ctx)
    except DeferredInitializationError:
        return False
    return True


def run_hybridized(block, *inputs):
    """Run a hybridized block through its cached graph (built at the first call).

    Returns ``NotImplemented`` while some parameter still waits for deferred
    initialisation: the caller runs that call imperatively, which sets it up.
    """
    graph = getattr(block, "_cached_graph", None)
    if graph is None or len(graph.input_names) != len(inputs):
        if not params_ready(block, inputs[0].context):
            block._deferred_call_inputs = len(inputs)  # export() traces once they are set up
            return NotImplemented
        graph = block._cached_graph = CachedGraph.trace(block, len(inputs))
    return graph(*inputs)


def export_block(block, path, epoch=0):
    """Write ``path-symbol.json`` and ``path-<epoch:04d>.params`` (``arg:<name>`` keys, and
    ``aux:<name>`` for auxiliary states such as BatchNorm's running statistics, as MXNet).

    Returns the two file names.
    """
    graph = getattr(block, "_cached_graph", None)
    ninputs = getattr(block, "_deferred_call_inputs", None)
    if graph is None and getattr(block, "_active", False) and ninputs is not None:
        # the first call ran imperatively to finish deferred initialisation: trace it now
        ctx = next((p.list_ctx()[0] for p in block.collect_params().values()
                    if p._data is not None), None)
        if ctx is not None and params_ready(block, ctx):
            graph = block._cached_graph = CachedGraph.trace(block, ninputs)
    if graph is None:
        raise StateError("Please first call block.hybridize() and then run forward with "
                         "this block at least once before calling export.")
    sym_file = f"{path}-symbol.json"
    params_file = f"{path}-{int(epoch):04d}.params"
    graph.symbol.save(sym_file)
    arrays = {}
    for name in graph.arg_names:
        if name in graph.params:
            p = graph.params[name]
            kind = "aux" if name in graph.aux_names else "arg"
            arrays[f"{kind}:{name}"] = p._reduce() if hasattr(p, "_reduce") else p.data()
    serialization.save(params_file, arrays)
    return sym_file, params_file

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
from ..ops.control_flow import flatten_nested, regroup_nested
from ..symbol.executor import Program
from ..symbol.symbol import Group, Symbol, Variable
from .parameter import DeferredInitializationError

_STYPE_OF = operator.attrgetter("stype")

__all__ = ["CachedGraph", "param_variable", "symbolic_forward", "run_hybridized",
           "export_block", "params_ready", "flatten_args", "regroup_args"]


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


def _symbol_width(arg):
    """A Symbol of ``n > 1`` outputs stands for its ``n`` outputs."""
    if isinstance(arg, Symbol):
        return len(arg), [arg[i] for i in range(len(arg))]
    return 1, [arg]


def flatten_args(args):
    """``(leaves, format)`` of a call's arguments, which may be nested lists (MXNet's rule):
    :func:`~sparsenet.ops.control_flow.flatten_nested` with any leaf, ``None`` as ``-1``.

    >>> flatten_args(('x', ['s0', 's1'], None))
    (['x', 's0', 's1'], [0, [0, 0], -1])
    """
    return flatten_nested(args, object, "a hybridized block's arguments", _symbol_width,
                          none=True)


def regroup_args(flat, fmt):
    """The nesting :func:`flatten_args` took apart, rebuilt from the ``flat`` leaves.

    >>> regroup_args(['x', 's0', 's1'], [0, [0, 0], -1])
    ['x', ['s0', 's1'], None]
    """
    return regroup_nested(list(flat), fmt)[0]


def _count_leaves(fmt):
    if isinstance(fmt, int):
        return 0 if fmt == -1 else max(fmt, 1)
    return sum(_count_leaves(f) for f in fmt)


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
    structure : str or tuple
        ``'single'``, ``'list'`` or ``'tuple'``: how outputs are returned;
        ``('nested', format, container)`` for nested lists (:func:`regroup_args`).
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
        self.in_format = [0] * len(self.input_names)  # how a call nests its inputs
        self._programs = {}
        # what feeds each Program input, decided once: the call's input k, or a Parameter
        position = {n: k for k, n in enumerate(self.input_names)}
        self._feeds = [(position[n], None) if n in position else (None, params[n])
                       for n in self.arg_names]

    @classmethod
    def trace(cls, block, in_format):
        """Build the graph of ``block`` for inputs nested as ``in_format`` (see
        :func:`flatten_args`; an int ``n``: ``n`` arrays); the leaves are the variables
        ``data`` (one) or ``data0``, ``data1``, ..."""
        if isinstance(in_format, int):
            in_format = [0] * in_format
        names = _input_names(_count_leaves(in_format))
        out = block(*regroup_args([Variable(n) for n in names], in_format))
        flat, out_format = flatten_args(out)
        if not flat or not all(isinstance(o, Symbol) for o in flat) or out is None:
            raise InvalidArgumentTypeError(
                f"{type(block).__name__}.hybrid_forward must return Symbols when "
                f"F is mx.sym, got {type(out).__name__}")
        if isinstance(out, Symbol):
            structure = "single" if len(out) == 1 else "list"
        elif out_format == [0] * len(flat):
            structure = type(out).__name__
        else:  # nested lists: the same nesting comes back (the outer container's type kept)
            structure = ("nested", out_format, type(out).__name__)
        params = {p.name: p for p in block.collect_params().values()}
        graph = cls(Group(flat) if len(flat) > 1 else flat[0], names, params, structure)
        graph.in_format = in_format
        return graph

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
        if isinstance(self.structure, tuple):
            _, out_format, container = self.structure
            nested = regroup_args(outs, out_format)
            return tuple(nested) if container == "tuple" else nested
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
    flat, in_format = flatten_args(inputs)
    graph = getattr(block, "_cached_graph", None)
    if graph is None or graph.in_format != in_format:
        first = next((a for a in flat if isinstance(a, NDArray)), None)
        if first is None:
            raise InvalidArgumentTypeError(f"hybridized {type(block).__name__}: the inputs "
                                           f"hold no NDArray")
        if not params_ready(block, first.context):
            block._deferred_call_inputs = in_format  # export() traces once they are set up
            return NotImplemented
        graph = block._cached_graph = CachedGraph.trace(block, in_format)
    return graph(*flat)


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

"""``mx.sym.contrib.foreach``: a loop over axis 0 whose length is decided at run time.

``foreach(body, data, init_states)`` traces ``body`` once on placeholder Symbols into a
*subgraph*, held by one ``_foreach`` node of the outer graph (MXNet 1.9.1's layout: the
node's inputs are the data, then the initial states, then the subgraph's other inputs —
the body's free variables and the outer entries it reads — and its parameters
``in_data_locs``, ``in_state_locs`` and ``remain_locs`` say where each of them enters the
subgraph, in ``subgraph.list_inputs()`` order). Running the node loops over axis 0 of the
data with a compiled :class:`~sparsenet.symbol.program.Program` of the subgraph, in the
caller's autograd state: every step is recorded, so ``backward()`` and the Trainer see the
whole loop, gradients of the captured parameters included. Shapes, dtypes and storage
types of the node are inferred from the subgraph's; ``tojson`` writes the subgraph in the
node's ``"subgraphs"`` field, as MXNet does.

>>> import sparsenet as mx
>>> step = lambda x, s: (x + s[0], [x + s[0]])
>>> outs, states = mx.sym.contrib.foreach(step, mx.sym.var('x'), [mx.sym.var('s')])
>>> y = mx.sym.Group([outs, states[0]])
>>> y.list_arguments()
['x', 's']
>>> x = mx.nd.array([[1.0], [2.0], [3.0]])
>>> [a.asnumpy().ravel() for a in y.eval(x=x, s=mx.nd.zeros((1,)))]
[array([1., 3., 6.], dtype=float32), array([6.], dtype=float32)]
"""
import collections
import threading

from ..attribute import AttrScope
from ..base import InvalidArgumentError, InvalidArgumentTypeError
from ..ndarray.ndarray import NDArray, wrap
from ..ndarray.stype import DEFAULT
from ..ops.control_flow import loop_length, flatten_nested, regroup_nested
from ..ops.indexing import stack
from ..ops.registry import Operator
from .graph import Node
from .infer import _propagate_types, propagate, storage_plan
from .op import SYMBOL_OPS, SymbolOperator, apply
from .program import Program
from .symbol import Symbol, Variable

__all__ = ["foreach", "ForeachOperator", "FOREACH"]

_SUBGRAPH_ATTR = "__subgraph_name__"
_subgraph_counts = collections.Counter()
_count_lock = threading.Lock()


# ---------------------------------------------------------------------- the operator
def _foreach(*inputs, subgraph=None, num_args=1, num_outputs=1, num_out_data=0,
             in_data_locs=(), in_state_locs=(), remain_locs=()):
    """Run a loop body (a subgraph) over axis 0 of its data inputs (MXNet ``_foreach``).

    The node :func:`foreach` builds; its inputs are the data, the initial states, then the
    subgraph's other inputs. On torch tensors this dense definition runs the loop as the
    program node does.
    """
    params = dict(subgraph=subgraph, num_args=num_args, num_outputs=num_outputs,
                  num_out_data=num_out_data, in_data_locs=in_data_locs,
                  in_state_locs=in_state_locs, remain_locs=remain_locs)
    outs = LoopState(FOREACH.bind_params(params))([wrap(t) for t in inputs])
    return [o._dense_tensor() for o in outs] if len(outs) > 1 else outs[0]._dense_tensor()


def _locs(value, what):
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    try:
        return tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"_foreach: {what} must be a tuple of ints, got "
                                   f"{value!r}") from None


class ForeachOperator(Operator):
    # The registry's ``_foreach`` operator (see the module docstring); one instance, FOREACH.
    # No class docstring: an Operator's ``__doc__`` is a property (its definition's).
    __doc__ = Operator.__dict__["__doc__"]

    #: parameters holding a Symbol, written in the JSON node's "subgraphs" field, in order
    subgraph_params = ("subgraph",)

    def __init__(self):
        super().__init__(_foreach, name="_foreach", num_outputs=lambda p: p["num_outputs"])
        self._dense_only = False
        self.input_shapes = self._complete_input_shapes
        self.dtype_rule = self._dtype_rule

    def bind_params(self, kwargs):
        """The parameters, the locations as tuples of ints; the subgraph must be a Symbol."""
        params = super().bind_params(kwargs)
        sub = params["subgraph"]
        if not isinstance(sub, Symbol):
            raise InvalidArgumentTypeError(f"_foreach: subgraph must be a Symbol, got "
                                           f"{type(sub).__name__}")
        params = dict(params)
        for key in ("in_data_locs", "in_state_locs", "remain_locs"):
            params[key] = _locs(params[key], key)
        for key in ("num_args", "num_outputs", "num_out_data"):
            params[key] = int(params[key])
        n_in = len(sub.list_inputs())
        locs = params["in_data_locs"] + params["in_state_locs"] + params["remain_locs"]
        if sorted(locs) != list(range(n_in)) or len(sub.list_outputs()) != params["num_outputs"]:
            raise InvalidArgumentError(
                f"_foreach: the locations {locs} must number the subgraph's {n_in} inputs "
                f"once each, and num_outputs ({params['num_outputs']}) its "
                f"{len(sub.list_outputs())} outputs")
        return params

    # ------------------------------------------------------------------ inference
    def _sub_given(self, params, values, slice_data):
        """``{subgraph input name: value}`` from the node's input ``values`` (None: unknown);
        data shapes lose their axis 0 when ``slice_data``."""
        names = params["subgraph"].list_inputs()
        out = {}
        for k, loc in enumerate(_input_locs(params)):
            v = values[k]
            if v is None:
                continue
            if slice_data and k < len(params["in_data_locs"]):
                v = tuple(v)[1:]
            out[names[loc]] = v
        return out

    def _complete_input_shapes(self, shapes, params):
        """Unknown input shapes the subgraph's inference decides (the body's parameters)."""
        sub = params["subgraph"]
        arg_shape = propagate(sub, shapes=self._sub_given(params, shapes, True))[0]
        names = sub.list_inputs()
        n_data = len(params["in_data_locs"])
        out = list(shapes)
        for k, loc in enumerate(_input_locs(params)):
            if out[k] is None and k >= n_data:
                out[k] = arg_shape.get(names[loc])
        return out

    def output_shapes_for(self, params, in_shapes):
        """The subgraph's output shapes; the data outputs get the loop length as axis 0."""
        sub = params["subgraph"]
        _, _, entry, _ = propagate(sub, shapes=self._sub_given(params, in_shapes, True))
        length = in_shapes[0][0] if params["in_data_locs"] and in_shapes[0] else None
        out = []
        for i, (node, j) in enumerate(sub._outputs):
            s = node.shape() if node.op is None else entry.get((id(node), j))
            if s is not None and i < params["num_out_data"]:
                s = None if length is None else (length,) + tuple(s)
            out.append(s)
        return out

    def _dtype_rule(self, in_dtypes, params):
        """``(input dtypes, output dtypes)`` from the subgraph's type inference."""
        sub = params["subgraph"]
        given = self._sub_given(params, in_dtypes, False)
        arg_dtype, entry = _propagate_types(sub, given, fill_dtype=None)[1::2]
        names = sub.list_inputs()
        filled = [d if d is not None else arg_dtype.get(names[loc])
                  for d, loc in zip(in_dtypes, _input_locs(params))]
        outs = [arg_dtype.get(n.name) if n.op is None else entry.get((id(n), j))
                for n, j in sub._outputs]
        return filled, outs

    def output_stypes_for(self, params, in_stypes):
        """Storage types: the stacked data outputs are dense, the states the subgraph's."""
        sub = params["subgraph"]
        given = self._sub_given(params, in_stypes, False)
        _, stypes = storage_plan(sub, {n.name: given.get(n.name, n.stype())
                                       for n in sub._input_nodes()})
        outs = [stypes[n.name] if n.op is None else stypes[(id(n), j)] for n, j in sub._outputs]
        return [DEFAULT] * params["num_out_data"] + outs[params["num_out_data"]:]

    def infer_storage(self, stypes, params=None):
        """``(storage type of the first output, True)``: the subgraph decides, no fallback."""
        params = self.bind_params(params or {})
        return self.output_stypes_for(params, list(stypes))[0], True

    # ------------------------------------------------------------------ running
    def create_state(self, params):
        """The loop of one program node (see :class:`LoopState`)."""
        return LoopState(self.bind_params(params))

    def __call__(self, *args, out=None, **kwargs):
        if out is not None:
            raise InvalidArgumentError("_foreach: out= is not supported")
        return self._dispatch(list(args), self.bind_params(kwargs))

    def _dispatch(self, inputs, params):
        outs = LoopState(params)(inputs)
        return outs[0] if len(outs) == 1 else outs


def _input_locs(params):
    """Where each node input enters the subgraph (its position in ``list_inputs()``)."""
    return params["in_data_locs"] + params["in_state_locs"] + params["remain_locs"]


class LoopState:
    """The loop of one ``_foreach`` node: compiles the subgraph once per input storage types
    and runs it for every index along axis 0 of the data, feeding the states back."""

    __slots__ = ("params", "names", "programs")

    def __init__(self, params):
        self.params = params
        self.names = params["subgraph"].list_inputs()
        self.programs = {}

    def _program(self, slots):
        key = tuple(a.stype for a in slots)
        found = self.programs.get(key)
        if found is None:
            prog = Program(self.params["subgraph"], dict(zip(self.names, key)))
            order = [self.names.index(n) for n in prog.names]
            found = self.programs[key] = (prog, order)
        return found

    def __call__(self, inputs):
        p = self.params
        n_data, n_states = len(p["in_data_locs"]), len(p["in_state_locs"])
        if len(inputs) != len(self.names):
            raise InvalidArgumentError(f"_foreach: takes {len(self.names)} inputs (data, states, "
                                       f"then the body's free inputs), got {len(inputs)}")
        for k, a in enumerate(inputs):
            if not isinstance(a, NDArray):
                raise InvalidArgumentTypeError(f"_foreach: input {k} must be an NDArray, got "
                                               f"{type(a).__name__}")
        data, states = inputs[:n_data], list(inputs[n_data:n_data + n_states])
        length = loop_length(data)
        slots = [None] * len(self.names)
        for loc, a in zip(p["remain_locs"], inputs[n_data + n_states:]):
            slots[loc] = a
        n_out = p["num_out_data"]
        steps = []
        for t in range(length):
            for loc, a in zip(p["in_data_locs"], data):
                slots[loc] = a[t]
            for loc, a in zip(p["in_state_locs"], states):
                slots[loc] = a
            prog, order = self._program(slots)
            res = prog.run([slots[k] for k in order])
            steps.append(res[:n_out])
            states = res[n_out:]
        return [stack(*column, axis=0) for column in zip(*steps)] + list(states)


#: The registry's ``_foreach`` operator (also ``mx.sym._foreach``, as every registry operator).
FOREACH = ForeachOperator()
SYMBOL_OPS.setdefault(FOREACH.name, SymbolOperator(FOREACH))


# ---------------------------------------------------------------------- building the node
def _width(sym):
    n = len(sym._outputs)
    return n, [Symbol([e]) for e in sym._outputs]


def _unique_subgraph_name(name):
    outer = AttrScope.current.get(None).get(_SUBGRAPH_ATTR, "")
    if outer:
        name = f"{outer}${name}"
    with _count_lock:
        k = _subgraph_counts[name]
        _subgraph_counts[name] += 1
    return f"{name}{k}"


def _placeholder_names(entries, taken):
    """Unique names ``<node>-<output>`` for the placeholders of ``entries``."""
    out = []
    for node, i in entries:
        base = name = f"{node.name}-{i}"
        k = 1
        while name in taken:
            name = f"{base}_{k}"
            k += 1
        taken.add(name)
        out.append(name)
    return out


def _in_body(node, sub_name):
    return node.op is not None and node.attrs.get(_SUBGRAPH_ATTR) == sub_name


def _cut(heads, sub_name, placeholders):
    """The subgraph of ``heads`` and its free inputs.

    Nodes created by the body (attribute ``__subgraph_name__ == sub_name``) are copied;
    a variable that is not a placeholder becomes a variable of the subgraph of the same
    name (a free variable), an entry of an outer operator node a variable named after that
    output (a cut entry). Returns ``(subgraph, {input name: outer entry})``.
    """
    copies, outer = {}, {}
    variables = {}

    def entry_of(node, i):
        if node.op is None:
            if id(node) in placeholders:
                return node, 0
            var = variables.get(node.name)
            if var is None:
                var = variables[node.name] = Node(None, node.name, attrs=dict(node.attrs),
                                                  init=node.init)
                outer[node.name] = (node, 0)
            return var, 0
        if not _in_body(node, sub_name):
            name = node.output_names()[i]
            var = variables.get(name)
            if var is None:
                var = variables[name] = Node(None, name)
                outer[name] = (node, i)
            return var, 0
        return copies[id(node)], i

    stack_ = [(n, False) for n, _ in heads]
    while stack_:
        node, ready = stack_.pop()
        if id(node) in copies or not _in_body(node, sub_name):
            continue
        if ready:
            copies[id(node)] = Node(node.op, node.name, params=node.params,
                                    inputs=[entry_of(c, i) for c, i in node.inputs],
                                    attrs=node.attrs)
            continue
        stack_.append((node, True))
        stack_.extend((c, False) for c, _ in node.inputs if _in_body(c, sub_name)
                      and id(c) not in copies)
    return Symbol([entry_of(n, i) for n, i in heads]), outer


def _heads(flat_out, flat_states, sub_name, placeholders):
    """The subgraph's outputs: an output that is a variable or an outer entry, or a state
    already listed, goes through ``identity`` (MXNet's rule), so that every head is a node
    of the body."""
    heads = []
    with AttrScope(**{_SUBGRAPH_ATTR: sub_name}):
        for s in flat_out + flat_states:
            entry = s._outputs[0]
            if not _in_body(entry[0], sub_name) or entry in heads:
                entry = apply("_copy", [s], {}, hint="identity")._outputs[0]
            heads.append(entry)
    return heads


def foreach(body, data, init_states, name="foreach"):
    """Run ``body`` over axis 0 of ``data``, in a graph (MXNet ``mx.sym.contrib.foreach``).

    ``body`` is called once, on placeholder Symbols, to trace one iteration; the loop
    runs when the graph runs, as many times as ``data`` has elements along axis 0 then.

    Parameters
    ----------
    body : callable
        ``body(data_slice, states) -> (outputs, new_states)`` on Symbols; ``new_states``
        has the nesting of ``init_states``; ``outputs`` a Symbol, a (nested) list, or ``[]``.
    data : Symbol or (nested) list of Symbol
        Looped over along axis 0 (every array the same length there); each must be used.
    init_states : Symbol or (nested) list of Symbol
        The states of the first iteration; each must be used by the body.
    name : str
        The subgraph's name (its nodes' ``__subgraph_name__`` attribute).

    Returns
    -------
    outputs : Symbol or (nested) list of Symbol
        Each output of ``body`` stacked along a new axis 0.
    states : Symbol or (nested) list of Symbol
        The states after the last iteration.

    Examples
    --------
    >>> import sparsenet as mx
    >>> w = mx.sym.var('w')
    >>> outs, _ = mx.sym.contrib.foreach(lambda x, s: (x * w, s), mx.sym.var('x'), [])
    >>> outs.list_arguments()
    ['x', 'w']
    >>> outs.eval(x=mx.nd.array([[1.0], [2.0]]), w=mx.nd.array([3.0]))[0].asnumpy().ravel()
    array([3., 6.], dtype=float32)
    """
    flat_data, data_fmt = flatten_nested(data, Symbol, "foreach input", _width)
    flat_init, state_fmt = flatten_nested(init_states, Symbol, "foreach states", _width)
    if not flat_data:
        raise InvalidArgumentError("foreach: data must hold at least one Symbol to loop over")
    sub_name = _unique_subgraph_name(name)
    taken = set()
    data_names = _placeholder_names([s._outputs[0] for s in flat_data], taken)
    state_names = _placeholder_names([s._outputs[0] for s in flat_init], taken)
    with AttrScope(**{_SUBGRAPH_ATTR: sub_name}):
        data_vars = [Variable(n) for n in data_names]
        state_vars = [Variable(n) for n in state_names]
        sym_out, sym_states = body(regroup_nested(data_vars, data_fmt)[0],
                                   regroup_nested(state_vars, state_fmt)[0])
    flat_out, out_fmt = flatten_nested(sym_out, Symbol, "foreach output", _width)
    flat_states, new_fmt = flatten_nested(sym_states, Symbol, "foreach loop states", _width)
    if new_fmt != state_fmt:
        raise InvalidArgumentError(f"foreach: the body must return states nested as "
                                   f"init_states ({state_fmt}), got {new_fmt}")
    placeholders = {id(v._outputs[0][0]) for v in data_vars + state_vars}
    heads = _heads(flat_out, flat_states, sub_name, placeholders)
    subgraph, outer = _cut(heads, sub_name, placeholders)
    names = subgraph.list_inputs()
    if len(set(names)) != len(names):
        raise InvalidArgumentError(f"foreach: the inputs of the loop body do not have unique "
                                   f"names: {names}")

    def locs(wanted, what):
        missing = [n for n in wanted if n not in names]
        if missing:
            raise InvalidArgumentError(f"foreach: every {what} must be used in the loop body; "
                                       f"{missing} are not")
        return tuple(names.index(n) for n in wanted)

    in_data_locs = locs(data_names, "data array")
    in_state_locs = locs(state_names, "state")
    placeholder_names = set(data_names) | set(state_names)
    remain = [n for n in names if n not in placeholder_names]
    inputs = ([s for s in flat_data] + [s for s in flat_init]
              + [Symbol([outer[n]]) for n in remain])
    params = {"subgraph": subgraph, "num_args": len(inputs) + 1,
              "num_outputs": len(heads), "num_out_data": len(flat_out),
              "in_data_locs": in_data_locs, "in_state_locs": in_state_locs,
              "remain_locs": tuple(names.index(n) for n in remain)}
    node = apply(FOREACH, inputs, params, hint="_foreach")
    outs = [node[i] for i in range(len(heads))] if len(heads) > 1 else [node]
    outputs = regroup_nested(outs[:len(flat_out)], out_fmt)[0]
    states = regroup_nested(outs[len(flat_out):], state_fmt)[0]
    return outputs, states

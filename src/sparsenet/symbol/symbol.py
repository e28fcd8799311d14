"""The symbolic graph: :class:`Symbol`, :func:`Variable`, :func:`Group`, JSON save/load.

A Symbol is a list of outputs of graph nodes. A node is either a variable
(a placeholder for an array, with optional ``shape``, ``dtype``, ``stype``,
``init``, ``lr_mult``, ``wd_mult`` attributes) or an operator of the registry
applied to the outputs of other nodes. The operators are the very ones
``mx.nd`` runs eagerly (see :mod:`sparsenet.symbol.op`); binding a Symbol
(:meth:`Symbol.simple_bind`, :meth:`Symbol.bind`) gives an
:class:`~sparsenet.symbol.executor.Executor` that runs them.

>>> import sparsenet as mx
>>> a = mx.sym.Variable('a')
>>> b = mx.sym.Variable('b', stype='csr')
>>> c = mx.sym.Variable('c', stype='row_sparse')
>>> (a, b, c)
(<Symbol a>, <Symbol b>, <Symbol c>)
>>> y = mx.sym.broadcast_add(mx.sym.dot(b, c), a, name='y')
>>> y.list_arguments(), y.list_outputs()
(['b', 'c', 'a'], ['y_output'])
"""
import ast
import json

import numpy as np

from ..atomic import atomic_write
from ..attribute import HIDDEN_KEYS, AttrScope, hidden_key
from ..base import (IndexOutOfRangeError, InvalidArgumentError, InvalidArgumentTypeError,
                    SparsenetError, numpy_dtype)
from ..ndarray.stype import STYPES
from .. import ndarray as _nd
from ..ops.registry import OPERATORS, Operator
from . import infer
from .arith import PythonOperators
from .executor import Executor, simple_bind
from .fluent import FluentMethods
from .graph import DTYPE_CODE, MXNET_VERSION, STYPE_CODE, Node, aux_variable_ids, topo_order
from .name import current as _name_manager
from .op_traits import open_params

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json", "fromjson"]

class Symbol(FluentMethods, PythonOperators):
    """A symbolic expression: one or more outputs of a graph of operators and variables.

    Build Symbols with :func:`Variable` and the operator functions of
    ``mx.sym``; combine them with Python operators (``+ - * / **``) and
    :func:`Group`.

    Examples
    --------
    >>> import sparsenet as mx
    >>> x = mx.sym.var('x')
    >>> y = (x * 2 + 1).sqrt()
    >>> y.list_arguments()
    ['x']
    >>> y.eval(x=mx.nd.array([4.0]))[0].asnumpy()
    array([3.], dtype=float32)
    """

    __slots__ = ("_outputs", "__weakref__")

    def __init__(self, outputs):
        self._outputs = list(outputs)

    # ------------------------------------------------------------------ identity
    @property
    def name(self):
        """Name of the node of a single-output Symbol (None for a group)."""
        if len(self._outputs) != 1:
            return None
        return self._outputs[0][0].name

    def __repr__(self):
        if len(self._outputs) == 1:
            return f"<Symbol {self.name}>"
        return f"<Symbol group [{', '.join(n.name for n, _ in self._outputs)}]>"

    def __hash__(self):
        return id(self) // 16

    def __iter__(self):
        return (Symbol([o]) for o in self._outputs)

    def __len__(self):
        return len(self._outputs)

    def __getitem__(self, index):
        """Output ``index`` (an int, or an output name such as ``'fc1_output'``)."""
        if isinstance(index, str):
            names = self.list_outputs()
            matches = [i for i, n in enumerate(names) if n == index]
            if not matches:
                raise InvalidArgumentError(f"no output named {index!r}; outputs are {names}")
            if len(matches) > 1:
                raise InvalidArgumentError(f"more than one output is named {index!r}")
            index = matches[0]
        if isinstance(index, slice):
            return Symbol(self._outputs[index])
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexOutOfRangeError(
                f"output index {index} out of range for {len(self._outputs)} "
                f"outputs")
        return Symbol([self._outputs[index]])

    def __copy__(self):
        return Symbol(self._outputs)

    def __deepcopy__(self, memo):
        return load_json(self.tojson(), _inits=self._inits())

    def __reduce__(self):
        return (load_json, (self.tojson(),))

    def _inits(self):
        return {n.name: n.init for n in topo_order(self._outputs) if n.init is not None}

    # ------------------------------------------------------------------ graph queries
    def _nodes(self):
        return topo_order(self._outputs)

    def _input_nodes(self):
        """Every variable node (arguments and auxiliary states), in graph order."""
        return [n for n in self._nodes() if n.op is None]

    def _split_inputs(self):
        """``(argument nodes, auxiliary state nodes)``, each in graph order."""
        nodes = self._nodes()
        aux = aux_variable_ids(nodes)
        args = [n for n in nodes if n.op is None and id(n) not in aux]
        return args, [n for n in nodes if id(n) in aux]

    def _arg_nodes(self):
        return self._split_inputs()[0]

    def _aux_nodes(self):
        return self._split_inputs()[1]

    def list_arguments(self):
        """Names of the variables (inputs and parameters), in graph order.

        >>> import sparsenet as mx
        >>> fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=4, name='fc')
        >>> fc.list_arguments()
        ['data', 'fc_weight', 'fc_bias']
        """
        return [n.name for n in self._arg_nodes()]

    def list_outputs(self):
        """Names of the outputs: ``<node>_output`` for operators, the name for variables."""
        out = []
        for node, i in self._outputs:
            names = node.output_names()
            out.append(names[i])
        return out

    def list_auxiliary_states(self):
        """Names of the auxiliary states: variables an operator updates itself.

        They get no gradient and no optimizer update (BatchNorm's moving
        statistics, updated by the backward pass of a training step).

        >>> import sparsenet as mx
        >>> bn = mx.sym.BatchNorm(mx.sym.var('data'), name='bn')
        >>> bn.list_arguments(), bn.list_auxiliary_states()
        (['data', 'bn_gamma', 'bn_beta'], ['bn_moving_mean', 'bn_moving_var'])
        """
        return [n.name for n in self._aux_nodes()]

    def list_inputs(self):
        """Names of every variable, arguments and auxiliary states, in graph order.

        >>> import sparsenet as mx
        >>> (mx.sym.BatchNorm(mx.sym.var('x'), name='bn') + mx.sym.var('z')).list_inputs()
        ['x', 'bn_gamma', 'bn_beta', 'bn_moving_mean', 'bn_moving_var', 'z']
        """
        return [n.name for n in self._input_nodes()]

    def get_internals(self):
        """A group of every output of every node (``sym.get_internals()['fc1_output']``).

        >>> import sparsenet as mx
        >>> y = mx.sym.relu(mx.sym.var('x'), name='r')
        >>> y.get_internals().list_outputs()
        ['x', 'r_output']
        """
        outs = []
        for node in self._nodes():
            outs.extend((node, i) for i in range(node.num_outputs()))
        return Symbol(outs)

    def get_children(self):
        """The inputs of this single-output Symbol's node as a group (None for a variable)."""
        node = self._outputs[0][0]
        if not node.inputs:
            return None
        return Symbol(node.inputs)

    # ------------------------------------------------------------------ attributes
    def attr(self, key):
        """The attribute ``key`` of this single node (``'lr_mult'`` finds ``'__lr_mult__'``).

        None when the node lacks it, or when the Symbol is a group of several outputs.

        >>> import sparsenet as mx
        >>> mx.sym.var('w', lr_mult=2.0).attr('lr_mult')
        '2.0'
        """
        if len(self._outputs) != 1:
            return None
        return _visible_attrs(self._outputs[0][0]).get(hidden_key(key))

    def list_attr(self, recursive=False):
        """The attributes of this node (of the first output's node for a group).

        Hidden keys (``lr_mult``, ``wd_mult``, ``ctx_group``, ...) are listed
        under both names. With ``recursive`` (deprecated in MXNet, which
        raises), every node's attributes keyed ``node$attr``.

        >>> import sparsenet as mx
        >>> sorted(mx.sym.var('w', lr_mult=2, __layout__='NC').list_attr().items())
        [('__layout__', 'NC'), ('__lr_mult__', '2'), ('lr_mult', '2')]
        """
        if recursive:
            return {f"{n.name}${k}": v for n in self._nodes() for k, v in _visible_attrs(n).items()}
        return _visible_attrs(self._outputs[0][0])

    def attr_dict(self):
        """``{node name: {attribute: value}}`` for every node that has attributes.

        >>> import sparsenet as mx
        >>> mx.sym.var('w', shape=(2,), stype='row_sparse').attr_dict()
        {'w': {'__shape__': '(2,)', '__storage_type__': '1'}}
        """
        out = {}
        for n in self._nodes():
            attrs = _visible_attrs(n)
            if attrs:
                out[n.name] = attrs
        return out

    def _set_attr(self, **kwargs):
        """Set string attributes of this node (hidden keys such as ``lr_mult`` as ``__lr_mult__``).

        >>> import sparsenet as mx
        >>> w = mx.sym.var('w'); w._set_attr(lr_mult='3')
        >>> w.attr('__lr_mult__')
        '3'
        """
        node = self._single_node("_set_attr")
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise InvalidArgumentError(f"Set Attr only accepts string values: got {k}={v!r} "
                                           f"({type(v).__name__})")
            node.attrs[hidden_key(k)] = v

    def _single_node(self, what):
        if len(self._outputs) != 1:
            raise InvalidArgumentError(f"{what}() needs a single-output Symbol, this one has "
                                       f"{len(self._outputs)} outputs")
        return self._outputs[0][0]

    # ------------------------------------------------------------------ serialisation
    def tojson(self):
        """The graph as MXNet-style JSON (nodes, arg_nodes, node_row_ptr, heads).

        >>> import sparsenet as mx
        >>> y = mx.sym.negative(mx.sym.var('x', stype='csr'), name='n')
        >>> mx.sym.load_json(y.tojson()).list_arguments()
        ['x']
        """
        doc = _graph_doc(self)
        doc["attrs"] = {"mxnet_version": ["int", MXNET_VERSION]}
        return json.dumps(doc, indent=2)

    def save(self, fname, remove_amp_cast=True):
        """Write :meth:`tojson` to ``fname`` atomically (a crash keeps the old file)."""
        text = self.tojson().encode("utf-8")
        atomic_write(fname, lambda f: f.write(text))

    # ------------------------------------------------------------------ inference
    def infer_shape(self, *args, **kwargs):
        """Shapes of arguments, outputs and auxiliary states from some known shapes.

        Returns ``(arg_shapes, out_shapes, aux_shapes)``, or ``(None, None,
        None)`` with a warning when some shape cannot be deduced.

        >>> import sparsenet as mx
        >>> fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=4, name='fc')
        >>> fc.infer_shape(data=(8, 3))
        ([(8, 3), (4, 3), (4,)], [(8, 4)], [])
        """
        return infer.infer_shape(self, args, kwargs, partial=False)

    def infer_shape_partial(self, *args, **kwargs):
        """Like :meth:`infer_shape`, with ``()`` for the shapes that cannot be deduced."""
        return infer.infer_shape(self, args, kwargs, partial=True)

    def infer_type(self, *args, **kwargs):
        """Dtypes of arguments, outputs and auxiliary states (numpy types).

        Arguments without a declared or given dtype take the dtype of the other
        inputs of the operator that uses them (float32 when nothing is known).

        >>> import sparsenet as mx
        >>> y = mx.sym.var('x') + mx.sym.var('y')
        >>> y.infer_type(x='float64')
        ([<class 'numpy.float64'>, <class 'numpy.float64'>], [<class 'numpy.float64'>], [])
        """
        return infer.infer_type(self, args, kwargs)

    def infer_type_partial(self, *args, **kwargs):
        """Like :meth:`infer_type`, with None for the dtypes that cannot be deduced.

        >>> import sparsenet as mx
        >>> (mx.sym.var('x') + mx.sym.var('y')).infer_type_partial()
        ([None, None], [None], [])
        """
        return infer.infer_type(self, args, kwargs, partial=True)

    def debug_str(self):
        """The graph as text, in MXNet's layout: outputs, variables, then each operator.

        >>> import sparsenet as mx
        >>> print(mx.sym.relu(mx.sym.var('x'), name='r').debug_str(), end='')
        Symbol Outputs:
        	output[0]=r(0)
        Variable:x
        --------------------
        Op:relu, Name=r
        Inputs:
        	arg[0]=x(0) version=0
        """
        lines = ["Symbol Outputs:"]
        lines += [f"\toutput[{k}]={n.name}({i})" for k, (n, i) in enumerate(self._outputs)]
        for n in self._nodes():
            if n.op is None:
                lines.append(f"Variable:{n.name}")
                continue
            lines += ["--------------------", f"Op:{n.op.name}, Name={n.name}", "Inputs:"]
            lines += [f"\targ[{k}]={c.name}({i}) version=0" for k, (c, i) in enumerate(n.inputs)]
            attrs = {k: _param_text(v) for k, v in n.params.items()}
            attrs.update(n.attrs)
            if attrs:
                lines.append("Attrs:")
                lines += [f"\t{k}={v}" for k, v in attrs.items()]
        return "\n".join(lines) + "\n"

    def infer_storage_type(self, *args, **kwargs):
        """Storage types of arguments, outputs and auxiliary states from the registry rules.

        Arguments take the given stype, else their ``Variable(stype=...)``, else
        'default'. Returns ``(arg_stypes, out_stypes, aux_stypes)``.

        >>> import sparsenet as mx
        >>> x = mx.sym.var('x', stype='csr')
        >>> mx.sym.dot(x, mx.sym.var('w'), transpose_a=True).infer_storage_type()
        (['csr', 'default'], ['row_sparse'], [])
        """
        return infer.infer_storage_type(self, args, kwargs)

    # ------------------------------------------------------------------ binding
    def simple_bind(self, ctx=None, grad_req="write", type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, **kwargs):
        """Allocate zero arrays of the declared storage types and bind them (see Executor).

        >>> import sparsenet as mx
        >>> exe = mx.sym.BatchNorm(mx.sym.var('x'), name='bn').simple_bind(mx.cpu(), x=(4, 3))
        >>> sorted(exe.grad_dict), [a.shape for a in exe.aux_arrays]
        (['bn_beta', 'bn_gamma', 'x'], [(3,), (3,)])
        """
        return simple_bind(self, ctx, grad_req=grad_req, type_dict=type_dict,
                           stype_dict=stype_dict, shapes=kwargs, shared_exec=shared_exec,
                           group2ctx=group2ctx)

    def bind(self, ctx=None, args=None, args_grad=None, grad_req="write", aux_states=None,
             group2ctx=None, shared_exec=None):
        """Bind given arrays to the arguments (and auxiliary states) and return an Executor."""
        return Executor(self, ctx, args, args_grad, grad_req, aux_states)

    def eval(self, ctx=None, **kwargs):
        """Bind the given arrays, run forward, and return the outputs.

        >>> import sparsenet as mx
        >>> (mx.sym.var('a') * 3).eval(a=mx.nd.ones((2,)))[0].asnumpy()
        array([3., 3.], dtype=float32)
        """
        exe = self.bind(ctx, args=kwargs, args_grad=None, grad_req="null")
        return exe.forward()


def _param_text(value):
    """A parameter value as MXNet writes it in JSON attributes."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, list):
        value = tuple(value)
    return str(value)


def _param_value(text):
    """Parse a JSON attribute back to a Python value ('relu' stays a string)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _graph_doc(symbol):
    """The JSON document (a dict) of ``symbol``'s graph; a node's Symbol-valued parameters
    (a loop's body) go in its ``"subgraphs"`` field, each a document of its own, as MXNet
    writes them."""
    nodes = symbol._nodes()
    index = {id(n): i for i, n in enumerate(nodes)}
    out_nodes, row_ptr = [], [0]
    for n in nodes:
        entry = {"op": "null" if n.op is None else n.op.name, "name": n.name}
        attrs = {k: _param_text(v) for k, v in n.params.items() if not isinstance(v, Symbol)}
        attrs.update(n.attrs)
        if attrs:
            entry["attrs"] = dict(sorted(attrs.items()))
        aux = n.aux_positions()  # MXNet writes version 1 on entries of mutated inputs
        entry["inputs"] = [[index[id(c)], i, int(k in aux)] for k, (c, i) in
                           enumerate(n.inputs)]
        subs = [n.params[k] for k in _subgraph_params(n.op) if isinstance(n.params.get(k),
                                                                          Symbol)]
        if subs:
            entry["subgraphs"] = [_graph_doc(g) for g in subs]
        out_nodes.append(entry)
        row_ptr.append(row_ptr[-1] + n.num_outputs())
    return {"nodes": out_nodes,
            "arg_nodes": [i for i, n in enumerate(nodes) if n.op is None],
            "node_row_ptr": row_ptr,
            "heads": [[index[id(n)], i, 0] for n, i in symbol._outputs]}


def _subgraph_params(op):
    """Names of ``op``'s parameters that hold a subgraph (``_foreach``'s body), in the order
    of a JSON node's ``"subgraphs"``."""
    return tuple(getattr(op, "subgraph_params", ()) or ())


def _visible_attrs(node):
    """A node's parameters and attributes as strings; hidden keys under both names."""
    out = {k: _param_text(v) for k, v in node.params.items() if not isinstance(v, Symbol)}
    for k, v in node.attrs.items():
        out[k] = v
        if k.startswith("__") and k.endswith("__") and k[2:-2] in HIDDEN_KEYS:
            out[k[2:-2]] = v
    return out


def _shape_text(shape):
    """A shape as MXNet writes it: ``str(shape)`` (NumPy integers written as plain ints)."""
    if isinstance(shape, (int, np.integer)):
        return str(int(shape))
    if isinstance(shape, (list, tuple)):
        try:
            return str(type(shape)(int(d) for d in shape))
        except (TypeError, ValueError):
            pass
    return str(shape)


def Variable(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None,  # noqa: N802
             init=None, stype=None, profiler_scope=None, **kwargs):
    """A placeholder for an array: an input, a label or a parameter.

    Attributes are kept as strings, as MXNet writes them: ``shape=(1)`` (an
    int) is ``'1'``, ``lr_mult=2`` is ``'2'``. The attributes of the current
    :class:`~sparsenet.attribute.AttrScope` apply, overridden by ``attr`` and
    then by the keywords.

    Parameters
    ----------
    name : str
    attr : dict of str to str, optional
        Extra attributes, kept in the JSON (``lr_mult`` is stored as ``__lr_mult__``).
    shape : tuple or int, optional
    lr_mult, wd_mult : float, optional
        Learning-rate and weight-decay multipliers for this parameter.
    dtype : str or numpy dtype, optional
    init : Initializer or str, optional
        Initializer used by ``Module.init_params`` for this variable.
    stype : {'default', 'csr', 'row_sparse'}, optional
        Storage type of the array to hold.
    profiler_scope : str, optional
    **kwargs
        More attributes, named ``__xxx__``.

    Examples
    --------
    >>> import sparsenet as mx
    >>> w = mx.sym.Variable('w', stype='row_sparse', shape=(100, 1))
    >>> w.attr('__storage_type__'), w.attr('__shape__')
    ('1', '(100, 1)')
    >>> mx.sym.var('b', shape=(1), lr_mult=2).attr_dict()
    {'b': {'__shape__': '1', '__lr_mult__': '2', 'lr_mult': '2'}}
    """
    if not isinstance(name, str) or not name:
        raise InvalidArgumentTypeError(f"Variable: name must be a non-empty str, got {name!r}")
    attrs = {}
    for k, v in AttrScope.current.get(attr).items():
        if not isinstance(v, str):
            raise InvalidArgumentError(f"Variable '{name}': Set Attr only accepts string "
                                       f"values, got attr {k}={v!r} ({type(v).__name__})")
        attrs[hidden_key(k)] = v
    if shape is not None:
        attrs["__shape__"] = _shape_text(shape)
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        attrs["__dtype__"] = str(DTYPE_CODE[numpy_dtype(dtype).name])
    init_obj = None
    if init is not None:
        if isinstance(init, str):
            attrs["__init__"] = init
        else:
            init_obj = init
            dumps = getattr(init, "dumps", None)
            attrs["__init__"] = dumps() if callable(dumps) else str(init)
    if stype is not None:
        if stype not in STYPES:
            raise InvalidArgumentError(f"Variable '{name}': stype must be one of {STYPES}, "
                                       f"got {stype!r}")
        attrs["__storage_type__"] = str(STYPE_CODE[stype])
    if profiler_scope is not None:
        attrs["__profiler_scope__"] = str(profiler_scope)
    for k, v in kwargs.items():
        if not (k.startswith("__") and k.endswith("__")):
            raise InvalidArgumentError(
                f"Variable '{name}': attribute name={k} is not supported. Additional "
                f"attributes must start and end with double underscores, e.g, __yourattr__ "
                f"(or go in attr=)")
        attrs[k] = str(v)
    node = Node(None, name, attrs=attrs, init=init_obj)
    if shape is not None:
        node.shape()  # a malformed shape fails here, naming the variable
    return Symbol([(node, 0)])


var = Variable


def Group(symbols):  # noqa: N802
    """One Symbol whose outputs are the outputs of ``symbols``, in order.

    >>> import sparsenet as mx
    >>> a, b = mx.sym.var('a'), mx.sym.var('b')
    >>> with mx.name.NameManager():
    ...     mx.sym.Group([a + b, a * b]).list_outputs()
    ['_plus0_output', '_mul0_output']
    """
    if not symbols or not all(isinstance(s, Symbol) for s in symbols):
        raise InvalidArgumentTypeError("Group: expected a non-empty list of Symbols")
    outs = []
    for s in symbols:
        outs.extend(s._outputs)
    return Symbol(outs)


def _json_operator(opname):
    """The registry operator a JSON node's ``op`` names: its registered name, or another name
    MXNet registers the same operator under and writes into JSON (``make_loss`` for
    ``MakeLoss``), as ``mx.nd`` spells it; None when sparsenet has no such operator.

    >>> _json_operator('make_loss').name, _json_operator('no_such_op')
    ('MakeLoss', None)
    """
    op = OPERATORS.get(opname)
    if op is None:
        alias = getattr(_nd, opname, None)
        op = alias if isinstance(alias, Operator) else None
    return op


def load_json(json_str, _inits=None):
    """Rebuild a Symbol from :meth:`Symbol.tojson` output (also MXNet 1.x JSON).

    Operators are looked up in the registry by name; an unknown operator or a
    malformed document raises ``SparsenetError`` naming the node.

    >>> import sparsenet as mx
    >>> y = mx.sym.dot(mx.sym.var('x', stype='csr'), mx.sym.var('w'), transpose_a=True)
    >>> z = mx.sym.load_json(y.tojson())
    >>> z.list_arguments(), z.infer_storage_type()[1]
    (['x', 'w'], ['row_sparse'])
    """
    try:
        doc = json.loads(json_str)
    except (ValueError, TypeError, RecursionError) as e:
        raise SparsenetError(f"load_json: not a symbol JSON document "
                             f"({type(e).__name__}: {str(e)[:200]})") from None
    return _load_doc(doc, _inits, "")


def _load_doc(doc, _inits, where):
    """The Symbol of a parsed JSON document; ``where`` names the enclosing node of a
    subgraph in messages ('' at the top)."""
    try:
        raw_nodes, heads = doc["nodes"], doc["heads"]
        if not isinstance(raw_nodes, list) or not isinstance(heads, list):
            raise InvalidArgumentTypeError("'nodes' and 'heads' must be lists")
    except (KeyError, TypeError) as e:
        raise SparsenetError(f"load_json: not a symbol JSON document{where} "
                             f"({type(e).__name__}: {str(e)[:200]})") from None
    nodes = []
    for i, rn in enumerate(raw_nodes):
        try:
            opname, name = rn["op"], rn["name"]
            if not isinstance(opname, str) or not isinstance(name, str):
                raise InvalidArgumentTypeError(
                    f"'op' and 'name' must be strings, got {type(opname).__name__} "
                    f"and {type(name).__name__}")
            attrs = dict(rn.get("attrs", rn.get("attr", rn.get("param", {}))) or {})
            inputs = [_entry(nodes, e) for e in rn.get("inputs", [])]
        except (KeyError, TypeError, IndexError, ValueError) as e:
            raise SparsenetError(f"load_json: malformed node {i}{where} ({e})") from None
        if opname == "null":
            init = (_inits or {}).get(name)
            node = Node(None, name, attrs=attrs, init=init)
            node.shape(), node.dtype(), node.stype()  # a malformed attribute fails here
            nodes.append(node)
            continue
        op = _json_operator(opname)
        if op is None:
            raise SparsenetError(f"load_json: node {i} '{name}'{where} uses operator {opname!r}, "
                                 f"which sparsenet does not have")
        if open_params(op):  # a custom operator: every parameter its property's, as text
            params = {k: v for k, v in attrs.items() if not (k.startswith("__") and
                                                             k.endswith("__"))}
        else:
            params = {k: _param_value(v) for k, v in attrs.items() if k in op.defaults}
        if op.variadic:
            attrs.pop("num_args", None)
        rest = {k: v for k, v in attrs.items() if k not in params}
        params.update(_load_subgraphs(op, rn, i, name, where))
        nodes.append(Node(op, name, params=params, inputs=inputs, attrs=rest))
    try:
        return Symbol([_entry(nodes, h) for h in heads])
    except (IndexError, TypeError, ValueError) as e:
        raise SparsenetError(f"load_json: bad heads{where} ({e})") from None


def _load_subgraphs(op, raw, i, name, where):
    """``{parameter: Symbol}`` from a JSON node's ``"subgraphs"``: one per subgraph
    parameter of ``op`` (``_foreach``'s body); none for other operators."""
    wanted = _subgraph_params(op)
    subs = raw.get("subgraphs") or []
    if not isinstance(subs, list) or len(subs) != len(wanted):
        raise SparsenetError(f"load_json: node {i} '{name}'{where} (operator {op.name}) needs "
                             f"{len(wanted)} subgraph(s) in its 'subgraphs' field, got "
                             f"{len(subs) if isinstance(subs, list) else repr(subs)[:40]}")
    return {k: _load_doc(d, None, f" in the subgraph of node '{name}'{where}")
            for k, d in zip(wanted, subs)}


def _entry(nodes, e):
    """The ``(node, output)`` an entry ``[node index, output index, ...]`` of a symbol JSON
    document names: an earlier node and one of its outputs (no negative indices)."""
    if not isinstance(e, (list, tuple)) or len(e) < 2 or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in e[:2]):
        raise InvalidArgumentTypeError(f"an entry must be [node, output, ...] integers, got {e!r}")
    k, out = e[0], e[1]
    if not 0 <= k < len(nodes):
        raise IndexOutOfRangeError(f"entry {e!r} refers to node {k}; the nodes before it are 0.."
                                   f"{len(nodes) - 1}")
    node = nodes[k]
    count = 1 if node.op is None else node.op.num_outputs(node.params)
    if not 0 <= out < count:
        raise IndexOutOfRangeError(
            f"entry {e!r} asks for output {out} of node '{node.name}', which has "
            f"{count}")
    return node, out


fromjson = load_json


def load(fname):
    """Load a Symbol saved with :meth:`Symbol.save`.

    >>> import os, tempfile, sparsenet as mx
    >>> p = os.path.join(tempfile.mkdtemp(), 'net-symbol.json')
    >>> mx.sym.relu(mx.sym.var('x'), name='r').save(p)
    >>> mx.sym.load(p).list_outputs()
    ['r_output']
    """
    with open(fname, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SparsenetError(f"{fname}: not a symbol JSON document (not UTF-8 text: byte "
                             f"{data[e.start]:#04x} at offset {e.start})") from None
    try:
        return load_json(text)
    except SparsenetError as e:
        raise SparsenetError(f"{fname}: {e}") from None


def new_node_name(name, hint):
    """The name of a new operator node (automatic ``<hint><n>`` when ``name`` is None).

    >>> import sparsenet as mx
    >>> with mx.name.NameManager():
    ...     new_node_name(None, 'dot'), new_node_name('mine', 'dot'), new_node_name(None, 'dot')
    ('dot0', 'mine', 'dot1')
    """
    return _name_manager().get(name, hint)

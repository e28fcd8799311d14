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
from ..base import SparsenetError, numpy_dtype
from ..ndarray.stype import CSR, DEFAULT, ROW_SPARSE, STYPES
from .name import current as _name_manager

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json", "fromjson"]

# MXNet's enums in the JSON attributes
_STYPE_CODE = {DEFAULT: 0, ROW_SPARSE: 1, CSR: 2}
_CODE_STYPE = {v: k for k, v in _STYPE_CODE.items()}
_DTYPE_CODE = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
               "int64": 6, "bool": 7, "int16": 8}
_CODE_DTYPE = {v: k for k, v in _DTYPE_CODE.items()}
_MXNET_VERSION = 10901


class _Node:
    """One graph node: a variable (``op is None``) or an operator application."""

    __slots__ = ("op", "name", "params", "inputs", "attrs", "init")

    def __init__(self, op, name, params=None, inputs=(), attrs=None, init=None):
        self.op = op                      # Operator or None for a variable
        self.name = name
        self.params = dict(params or {})  # explicit operator parameters (Python values)
        self.inputs = list(inputs)        # [(node, output_index)]
        self.attrs = dict(attrs or {})    # str -> str, as in MXNet's JSON
        self.init = init                  # initializer object given to Variable(init=...)

    @property
    def is_variable(self):
        return self.op is None

    def num_outputs(self):
        if self.op is None:
            return 1
        return self.op.num_outputs(self.params)

    def output_names(self):
        if self.op is None:
            return [self.name]
        n = self.num_outputs()
        if n == 1:
            return [f"{self.name}_output"]
        return [f"{self.name}_output{i}" for i in range(n)]

    # typed views of a variable's attributes
    def shape(self):
        s = self.attrs.get("__shape__")
        return tuple(ast.literal_eval(s)) if s else None

    def dtype(self):
        d = self.attrs.get("__dtype__")
        return _CODE_DTYPE[int(d)] if d is not None else None

    def stype(self):
        s = self.attrs.get("__storage_type__")
        return _CODE_STYPE[int(s)] if s is not None else DEFAULT


def topo_order(outputs):
    """Nodes reachable from ``outputs`` in depth-first post-order (inputs before users).

    >>> import sparsenet as mx
    >>> y = mx.sym.relu(mx.sym.var('a') * mx.sym.var('b'), name='r')
    >>> [n.name for n in topo_order(y._outputs)][:2]
    ['a', 'b']
    """
    order, seen = [], set()
    for head, _ in outputs:
        if id(head) in seen:
            continue
        stack = [(head, iter(head.inputs))]
        seen.add(id(head))
        while stack:
            node, it = stack[-1]
            for child, _ in it:
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, iter(child.inputs)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


class Symbol:
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
                raise ValueError(f"no output named {index!r}; outputs are {names}")
            if len(matches) > 1:
                raise ValueError(f"more than one output is named {index!r}")
            index = matches[0]
        if isinstance(index, slice):
            return Symbol(self._outputs[index])
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError(f"output index {index} out of range for {len(self._outputs)} "
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

    def _arg_nodes(self):
        return [n for n in self._nodes() if n.op is None]

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
        """Names of the auxiliary states (none of the registry's operators has any)."""
        return []

    def list_inputs(self):
        """Arguments and auxiliary states."""
        return self.list_arguments() + self.list_auxiliary_states()

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

        >>> import sparsenet as mx
        >>> mx.sym.var('w', lr_mult=2.0).attr('lr_mult')
        '2.0'
        """
        node = self._single_node("attr")
        attrs = _visible_attrs(node)
        return attrs.get(key)

    def list_attr(self, recursive=False):
        """The attributes of this node (all nodes, keyed ``node$attr``, with ``recursive``)."""
        if recursive:
            return {f"{n.name}${k}": v for n in self._nodes() for k, v in _visible_attrs(n).items()}
        return _visible_attrs(self._single_node("list_attr"))

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
        node = self._single_node("_set_attr")
        for k, v in kwargs.items():
            node.attrs[k] = str(v)

    def _single_node(self, what):
        if len(self._outputs) != 1:
            raise ValueError(f"{what}() needs a single-output Symbol, this one has "
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
        nodes = self._nodes()
        index = {id(n): i for i, n in enumerate(nodes)}
        out_nodes, row_ptr = [], [0]
        for n in nodes:
            entry = {"op": "null" if n.op is None else n.op.name, "name": n.name}
            attrs = {k: _param_text(v) for k, v in n.params.items()}
            attrs.update(n.attrs)
            if attrs:
                entry["attrs"] = dict(sorted(attrs.items()))
            entry["inputs"] = [[index[id(c)], i, 0] for c, i in n.inputs]
            out_nodes.append(entry)
            row_ptr.append(row_ptr[-1] + n.num_outputs())
        doc = {"nodes": out_nodes,
               "arg_nodes": [i for i, n in enumerate(nodes) if n.op is None],
               "node_row_ptr": row_ptr,
               "heads": [[index[id(n)], i, 0] for n, i in self._outputs],
               "attrs": {"mxnet_version": ["int", _MXNET_VERSION]}}
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
        from . import infer
        return infer.infer_shape(self, args, kwargs, partial=False)

    def infer_shape_partial(self, *args, **kwargs):
        """Like :meth:`infer_shape`, with ``()`` for the shapes that cannot be deduced."""
        from . import infer
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
        from . import infer
        return infer.infer_type(self, args, kwargs)

    def infer_storage_type(self, *args, **kwargs):
        """Storage types of arguments, outputs and auxiliary states from the registry rules.

        Arguments take the given stype, else their ``Variable(stype=...)``, else
        'default'. Returns ``(arg_stypes, out_stypes, aux_stypes)``.

        >>> import sparsenet as mx
        >>> x = mx.sym.var('x', stype='csr')
        >>> mx.sym.dot(x, mx.sym.var('w'), transpose_a=True).infer_storage_type()
        (['csr', 'default'], ['row_sparse'], [])
        """
        from . import infer
        return infer.infer_storage_type(self, args, kwargs)

    # ------------------------------------------------------------------ binding
    def simple_bind(self, ctx=None, grad_req="write", type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, **kwargs):
        """Allocate zero arrays of the declared storage types and bind them (see Executor)."""
        from .executor import simple_bind
        return simple_bind(self, ctx, grad_req=grad_req, type_dict=type_dict,
                           stype_dict=stype_dict, shapes=kwargs, shared_exec=shared_exec)

    def bind(self, ctx=None, args=None, args_grad=None, grad_req="write", aux_states=None,
             group2ctx=None, shared_exec=None):
        """Bind given arrays to the arguments and return an Executor."""
        from .executor import Executor
        return Executor(self, ctx, args, args_grad, grad_req, aux_states)

    def eval(self, ctx=None, **kwargs):
        """Bind the given arrays, run forward, and return the outputs.

        >>> import sparsenet as mx
        >>> (mx.sym.var('a') * 3).eval(a=mx.nd.ones((2,)))[0].asnumpy()
        array([3., 3.], dtype=float32)
        """
        exe = self.bind(ctx, args=kwargs, args_grad=None, grad_req="null")
        return exe.forward()

    # ------------------------------------------------------------------ Python operators
    def _binary(self, other, name, scalar_name, hint, scalar_hint, reverse=False):
        from . import op
        if isinstance(other, Symbol):
            lhs, rhs = (other, self) if reverse else (self, other)
            return op.apply(name, [lhs, rhs], {}, hint=hint)
        if isinstance(other, (int, float, np.number, bool)):
            return op.apply(scalar_name, [self], {"scalar": float(other)}, hint=scalar_hint)
        return NotImplemented

    def __add__(self, other):
        return self._binary(other, "elemwise_add", "_plus_scalar", "_plus", "_plusscalar")

    __radd__ = __add__

    def __sub__(self, other):
        return self._binary(other, "elemwise_sub", "_minus_scalar", "_minus", "_minusscalar")

    def __rsub__(self, other):
        return self._binary(other, "elemwise_sub", "_rminus_scalar", "_minus", "_rminusscalar",
                            reverse=True)

    def __mul__(self, other):
        return self._binary(other, "elemwise_mul", "_mul_scalar", "_mul", "_mulscalar")

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self._binary(other, "elemwise_div", "_div_scalar", "_div", "_divscalar")

    def __rtruediv__(self, other):
        return self._binary(other, "elemwise_div", "_rdiv_scalar", "_div", "_rdivscalar",
                            reverse=True)

    __div__, __rdiv__ = __truediv__, __rtruediv__

    def __mod__(self, other):
        return self._binary(other, "broadcast_mod", "_mod_scalar", "_mod", "_modscalar")

    def __rmod__(self, other):
        return self._binary(other, "broadcast_mod", "_rmod_scalar", "_mod", "_rmodscalar",
                            reverse=True)

    def __pow__(self, other):
        return self._binary(other, "broadcast_power", "_power_scalar", "_power",
                            "_powerscalar")

    def __rpow__(self, other):
        return self._binary(other, "broadcast_power", "_rpower_scalar", "_power",
                            "_rpowerscalar", reverse=True)

    def __neg__(self):
        from . import op
        return op.apply("negative", [self], {}, hint="negative")

    def __pos__(self):
        return self

    def __abs__(self):
        from . import op
        return op.apply("abs", [self], {}, hint="abs")

    def __eq__(self, other):
        return self._binary(other, "broadcast_equal", "_equal_scalar", "_equal",
                            "_equalscalar")

    def __ne__(self, other):
        return self._binary(other, "broadcast_not_equal", "_not_equal_scalar", "_not_equal",
                            "_notequalscalar")

    def __gt__(self, other):
        return self._binary(other, "broadcast_greater", "_greater_scalar", "_greater",
                            "_greaterscalar")

    def __ge__(self, other):
        return self._binary(other, "broadcast_greater_equal", "_greater_equal_scalar",
                            "_greater_equal", "_greaterequalscalar")

    def __lt__(self, other):
        return self._binary(other, "broadcast_lesser", "_lesser_scalar", "_lesser",
                            "_lesserscalar")

    def __le__(self, other):
        return self._binary(other, "broadcast_lesser_equal", "_lesser_equal_scalar",
                            "_lesser_equal", "_lesserequalscalar")

    def __bool__(self):
        raise TypeError("the truth value of a Symbol is undefined (it has no value until "
                        "bound and run); compare list_outputs() or use `is` instead")

    # ------------------------------------------------------------------ fluent methods
    def _fluent(self, name, *args, **kwargs):
        from . import op
        return op.SYMBOL_OPS[name](self, *args, **kwargs)

    def reshape(self, *shape, **kwargs):
        """``mx.sym.reshape(self, shape=...)``."""
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        if shape:
            kwargs["shape"] = tuple(shape)
        return self._fluent("reshape", **kwargs)

    def astype(self, dtype):
        """``mx.sym.cast(self, dtype=...)``."""
        return self._fluent("cast", dtype=numpy_dtype(dtype).name)

    def tostype(self, stype):
        """``mx.sym.cast_storage(self, stype=...)``."""
        return self._fluent("cast_storage", stype=stype)

    def transpose(self, axes=None):
        return self._fluent("transpose", axes=axes)

    @property
    def T(self):  # noqa: N802
        return self.transpose()

    def flatten(self):
        return self._fluent("flatten")

    def expand_dims(self, axis):
        return self._fluent("expand_dims", axis=axis)

    def squeeze(self, axis=None):
        return self._fluent("squeeze", axis=axis)

    def sum(self, axis=None, keepdims=False, exclude=False):
        return self._fluent("sum", axis=axis, keepdims=keepdims, exclude=exclude)

    def mean(self, axis=None, keepdims=False, exclude=False):
        return self._fluent("mean", axis=axis, keepdims=keepdims, exclude=exclude)

    def max(self, axis=None, keepdims=False, exclude=False):
        return self._fluent("max", axis=axis, keepdims=keepdims, exclude=exclude)

    def min(self, axis=None, keepdims=False, exclude=False):
        return self._fluent("min", axis=axis, keepdims=keepdims, exclude=exclude)

    def slice_axis(self, axis, begin, end):
        return self._fluent("slice_axis", axis=axis, begin=begin, end=end)

    def split(self, num_outputs, axis=1, squeeze_axis=False):
        return self._fluent("split", num_outputs=num_outputs, axis=axis,
                            squeeze_axis=squeeze_axis)

    def broadcast_to(self, shape):
        return self._fluent("broadcast_to", shape=shape)

    def dot(self, other, transpose_a=False, transpose_b=False):
        return self._fluent("dot", other, transpose_a=transpose_a, transpose_b=transpose_b)

    def softmax(self, axis=-1):
        return self._fluent("softmax", axis=axis)

    def log_softmax(self, axis=-1):
        return self._fluent("log_softmax", axis=axis)

    def clip(self, a_min, a_max):
        return self._fluent("clip", a_min=a_min, a_max=a_max)

    def _unary(name):  # noqa: N805 - builds methods at class creation
        def method(self):
            return self._fluent(name)
        method.__name__ = name
        method.__doc__ = f"``mx.sym.{name}(self)``."
        return method

    exp, log, sqrt, square, abs = _unary("exp"), _unary("log"), _unary("sqrt"), \
        _unary("square"), _unary("abs")
    relu, sigmoid, tanh, sign = _unary("relu"), _unary("sigmoid"), _unary("tanh"), \
        _unary("sign")
    zeros_like, ones_like = _unary("zeros_like"), _unary("ones_like")
    del _unary


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


def _visible_attrs(node):
    out = {k: _param_text(v) for k, v in node.params.items()}
    for k, v in node.attrs.items():
        out[k] = v
        if k.startswith("__") and k.endswith("__") and len(k) > 4 and k not in (
                "__shape__", "__dtype__", "__storage_type__", "__init__"):
            out[k[2:-2]] = v
    return out


def Variable(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None,  # noqa: N802
             init=None, stype=None, **kwargs):
    """A placeholder for an array: an input, a label or a parameter.

    Parameters
    ----------
    name : str
    attr : dict of str to str, optional
        Extra attributes, kept in the JSON.
    shape : tuple, optional
    lr_mult, wd_mult : float, optional
        Learning-rate and weight-decay multipliers for this parameter.
    dtype : str or numpy dtype, optional
    init : Initializer or str, optional
        Initializer used by ``Module.init_params`` for this variable.
    stype : {'default', 'csr', 'row_sparse'}, optional
        Storage type of the array to hold.
    **kwargs
        More attributes, named ``__xxx__``.

    Examples
    --------
    >>> import sparsenet as mx
    >>> w = mx.sym.Variable('w', stype='row_sparse', shape=(100, 1))
    >>> w.attr('__storage_type__'), w.attr('__shape__')
    ('1', '(100, 1)')
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"Variable: name must be a non-empty str, got {name!r}")
    attrs = {}
    if attr:
        attrs.update({k: str(v) for k, v in attr.items()})
    if shape is not None:
        attrs["__shape__"] = str(tuple(int(s) for s in shape))
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(float(lr_mult))
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(float(wd_mult))
    if dtype is not None:
        attrs["__dtype__"] = str(_DTYPE_CODE[numpy_dtype(dtype).name])
    if stype is not None:
        if stype not in STYPES:
            raise ValueError(f"Variable '{name}': stype must be one of {STYPES}, got {stype!r}")
        attrs["__storage_type__"] = str(_STYPE_CODE[stype])
    init_obj = None
    if init is not None:
        if isinstance(init, str):
            attrs["__init__"] = init
        else:
            init_obj = init
            dumps = getattr(init, "dumps", None)
            attrs["__init__"] = dumps() if callable(dumps) else str(init)
    for k, v in kwargs.items():
        if not (k.startswith("__") and k.endswith("__")):
            raise ValueError(f"Variable '{name}': extra attribute {k!r} must be named __xxx__ "
                             f"(or passed in attr=)")
        attrs[k] = str(v)
    return Symbol([(_Node(None, name, attrs=attrs, init=init_obj), 0)])


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
        raise TypeError("Group: expected a non-empty list of Symbols")
    outs = []
    for s in symbols:
        outs.extend(s._outputs)
    return Symbol(outs)


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
    from ..ops.registry import OPERATORS
    try:
        doc = json.loads(json_str)
        raw_nodes, heads = doc["nodes"], doc["heads"]
    except (ValueError, KeyError, TypeError) as e:
        raise SparsenetError(f"load_json: not a symbol JSON document ({e})") from None
    nodes = []
    for i, rn in enumerate(raw_nodes):
        try:
            opname, name = rn["op"], rn["name"]
            attrs = dict(rn.get("attrs", rn.get("attr", rn.get("param", {}))) or {})
            inputs = [(nodes[e[0]], e[1]) for e in rn.get("inputs", [])]
        except (KeyError, TypeError, IndexError) as e:
            raise SparsenetError(f"load_json: malformed node {i} ({e})") from None
        if opname == "null":
            init = (_inits or {}).get(name)
            nodes.append(_Node(None, name, attrs=attrs, init=init))
            continue
        op = OPERATORS.get(opname)
        if op is None:
            raise SparsenetError(f"load_json: node {i} '{name}' uses operator {opname!r}, which "
                                 f"sparsenet does not have")
        params = {k: _param_value(v) for k, v in attrs.items() if k in op.defaults}
        if op.variadic:
            attrs.pop("num_args", None)
        rest = {k: v for k, v in attrs.items() if k not in op.defaults}
        nodes.append(_Node(op, name, params=params, inputs=inputs, attrs=rest))
    try:
        return Symbol([(nodes[h[0]], h[1]) for h in heads])
    except (IndexError, TypeError) as e:
        raise SparsenetError(f"load_json: bad heads ({e})") from None


fromjson = load_json


def load(fname):
    """Load a Symbol saved with :meth:`Symbol.save`.

    >>> import os, tempfile, sparsenet as mx
    >>> p = os.path.join(tempfile.mkdtemp(), 'net-symbol.json')
    >>> mx.sym.relu(mx.sym.var('x'), name='r').save(p)
    >>> mx.sym.load(p).list_outputs()
    ['r_output']
    """
    with open(fname, encoding="utf-8") as f:
        text = f.read()
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

"""Symbolic operators: every operator of the registry, callable on Symbols.

:class:`SymbolOperator` holds one registry :class:`~sparsenet.ops.registry.Operator`
and, when called on Symbols, adds a node to the graph; nothing is computed.
The table :data:`SYMBOL_OPS` is built by one loop over the registry (plus the
``mx.nd`` names that alias registry operators, e.g. ``broadcast_plus``), so
``mx.sym`` and ``mx.nd`` can never disagree on which operators exist, their
inputs or their parameters.

Missing array inputs become new variables named ``<node>_<input>``, as in MXNet
(``FullyConnected(data, num_hidden=4, name='fc')`` creates ``fc_weight`` and
``fc_bias``; ``SoftmaxOutput(..., name='out')`` creates ``out_label``).

>>> import sparsenet as mx
>>> fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=4, name='fc')
>>> fc.list_arguments()
['data', 'fc_weight', 'fc_bias']
>>> mx.sym.dot is mx.sym.sparse.dot
True
"""
import inspect
import numbers

import numpy as np

from .. import ndarray as nd
from ..attribute import HIDDEN_KEYS, AttrScope, hidden_key
from ..base import InvalidArgumentError, InvalidArgumentTypeError, OperatorArgumentError
from ..ndarray import sparse as nd_sparse
from ..ops import registry
from .op_traits import input_inits, input_names, open_params, required_inputs
from .graph import Node
from .symbol import Symbol, _param_text, new_node_name

__all__ = ["SymbolOperator", "SYMBOL_OPS", "SPARSE_SYMBOL_OPS", "symbols_of", "apply", "maximum", "minimum",
           "power", "pow", "hypot"]


class SymbolOperator:
    """A registry operator applied to Symbols: ``op(*symbols, name=None, attr=None, **params)``.

    Inputs are given positionally (in the operator's input order) or by
    input name; parameters by keyword (or positionally after the inputs, as
    ``mx.nd`` accepts). Returns a Symbol with the operator's outputs.

    Keywords that are attributes rather than parameters, as in MXNet:
    ``lr_mult``, ``wd_mult``, ``ctx_group`` (stored as ``__lr_mult__``, ...),
    any ``__xxx__`` name, and the ``attr`` dict; the current
    :class:`~sparsenet.attribute.AttrScope` adds its own. Inputs the call
    leaves out become variables that carry a copy of the node's attributes (so
    ``FullyConnected(..., lr_mult=2)`` gives its weight and bias ``lr_mult``).
    ``out=`` is accepted and ignored, as MXNet's symbol functions do.

    Examples
    --------
    >>> import sparsenet as mx
    >>> op = mx.sym.elemwise_add
    >>> op.operator.name, op.operator.input_names
    ('elemwise_add', ('lhs', 'rhs'))
    >>> op(mx.sym.var('a'), mx.sym.var('b'), name='s').list_outputs()
    ['s_output']
    """

    def __init__(self, operator):
        self.operator = operator
        self.__name__ = operator.name
        self.__qualname__ = operator.name
        self.__module__ = "sparsenet.symbol"

    @property
    def __doc__(self):
        return self.operator.__doc__

    def __repr__(self):
        return f"<symbol operator {self.operator.name}>"

    def __call__(self, *args, name=None, attr=None, out=None, **kwargs):  # noqa: ARG002
        op = self.operator
        kwargs, node_attrs = _split_attributes(op, kwargs)
        if op.variadic:
            inputs, params = _variadic_inputs(op, args, kwargs)
        else:
            inputs, params = _named_inputs(op, args, kwargs)
        return apply(op, inputs, params, name=name, attr=attr, node_attrs=node_attrs)


def _split_attributes(op, kwargs):
    """Separate the attribute keywords (``lr_mult``, ``__xxx__``) from the operator's parameters.

    >>> from sparsenet.ops.registry import get_op
    >>> _split_attributes(get_op('relu'), {'lr_mult': 2, '__layout__': 'NC'})
    ({}, {'__lr_mult__': '2', '__layout__': 'NC'})
    """
    params, attrs = {}, {}
    for k, v in kwargs.items():
        if k in op.defaults or k in op.input_names or isinstance(v, Symbol):
            params[k] = v
        elif k in HIDDEN_KEYS:
            attrs[f"__{k}__"] = str(v)
        elif k.startswith("__") and k.endswith("__"):
            attrs[k] = str(v)
        else:
            suffix = next((h for h in HIDDEN_KEYS if k.endswith("_" + h)), None)
            if suffix is not None:
                raise OperatorArgumentError(
                    f"{op.name}(): setting variable attributes with {k} is deprecated. please "
                    f"instead use\nw = Variable({suffix}={v})\nsym = YourSymbolName("
                    f"{k[:-len(suffix) - 1]}=w)")
            params[k] = v
    return params, attrs


def _check_symbol(x, opname, what):
    if not isinstance(x, Symbol):
        hint = (" (scalars go through the *_scalar operators or Python operators)"
                if isinstance(x, (numbers.Number, np.generic)) else "")
        raise InvalidArgumentTypeError(f"{opname}(): input '{what}' must be a Symbol, got "
                                       f"{type(x).__name__}{hint}")
    if len(x._outputs) != 1:
        raise InvalidArgumentError(
            f"{opname}(): input '{what}' is a group of {len(x._outputs)} outputs; "
            f"pass one output (e.g. sym[0])")
    return x


def _variadic_inputs(op, args, kwargs):
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    params = dict(kwargs)
    num_args = params.pop("num_args", None)
    if num_args is not None and int(num_args) != len(args):
        raise InvalidArgumentError(
            f"{op.name}(): num_args={num_args} but {len(args)} inputs were given")
    for k in list(params):
        if isinstance(params[k], Symbol):
            raise OperatorArgumentError(
                f"{op.name}(): a variadic operator takes its inputs positionally, "
                f"got Symbol for keyword '{k}'")
    return [_check_symbol(a, op.name, f"#{i}") for i, a in enumerate(args)], params


def _named_inputs(op, args, kwargs):
    params = dict(kwargs)
    # the input names may depend on the parameters (a custom operator's property's)
    in_names = input_names(op, {k: v for k, v in params.items() if not isinstance(v, Symbol)})
    n = len(in_names)
    extra = args[n:]
    if extra and open_params(op):
        raise OperatorArgumentError(
            f"{op.name}() takes {n} inputs {list(in_names)}, got {len(args)} "
            f"positional arguments (parameters go by keyword)")
    if extra:
        names = [k for k in op.defaults]
        if len(extra) > len(names):
            raise OperatorArgumentError(
                f"{op.name}() takes {n} inputs and {len(names)} parameters, got "
                f"{len(args)} positional arguments")
        for k, v in zip(names, extra):
            if k in params:
                raise OperatorArgumentError(f"{op.name}() got multiple values for '{k}'")
            params[k] = v
    inputs = list(args[:n]) + [None] * (n - min(len(args), n))
    for i, k in enumerate(in_names):
        if k in params:
            if inputs[i] is not None:
                raise OperatorArgumentError(f"{op.name}() got multiple values for input '{k}'")
            inputs[i] = params.pop(k)
    for k, v in params.items():
        if isinstance(v, Symbol):
            raise OperatorArgumentError(f"{op.name}() has no input named '{k}'; its inputs are "
                                        f"{list(in_names)}")
    return inputs, params


def _optional(op, input_name, params):
    """Whether a missing input is left out rather than created as a variable.

    An input with a ``no_<input>`` parameter (FullyConnected's ``bias``) is left
    out when that flag is set; an input the parameters require (PReLU's
    ``gamma``) is created; any other input with a default in the dense
    definition (e.g. a loss's ``sample_weight=None``) is optional.

    >>> from sparsenet.ops.registry import get_op
    >>> lrelu = get_op('LeakyReLU')
    >>> _optional(lrelu, 'gamma', {'act_type': 'prelu'}), _optional(lrelu, 'gamma',
    ...                                                            {'act_type': 'leaky'})
    (False, True)
    """
    if input_name in required_inputs(op, params):
        return False
    flag = f"no_{input_name}"
    if flag in op.defaults:
        return bool(params.get(flag, op.defaults[flag]))
    return input_name in _optional_inputs(op)


def _optional_inputs(op):
    names = _OPTIONAL.get(op.name)
    if names is None:
        sig = inspect.signature(op.fn).parameters
        names = _OPTIONAL[op.name] = frozenset(
            n for n in op.input_names if sig[n].default is not inspect.Parameter.empty)
    return names


_OPTIONAL = {}


def _name_hint(opname):
    """The automatic node name of an operator: ``_contrib_SparseEmbedding`` -> ``sparseembedding``.

    >>> _name_hint('_contrib_SparseEmbedding'), _name_hint('dot')
    ('sparseembedding', 'dot')
    """
    if opname.startswith("_contrib_"):
        opname = opname[len("_contrib_"):]
    return opname.lower()


def apply(op, inputs, params, name=None, attr=None, hint=None, node_attrs=None):
    """Add a node applying ``op`` (an Operator or its name) to ``inputs``; return its Symbol.

    ``None`` inputs become new variables ``<node>_<input name>`` unless the
    operator's ``no_<input>`` parameter is set; they carry a copy of the node's
    parameters and attributes, as in MXNet. A variable at an input with a
    declared initial value (:func:`~sparsenet.symbol.op_traits.input_inits`)
    and no ``__init__`` of its own gets it. The node's attributes are
    ``node_attrs`` updated with the current AttrScope's and ``attr`` (hidden
    keys such as ``lr_mult`` stored as ``__lr_mult__``).

    >>> import sparsenet as mx
    >>> apply('relu', [mx.sym.var('x')], {}, name='r').list_outputs()
    ['r_output']
    """
    if isinstance(op, str):
        op = registry.get_op(op)
    if attr is not None and not isinstance(attr, dict):
        raise InvalidArgumentTypeError(f"{op.name}(): attr must be a dict of str to str, got "
                                       f"{type(attr).__name__}")
    attrs = dict(node_attrs or {})
    attrs.update((hidden_key(k), str(v)) for k, v in AttrScope.current.get(attr).items())
    bound = op.bind_params({k: v for k, v in params.items()})  # validates names
    explicit = {k: bound[k] for k in params if k in bound}
    node_name = new_node_name(name, hint or _name_hint(op.name))
    var_attrs = {k: _param_text(v) for k, v in explicit.items()}
    var_attrs.update(attrs)
    edges = []
    if op.variadic:
        edges = [_check_symbol(s, op.name, f"#{i}")._outputs[0] for i, s in enumerate(inputs)]
    else:
        names = input_names(op, bound)
        inits = input_inits(op)
        for i, s in enumerate(inputs):
            if s is None:
                if _optional(op, names[i], bound):
                    continue
                s = Symbol([(Node(None, f"{node_name}_{names[i]}", attrs=var_attrs), 0)])
            edge = _check_symbol(s, op.name, names[i])._outputs[0]
            if names[i] in inits and edge[0].op is None:
                edge[0].attrs.setdefault("__init__", inits[names[i]])
            edges.append(edge)
    node = Node(op, node_name, params=explicit, inputs=edges, attrs=attrs)
    return Symbol([(node, i) for i in range(node.num_outputs())])


def _build_tables():
    """One loop over the registry (and the ``mx.nd`` aliases of registry operators)."""
    wrapped = {}

    def wrap(operator):
        if operator.name not in wrapped:
            wrapped[operator.name] = SymbolOperator(operator)
        return wrapped[operator.name]

    table = {}
    for opname in registry.list_ops():
        table[opname] = wrap(registry.OPERATORS[opname])
    for alias in nd.__all__:
        obj = getattr(nd, alias)
        if isinstance(obj, registry.Operator):
            table.setdefault(alias, wrap(obj))
    return table


SYMBOL_OPS = _build_tables()


def symbols_of(namespace):
    """``{name: SymbolOperator}`` for the registry operators an ``mx.nd`` namespace names
    (``mx.sym.sparse``, ``mx.sym.contrib`` and ``mx.sym._internal`` are built from theirs).

    >>> from sparsenet.ndarray import sparse
    >>> symbols_of(sparse)['dot'] is SYMBOL_OPS['dot']
    True
    """
    return {alias: SYMBOL_OPS[obj.name] for alias in namespace.__all__
            if isinstance(obj := getattr(namespace, alias), registry.Operator)}


SPARSE_SYMBOL_OPS = symbols_of(nd_sparse)


# ---------------------------------------------------------------------- scalar-or-symbol helpers
def _either(lhs, rhs, array_op, scalar_op, rscalar_op, fn):
    if isinstance(lhs, Symbol) and isinstance(rhs, Symbol):
        return SYMBOL_OPS[array_op](lhs, rhs)
    if isinstance(lhs, Symbol):
        return SYMBOL_OPS[scalar_op](lhs, scalar=float(rhs))
    if isinstance(rhs, Symbol):
        return SYMBOL_OPS[rscalar_op](rhs, scalar=float(lhs))
    return fn(lhs, rhs)


def maximum(left, right):
    """Elementwise maximum of Symbols and/or scalars.

    >>> import sparsenet as mx
    >>> maximum(mx.sym.var('x'), 0).eval(x=mx.nd.array([-1.0, 2.0]))[0].asnumpy()
    array([0., 2.], dtype=float32)
    """
    return _either(left, right, "broadcast_maximum", "_maximum_scalar", "_maximum_scalar",
                   max)


def minimum(left, right):
    """Elementwise minimum of Symbols and/or scalars.

    >>> import sparsenet as mx
    >>> minimum(mx.sym.var('x'), 1).eval(x=mx.nd.array([0.5, 2.0]))[0].asnumpy()
    array([0.5, 1. ], dtype=float32)
    """
    return _either(left, right, "broadcast_minimum", "_minimum_scalar", "_minimum_scalar",
                   min)


def power(base, exp):
    """``base ** exp`` elementwise for Symbols and/or scalars.

    >>> import sparsenet as mx
    >>> power(2, mx.sym.var('x')).eval(x=mx.nd.array([1.0, 3.0]))[0].asnumpy()
    array([2., 8.], dtype=float32)
    """
    return _either(base, exp, "broadcast_power", "_power_scalar", "_rpower_scalar",
                   lambda a, b: a ** b)


pow = power  # noqa: A001 - MXNet's name


def hypot(left, right):
    """``sqrt(left**2 + right**2)`` elementwise for two Symbols.

    >>> import sparsenet as mx
    >>> a, b = mx.sym.var('a'), mx.sym.var('b')
    >>> hypot(a, b).eval(a=mx.nd.array([3.0]), b=mx.nd.array([4.0]))[0].asnumpy()
    array([5.], dtype=float32)
    """
    return SYMBOL_OPS["broadcast_hypot"](left, right)

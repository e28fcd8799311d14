"""The nodes of a symbol graph, their traversal, and MXNet's attribute codes.

A node is a variable (``op is None``: a placeholder for an array, with optional
``__shape__``, ``__dtype__``, ``__storage_type__``, ``__init__``, ``lr_mult``, ...
attributes) or an operator of the registry applied to the outputs of other
nodes. A :class:`~sparsenet.symbol.Symbol` is a list of ``(node, output index)``.

>>> import sparsenet as mx
>>> y = mx.sym.BatchNorm(mx.sym.var('x'), name='bn')
>>> [n.name for n in topo_order(y._outputs)]
['x', 'bn_gamma', 'bn_beta', 'bn_moving_mean', 'bn_moving_var', 'bn']
>>> y._outputs[0][0].output_names(), y._outputs[0][0].aux_positions()
(['bn_output'], (3, 4))
"""
import ast

from ..base import SparsenetError
from ..ndarray.stype import CSR, DEFAULT, ROW_SPARSE
from .op_traits import aux_inputs, input_names, output_suffixes

__all__ = ["Node", "topo_order", "aux_variable_ids", "STYPE_CODE", "CODE_STYPE", "DTYPE_CODE",
           "CODE_DTYPE", "MXNET_VERSION"]

# MXNet's enums in the JSON attributes
STYPE_CODE = {DEFAULT: 0, ROW_SPARSE: 1, CSR: 2}
CODE_STYPE = {v: k for k, v in STYPE_CODE.items()}
DTYPE_CODE = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
              "int64": 6, "bool": 7, "int16": 8}
CODE_DTYPE = {v: k for k, v in DTYPE_CODE.items()}
MXNET_VERSION = 10901


class Node:
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
        params = self.op.bind_params(self.params)
        return [f"{self.name}_{s}" for s in output_suffixes(self.op, params,
                                                            self.op.num_outputs(params))]

    def aux_positions(self):
        """Positions of this operator node's inputs that are auxiliary states."""
        if self.op is None or self.op.variadic:
            return ()
        aux = aux_inputs(self.op, self.params)
        if not aux:
            return ()
        names = input_names(self.op, self.params)
        return tuple(k for k in range(len(self.inputs)) if names[k] in aux)

    # typed views of a variable's attributes
    def shape(self):
        s = self.attrs.get("__shape__")
        if not s:
            return None
        try:
            if not isinstance(s, str) or len(s) > 4096:
                # builtin: control flow, caught just below and re-raised as SparsenetError
                raise ValueError(s)
            value = ast.literal_eval(s)
            return (int(value),) if isinstance(value, int) else tuple(int(d) for d in value)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            raise SparsenetError(f"variable '{self.name}': __shape__ {str(s)[:80]!r} is not a "
                                 f"shape") from None

    def dtype(self):
        d = self.attrs.get("__dtype__")
        return None if d is None else _coded(CODE_DTYPE, d, self.name, "__dtype__")

    def stype(self):
        s = self.attrs.get("__storage_type__")
        return DEFAULT if s is None else _coded(CODE_STYPE, s, self.name, "__storage_type__")


def _coded(table, value, name, attr):
    """``table[int(value)]``, or the symbol error naming variable ``name`` and ``attr``."""
    try:
        return table[int(value)]
    except (KeyError, ValueError, TypeError, OverflowError):
        raise SparsenetError(f"variable '{name}': {attr} {str(value)[:40]!r} is not one of the "
                             f"codes {sorted(table)}") from None


def aux_variable_ids(nodes):
    """``id`` of every variable among ``nodes`` that feeds an operator's auxiliary input.

    >>> import sparsenet as mx
    >>> bn = mx.sym.BatchNorm(mx.sym.var('x'), name='bn')
    >>> nodes = topo_order(bn._outputs)
    >>> [n.name for n in nodes if id(n) in aux_variable_ids(nodes)]
    ['bn_moving_mean', 'bn_moving_var']
    """
    out = set()
    for n in nodes:
        for k in n.aux_positions():
            child = n.inputs[k][0]
            if child.op is None:
                out.add(id(child))
    return out


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

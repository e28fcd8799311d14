"""``autograd.get_symbol``: the recorded computation of an array, as a Symbol.

Each operator call recorded inside ``autograd.record()`` is tagged by the
registry (:mod:`sparsenet.ops.trace`); :func:`symbol_of_recorded` walks the tags
back from an array and rebuilds the graph with the same operators and
explicit parameters. Autograd variables become variables ``var0``, ``var1``, ...
and arrays outside the graph (constants) variables ``null0``, ... in the order
met; operator nodes are named ``node_0``, ``node_1``, ... (MXNet numbers both
with process-wide counters, so its names depend on what was recorded before).

>>> import sparsenet as mx
>>> x = mx.nd.array([1.0, 2.0]); x.attach_grad()
>>> with mx.autograd.record():
...     z = mx.nd.sum(mx.nd.relu(x))
>>> s = symbol_of_recorded(z)
>>> s.list_arguments(), s.get_internals().list_outputs()
(['var0'], ['var0', 'node_0_output', 'node_1_output'])
>>> s.eval(var0=x)[0].asnumpy()
array([3.], dtype=float32)
"""
from ..base import SparsenetError
from ..ops.trace import record_of
from .graph import Node
from .symbol import Symbol

__all__ = ["symbol_of_recorded"]


def _explicit(op, params):
    """The parameters that differ from the operator's defaults (what MXNet's node keeps)."""
    out = {}
    for k, v in params.items():
        if k not in op.defaults:
            continue
        try:
            same = bool(v == op.defaults[k]) and type(v) is type(op.defaults[k])
        except (TypeError, ValueError):
            same = False
        if not same:
            out[k] = v
    return out


def symbol_of_recorded(x):
    """The Symbol of the operators recorded to compute ``x`` (MXNet's ``autograd.get_symbol``).

    Parameters
    ----------
    x : NDArray
        An array computed inside ``autograd.record()`` from autograd variables.

    Returns
    -------
    Symbol
        One output: ``x``'s producing node. Its arguments are the variables and
        constants the computation read.

    Raises
    ------
    SparsenetError
        When ``x`` is not the result of a recorded operator call.
    """
    head = record_of(x)
    if head is None:
        raise SparsenetError("get_symbol: the NDArray is not part of a computation graph (no "
                             "recorded operator produced it). Did you forget to turn on "
                             "recording with autograd.record()?")
    counters = {"var": 0, "null": 0, "node": 0}
    nodes = {}      # id(call) -> Node
    leaves = {}     # id(array) -> Node (variables and constants)

    def edge(a):
        entry = record_of(a)
        if entry is not None:
            call, k = entry
            return nodes[id(call)], k
        node = leaves.get(id(a))
        if node is None:  # an autograd variable, or an array outside the graph
            prefix = "var" if a._grad is not None else "null"
            node = leaves[id(a)] = Node(None, f"{prefix}{counters[prefix]}")
            counters[prefix] += 1
        return node, 0

    # iterative post-order over the calls (deep graphs must not hit the recursion limit)
    stack = [(head[0], False)]
    while stack:
        call, expanded = stack.pop()
        if id(call) in nodes:
            continue
        op, params, inputs = call
        if not expanded:
            stack.append((call, True))
            for a in reversed(inputs):
                entry = record_of(a)
                if entry is not None and id(entry[0]) not in nodes:
                    stack.append((entry[0], False))
            continue
        edges = [edge(a) for a in inputs]
        name = f"node_{counters['node']}"
        counters["node"] += 1
        nodes[id(call)] = Node(op, name, params=_explicit(op, params), inputs=edges)
    call, k = head
    return Symbol([(nodes[id(call)], k)])

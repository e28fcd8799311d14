"""``autograd.get_symbol``: the recorded computation of an array, as a Symbol.

Each operator call recorded inside ``autograd.record()`` is tagged by the
registry (:mod:`sparsenet.ops.trace`); :func:`symbol_of_recorded` walks the tags
back from an array and rebuilds the graph with the same operators and
explicit parameters. Autograd variables become variables ``var0``, ``var1``, ...
and arrays outside the graph (constants) variables ``null0``, ... in the order
met; operator nodes are named ``node_0``, ``node_1``, ... (MXNet numbers both
with process-wide counters, so its names depend on what was recorded before).

>>> import sparsenet as mx
>>> from sparsenet.ops.trace import note
>>> x = mx.nd.array([1.0, 2.0]); x.attach_grad()
>>> with mx.autograd.record():
...     y = mx.nd.relu(x)
...     note(mx.nd.relu, {}, [x], y)      # what the registry does for every recorded call
...     z = mx.nd.sum(y)
...     note(mx.nd.sum, {}, [y], z)
>>> s = symbol_of_recorded(z)
>>> s.list_arguments(), s.get_internals().list_outputs()
(['var0'], ['var0', 'node_0_output', 'node_1_output'])
>>> s.eval(var0=x)[0].asnumpy()
array([3.], dtype=float32)
"""
from ..base import SparsenetError
from ..ops.trace import record_of
from .symbol import Symbol, _Node

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
    getter = getattr(x, "_autograd_tensor", None)
    t = getter() if getter is not None else None
    head = record_of(t.grad_fn, t.output_nr) if t is not None and t.grad_fn is not None else None
    if head is None:
        raise SparsenetError("get_symbol: the NDArray is not part of a computation graph (no "
                             "recorded operator produced it). Did you forget to turn on "
                             "recording with autograd.record()?")
    counters = {"var": 0, "null": 0, "node": 0}
    nodes = {}      # id(record) -> _Node
    leaves = {}     # id(leaf tensor) -> _Node

    def variable(prefix, key):
        node = leaves.get(key)
        if node is None:
            node = leaves[key] = _Node(None, f"{prefix}{counters[prefix]}")
            counters[prefix] += 1
        return node

    def edge(ref):
        kind = ref[0]
        if kind == "var":
            return variable("var", id(ref[1])), 0
        if kind == "node":
            entry = record_of(ref[1], ref[2])
            if entry is not None:
                record, k = entry
                return build(record), k
        return variable("null", ("const", id(ref))), 0

    def build(record):
        # iterative post-order over the records (deep graphs must not hit the recursion limit)
        stack = [(record, False)]
        while stack:
            rec, expanded = stack.pop()
            if id(rec) in nodes:
                continue
            if not expanded:
                stack.append((rec, True))
                for ref in reversed(rec.inputs):
                    if ref[0] == "node":
                        entry = record_of(ref[1], ref[2])
                        if entry is not None and id(entry[0]) not in nodes:
                            stack.append((entry[0], False))
                continue
            inputs = [edge(ref) for ref in rec.inputs]
            name = f"node_{counters['node']}"
            counters["node"] += 1
            nodes[id(rec)] = _Node(rec.op, name, params=_explicit(rec.op, rec.params),
                                   inputs=inputs)
        return nodes[id(record)]

    record, k = head
    return Symbol([(build(record), k)])

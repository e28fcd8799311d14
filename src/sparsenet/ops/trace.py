"""The operator calls behind recorded arrays, for ``autograd.get_symbol``.

MXNet's recorder keeps the operator graph of every array computed inside
``autograd.record()``; ``autograd.get_symbol(y)`` returns it as a Symbol.
sparsenet records with torch.autograd, whose graph holds torch functions, not
operators, so the registry tags each recorded result's graph node with the
operator call that produced it (:func:`note`). The tag lives in the torch
node's ``metadata`` dict: it lives and dies with the graph, and keeps no input
data alive (inputs are referred to by their graph nodes, a variable by its leaf
tensor, which the graph holds anyway, a constant by its shape and dtype).

>>> import sparsenet as mx
>>> x = mx.nd.array([-1.0, 2.0]); x.attach_grad()
>>> with mx.autograd.record():
...     y = mx.nd.relu(x)
...     note(mx.nd.relu, {}, [x], y)
>>> producer(y).op.name, producer(y).inputs[0][0]
('relu', 'var')
"""
from ..torch_compat import node_metadata

__all__ = ["OpRecord", "note", "producer", "input_ref", "record_of", "TRACE_KEY"]

#: Key of the record table in a torch graph node's ``metadata``.
TRACE_KEY = "sparsenet_op"


class OpRecord:
    """One recorded operator call: the operator, its parameters and references to its inputs.

    ``inputs`` holds, per input, ``('node', grad_fn, output_nr)`` for a result of
    another recorded computation, ``('var', leaf_tensor)`` for an autograd
    variable, or ``('const', shape, dtype)`` for an array outside the graph.
    """

    __slots__ = ("op", "params", "inputs", "num_outputs")

    def __init__(self, op, params, inputs, num_outputs):
        self.op, self.params, self.inputs, self.num_outputs = op, params, inputs, num_outputs

    def __repr__(self):
        return f"<OpRecord {self.op.name} ({len(self.inputs)} inputs)>"


def _graph_tensor(array):
    getter = getattr(array, "_autograd_tensor", None)
    return getter() if getter is not None else None


def input_ref(array):
    """The reference an :class:`OpRecord` keeps to one input array (see the class)."""
    t = _graph_tensor(array)
    if t is not None:
        if t.grad_fn is not None:
            return ("node", t.grad_fn, t.output_nr)
        if t.requires_grad:
            return ("var", t)
    return ("const", tuple(array.shape), array.dtype)


def note(op, params, inputs, result):
    """Tag the graph node of each output of a recorded call ``op(*inputs, **params)``.

    Call it inside ``autograd.record()``, after the call; outputs outside the
    torch graph (no ``grad_fn``: nothing they depend on needs a gradient) and
    outputs that are an input returned unchanged are left untagged.
    """
    outputs = result if isinstance(result, (list, tuple)) else (result,)
    record = None
    for k, out in enumerate(outputs):
        t = out._autograd_tensor()
        grad_fn = t.grad_fn if t is not None else None
        if grad_fn is None:
            continue
        if record is None:
            refs = []
            for a in inputs:  # input_ref, inlined: this runs for every recorded call
                it = a._autograd_tensor()
                if it is not None and it.grad_fn is not None:
                    refs.append(("node", it.grad_fn, it.output_nr))
                else:
                    refs.append(input_ref(a))
            record = OpRecord(op, params, refs, len(outputs))
        nr = t.output_nr
        if any(r[0] == "node" and r[1] is grad_fn and r[2] == nr for r in record.inputs):
            continue  # an input returned unchanged: its producer keeps the tag
        meta = node_metadata(grad_fn)
        if meta is not None:
            table = meta.get(TRACE_KEY)
            if table is None:
                table = meta[TRACE_KEY] = {}
            table[nr] = (record, k)


def record_of(grad_fn, output_nr):
    """``(OpRecord, output index)`` tagged on output ``output_nr`` of a graph node, or None."""
    meta = node_metadata(grad_fn)
    return meta.get(TRACE_KEY, {}).get(output_nr) if meta else None


def producer(array_or_tensor):
    """The :class:`OpRecord` that produced an array (or graph tensor), or None.

    Returns the record only; :func:`record_of` gives the output index too.
    """
    t = array_or_tensor
    if not hasattr(t, "grad_fn"):
        t = _graph_tensor(t)
    if t is None or t.grad_fn is None:
        return None
    entry = record_of(t.grad_fn, t.output_nr)
    return entry[0] if entry is not None else None

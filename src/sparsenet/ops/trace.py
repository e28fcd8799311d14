"""The operator calls behind recorded arrays, for ``autograd.get_symbol``.

MXNet's recorder keeps the operator graph of every array computed inside
``autograd.record()``; ``autograd.get_symbol(y)`` returns it as a Symbol.
sparsenet records with torch.autograd, whose graph holds torch functions, not
operators, so the registry tags each recorded result with the operator call
that produced it (:func:`note`): the array's ``_rec`` slot holds
``((op, params, inputs), output index)``. A tag is one tuple (no work on the
per-step path beyond the assignment); it keeps the input arrays' wrappers alive
as long as the result, as MXNet's graph does.

>>> import sparsenet as mx
>>> x = mx.nd.array([-1.0, 2.0]); x.attach_grad()
>>> with mx.autograd.record():
...     y = mx.nd.relu(x)
>>> (op, params, inputs), k = record_of(y)
>>> op.name, inputs[0] is x, k
('relu', True, 0)
"""

__all__ = ["note", "tag_new", "record_of"]


def note(op, params, inputs, result):
    """Tag each output of a recorded call ``op(*inputs, **params)`` with the call.

    Outputs that nothing requires a gradient for (MXNet records a call only when
    an input is in a graph) and outputs that are an input returned unchanged are
    left untagged.
    """
    if result.__class__ is list:
        call = (op, params, inputs)
        for k, out in enumerate(result):
            if not _is_input(out, inputs):
                _tag(out, (call, k))
    elif not _is_input(result, inputs):
        _tag(result, ((op, params, inputs), 0))


def tag_new(op, params, inputs, result):
    """:func:`note` for one array the call made itself (the registry's dense path), which
    cannot be one of its inputs."""
    _tag(result, ((op, params, inputs), 0))


def _is_input(out, inputs):
    for a in inputs:  # a loop, not any(): this runs for every recorded call
        if a is out:
            return True
    return False


def _tag(out, entry):
    t = out._t
    if t is None:  # sparse: its graph tensor
        t = out._autograd_tensor()
    if t is not None and t.requires_grad:
        out._rec = entry


def record_of(array):
    """``((op, params, inputs), output index)`` of the recorded call that produced
    ``array``, or None."""
    return getattr(array, "_rec", None)

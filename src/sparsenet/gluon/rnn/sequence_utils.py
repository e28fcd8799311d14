"""Sequence plumbing shared by the recurrent cells' ``unroll``: layouts, begin states, masks.

A sequence is either one array (a Symbol or an NDArray) whose layout says where
the time axis ``T`` and the batch axis ``N`` are (``'NTC'`` or ``'TNC'``), or a
list of per-step arrays of shape ``(N, ...)``. :func:`format_sequence` converts
between the two; :func:`begin_state_for` makes the zero states an ``unroll``
starts from when none is given; :func:`mask_padding` and
:func:`reverse_sequences` implement ``valid_length``.

>>> import sparsenet as mx
>>> steps, axis, F, batch = format_sequence(3, mx.nd.zeros((2, 3, 4)), 'NTC', False)
>>> len(steps), steps[0].shape, axis, batch
(3, (2, 4), 1, 2)
"""
from ... import ndarray as nd
from ... import symbol as sym
from ...base import InvalidArgumentError, InvalidArgumentTypeError
from ...ndarray.ndarray import NDArray
from ...symbol.symbol import Symbol

__all__ = ["TENSOR_TYPES", "as_list", "format_sequence", "begin_state_for", "mask_padding",
           "reverse_sequences", "node_name"]

TENSOR_TYPES = (Symbol, NDArray)


def as_list(x):
    """``x`` as a list (a single array becomes a list of one)."""
    if isinstance(x, (list, tuple)):
        return list(x)
    if isinstance(x, Symbol):
        return list(x) if len(x) > 1 else [x]
    return [x]


def node_name(F, name):
    """``{'name': name}`` for symbol calls, ``{}`` for eager ones (which ignore names)."""
    return {"name": name} if F is sym else {}


def _check_layout(layout):
    if not isinstance(layout, str) or layout.count("T") != 1 or layout.count("N") != 1:
        raise InvalidArgumentError(f"unroll: layout must name one time axis 'T' and one batch "
                                   f"axis 'N' (e.g. 'NTC' or 'TNC'), got {layout!r}")


def format_sequence(length, inputs, layout, merge, in_layout=None):
    """Return ``(inputs, time_axis, F, batch_size)`` with ``inputs`` merged or split.

    Parameters
    ----------
    length : int or None
        Number of steps (checked against the inputs when they tell).
    inputs : Symbol, NDArray, or list of them
        One array in ``in_layout`` (default ``layout``), or one array per step.
    layout : str
        ``'NTC'`` or ``'TNC'``: the layout of a merged result.
    merge : bool or None
        True: return one array in ``layout``; False: a list of steps; None: leave
        as given (a merged array is still put in ``layout``).
    in_layout : str, optional
        Layout of a merged ``inputs`` when it differs from ``layout``.

    Returns
    -------
    inputs, axis, F, batch_size
        ``axis`` is the time axis of ``layout``; ``F`` is ``mx.nd`` or ``mx.sym``;
        ``batch_size`` is 0 for Symbols (unknown until bound).
    """
    if inputs is None:
        raise InvalidArgumentError("unroll(inputs=None) is not supported (as in MXNet 1.9.1): "
                                   "create the input variables outside unroll")
    _check_layout(layout)
    axis = layout.find("T")
    batch_axis = layout.find("N")
    batch_size = 0
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, Symbol):
        F = sym
        if merge is False:
            if len(inputs) != 1:
                raise InvalidArgumentError(
                    "unroll: a grouped symbol cannot be the input; pass list(inputs), or "
                    "one symbol for unroll to split")
            if not isinstance(length, int) or length <= 0:
                raise InvalidArgumentError(f"unroll: length must be a positive int to split a "
                                           f"symbol input, got {length!r}")
            inputs = as_list(sym.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=True))
    elif isinstance(inputs, NDArray):
        F = nd
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            steps = inputs.shape[in_axis]
            if length is not None and length != steps:
                raise InvalidArgumentError(
                    f"unroll: length={length} but the inputs have {steps} steps on their "
                    f"time axis {in_axis} (shape {inputs.shape}, layout {layout!r})")
            inputs = as_list(nd.split(inputs, axis=in_axis, num_outputs=steps,
                                      squeeze_axis=True))
    elif isinstance(inputs, (list, tuple)) and inputs:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise InvalidArgumentError(f"unroll: length={length} but {len(inputs)} step "
                                       f"inputs were given")
        if isinstance(inputs[0], Symbol):
            F = sym
        elif isinstance(inputs[0], NDArray):
            F = nd
            batch_size = inputs[0].shape[0]
        else:
            raise InvalidArgumentTypeError(f"unroll: step inputs must be Symbols or NDArrays, "
                                           f"got {type(inputs[0]).__name__}")
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    else:
        raise InvalidArgumentTypeError(f"unroll: inputs must be a Symbol, an NDArray or a "
                                       f"non-empty list of them, got {type(inputs).__name__}")
    if isinstance(inputs, TENSOR_TYPES) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _symbol_zeros(like, batch_axis, shape, name, dtype=None):
    """Zeros of ``shape`` whose 0 (batch) dimension is ``like``'s axis ``batch_axis``.

    Built from ``like`` (``zeros_like``, ``reshape``, ``slice_axis``,
    ``broadcast_axis``), so the graph's forward shape inference sizes it and it
    lives on ``like``'s device; MXNet's own ops, so an exported graph stays
    readable by MXNet.
    """
    if all(int(s) > 0 for s in shape):
        kw = {"dtype": dtype} if dtype is not None else {}
        return sym.zeros(tuple(int(s) for s in shape), name=name, **kw)
    if int(shape[0]) != 0 or any(int(s) <= 0 for s in shape[1:]):
        raise InvalidArgumentError(f"begin_state: only the batch (first) dimension of a state "
                                   f"may be unknown, got shape {tuple(shape)}")
    x = like if batch_axis == 0 else sym.swapaxes(like, dim1=0, dim2=batch_axis)
    z = sym.slice_axis(sym.reshape(sym.zeros_like(x), shape=(0, -1)), axis=1, begin=0, end=1)
    rest = [int(s) for s in shape[1:]]
    if len(rest) != 1:
        z = sym.reshape(z, shape=(0,) + (1,) * len(rest))
    for ax, size in enumerate(rest, 1):
        z = sym.broadcast_axis(z, axis=ax, size=size)
    if dtype is not None:
        z = sym.cast(z, dtype=dtype)
    return sym.identity(z, name=name)


def begin_state_for(cell, F, begin_state, inputs, batch_size, layout="NTC"):
    """``begin_state`` when given, else the cell's zero states for these ``inputs``.

    Eagerly: ``cell.begin_state(func=mx.nd.zeros, batch_size=...)`` on the inputs'
    context. Symbolically: zero states sized from the inputs' batch axis (see
    :func:`_symbol_zeros`), so the graph binds for any batch size.
    """
    if begin_state is not None:
        return list(begin_state) if isinstance(begin_state, tuple) else begin_state
    if F is nd:
        first = inputs if isinstance(inputs, NDArray) else inputs[0]
        with first.context:
            return cell.begin_state(func=nd.zeros, batch_size=batch_size, dtype=first.dtype)
    if isinstance(inputs, Symbol):
        like, batch_axis = inputs, layout.find("N")
    else:
        like, batch_axis = inputs[0], 0

    def func(name=None, shape=None, __layout__=None, dtype=None, **_):  # noqa: N803
        return _symbol_zeros(like, batch_axis, shape, name, dtype)

    return cell.begin_state(func=func, batch_size=0)


def mask_padding(F, data, length, valid_length, time_axis, merge):
    """Zero the steps past each sequence's ``valid_length`` (``SequenceMask``)."""
    if not isinstance(data, TENSOR_TYPES):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                             axis=time_axis)
    if not merge:
        outputs = as_list(F.split(outputs, num_outputs=length, axis=time_axis,
                                  squeeze_axis=True))
    return outputs


def reverse_sequences(sequences, length, valid_length=None):
    """The list of steps reversed; with ``valid_length`` each sequence's valid part only."""
    F = sym if isinstance(sequences[0], Symbol) else nd
    if valid_length is None:
        return list(reversed(sequences))
    rev = F.SequenceReverse(F.stack(*sequences, axis=0), sequence_length=valid_length,
                            use_sequence_length=True)
    return as_list(F.split(rev, axis=0, num_outputs=length, squeeze_axis=True))

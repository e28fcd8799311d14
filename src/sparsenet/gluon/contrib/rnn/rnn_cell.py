"""MXNet's module ``gluon.contrib.rnn.rnn_cell``: :class:`VariationalDropoutCell`,
:class:`LSTMPCell` and :func:`dynamic_unroll`.

>>> import sparsenet as mx
>>> cell = mx.gluon.rnn.GRUCell(3, input_size=2)
>>> cell.initialize()
>>> out, states = mx.gluon.contrib.rnn.rnn_cell.dynamic_unroll(
...     cell, mx.nd.ones((4, 2, 2)), [mx.nd.zeros((2, 3))], valid_length=mx.nd.array([4, 2]))
>>> out.shape, float(out[2:, 1].abs().sum().asscalar())
((4, 2, 3), 0.0)
"""
from .... import ndarray as nd
from .... import symbol as sym_mod
from ....base import InvalidArgumentTypeError, UnsupportedError
from ....ndarray.ndarray import NDArray
from ....symbol.symbol import Symbol
from .lstmp_cell import LSTMPCell
from .variational_dropout import VariationalDropoutCell

__all__ = ["VariationalDropoutCell", "LSTMPCell", "dynamic_unroll"]


def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout="TNC",
                   valid_length=None):
    """Run ``cell`` over the time axis of ``inputs`` (one array) with a ``foreach`` loop.

    On NDArrays the loop runs step by step; on Symbols (a hybridized block) it is one
    ``_foreach`` node (:func:`sparsenet.symbol.contrib.foreach`) whose length is decided
    by the input when the graph runs, as in MXNet.

    Parameters
    ----------
    cell : RecurrentCell
    inputs : NDArray or Symbol
        ``(T, N, ...)`` for ``layout='TNC'``, ``(N, T, ...)`` for ``'NTC'``.
    begin_state : list of NDArray or Symbol
    drop_inputs, drop_outputs : float
        Dropout rates, one mask shared over time.
    layout : {'TNC', 'NTC'}
    valid_length : NDArray or Symbol, optional
        ``(N,)``: each sequence's states stop changing after its last valid step, and
        its outputs past it are zeros.

    Returns
    -------
    outputs : NDArray or Symbol
        In ``layout``.
    states : list of NDArray or Symbol
    """
    if isinstance(inputs, Symbol):
        F = sym_mod  # noqa: N806 - MXNet's name for the array namespace
    elif isinstance(inputs, NDArray):
        F = nd  # noqa: N806
    else:
        raise InvalidArgumentTypeError(f"dynamic_unroll: inputs must be an NDArray or a Symbol, "
                                       f"got {type(inputs).__name__}")
    axis = layout.find("T")
    if axis not in (0, 1) or layout.find("N") not in (0, 1):
        raise UnsupportedError(f"dynamic_unroll: layout must be 'TNC' or 'NTC', got "
                               f"{layout!r}")
    x = inputs if axis == 0 else F.swapaxes(inputs, dim1=0, dim2=1)
    if drop_inputs:
        x = F.Dropout(x, p=drop_inputs, axes=(0,))
    states = list(begin_state)
    if valid_length is None:
        def loop_body(step_input, step_states):
            return cell(step_input, step_states)
    else:
        # the last state counts the steps: (1,) of valid_length's dtype, on its device
        states.append(F.slice_axis(F.zeros_like(valid_length), axis=0, begin=0, end=1))

        def loop_body(step_input, step_states):
            cell_states, iter_no = step_states[:-1], step_states[-1]
            out, new_states = cell(step_input, cell_states)
            alive = F.broadcast_greater(valid_length, iter_no)
            new_states = [F.where(alive, new, old) for new, old in zip(new_states, cell_states)]
            return out, new_states + [iter_no + 1]
    outputs, states = F.contrib.foreach(loop_body, x, states)
    states = list(states)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(0,))
    if valid_length is not None:
        outputs = F.SequenceMask(outputs, sequence_length=valid_length,
                                 use_sequence_length=True, axis=0)
        states = states[:-1]
    if axis != 0:
        outputs = F.swapaxes(outputs, dim1=0, dim2=1)
    return outputs, states

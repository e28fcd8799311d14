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
from ....base import InvalidArgumentTypeError, UnsupportedError
from ....ndarray.ndarray import NDArray
from ....symbol.symbol import Symbol
from .lstmp_cell import LSTMPCell
from .variational_dropout import VariationalDropoutCell

__all__ = ["VariationalDropoutCell", "LSTMPCell", "dynamic_unroll"]


def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout="TNC",
                   valid_length=None):
    """Run ``cell`` over the time axis of ``inputs`` (one array), as MXNet's ``foreach`` loop.

    Parameters
    ----------
    cell : RecurrentCell
    inputs : NDArray
        ``(T, N, ...)`` for ``layout='TNC'``, ``(N, T, ...)`` for ``'NTC'``.
    begin_state : list of NDArray
    drop_inputs, drop_outputs : float
        Dropout rates, one mask shared over time.
    layout : {'TNC', 'NTC'}
    valid_length : NDArray, optional
        ``(N,)``: each sequence's states stop changing after its last valid step, and
        its outputs past it are zeros.

    Returns
    -------
    outputs : NDArray
        In ``layout``.
    states : list of NDArray

    Notes
    -----
    Only NDArrays: MXNet runs the loop on Symbols with its ``foreach`` operator (a
    graph whose length is decided at run time), which sparsenet does not have; unroll
    a known number of steps with ``cell.unroll`` instead.
    """
    if isinstance(inputs, Symbol):
        raise UnsupportedError("dynamic_unroll runs on NDArrays only (sparsenet has no "
                               "symbolic foreach loop); use cell.unroll(length, ...) with a "
                               "known length on Symbols")
    if not isinstance(inputs, NDArray):
        raise InvalidArgumentTypeError(f"dynamic_unroll: inputs must be an NDArray, got "
                                       f"{type(inputs).__name__}")
    axis = layout.find("T")
    if axis not in (0, 1) or layout.find("N") not in (0, 1):
        raise UnsupportedError(f"dynamic_unroll: layout must be 'TNC' or 'NTC', got "
                               f"{layout!r}")
    x = inputs if axis == 0 else nd.swapaxes(inputs, dim1=0, dim2=1)
    if drop_inputs:
        x = nd.Dropout(x, p=drop_inputs, axes=(0,))
    states = list(begin_state)
    outputs = []
    for t in range(x.shape[0]):
        out, new_states = cell(x[t], states)
        if valid_length is not None:
            alive = nd.broadcast_greater(valid_length, nd.full((1,), t, ctx=x.context))
            new_states = [nd.where(alive, new, old) for new, old in zip(new_states, states)]
        outputs.append(out)
        states = list(new_states)
    outputs = nd.stack(*outputs, axis=0)
    if drop_outputs:
        outputs = nd.Dropout(outputs, p=drop_outputs, axes=(0,))
    if valid_length is not None:
        outputs = nd.SequenceMask(outputs, sequence_length=valid_length,
                                  use_sequence_length=True, axis=0)
    if axis != 0:
        outputs = nd.swapaxes(outputs, dim1=0, dim2=1)
    return outputs, states

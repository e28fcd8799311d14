"""Cells made of cells: :class:`SequentialRNNCell` (a stack) and :class:`BidirectionalCell`.

>>> import sparsenet as mx
>>> stack = mx.rnn.SequentialRNNCell()
>>> stack.add(mx.rnn.LSTMCell(4, prefix='lstm_l0_'))
>>> stack.add(mx.rnn.LSTMCell(4, prefix='lstm_l1_'))
>>> out, states = stack.unroll(3, mx.sym.var('data'), merge_outputs=True)
>>> out.infer_shape(data=(2, 3, 5))[1], len(states)
([(2, 3, 4)], 4)
"""
from .. import symbol as sym
from ..base import InvalidArgumentError, UnsupportedError
from .base_cell import (BaseRNNCell, cells_begin_state, cells_pack_weights, cells_state_info,
                        cells_unpack_weights, default_begin_state, split_steps)

__all__ = ["SequentialRNNCell", "BidirectionalCell"]


def _adopt(parent, cells):
    """Share variables between ``parent`` and its ``cells`` (MXNet's rule: params are given
    to the container or to the cells, not both)."""
    for cell in cells:
        if parent._override_cell_params:
            if not cell._own_params:
                raise InvalidArgumentError(f"{type(parent).__name__}: give params to the "
                                           f"container or to the child cells, not both")
            cell.params._params.update(parent.params._params)
        parent.params._params.update(cell.params._params)


class SequentialRNNCell(BaseRNNCell):
    """A stack of cells: each cell's output is the next one's input.

    Parameters
    ----------
    params : RNNParams, optional
        Variables shared with the cells added.
    """

    def __init__(self, params=None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Append ``cell`` (a :class:`BaseRNNCell`) to the stack."""
        if not isinstance(cell, BaseRNNCell):
            raise InvalidArgumentError(f"SequentialRNNCell.add: expected an mx.rnn cell, got "
                                       f"{type(cell).__name__}")
        self._cells.append(cell)
        _adopt(self, [cell])

    @property
    def state_info(self):
        return cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        """The begin states of every cell, in order (see :meth:`BaseRNNCell.begin_state`)."""
        self._check_unmodified()
        return cells_begin_state(self._cells, **kwargs)

    def unpack_weights(self, args):
        return cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states, p = [], 0
        for cell in self._cells:
            if isinstance(cell, BidirectionalCell):
                raise UnsupportedError("SequentialRNNCell: a BidirectionalCell cannot be "
                                       "stepped; use unroll")
            n = len(cell.state_info)
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        if begin_state is None:
            begin_state = default_begin_state(self, inputs, layout)
        p, next_states = 0, []
        last = len(self._cells) - 1
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=begin_state[p:p + n],
                                         layout=layout,
                                         merge_outputs=None if i < last else merge_outputs)
            p += n
            next_states.extend(states)
        return inputs, next_states


class BidirectionalCell(BaseRNNCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward in time and concatenates their outputs.

    Parameters
    ----------
    l_cell, r_cell : BaseRNNCell
    params : RNNParams, optional
    output_prefix : str, default ``'bi_'``
        Names of the outputs: ``<output_prefix>t<i>`` per step, ``<output_prefix>out``
        when merged.
    """

    _steppable = False

    def __init__(self, l_cell, r_cell, params=None, output_prefix="bi_"):
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        _adopt(self, [l_cell, r_cell])
        self._cells = [l_cell, r_cell]

    def unpack_weights(self, args):
        return cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        raise UnsupportedError("BidirectionalCell cannot be stepped; use unroll")

    @property
    def state_info(self):
        return cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        """The begin states of the forward cell, then of the backward cell."""
        self._check_unmodified()
        return cells_begin_state(self._cells, **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        steps = split_steps(length, inputs, layout)
        axis = layout.find("T")
        if begin_state is None:
            begin_state = default_begin_state(self, steps, layout)
        l_cell, r_cell = self._cells
        n_l = len(l_cell.state_info)
        l_out, l_states = l_cell.unroll(length, inputs=steps, begin_state=begin_state[:n_l],
                                        layout=layout, merge_outputs=merge_outputs)
        r_out, r_states = r_cell.unroll(length, inputs=list(reversed(steps)),
                                        begin_state=begin_state[n_l:], layout=layout,
                                        merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = isinstance(l_out, sym.Symbol) and isinstance(r_out, sym.Symbol)
            if not merge_outputs:
                l_out = split_steps(length, l_out, layout) if isinstance(l_out, sym.Symbol) \
                    else l_out
                r_out = split_steps(length, r_out, layout) if isinstance(r_out, sym.Symbol) \
                    else r_out
        if merge_outputs:
            outputs = sym.Concat(l_out, sym.reverse(r_out, axis=axis), dim=2,
                                 name=f"{self._output_prefix}out")
        else:
            outputs = [sym.Concat(l_o, r_o, dim=1, name=f"{self._output_prefix}t{i}")
                       for i, (l_o, r_o) in enumerate(zip(l_out, reversed(r_out)))]
        return outputs, [l_states, r_states]

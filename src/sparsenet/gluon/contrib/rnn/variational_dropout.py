""":class:`VariationalDropoutCell`: dropout with one mask per sequence (Gal and Ghahramani 2016).

The masks of the inputs, of the first state and of the outputs are drawn at the
first step and kept until :meth:`~VariationalDropoutCell.reset` (``unroll`` resets);
when stepping by hand, call ``reset()`` between sequences. Outside training the
cell is its base cell.

>>> import sparsenet as mx
>>> cell = mx.gluon.contrib.rnn.VariationalDropoutCell(mx.gluon.rnn.RNNCell(3, input_size=2),
...                                                   drop_inputs=0.5)
>>> cell.initialize()
>>> out, _ = cell.unroll(4, mx.nd.ones((2, 4, 2)), merge_outputs=True)
>>> out.shape
(2, 4, 3)
"""
from ....base import InvalidArgumentError, UnsupportedError
from ...rnn.bidirectional import BidirectionalCell
from ...rnn.cell_modifiers import ModifierCell
from ...rnn.sequence_utils import (TENSOR_TYPES, begin_state_for, format_sequence,
                                   mask_padding)

__all__ = ["VariationalDropoutCell"]


class VariationalDropoutCell(ModifierCell):
    """Variational dropout on a base cell's inputs, first state and outputs.

    Parameters
    ----------
    base_cell : RecurrentCell
    drop_inputs : float, default 0
    drop_states : float, default 0
        Applied to the first state (``h``); not with a BidirectionalCell.
    drop_outputs : float, default 0
    """

    def __init__(self, base_cell, drop_inputs=0., drop_states=0., drop_outputs=0.):
        if drop_states and isinstance(base_cell, BidirectionalCell):
            raise UnsupportedError("BidirectionalCell doesn't support variational state "
                                   "dropout. Please add VariationalDropoutCell to the cells "
                                   "underneath instead.")
        for name, p in (("drop_inputs", drop_inputs), ("drop_states", drop_states),
                        ("drop_outputs", drop_outputs)):
            if not 0 <= p < 1:
                raise InvalidArgumentError(f"VariationalDropoutCell: {name} must lie in [0, 1), "
                                           f"got {p}")
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _alias(self):
        return "vardrop"

    def reset(self):
        super().reset()
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def __repr__(self):
        return (f"{type(self).__name__}(p_out = {self.drop_outputs}, "
                f"p_state = {self.drop_states})")

    def hybrid_forward(self, F, inputs, states):
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = F.Dropout(F.ones_like(states[0]), p=self.drop_states)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = F.Dropout(F.ones_like(inputs), p=self.drop_inputs)
        if self.drop_states:
            states = list(states)
            states[0] = states[0] * self.drop_states_mask
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        output, next_states = self.base_cell(inputs, states)
        if self.drop_outputs and self.drop_outputs_mask is None:
            self.drop_outputs_mask = F.Dropout(F.ones_like(output), p=self.drop_outputs)
        if self.drop_outputs:
            output = output * self.drop_outputs_mask
        return output, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unroll; without state dropout the masks apply to the whole sequence at once."""
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs,
                                  valid_length=valid_length)
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, True)
        states = begin_state_for(self, F, begin_state, inputs, batch_size, layout)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        outputs, states = self.base_cell.unroll(length, inputs, states, layout,
                                                merge_outputs=True, valid_length=valid_length)
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, TENSOR_TYPES)
        outputs, _, _, _ = format_sequence(length, outputs, layout, merge_outputs)
        if valid_length is not None:
            outputs = mask_padding(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, states

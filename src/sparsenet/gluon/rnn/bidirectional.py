""":class:`BidirectionalCell`: one cell reads the sequence forwards, another backwards.

The outputs of both are concatenated on the feature axis (forward first); the
states are the forward cell's then the backward cell's. With ``valid_length``
each sequence's backward pass starts at its own last valid step.

>>> import sparsenet as mx
>>> bi = mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.GRUCell(2, input_size=3),
...                                     mx.gluon.rnn.GRUCell(2, input_size=3))
>>> bi.initialize()
>>> out, states = bi.unroll(4, mx.nd.ones((5, 4, 3)), merge_outputs=True)
>>> out.shape, len(states)
((5, 4, 4), 2)
"""
from ...base import UnsupportedError
from .basic_cells import HybridRecurrentCell
from .sequence_utils import (TENSOR_TYPES, begin_state_for, format_sequence, mask_padding,
                             node_name, reverse_sequences)

__all__ = ["BidirectionalCell"]


class BidirectionalCell(HybridRecurrentCell):
    """Bidirectional recurrent cell (it can only be unrolled, not stepped).

    Parameters
    ----------
    l_cell : RecurrentCell
        Reads the sequence forwards.
    r_cell : RecurrentCell
        Reads it backwards.
    output_prefix : str, default ``'bi_'``
        Prefix of the concatenated outputs' symbol names.
    """

    def __init__(self, l_cell, r_cell, output_prefix="bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise UnsupportedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self):
        return (f"{type(self).__name__}(forward={self._children['l_cell']!r}, "
                f"backward={self._children['r_cell']!r})")

    def state_info(self, batch_size=0):
        return [info for c in self._children.values() for info in c.state_info(batch_size)]

    def begin_state(self, **kwargs):
        """The forward cell's begin states, then the backward cell's."""
        self._check_unmodified()
        return [s for c in self._children.values() for s in c.begin_state(**kwargs)]

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unroll both cells and concatenate their outputs (see :meth:`RecurrentCell.unroll`)."""
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, False)
        reversed_inputs = reverse_sequences(inputs, length, valid_length)
        states = begin_state_for(self, F, begin_state, inputs, batch_size, layout)
        l_cell, r_cell = self._children["l_cell"], self._children["r_cell"]
        n_left = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_left],
                                            layout=layout, merge_outputs=merge_outputs,
                                            valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs,
                                            begin_state=states[n_left:], layout=layout,
                                            merge_outputs=False, valid_length=valid_length)
        reversed_r_outputs = reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, TENSOR_TYPES)
            l_outputs, _, _, _ = format_sequence(length, l_outputs, layout, merge_outputs)
            reversed_r_outputs, _, _, _ = format_sequence(length, reversed_r_outputs, layout,
                                                          merge_outputs)
        if merge_outputs:
            if not isinstance(reversed_r_outputs, TENSOR_TYPES):
                reversed_r_outputs = F.stack(*reversed_r_outputs, axis=axis)
            outputs = F.concat(l_outputs, reversed_r_outputs, dim=2,
                               **node_name(F, f"{self._output_prefix}out"))
        else:
            outputs = [F.concat(l_o, r_o, dim=1, **node_name(F, f"{self._output_prefix}t{i}"))
                       for i, (l_o, r_o) in enumerate(zip(l_outputs, reversed_r_outputs))]
        if valid_length is not None:
            outputs = mask_padding(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, l_states + r_states


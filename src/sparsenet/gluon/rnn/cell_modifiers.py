"""Cells that modify another cell: :class:`ModifierCell` (the base), :class:`ZoneoutCell`,
:class:`ResidualCell`.

A modifier wraps a *base cell* and shares its parameters and states; once
wrapped, the base cell must not be stepped or asked for begin states directly
(the modifier is). The modifier's prefix is the base cell's plus its alias.

>>> import sparsenet as mx
>>> cell = mx.gluon.rnn.ResidualCell(mx.gluon.rnn.GRUCell(3, input_size=3, prefix='gru_'))
>>> cell.initialize(mx.init.Zero())
>>> out, _ = cell.unroll(2, mx.nd.ones((1, 2, 3)), merge_outputs=True)
>>> out.asnumpy()          # GRU output 0 (zero weights, zero state) plus the input
array([[[1., 1., 1.],
        [1., 1., 1.]]], dtype=float32)
>>> sorted(cell.collect_params().keys())
['gru_h2h_bias', 'gru_h2h_weight', 'gru_i2h_bias', 'gru_i2h_weight']
"""
from ... import symbol as sym
from ...base import InvalidArgumentError, InvalidArgumentTypeError, StateError, UnsupportedError
from .bidirectional import BidirectionalCell
from .basic_cells import HybridRecurrentCell, RecurrentCell
from .sequence_utils import TENSOR_TYPES, format_sequence, mask_padding, node_name

__all__ = ["ModifierCell", "ZoneoutCell", "ResidualCell"]


class ModifierCell(HybridRecurrentCell):
    """Base class of modifier cells: wraps ``base_cell`` (see the module docstring).

    Parameters
    ----------
    base_cell : RecurrentCell
        The cell to modify; it cannot be modified twice.
    """

    def __init__(self, base_cell):
        if not isinstance(base_cell, RecurrentCell):
            raise InvalidArgumentTypeError(f"{type(self).__name__}: base_cell must be a "
                                           f"recurrent cell, got {type(base_cell).__name__}")
        if base_cell._modified:
            raise StateError(f"Cell {base_cell.name} is already modified. One cell cannot be "
                             f"modified twice")
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        """The base cell's parameters."""
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=sym.zeros, **kwargs):
        """The base cell's begin states (see :meth:`RecurrentCell.begin_state`)."""
        self._check_unmodified()
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def hybrid_forward(self, F, inputs, states):
        raise UnsupportedError(f"{type(self).__name__} must define hybrid_forward()")

    def __repr__(self):
        return f"{type(self).__name__}({self.base_cell!r})"


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al. 2016): while training, each output and state element keeps its
    previous value with probability ``zoneout_outputs`` / ``zoneout_states``.

    Parameters
    ----------
    base_cell : RecurrentCell
        Not a BidirectionalCell (it cannot be stepped).
    zoneout_outputs : float, default 0
    zoneout_states : float, default 0
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, BidirectionalCell):
            raise UnsupportedError("BidirectionalCell doesn't support zoneout since it doesn't "
                                   "support step. Please add ZoneoutCell to the cells "
                                   "underneath instead.")
        for name, p in (("zoneout_outputs", zoneout_outputs),
                        ("zoneout_states", zoneout_states)):
            if not 0 <= p < 1:
                raise InvalidArgumentError(f"ZoneoutCell: {name} must lie in [0, 1), got {p}")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self):
        return (f"{type(self).__name__}(p_out={self.zoneout_outputs}, "
                f"p_state={self.zoneout_states}, {self.base_cell!r})")

    def _alias(self):
        return "zoneout"

    def reset(self):
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        p_outputs, p_states = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        def mask(p, like):
            return F.Dropout(F.ones_like(like), p=p)

        prev_output = self._prev_output
        if prev_output is None:
            prev_output = F.zeros_like(next_output)
        output = (F.where(mask(p_outputs, next_output), next_output, prev_output)
                  if p_outputs != 0. else next_output)
        states = ([F.where(mask(p_states, new), new, old)
                   for new, old in zip(next_states, states)]
                  if p_states != 0. else next_states)
        self._prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds the step input to the base cell's output (Wu et al. 2016): ``out = cell(x) + x``.

    Parameters
    ----------
    base_cell : RecurrentCell
        Its output size must equal its input size.
    """

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = F.elemwise_add(output, inputs, **node_name(F, f"t{self._counter}_fwd"))
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unroll the base cell, then add the inputs (zero past ``valid_length``)."""
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, TENSOR_TYPES)
        inputs, axis, F, _ = format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = mask_padding(F, inputs, length, valid_length, axis, merge_outputs)
        if merge_outputs:
            outputs = F.elemwise_add(outputs, inputs)
        else:
            outputs = [F.elemwise_add(o, x) for o, x in zip(outputs, inputs)]
        return outputs, states

"""Cells that change other cells: :class:`DropoutCell`, and the modifiers
:class:`ModifierCell`, :class:`ZoneoutCell` and :class:`ResidualCell`.

A modifier wraps a base cell; afterwards the base cell is used through it only.

>>> import sparsenet as mx
>>> cell = mx.rnn.ResidualCell(mx.rnn.GRUCell(5, prefix='gru_'))
>>> out, _ = cell.unroll(2, mx.sym.var('data'), merge_outputs=True)
>>> out.infer_shape(data=(3, 2, 5))[1]
[(3, 2, 5)]
"""
from numbers import Number

from .. import symbol as sym
from ..base import InvalidArgumentError, InvalidArgumentTypeError, UnsupportedError
from .base_cell import BaseRNNCell, merge_steps, split_steps
from .containers import SequentialRNNCell

__all__ = ["DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell"]


class DropoutCell(BaseRNNCell):
    """Dropout on the input (no state).

    Parameters
    ----------
    dropout : float
        Fraction of the elements dropped while training.
    prefix : str, default ``'dropout_'``
    params : RNNParams, optional
    """

    def __init__(self, dropout, prefix="dropout_", params=None):
        super().__init__(prefix, params)
        if not isinstance(dropout, Number) or isinstance(dropout, bool):
            raise InvalidArgumentTypeError(f"DropoutCell: dropout must be a number, got "
                                           f"{type(dropout).__name__}")
        if not 0 <= dropout < 1:
            raise InvalidArgumentError(f"DropoutCell: dropout must be in [0, 1), got {dropout}")
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = sym.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        if isinstance(inputs, sym.Symbol) and merge_outputs is not False:
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=[], layout=layout,
                              merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """Base class of the cells that modify a base cell (its variables and states are the
    base cell's).

    Parameters
    ----------
    base_cell : BaseRNNCell
    """

    def __init__(self, base_cell):
        if not isinstance(base_cell, BaseRNNCell):
            raise InvalidArgumentTypeError(f"{type(self).__name__}: expected an mx.rnn cell, "
                                           f"got {type(base_cell).__name__}")
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=sym.zeros, **kwargs):
        """The base cell's begin states (``init_sym`` or ``func=`` makes each one)."""
        self._check_unmodified()
        func = kwargs.pop("func", init_sym)
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise UnsupportedError(f"{type(self).__name__} does not define one step (__call__)")


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al., 2016): while training, each output and state element keeps
    its previous value with probability ``zoneout_outputs`` / ``zoneout_states``.

    Parameters
    ----------
    base_cell : BaseRNNCell
        A steppable cell (not fused, not bidirectional).
    zoneout_outputs : float, default 0
    zoneout_states : float, default 0
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if not base_cell._steppable or (isinstance(base_cell, SequentialRNNCell) and not all(
                c._steppable for c in base_cell._cells)):
            raise UnsupportedError(f"ZoneoutCell: {type(base_cell).__name__} cannot be stepped "
                                   f"(a FusedRNNCell: unfuse() it first; a bidirectional cell: "
                                   f"wrap the cells underneath instead)")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        p_out, p_states = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        def keep_new(p, like):  # 1 where the new value is kept (0 with probability p)
            return sym.Dropout(sym.ones_like(like), p=p)

        prev_output = self.prev_output if self.prev_output is not None else \
            sym.zeros_like(next_output)
        output = sym.where(keep_new(p_out, next_output), next_output, prev_output) \
            if p_out != 0. else next_output
        states = [sym.where(keep_new(p_states, new), new, old)
                  for new, old in zip(next_states, states)] if p_states != 0. else next_states
        self.prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output (Wu et al., 2016).

    Parameters
    ----------
    base_cell : BaseRNNCell
    """

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        return sym.elemwise_add(output, inputs, name=f"{output.name}_plus_residual"), states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, sym.Symbol)
        if merge_outputs:
            inputs = merge_steps(length, inputs, layout, True)
            return sym.elemwise_add(outputs, inputs,
                                    name=f"{outputs.name}_plus_residual"), states
        inputs = split_steps(length, inputs, layout)
        outputs = split_steps(length, outputs, layout)
        return [sym.elemwise_add(o, x, name=f"{o.name}_plus_residual")
                for o, x in zip(outputs, inputs)], states

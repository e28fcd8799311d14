"""Stacks of recurrent cells (:class:`SequentialRNNCell`, :class:`HybridSequentialRNNCell`) and
:class:`DropoutCell`.

A stack steps its cells one after another, each one's output the next one's
input; its states are the concatenation of its cells' states. ``unroll`` unrolls
each cell over the whole sequence in turn (so a :class:`BidirectionalCell` may be
a layer of the stack).

>>> import sparsenet as mx
>>> stack = mx.gluon.rnn.SequentialRNNCell()
>>> stack.add(mx.gluon.rnn.LSTMCell(4, input_size=3))
>>> stack.add(mx.gluon.rnn.DropoutCell(0.5))
>>> stack.add(mx.gluon.rnn.GRUCell(2, input_size=4))
>>> stack.initialize()
>>> out, states = stack.unroll(3, mx.nd.ones((5, 3, 3)), merge_outputs=True)
>>> out.shape, [s.shape for s in states]
((5, 3, 2), [(5, 4), (5, 4), (5, 2)])
"""
import numbers

from ...base import InvalidArgumentError, InvalidArgumentTypeError, UnsupportedError
from ..utils import _indent
from .bidirectional import BidirectionalCell
from .basic_cells import HybridRecurrentCell, RecurrentCell
from .sequence_utils import TENSOR_TYPES, begin_state_for, format_sequence, node_name

__all__ = ["SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell"]


class _StackMixin:
    """What both stacks share: ``add``, states, stepping, unrolling, indexing."""

    def __repr__(self):
        body = "\n".join(f"({i}): {_indent(repr(m), 2)}" for i, m in self._children.items())
        return f"{type(self).__name__}(\n{body}\n)"

    def add(self, cell):
        """Append ``cell`` (a recurrent cell) to the stack."""
        if not isinstance(cell, RecurrentCell):
            raise InvalidArgumentTypeError(f"{type(self).__name__}.add: expected a recurrent "
                                           f"cell, got {type(cell).__name__}")
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return [info for c in self._children.values() for info in c.state_info(batch_size)]

    def begin_state(self, **kwargs):
        """The begin states of every cell, in order (see :meth:`RecurrentCell.begin_state`)."""
        self._check_unmodified()
        return [s for c in self._children.values() for s in c.begin_state(**kwargs)]

    def _step(self, inputs, states):
        self._counter += 1
        next_states, p = [], 0
        for cell in self._children.values():
            if isinstance(cell, BidirectionalCell):
                raise UnsupportedError("a stack holding a BidirectionalCell cannot be stepped; "
                                       "use unroll")
            n = len(cell.state_info())
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unroll each cell over the sequence in turn (see :meth:`RecurrentCell.unroll`)."""
        self.reset()
        inputs, _, F, batch_size = format_sequence(length, inputs, layout, None)
        states = begin_state_for(self, F, begin_state, inputs, batch_size, layout)
        cells = list(self._children.values())
        next_states, p = [], 0
        for i, cell in enumerate(cells):
            n = len(cell.state_info())
            inputs, state = cell.unroll(length, inputs=inputs, begin_state=states[p:p + n],
                                        layout=layout,
                                        merge_outputs=None if i < len(cells) - 1
                                        else merge_outputs,
                                        valid_length=valid_length)
            p += n
            next_states.extend(state)
        return inputs, next_states

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self):
        return len(self._children)

    def __call__(self, inputs, states):
        """One step of every cell in turn (the stack's own states, in order)."""
        return self._step(inputs, states)


class SequentialRNNCell(_StackMixin, RecurrentCell):
    """A stack of recurrent cells (any kind, hybridizable or not).

    Parameters
    ----------
    prefix : str, optional
    params : ParameterDict, optional
    """


class HybridSequentialRNNCell(_StackMixin, HybridRecurrentCell):
    """A stack of hybridizable recurrent cells; it may be used inside a HybridBlock.

    Parameters
    ----------
    prefix : str, optional
    params : ParameterDict, optional
    """

    def hybrid_forward(self, F, inputs, states):
        return self._step(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Dropout on each step's input (no state).

    Parameters
    ----------
    rate : float
        Fraction of elements dropped while training.
    axes : tuple of int, default ()
        Axes along which one mask is shared.

    Examples
    --------
    >>> import sparsenet as mx
    >>> cell = mx.gluon.rnn.DropoutCell(0.5)
    >>> cell(mx.nd.ones((1, 2)), [])[0].asnumpy()     # outside training: identity
    array([[1., 1.]], dtype=float32)
    """

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        if not isinstance(rate, numbers.Number) or isinstance(rate, bool):
            raise InvalidArgumentTypeError(f"DropoutCell: rate must be a number, got "
                                           f"{type(rate).__name__}")
        if not 0 <= rate < 1:
            raise InvalidArgumentError(f"DropoutCell: rate must lie in [0, 1), got {rate}")
        self._rate = rate
        self._axes = tuple(axes)

    def __repr__(self):
        return f"{type(self).__name__}(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return "dropout"

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(inputs, p=self._rate, axes=self._axes,
                               **node_name(F, f"t{self._counter}_fwd"))
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Dropout over the whole sequence at once when it is one array."""
        self.reset()
        inputs, _, F, _ = format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, TENSOR_TYPES):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)

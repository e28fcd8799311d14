"""The legacy one-step cells :class:`RNNCell`, :class:`LSTMCell` and :class:`GRUCell`.

Each step is ``gluon.rnn``'s (the same gate order and formulas: LSTM gates input,
forget, cell, output; GRU reset, update, new, cuDNN's variant), computed by the
matching ``mx.gluon.rnn`` cell's ``hybrid_forward`` on ``mx.sym`` with this cell's
variables, inside the cell's name prefix: nodes are ``<prefix>t<step>_i2h``, ...,
``<prefix>t<step>_out`` as in MXNet 1.9.1.

>>> import sparsenet as mx
>>> cell = mx.rnn.LSTMCell(4, prefix='lstm_l0_')
>>> out, (h, c) = cell(mx.sym.var('x'), [mx.sym.var('h'), mx.sym.var('c')])
>>> out.name
'lstm_l0_t0_out'
>>> sorted(cell.params._params)  # doctest: +NORMALIZE_WHITESPACE
['lstm_l0_h2h_bias', 'lstm_l0_h2h_weight',
 'lstm_l0_i2h_bias', 'lstm_l0_i2h_weight']
"""
from .. import initializer
from ..base import InvalidArgumentError
from ..gluon import rnn as gluon_rnn
from .base_cell import BaseRNNCell, gluon_step

__all__ = ["RNNCell", "LSTMCell", "GRUCell"]


class _GluonStepCell(BaseRNNCell):
    """A cell whose step is a ``gluon.rnn`` cell's ``hybrid_forward`` on this cell's variables."""

    _gluon_cell = None
    _gate_list = ("",)

    def __init__(self, num_hidden, prefix, params, i2h_bias_init=None, **step_kwargs):
        super().__init__(prefix=prefix, params=params)
        if not isinstance(num_hidden, int) or isinstance(num_hidden, bool) or num_hidden <= 0:
            raise InvalidArgumentError(f"{type(self).__name__}: num_hidden must be a positive "
                                       f"int, got {num_hidden!r}")
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._hW = self.params.get("h2h_weight")
        bias_kwargs = {"init": i2h_bias_init} if i2h_bias_init is not None else {}
        self._iB = self.params.get("i2h_bias", **bias_kwargs)
        self._hB = self.params.get("h2h_bias")
        # the step's math; its own (gluon) parameters are never used
        self._step = self._gluon_cell(num_hidden, prefix=prefix, **step_kwargs)

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}
                for _ in range(self._num_states)]

    _num_states = 1

    @property
    def _gate_names(self):
        return self._gate_list

    def __call__(self, inputs, states):
        return gluon_step(self, inputs, states)


class RNNCell(_GluonStepCell):
    """Elman cell: ``h_t = activation(W_i2h x_t + b_i2h + W_h2h h_{t-1} + b_h2h)``.

    Parameters
    ----------
    num_hidden : int
        Size of the output and the state.
    activation : str or callable, default 'tanh'
        An ``Activation`` ``act_type`` or a function of a Symbol (called with ``name=``).
    prefix : str, default ``'rnn_'``
    params : RNNParams, optional
    """

    _gluon_cell = gluon_rnn.RNNCell

    def __init__(self, num_hidden, activation="tanh", prefix="rnn_", params=None):
        super().__init__(num_hidden, prefix, params, activation=activation)
        self._activation = activation


class LSTMCell(_GluonStepCell):
    """Long short-term memory cell; states ``[h, c]``.

    Parameters
    ----------
    num_hidden : int
    prefix : str, default ``'lstm_'``
    params : RNNParams, optional
    forget_bias : float, default 1.0
        ``<prefix>i2h_bias`` is initialised (``mx.init.LSTMBias``) with the forget
        gate's quarter set to this.
    """

    _gluon_cell = gluon_rnn.LSTMCell
    _gate_list = ("_i", "_f", "_c", "_o")
    _num_states = 2

    def __init__(self, num_hidden, prefix="lstm_", params=None, forget_bias=1.0):
        super().__init__(num_hidden, prefix, params,
                         i2h_bias_init=initializer.LSTMBias(forget_bias=forget_bias))


class GRUCell(_GluonStepCell):
    """Gated recurrent unit, cuDNN's variant (the reset gate applies after ``W_hn h``).

    Parameters
    ----------
    num_hidden : int
    prefix : str, default ``'gru_'``
    params : RNNParams, optional
    """

    _gluon_cell = gluon_rnn.GRUCell
    _gate_list = ("_r", "_z", "_o")

    def __init__(self, num_hidden, prefix="gru_", params=None):
        super().__init__(num_hidden, prefix, params)

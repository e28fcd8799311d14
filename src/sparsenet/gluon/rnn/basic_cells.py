"""Recurrent cells: the bases :class:`RecurrentCell` and :class:`HybridRecurrentCell`, and the
one-step cells :class:`RNNCell`, :class:`LSTMCell` and :class:`GRUCell` (MXNet 1.9.1's
``gluon.rnn``, parameter names and gate order included).

A cell computes one time step, ``output, new_states = cell(x_t, states)``;
``cell.unroll(length, inputs)`` runs it over a sequence. On NDArrays the steps run
eagerly (under ``autograd.record()`` they are differentiated); on Symbols they
build a graph that binds in a Module or an executor. Parameters are
``<prefix>i2h_weight``, ``<prefix>h2h_weight``, ``<prefix>i2h_bias``,
``<prefix>h2h_bias``, with the gates stacked along the first axis in MXNet's
order (LSTM: input, forget, cell, output; GRU: reset, update, new), so MXNet-saved
parameters give MXNet's outputs.

>>> import sparsenet as mx
>>> cell = mx.gluon.rnn.LSTMCell(4, input_size=3, prefix='lstm0_')
>>> cell.initialize()
>>> out, states = cell.unroll(5, mx.nd.ones((2, 5, 3)), layout='NTC', merge_outputs=True)
>>> out.shape, [s.shape for s in states]
((2, 5, 4), [(2, 4), (2, 4)])
>>> sorted(cell.collect_params().keys())
['lstm0_h2h_bias', 'lstm0_h2h_weight', 'lstm0_i2h_bias', 'lstm0_i2h_weight']
"""
from ... import ndarray as nd
from ...base import InvalidArgumentError, StateError, UnsupportedError
from ...ndarray.ndarray import NDArray
from ...symbol.name import Prefix
from ...symbol.symbol import Symbol
from ..block import Block, HybridBlock
from ..hybrid import symbolic_forward
from ..nn.activations import LeakyReLU
from ..parameter import DeferredInitializationError
from .sequence_utils import begin_state_for, format_sequence, mask_padding, node_name

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell"]


class RecurrentCell(Block):
    """Abstract base class of recurrent cells.

    Parameters
    ----------
    prefix : str, optional
        Prefix of the cell's (and its parameters') names.
    params : ParameterDict, optional
        Share these parameters.
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step counters (``unroll`` does it) before using the cell for a new sequence."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            if isinstance(cell, RecurrentCell):
                cell.reset()

    def state_info(self, batch_size=0):
        """Shape and layout of each state: a list of ``{'shape': ..., '__layout__': ...}``."""
        raise UnsupportedError(f"{type(self).__name__} must define state_info()")

    def _check_unmodified(self):
        if self._modified:
            raise StateError("After applying modifier cells (e.g. ZoneoutCell) the base cell "
                             "cannot be called directly. Call the modifier cell instead.")

    def begin_state(self, batch_size=0, func=nd.zeros, **kwargs):
        """The initial states: ``func(name=..., shape=..., **kwargs)`` for each state.

        Parameters
        ----------
        batch_size : int
            The batch dimension (required for NDArrays).
        func : callable, default mx.nd.zeros
            Makes one state: ``mx.nd.zeros``, ``mx.nd.ones``, ``mx.sym.zeros``,
            ``mx.sym.var`` (to feed the states as inputs), ...
        **kwargs
            More arguments of ``func`` (``dtype``, ``ctx``, ...).

        Returns
        -------
        list
            One array or symbol per state, named ``<prefix>begin_state_<k>``.
        """
        self._check_unmodified()
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info) if info is not None else {}
            info.update(kwargs)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}", **info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Run the cell over ``length`` time steps.

        Parameters
        ----------
        length : int
            Number of steps.
        inputs : Symbol, NDArray, or list of them
            One array of layout ``layout`` (``(N, T, C)`` or ``(T, N, C)``), or a
            list of ``length`` arrays ``(N, C)``.
        begin_state : list, optional
            The initial states (default: zeros, see :meth:`begin_state`).
        layout : {'NTC', 'TNC'}
        merge_outputs : bool, optional
            True: one array in ``layout``; False: a list of steps; None: whichever
            comes naturally.
        valid_length : Symbol or NDArray, optional
            ``(N,)`` lengths of the sequences: outputs past them are zeros and the
            states returned are those of each sequence's last valid step.

        Returns
        -------
        outputs : array or list of arrays
        states : list
            The states after the last step.
        """
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, False)
        states = begin_state_for(self, F, begin_state, inputs, batch_size, layout)
        outputs, all_states = [], []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*per_step, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0)
                      for per_step in zip(*all_states)]
            outputs = mask_padding(F, outputs, length, valid_length, axis, True)
        outputs, _, _, _ = format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        """Apply ``activation``: a name (``'tanh'``, ``'relu'``, ...), a LeakyReLU block or a
        callable."""
        func = {"tanh": F.tanh, "relu": F.relu, "sigmoid": F.sigmoid,
                "softsign": F.softsign}.get(activation)
        if func is not None:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs, states):
        """One time step: ``(output, new_states)`` for step input ``inputs`` and ``states``."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell defined by ``hybrid_forward(F, inputs, states, **params)``.

    On Symbols (in an unroll over symbols, or while a hybridized parent block
    traces its graph) the step is added to the graph, its nodes named with the
    cell's prefix (``lstm0_t0_out``). On NDArrays the step runs eagerly, also
    after ``hybridize()``: a cell's step is small and its states are a list,
    so a hybridized parent (whose graph contains the whole unroll) is where
    hybridization pays.
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def forward(self, inputs, states):
        self._counter += 1
        if isinstance(inputs, Symbol):
            with Prefix(self._prefix):
                return symbolic_forward(self, inputs, states)
        if not isinstance(inputs, NDArray):
            raise InvalidArgumentError(f"{type(self).__name__}: the step input must be an "
                                       f"NDArray or a Symbol, got {type(inputs).__name__}")
        reg = self._reg_params
        try:
            params = {k: p._data_like(inputs) for k, p in reg.items()}
        except DeferredInitializationError:
            self._deferred_infer_shape(inputs, states)
            for p in reg.values():
                p._finish_deferred_init()
            params = {k: p._data_like(inputs) for k, p in reg.items()}
        return self.hybrid_forward(nd, inputs, states, **params)

    def hybrid_forward(self, F, inputs, states, **kwargs):
        """Override with one step's computation."""
        raise UnsupportedError(f"{type(self).__name__} must define hybrid_forward()")


class _GatedCell(HybridRecurrentCell):
    """A cell with ``i2h``/``h2h`` weights and biases of ``gates * hidden_size`` rows."""

    _gates = 1

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        if int(hidden_size) <= 0:
            raise InvalidArgumentError(f"{type(self).__name__}: hidden_size must be a positive "
                                       f"int, got {hidden_size!r}")
        self._hidden_size = int(hidden_size)
        self._input_size = int(input_size)
        rows = self._gates * self._hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(rows, self._input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(rows, self._recurrent_size()),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def _recurrent_size(self):
        return self._hidden_size

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def infer_shape(self, inputs, *args):
        """Size ``i2h_weight``'s input dimension from the first step input."""
        if len(inputs.shape) != 2:
            raise InvalidArgumentError(f"{type(self).__name__}: a step input must be "
                                       f"(batch, features), got shape {inputs.shape}")
        self.i2h_weight.shape = (self.i2h_weight.shape[0], inputs.shape[1])

    def __repr__(self):
        shape = self.i2h_weight.shape
        return f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]})"

    def _projections(self, F, inputs, h, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix):
        rows = self._gates * self._hidden_size
        i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=rows,
                               **node_name(F, prefix + "i2h"))
        h2h = F.FullyConnected(h, h2h_weight, h2h_bias, num_hidden=rows,
                               **node_name(F, prefix + "h2h"))
        return i2h, h2h


class RNNCell(_GatedCell):
    r"""Elman RNN cell: ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``.

    Parameters
    ----------
    hidden_size : int
    activation : str, LeakyReLU or callable, default 'tanh'
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    input_size : int, default 0
        0: inferred from the first input.
    prefix : str, optional (automatic ``rnn0_``, ...)
    params : ParameterDict, optional

    Examples
    --------
    >>> import sparsenet as mx
    >>> cell = mx.gluon.rnn.RNNCell(2, input_size=3)
    >>> cell.initialize(mx.init.Zero())
    >>> out, st = cell(mx.nd.ones((1, 3)), cell.begin_state(batch_size=1))
    >>> out.asnumpy()
    array([[0., 0.]], dtype=float32)
    """

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation

    def _alias(self):
        return "rnn"

    def __repr__(self):
        return super().__repr__()[:-1] + f", {self._activation})"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias, prefix)
        total = F.elemwise_add(i2h, h2h, **node_name(F, prefix + "plus0"))
        output = self._get_activation(F, total, self._activation,
                                      **node_name(F, prefix + "out"))
        return output, [output]


class LSTMCell(_GatedCell):
    r"""Long short-term memory cell (gates stacked input, forget, cell, output).

    .. math::
        i, f, g, o = \sigma(\cdot), \sigma(\cdot), \tanh(\cdot), \sigma(\cdot)
        \text{ of } W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh}\\
        c_t = f c_{t-1} + i g,\quad h_t = o \tanh(c_t)

    States are ``[h, c]``, each ``(batch, hidden_size)``.

    Parameters
    ----------
    hidden_size : int
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
        ``mx.init.LSTMBias(forget_bias)`` sets the forget gate's bias.
    input_size : int, default 0
    prefix : str, optional (automatic ``lstm0_``, ...)
    params : ParameterDict, optional
    activation : str, default 'tanh'
        Of the cell input and of the cell state.
    recurrent_activation : str, default 'sigmoid'
        Of the gates.

    Examples
    --------
    >>> import sparsenet as mx
    >>> cell = mx.gluon.rnn.LSTMCell(2, input_size=3)
    >>> cell.initialize(mx.init.Zero())
    >>> out, (h, c) = cell(mx.nd.ones((1, 3)), cell.begin_state(batch_size=1))
    >>> h.shape, c.shape
    ((1, 2), (1, 2))
    """

    _gates = 4

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias, prefix)
        gates = F.elemwise_add(i2h, h2h, **node_name(F, prefix + "plus0"))
        g = F.SliceChannel(gates, num_outputs=4, **node_name(F, prefix + "slice"))
        act, rec = self._activation, self._recurrent_activation
        in_gate = self._get_activation(F, g[0], rec, **node_name(F, prefix + "i"))
        forget_gate = self._get_activation(F, g[1], rec, **node_name(F, prefix + "f"))
        in_transform = self._get_activation(F, g[2], act, **node_name(F, prefix + "c"))
        out_gate = self._get_activation(F, g[3], rec, **node_name(F, prefix + "o"))
        next_c = F.elemwise_add(
            F.elemwise_mul(forget_gate, states[1], **node_name(F, prefix + "mul0")),
            F.elemwise_mul(in_gate, in_transform, **node_name(F, prefix + "mul1")),
            **node_name(F, prefix + "state"))
        next_h = F.elemwise_mul(
            out_gate, F.Activation(next_c, act_type=act, **node_name(F, prefix + "activation0")),
            **node_name(F, prefix + "out"))
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    r"""Gated recurrent unit, cuDNN's variant (the reset gate applies after ``W_hn h``).

    .. math::
        r = \sigma(W_{ir} x + b_{ir} + W_{hr} h + b_{hr}),\quad
        z = \sigma(W_{iz} x + b_{iz} + W_{hz} h + b_{hz})\\
        n = \tanh(W_{in} x + b_{in} + r (W_{hn} h + b_{hn})),\quad
        h' = (1 - z) n + z h

    Gates stacked reset, update, new (torch.nn.GRUCell's order and formula).

    Parameters
    ----------
    hidden_size : int
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    input_size : int, default 0
    prefix : str, optional (automatic ``gru0_``, ...)
    params : ParameterDict, optional

    Examples
    --------
    >>> import sparsenet as mx
    >>> cell = mx.gluon.rnn.GRUCell(2, input_size=3)
    >>> cell.initialize(mx.init.Zero())
    >>> cell(mx.nd.ones((1, 3)), [mx.nd.ones((1, 2))])[0].asnumpy()
    array([[0.5, 0.5]], dtype=float32)
    """

    _gates = 3

    def _alias(self):
        return "gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        prev_h = states[0]
        i2h, h2h = self._projections(F, inputs, prev_h, i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias, prefix)
        i2h_r, i2h_z, i2h_n = F.SliceChannel(i2h, num_outputs=3,
                                             **node_name(F, prefix + "i2h_slice"))
        h2h_r, h2h_z, h2h_n = F.SliceChannel(h2h, num_outputs=3,
                                             **node_name(F, prefix + "h2h_slice"))
        reset_gate = F.Activation(F.elemwise_add(i2h_r, h2h_r, **node_name(F, prefix + "plus0")),
                                  act_type="sigmoid", **node_name(F, prefix + "r_act"))
        update_gate = F.Activation(F.elemwise_add(i2h_z, h2h_z,
                                                  **node_name(F, prefix + "plus1")),
                                   act_type="sigmoid", **node_name(F, prefix + "z_act"))
        candidate = F.Activation(
            F.elemwise_add(i2h_n, F.elemwise_mul(reset_gate, h2h_n,
                                                 **node_name(F, prefix + "mul0")),
                           **node_name(F, prefix + "plus2")),
            act_type="tanh", **node_name(F, prefix + "h_act"))
        ones = F.ones_like(update_gate, **node_name(F, prefix + "ones_like0"))
        next_h = F.elemwise_add(
            F.elemwise_mul(F.elemwise_sub(ones, update_gate, **node_name(F, prefix + "minus0")),
                           candidate, **node_name(F, prefix + "mul1")),
            F.elemwise_mul(update_gate, prev_h, **node_name(F, prefix + "mul20")),
            **node_name(F, prefix + "out"))
        return next_h, [next_h]


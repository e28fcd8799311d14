"""Fused recurrent layers ``RNN``, ``LSTM`` and ``GRU`` (``mx.gluon.rnn``), as MXNet 1.9.1 has them.

Each layer is a stack of ``num_layers`` recurrent layers, uni- or bidirectional, run by
one fused operator (:func:`sparsenet.ops.rnn.RNN`, on torch's kernels: cuDNN on CUDA).
The parameters carry MXNet's names: ``l0_i2h_weight``, ``l0_h2h_weight``,
``l0_i2h_bias``, ``l0_h2h_bias`` for layer 0, ``r0_...`` for its reverse direction and
``l0_h2r_weight`` for an LSTM projection, and ``save_parameters`` writes them under the
keys MXNet 1.9.1 writes (``_unfused.0.i2h_weight``, ``_unfused.0.l_cell.i2h_weight`` when
bidirectional), so files saved by either load in the other.

A call is ``layer(data)`` (the output alone, the begin states being zeros) or
``layer(data, states)`` (the output and the list of final states); the data is
``(T, N, C)`` with ``layout='TNC'``, ``(N, T, C)`` with ``'NTC'``.

>>> import sparsenet as mx
>>> layer = mx.gluon.rnn.LSTM(4, num_layers=2, input_size=3)
>>> layer.initialize()
>>> out = layer(mx.nd.ones((5, 2, 3)))
>>> out.shape
(5, 2, 4)
>>> out, (h, c) = layer(mx.nd.ones((5, 2, 3)), layer.begin_state(batch_size=2))
>>> h.shape, c.shape
((2, 2, 4), (2, 2, 4))
"""
import re

from ... import ndarray as nd
from ...base import InvalidArgumentError, ShapeError
from ...ndarray.ndarray import NDArray
from ..block import HybridBlock
from . import rnn_cell

__all__ = ["RNN", "LSTM", "GRU"]

_KEY = re.compile(r"(l|r)(\d+)_(i2h|h2h|h2r)_(weight|bias)\Z")
_STATE_CLIP_HELP = "state_clip_min and state_clip_max go together (both or neither)"


class _RNNLayer(HybridBlock):
    """Base of the fused layers: parameters, states, and the call to the ``RNN`` operator."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan, dtype,
                 use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        if layout not in ("TNC", "NTC"):
            raise InvalidArgumentError(f"Invalid layout {layout!r}; must be one of ['TNC' or "
                                       f"'NTC']")
        if int(hidden_size) <= 0 or int(num_layers) <= 0:
            raise InvalidArgumentError(f"hidden_size and num_layers must be positive, got "
                                       f"{hidden_size} and {num_layers}")
        if not 0 <= float(dropout) < 1:
            raise InvalidArgumentError(f"dropout must lie in [0, 1), got {dropout}")
        if (lstm_state_clip_min is None) != (lstm_state_clip_max is None):
            raise InvalidArgumentError(f"{_STATE_CLIP_HELP}, got {lstm_state_clip_min} and "
                                       f"{lstm_state_clip_max}")
        self._hidden_size = int(hidden_size)
        self._projection_size = int(projection_size) if projection_size else None
        self._num_layers = int(num_layers)
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._h2r_weight_initializer = h2r_weight_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states = None
        self._flat_call = False  # set while our own call runs (see __call__)
        self._gates = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}[mode]
        ng, ni, nh = self._gates, input_size, self._hidden_size
        proj = self._projection_size
        for i in range(self._num_layers):
            for j in ["l", "r"][:self._dir]:
                self._register_param(f"{j}{i}_i2h_weight", (ng * nh, ni),
                                     i2h_weight_initializer, dtype)
                self._register_param(f"{j}{i}_h2h_weight", (ng * nh, proj or nh),
                                     h2h_weight_initializer, dtype)
                self._register_param(f"{j}{i}_i2h_bias", (ng * nh,), i2h_bias_initializer, dtype)
                self._register_param(f"{j}{i}_h2h_bias", (ng * nh,), h2h_bias_initializer, dtype)
                if proj:
                    self._register_param(f"{j}{i}_h2r_weight", (proj, nh),
                                         h2r_weight_initializer, dtype)
            ni = (proj or nh) * self._dir

    def _register_param(self, name, shape, init, dtype):
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True, dtype=dtype)
        setattr(self, name, p)
        return p

    def __repr__(self):
        s = f"{type(self).__name__}({{mapping}}, {self._layout}"
        if self._num_layers != 1:
            s += f", num_layers={self._num_layers}"
        if self._dropout != 0:
            s += f", dropout={self._dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        s += ")"
        shape = self.l0_i2h_weight.shape
        mapping = f"{shape[1] if shape[1] else None} -> {shape[0] // self._gates}"
        return s.format(mapping=mapping)

    def _collect_params_with_prefix(self, prefix=""):
        """MXNet 1.9.1's file keys: ``_unfused.<layer>.<g>_<t>`` (unidirectional) or
        ``_unfused.<layer>.<l|r>_cell.<g>_<t>`` (bidirectional)."""
        if prefix:
            prefix += "."
        bidirectional = self._dir == 2

        def convert(key):
            d, layer, g, t = _KEY.match(key).groups()
            if bidirectional:
                return f"_unfused.{layer}.{d}_cell.{g}_{t}"
            return f"_unfused.{layer}.{g}_{t}"
        ret = {prefix + convert(key): val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size=0):
        """Shapes, layout and dtype of the begin states (a list of dicts)."""
        raise NotImplementedError  # builtin: abstract, the subclasses define it

    def _unfuse(self):
        """The same network as a stack of recurrent cells sharing these parameters
        (``HybridSequentialRNNCell`` of ``RNNCell``/``LSTMCell``/``GRUCell``, with
        ``BidirectionalCell`` and ``DropoutCell`` where needed)."""
        if self._projection_size:
            raise InvalidArgumentError("_unfuse does not support projection layer yet!")
        if self._lstm_state_clip_min is not None:
            raise InvalidArgumentError("_unfuse does not support state clipping yet!")
        make = {"rnn_relu": lambda **kw: rnn_cell.RNNCell(self._hidden_size, activation="relu",
                                                          **kw),
                "rnn_tanh": lambda **kw: rnn_cell.RNNCell(self._hidden_size, activation="tanh",
                                                          **kw),
                "lstm": lambda **kw: rnn_cell.LSTMCell(self._hidden_size, **kw),
                "gru": lambda **kw: rnn_cell.GRUCell(self._hidden_size, **kw)}[self._mode]
        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kw = {"input_size": ni,
                      "i2h_weight_initializer": self._i2h_weight_initializer,
                      "h2h_weight_initializer": self._h2h_weight_initializer,
                      "i2h_bias_initializer": self._i2h_bias_initializer,
                      "h2h_bias_initializer": self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(make(prefix=f"l{i}_", **kw),
                                                         make(prefix=f"r{i}_", **kw)))
                else:
                    stack.add(make(prefix=f"l{i}_", **kw))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = self._hidden_size * self._dir
        return stack

    def cast(self, dtype):
        """Cast the parameters (and the dtype of the default begin states) to ``dtype``."""
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size=0, func=nd.zeros, **kwargs):
        """Initial states: ``func(name=..., shape=..., dtype=..., **kwargs)`` per state.

        Parameters
        ----------
        batch_size : int
            The batch size ('N' in the layout); needed for NDArrays.
        func : callable, default ``mx.nd.zeros``
            ``mx.nd.zeros``/``ones``/..., or ``mx.sym.zeros``/``mx.sym.var`` for symbols.
        **kwargs
            Passed to ``func`` (``ctx``, ``dtype``, ...).

        Returns
        -------
        list
            One array (or Symbol) per state.
        """
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            info = dict(info) if info is not None else {}
            info.update(kwargs)
            states.append(func(name=f"{self.prefix}h0_{i}", **info))
        return states

    def infer_shape(self, inputs, *args):
        """Set the input size of the first layer's ``i2h`` weights from ``inputs``."""
        ni = inputs.shape[self._layout.find("C")]
        for d in ["l", "r"][:self._dir]:
            p = getattr(self, f"{d}0_i2h_weight")
            p.shape = (p.shape[0], ni)

    def __call__(self, inputs, *args, **kwargs):
        """``layer(data, states=None, sequence_length=None)``; see the class docstring."""
        if self._flat_call:  # a hybridized graph traced from our own call: inputs are flat
            return super().__call__(inputs, *args)
        states = args[0] if args else kwargs.pop("states", None)
        sequence_length = args[1] if len(args) > 1 else kwargs.pop("sequence_length", None)
        if kwargs or len(args) > 2:
            raise InvalidArgumentError(f"{type(self).__name__}() takes (inputs, states=None, "
                                       f"sequence_length=None), got extra arguments "
                                       f"{list(kwargs) or len(args)}")
        self.skip_states = states is None
        if states is None:
            if isinstance(inputs, NDArray):
                batch_size = inputs.shape[self._layout.find("N")]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = []  # symbols: zero states are built in the graph
        if not isinstance(states, (list, tuple)):
            states = [states]
        flat = list(states)
        if self._use_sequence_length:
            if sequence_length is None:
                raise InvalidArgumentError(f"{type(self).__name__} was built with "
                                           f"use_sequence_length=True: pass sequence_length")
            flat.append(sequence_length)
        self._flat_call = True
        try:
            res = super().__call__(inputs, *flat)
        finally:
            self._flat_call = False
        res = list(res)
        return res[0] if self.skip_states else (res[0], res[1:])

    def hybrid_forward(self, F, inputs, *args, **params):
        """Run the fused operator; returns ``[output, state, ...]`` (``__call__`` regroups)."""
        n_states = len(self.state_info())
        states = list(args[:n_states])
        sequence_length = args[n_states] if len(args) > n_states else None
        if F is nd:
            batch_size = inputs.shape[self._layout.find("N")]
            for state, info in zip(states, self.state_info(batch_size)):
                if state.shape != info["shape"]:
                    raise ShapeError(f"Invalid recurrent state shape. Expecting "
                                     f"{info['shape']}, got {state.shape}.")
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, 0, 1)
        if not states:
            states = self._zero_states(F, inputs)
        packed = F.concat(*[F.reshape(params[key], shape=(-1,)) for key in self._packing_order()],
                          dim=0)
        rnn_args = states + ([sequence_length] if sequence_length is not None else [])
        rnn = F.RNN(inputs, packed, *rnn_args, use_sequence_length=self._use_sequence_length,
                    state_size=self._hidden_size, projection_size=self._projection_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2,
                    p=self._dropout, state_outputs=True, mode=self._mode,
                    lstm_state_clip_min=self._lstm_state_clip_min,
                    lstm_state_clip_max=self._lstm_state_clip_max,
                    lstm_state_clip_nan=self._lstm_state_clip_nan)
        outputs = [rnn[i] for i in range(1 + n_states)]
        if self._layout == "NTC":
            outputs[0] = F.swapaxes(outputs[0], 0, 1)
        return outputs

    def _packing_order(self):
        """Parameter names in MXNet's flat-vector order: every weight (layer, direction,
        ``i2h``, ``h2h``, ``h2r``), then every bias."""
        gs = ["i2h", "h2h", "h2r"] if self._projection_size else ["i2h", "h2h"]
        return [f"{d}{layer}_{g}_{t}" for t in ["weight", "bias"]
                for layer in range(self._num_layers) for d in ["l", "r"][:self._dir]
                for g in gs if g != "h2r" or t != "bias"]

    def _zero_states(self, F, inputs):
        """Zero begin states built in a symbol graph from the ``(T, N, C)`` input's batch."""
        col = F.slice_axis(F.slice_axis(inputs, axis=0, begin=0, end=1), axis=2, begin=0, end=1)
        col = F.zeros_like(col)  # (1, N, 1)
        return [F.tile(col, reps=(info["shape"][0], 1, info["shape"][2]))
                for info in self.state_info()]


class RNN(_RNNLayer):
    """Multi-layer Elman RNN, ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``.

    Parameters
    ----------
    hidden_size : int
        Features of the hidden state.
    num_layers : int, default 1
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
        Dropout on the outputs of each layer but the last, while training.
    bidirectional : bool, default False
    input_size : int, default 0
        Features of the input (0: inferred at the first call).
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    dtype : str, default 'float32'
    prefix : str, optional
    params : ParameterDict, optional
    activation : {'relu', 'tanh'}, default 'relu'

    Examples
    --------
    >>> import sparsenet as mx
    >>> layer = mx.gluon.rnn.RNN(3, activation='tanh', input_size=2)
    >>> layer.initialize()
    >>> out, [h] = layer(mx.nd.ones((4, 1, 2)), mx.nd.zeros((1, 1, 3)))
    >>> out.shape, h.shape
    ((4, 1, 3), (1, 1, 3))
    """

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 dtype="float32", **kwargs):
        if activation not in ("relu", "tanh"):
            raise InvalidArgumentError(f"RNN: activation must be 'relu' or 'tanh', got "
                                       f"{activation!r}")
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, "rnn_" + activation,
                         None, None, None, None, False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        """One state ``(num_layers * directions, batch, hidden_size)``."""
        return [{"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]


class LSTM(_RNNLayer):
    """Multi-layer LSTM (gates ``i, f, g, o``), optionally with a projection (LSTMP).

    Parameters
    ----------
    hidden_size : int
        Features of the hidden state.
    num_layers : int, default 1
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
        Dropout on the outputs of each layer but the last, while training.
    bidirectional : bool, default False
    input_size : int, default 0
        Features of the input (0: inferred at the first call).
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    dtype : str, default 'float32'
    prefix : str, optional
    params : ParameterDict, optional
    projection_size : int, optional
        Project the hidden state to this size (``h2r_weight``).
    h2r_weight_initializer : str or Initializer, optional
    state_clip_min, state_clip_max : float, optional
        Clip the cell state to this range after every step (both or neither; as MXNet's
        GPU kernel does; MXNet's CPU kernel ignores them). Runs a per-step loop.
    state_clip_nan : bool, default False
        With clipping, a NaN cell state becomes ``state_clip_min``.

    Examples
    --------
    >>> import sparsenet as mx
    >>> layer = mx.gluon.rnn.LSTM(3, projection_size=2, input_size=2)
    >>> layer.initialize()
    >>> [s['shape'] for s in layer.state_info(batch_size=5)]
    [(1, 5, 2), (1, 5, 3)]
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 projection_size=None, h2r_weight_initializer=None, state_clip_min=None,
                 state_clip_max=None, state_clip_nan=False, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, "lstm", projection_size,
                         h2r_weight_initializer, state_clip_min, state_clip_max,
                         state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size=0):
        """The hidden state (``projection_size`` features with a projection), then the cell
        state, each ``(num_layers * directions, batch, features)``."""
        n = self._num_layers * self._dir
        return [{"shape": (n, batch_size, self._projection_size or self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype},
                {"shape": (n, batch_size, self._hidden_size), "__layout__": "LNC",
                 "dtype": self._dtype}]


class GRU(_RNNLayer):
    """Multi-layer GRU (cuDNN's variant: the reset gate applies after the ``h2h`` product).

    Parameters
    ----------
    hidden_size : int
        Features of the hidden state.
    num_layers : int, default 1
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
        Dropout on the outputs of each layer but the last, while training.
    bidirectional : bool, default False
    input_size : int, default 0
        Features of the input (0: inferred at the first call).
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    dtype : str, default 'float32'
    prefix : str, optional
    params : ParameterDict, optional

    Examples
    --------
    >>> import sparsenet as mx
    >>> layer = mx.gluon.rnn.GRU(3, layout='NTC', bidirectional=True, input_size=2)
    >>> layer.initialize()
    >>> layer(mx.nd.ones((1, 4, 2))).shape
    (1, 4, 6)
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", dtype="float32",
                 **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, "gru", None, None, None,
                         None, False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        """One state ``(num_layers * directions, batch, hidden_size)``."""
        return [{"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]

"""The fused legacy cell :class:`FusedRNNCell` (all layers and steps in one ``RNN``
operator, on torch's fused kernels) and its initializer :class:`FusedRNN`.

The operator's weights are one flat ``<prefix>parameters`` vector in MXNet's packing
(every weight matrix, layer by layer and direction by direction, then every bias);
:meth:`FusedRNNCell.unpack_weights` cuts it into one array per gate
(``<prefix>l0_i2h_i_weight``, ...) and :meth:`FusedRNNCell.unfuse` gives the same
network as a stack of step cells that :meth:`pack_weights` of the stack feeds.

>>> import sparsenet as mx
>>> cell = mx.rnn.FusedRNNCell(4, num_layers=2, mode='gru', prefix='gru_')
>>> out, _ = cell.unroll(3, mx.sym.var('data'), layout='TNC', merge_outputs=True)
>>> out.infer_shape(data=(3, 2, 5))[1]
[(3, 2, 4)]
"""
import math

from .. import initializer
from .. import ndarray as nd
from .. import symbol as sym
from ..base import InvalidArgumentError, ShapeError, UnsupportedError
from ..ops.rnn import GATES
from .base_cell import BaseRNNCell, merge_steps
from .basic_cells import GRUCell, LSTMCell, RNNCell
from .containers import BidirectionalCell, SequentialRNNCell
from .modifiers import DropoutCell

__all__ = ["FusedRNNCell", "FusedRNN"]

_GATE_NAMES = {"rnn_relu": ("",), "rnn_tanh": ("",), "lstm": ("_i", "_f", "_c", "_o"),
               "gru": ("_r", "_z", "_o")}


def _fused_layout(prefix, mode, directions, num_layers, num_input, h):
    """``[(name, shape)]`` of the per-gate arrays in the order the flat vector holds them."""
    gates, b = _GATE_NAMES[mode], len(directions)
    weights, biases = [], []
    for layer in range(num_layers):
        ni = num_input if layer == 0 else b * h
        for d in directions:
            cell = f"{prefix}{d}{layer}_"
            weights += [(f"{cell}i2h{g}_weight", (h, ni)) for g in gates]
            weights += [(f"{cell}h2h{g}_weight", (h, h)) for g in gates]
            biases += [(f"{cell}i2h{g}_bias", (h,)) for g in gates]
            biases += [(f"{cell}h2h{g}_bias", (h,)) for g in gates]
    return weights + biases


def _state_zeros(data, name=None, shape=None, **_):
    """Zeros of ``shape`` ``(layers * directions, 0, hidden)`` whose batch is ``data``'s
    axis 1 (``data`` is ``(T, N, C)``), so the graph binds for any batch size."""
    z = sym.slice_axis(sym.slice_axis(sym.zeros_like(data), axis=0, begin=0, end=1),
                       axis=2, begin=0, end=1)
    z = sym.broadcast_axis(z, axis=(0, 2), size=(int(shape[0]), int(shape[2])))
    return sym.identity(z, name=name)


class FusedRNNCell(BaseRNNCell):
    """A stack of ``num_layers`` recurrent layers run by one ``RNN`` operator.

    Parameters
    ----------
    num_hidden : int
    num_layers : int, default 1
    mode : {'lstm', 'gru', 'rnn_tanh', 'rnn_relu'}, default 'lstm'
    bidirectional : bool, default False
        The output has ``2 * num_hidden`` features when True.
    dropout : float, default 0
        Dropout between layers while training.
    get_next_state : bool, default False
        Return the final states from :meth:`unroll` (else ``[]``).
    forget_bias : float, default 1.0
        The LSTM forget gates' initial bias (see :class:`FusedRNN`).
    prefix : str, optional
        Default ``'<mode>_'``.
    params : RNNParams, optional
    """

    _steppable = False

    def __init__(self, num_hidden, num_layers=1, mode="lstm", bidirectional=False,
                 dropout=0., get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        if mode not in GATES:
            raise InvalidArgumentError(f"FusedRNNCell: mode must be one of {sorted(GATES)}, "
                                       f"got {mode!r}")
        super().__init__(prefix=f"{mode}_" if prefix is None else prefix, params=params)
        self._num_hidden = int(num_hidden)
        self._num_layers = int(num_layers)
        self._mode = mode
        self._bidirectional = bool(bidirectional)
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._forget_bias = forget_bias
        self._directions = ["l", "r"] if self._bidirectional else ["l"]
        init = FusedRNN(None, self._num_hidden, self._num_layers, mode, self._bidirectional,
                        forget_bias)
        self._parameter = self.params.get("parameters", init=init)

    @property
    def state_info(self):
        b = len(self._directions)
        return [{"shape": (b * self._num_layers, 0, self._num_hidden), "__layout__": "LNC"}
                for _ in range(2 if self._mode == "lstm" else 1)]

    @property
    def _gate_names(self):
        return _GATE_NAMES[self._mode]

    def _layout(self, num_input):
        return _fused_layout(self._prefix, self._mode, self._directions, self._num_layers,
                             num_input, self._num_hidden)

    def unpack_weights(self, args):
        """Cut ``<prefix>parameters`` into one array per layer, direction, group and gate
        (``<prefix>l0_i2h_i_weight``, ...). ``args`` is not modified."""
        args = dict(args)
        arr = args.pop(self._parameter.name)
        b, m, h, layers = len(self._directions), len(self._gate_names), self._num_hidden, \
            self._num_layers
        num_input = arr.size // b // h // m - (layers - 1) * (h + b * h + 2) - h - 2
        layout = self._layout(max(num_input, 0))
        if num_input <= 0 or sum(math.prod(s) for _, s in layout) != arr.size:
            raise ShapeError(f"FusedRNNCell.unpack_weights: '{self._parameter.name}' has "
                             f"{arr.size} values, which fits no input size for mode="
                             f"{self._mode!r}, num_hidden={h}, num_layers={layers}, "
                             f"bidirectional={self._bidirectional}")
        flat, p = arr.reshape((-1,)), 0
        for name, shape in layout:
            n = math.prod(shape)
            args[name] = flat[p:p + n].reshape(shape).copy()
            p += n
        return args

    def pack_weights(self, args):
        """The inverse of :meth:`unpack_weights`. ``args`` is not modified."""
        args = dict(args)
        first = f"{self._prefix}l0_i2h{self._gate_names[0]}_weight"
        if first not in args:
            raise InvalidArgumentError(f"FusedRNNCell.pack_weights: '{first}' is missing")
        layout = self._layout(args[first].shape[1])
        parts = []
        for name, shape in layout:
            value = args.pop(name, None)
            if value is None or tuple(value.shape) != shape:
                raise ShapeError(f"FusedRNNCell.pack_weights: '{name}' must have shape "
                                 f"{shape}, got "
                                 f"{None if value is None else tuple(value.shape)}")
            parts.append(value.reshape((-1,)))
        args[self._parameter.name] = nd.concat(*parts, dim=0)
        return args

    def __call__(self, inputs, states):
        raise UnsupportedError("FusedRNNCell cannot be stepped; use unroll (or unfuse())")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        data = merge_steps(length, inputs, layout, True)
        axis = layout.find("T")
        if axis not in (0, 1) or layout.find("N") != 1 - axis:
            raise InvalidArgumentError(f"FusedRNNCell.unroll: layout must be 'TNC' or 'NTC', "
                                       f"got {layout!r}")
        if axis == 1:
            data = sym.swapaxes(data, dim1=0, dim2=1)
        if begin_state is None:
            begin_state = self.begin_state(
                func=lambda **kw: _state_zeros(data, **kw))
        states = {"state": begin_state[0]}
        if self._mode == "lstm":
            states["state_cell"] = begin_state[1]
        rnn = sym.RNN(data=data, parameters=self._parameter, state_size=self._num_hidden,
                      num_layers=self._num_layers, bidirectional=self._bidirectional,
                      p=self._dropout, state_outputs=self._get_next_state, mode=self._mode,
                      name=self._prefix + "rnn", **states)
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            outputs, states = rnn[0], [rnn[i] for i in range(1, len(rnn))]
        if axis == 1:
            outputs = sym.swapaxes(outputs, dim1=0, dim2=1)
        return merge_steps(length, outputs, layout, merge_outputs), states

    def unfuse(self):
        """The same network as a :class:`SequentialRNNCell` of step cells named
        ``<prefix>l<i>_`` (and ``<prefix>r<i>_`` backward), with :class:`DropoutCell`
        between layers; it can be stepped."""
        h = self._num_hidden
        make = {"rnn_relu": lambda p: RNNCell(h, activation="relu", prefix=p),
                "rnn_tanh": lambda p: RNNCell(h, activation="tanh", prefix=p),
                "lstm": lambda p: LSTMCell(h, prefix=p, forget_bias=self._forget_bias),
                "gru": lambda p: GRUCell(h, prefix=p)}[self._mode]
        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make(f"{self._prefix}l{i}_"),
                                            make(f"{self._prefix}r{i}_"),
                                            output_prefix=f"{self._prefix}bi_l{i}_"))
            else:
                stack.add(make(f"{self._prefix}l{i}_"))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{self._prefix}_dropout{i}_"))
        return stack


@initializer.register
class FusedRNN(initializer.Initializer):
    """Initializes a :class:`FusedRNNCell`'s flat ``parameters`` vector gate by gate.

    Each per-gate array (see :meth:`FusedRNNCell.unpack_weights`) is initialized by
    ``init`` (default: the global initializer, e.g. the one given to
    ``Module.init_params``), by name (``..._weight``, ``..._bias``); the LSTM forget
    gates' ``i2h`` and ``h2h`` biases are set to ``forget_bias``.

    Parameters
    ----------
    init : Initializer, str or None
    num_hidden, num_layers, mode, bidirectional, forget_bias
        As given to the :class:`FusedRNNCell`.
    """

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False,
                 forget_bias=1.0):
        if init is not None:
            init = initializer.create(init)
        super().__init__(init=init.dumps() if init is not None else None,
                         num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                         bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = init
        self._cell_args = (num_hidden, num_layers, mode, bidirectional)
        self._forget_bias = forget_bias

    def _init_weight(self, desc, arr):
        num_hidden, num_layers, mode, bidirectional = self._cell_args
        cell = FusedRNNCell(num_hidden, num_layers, mode, bidirectional,
                            forget_bias=self._forget_bias, prefix="")
        args = cell.unpack_weights({"parameters": arr})
        outer = getattr(desc, "global_init", None)
        if outer is None or isinstance(outer, FusedRNN):
            outer = initializer.Uniform(0.07)
        for name in args:
            if mode == "lstm" and name.endswith("_f_bias"):
                args[name][:] = self._forget_bias
            else:
                (self._init or outer)(initializer.InitDesc(name, global_init=outer), args[name])
        arr[:] = cell.pack_weights(args)["parameters"]

    _init_bias = _init_weight

"""The fused recurrent operator ``RNN`` (MXNet's ``sym.RNN`` / ``nd.RNN``) on torch's kernels.

One operator runs a stack of Elman (``rnn_relu``, ``rnn_tanh``), ``lstm`` or ``gru``
layers over a ``(T, N, C)`` sequence, uni- or bidirectional, with an optional LSTM
projection (LSTMP). Its weights arrive as MXNet's single flat ``parameters`` vector:
first every weight matrix, layer by layer and direction by direction (``i2h``, then
``h2h``, then ``h2r`` with a projection), each flattened row-major, then every bias
(``i2h``, then ``h2h``) in the same order. The gate order inside a matrix is MXNet's,
which is torch's: ``i, f, g, o`` for the LSTM, ``r, z, n`` for the GRU. The vector is cut
into views (no copy) and handed to torch's fused kernels (cuDNN on CUDA, oneDNN or
ATen's on CPU) through a :class:`torch.nn.RNNBase` module run with
:func:`torch.func.functional_call`, so gradients reach the flat vector through
torch.autograd.

Inter-layer dropout ``p`` applies while training (``autograd.train_mode``), as in MXNet.
``lstm_state_clip_min/max`` clip the LSTM cell state after every step, as MXNet's cuDNN
path does (its CPU kernel ignores them); that runs a per-step loop instead of the fused
kernel. ``use_sequence_length`` runs each sequence for its own length (the outputs past
it are zero and the states are those at its last step), through torch's packed sequences.

>>> import sparsenet as mx
>>> x = mx.nd.ones((3, 1, 2))              # T=3, N=1, C=2
>>> params = mx.nd.ones((1 * 1 * (2 + 1) + 2 * 1,)) * 0.5   # rnn_tanh, state_size=1
>>> out = mx.nd.RNN(x, params, mx.nd.zeros((1, 1, 1)), state_size=1, num_layers=1,
...                 mode='rnn_tanh')
>>> out.shape
(3, 1, 1)
"""
import math
import threading
import warnings

import torch
from torch.func import functional_call

from .. import recording
from ..base import InvalidArgumentError, ShapeError
from .registry import defop, dtype_rule, input_shapes, output_shapes

__all__ = ["RNN", "GATES", "rnn_param_size", "unpack_parameters"]

#: gates per mode: the number of ``state_size`` blocks in each weight matrix
GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
_OUTPUT_NAMES = ("output", "state_output", "statecell_output")  # measured, MXNet 1.9.1


def _flag(value):
    """A boolean parameter, also as the text a loaded graph gives (``'True'``, ``'0'``)."""
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1")
    return bool(value)


def _opt_float(value):
    return None if value is None or value == "None" else float(value)


def _check_mode(mode):
    if mode not in GATES:
        raise InvalidArgumentError(f"RNN: mode must be one of {sorted(GATES)}, got {mode!r}")
    return mode


def _proj(projection_size, mode):
    proj = int(projection_size) if projection_size not in (None, "None", 0) else 0
    if proj and mode != "lstm":
        raise InvalidArgumentError(f"RNN: projection_size is only supported with mode='lstm', "
                                   f"got mode={mode!r}")
    return proj


def _shapes(mode, input_size, state_size, num_layers, bidirectional, projection_size):
    """``[(layer, direction, name, shape)]`` of the weights, then of the biases, in MXNet's
    packing order (``name`` is ``i2h_weight``, ``h2h_weight``, ``h2r_weight``, ``i2h_bias``,
    ``h2h_bias``)."""
    ng, nh = GATES[_check_mode(mode)], int(state_size)
    proj = _proj(projection_size, mode)
    dirs = 2 if _flag(bidirectional) else 1
    weights, biases = [], []
    ni = int(input_size)
    for layer in range(int(num_layers)):
        for d in range(dirs):
            weights.append((layer, d, "i2h_weight", (ng * nh, ni)))
            weights.append((layer, d, "h2h_weight", (ng * nh, proj or nh)))
            if proj:
                weights.append((layer, d, "h2r_weight", (proj, nh)))
            biases.append((layer, d, "i2h_bias", (ng * nh,)))
            biases.append((layer, d, "h2h_bias", (ng * nh,)))
        ni = (proj or nh) * dirs
    return weights + biases


def rnn_param_size(mode, input_size, state_size, num_layers=1, bidirectional=False,
                   projection_size=None):
    """Length of MXNet's flat parameter vector for this configuration.

    >>> rnn_param_size('lstm', input_size=4, state_size=3, projection_size=2)
    102
    >>> rnn_param_size('gru', 4, 3, num_layers=2, bidirectional=True)
    360
    """
    return sum(math.prod(s) for _, _, _, s in
               _shapes(mode, input_size, state_size, num_layers, bidirectional, projection_size))


def unpack_parameters(parameters, mode, input_size, state_size, num_layers=1,
                      bidirectional=False, projection_size=None):
    """Cut MXNet's flat vector (a 1-d torch tensor) into views ``{(layer, dir, name): tensor}``.

    Raises :class:`~sparsenet.base.ShapeError` when its length does not fit.
    """
    shapes = _shapes(mode, input_size, state_size, num_layers, bidirectional, projection_size)
    need = sum(math.prod(s) for _, _, _, s in shapes)
    if parameters.dim() != 1 or parameters.shape[0] != need:
        raise ShapeError(
            f"RNN: parameters must be a vector of {need} values for mode={mode!r}, "
            f"input size {input_size}, state_size={state_size}, num_layers={num_layers}, "
            f"bidirectional={_flag(bidirectional)}, projection_size={projection_size}; got "
            f"shape {tuple(parameters.shape)}")
    views, offset = {}, 0
    for layer, d, name, shape in shapes:
        n = math.prod(shape)
        views[(layer, d, name)] = parameters.narrow(0, offset, n).view(shape)
        offset += n
    return views


_TORCH_NAMES = {"i2h_weight": "weight_ih", "h2h_weight": "weight_hh", "h2r_weight": "weight_hr",
                "i2h_bias": "bias_ih", "h2h_bias": "bias_hh"}
# configuration -> a torch RNN module on the meta device (its shapes only), per thread:
# functional_call swaps the weights into the module for the duration of a call
_MODULES = threading.local()


def _module(mode, input_size, state_size, num_layers, dirs, proj, dropout):
    key = (mode, input_size, state_size, num_layers, dirs, proj, dropout)
    cache = getattr(_MODULES, "cache", None)
    if cache is None:
        cache = _MODULES.cache = {}
    m = cache.get(key)
    if m is None:
        common = dict(num_layers=num_layers, bidirectional=dirs == 2, dropout=dropout,
                      device="meta")
        if mode == "lstm":
            m = torch.nn.LSTM(input_size, state_size, proj_size=proj, **common)
        elif mode == "gru":
            m = torch.nn.GRU(input_size, state_size, **common)
        else:
            m = torch.nn.RNN(input_size, state_size, nonlinearity=mode[4:], **common)
        cache[key] = m
    return m


def _torch_weights(views):
    return {f"{_TORCH_NAMES[name]}_l{layer}{'_reverse' if d else ''}": t
            for (layer, d, name), t in views.items()}


def _lengths(sequence_length, n):
    lengths = sequence_length.detach().to("cpu", torch.int64).reshape(-1)
    if lengths.shape[0] != n:
        raise ShapeError(f"RNN: sequence_length must hold one length per sequence ({n}), got "
                         f"shape {tuple(sequence_length.shape)}")
    return lengths


def _run_fused(module, x, weights, hx, lengths, train):
    module.train(train)
    if getattr(module, "proj_size", 0) and x.device.type == "cpu":
        with warnings.catch_warnings():  # torch notes that oneDNN has no LSTMP kernel
            warnings.filterwarnings("ignore", message="LSTM with projections is not supported")
            return _call(module, x, weights, hx, lengths)
    return _call(module, x, weights, hx, lengths)


def _call(module, x, weights, hx, lengths):
    if lengths is None:
        return functional_call(module, weights, (x, hx))
    t = x.shape[0]
    if bool((lengths < 1).any()) or bool((lengths > t).any()):
        raise InvalidArgumentError(f"RNN: sequence_length values must lie in [1, {t}], got "
                                   f"{lengths.tolist()}")
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
    out, states = functional_call(module, weights, (packed, hx))
    out, _ = torch.nn.utils.rnn.pad_packed_sequence(out, total_length=t)
    return out, states


def _clipped_lstm(x, views, h0, c0, layers, dirs, proj, lo, hi, clip_nan, dropout, train):
    """LSTM(P) stack stepping in Python, clipping the cell state to ``[lo, hi]`` after every
    step (MXNet's ``lstm_state_clip_*``; ``clip_nan`` also maps NaN to ``lo``)."""
    inp, hs, cs = x, [], []
    for layer in range(layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w_ih, w_hh = views[(layer, d, "i2h_weight")], views[(layer, d, "h2h_weight")]
            b = views[(layer, d, "i2h_bias")] + views[(layer, d, "h2h_bias")]
            w_hr = views.get((layer, d, "h2r_weight"))
            h, c = h0[k], c0[k]
            pre = torch.nn.functional.linear(inp, w_ih, b)
            steps = range(inp.shape[0] - 1, -1, -1) if d else range(inp.shape[0])
            ys = [None] * inp.shape[0]
            for t in steps:
                gates = pre[t] + torch.nn.functional.linear(h, w_hh)
                i, f, g, o = gates.chunk(4, dim=-1)
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                if clip_nan:
                    c = torch.nan_to_num(c, nan=lo)
                c = c.clamp(lo, hi)
                h = torch.sigmoid(o) * torch.tanh(c)
                if w_hr is not None:
                    h = torch.nn.functional.linear(h, w_hr)
                ys[t] = h
            outs.append(torch.stack(ys))
            hs.append(h)
            cs.append(c)
        inp = torch.cat(outs, dim=-1) if dirs == 2 else outs[0]
        if dropout and train and layer + 1 < layers:
            inp = torch.nn.functional.dropout(inp, p=dropout, training=True)
    return inp, torch.stack(hs), torch.stack(cs)


def _num_outputs(params):
    if not _flag(params["state_outputs"]):
        return 1
    return 3 if params["mode"] == "lstm" else 2


def _required(params):
    names = ["state"]
    if params.get("mode", "lstm") == "lstm":
        names.append("state_cell")
    if _flag(params.get("use_sequence_length", False)):
        names.append("sequence_length")
    return tuple(names)


@defop(num_outputs=_num_outputs, output_names=_OUTPUT_NAMES, required_inputs=_required)
def RNN(data, parameters, state=None, state_cell=None, sequence_length=None, *,  # noqa: N802
        state_size=0, num_layers=1, bidirectional=False, mode="lstm", p=0.0,
        state_outputs=False, projection_size=None, lstm_state_clip_min=None,
        lstm_state_clip_max=None, lstm_state_clip_nan=False, use_sequence_length=False):
    """Fused multi-layer recurrent network over a ``(T, N, C)`` sequence (MXNet's ``RNN``).

    Parameters
    ----------
    data : NDArray
        ``(sequence length, batch, input size)``.
    parameters : NDArray
        MXNet's flat parameter vector (see the module docstring for its layout);
        :func:`rnn_param_size` gives its length.
    state : NDArray
        Begin hidden state ``(num_layers * directions, batch, projection_size or
        state_size)``.
    state_cell : NDArray
        Begin cell state ``(num_layers * directions, batch, state_size)``, LSTM only.
    sequence_length : NDArray, optional
        ``(batch,)`` lengths, with ``use_sequence_length`` (for a GRU/RNN it is the
        fourth positional input, as in MXNet).
    state_size : int
    num_layers : int
    bidirectional : bool
    mode : {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'}
    p : float
        Dropout on the outputs of each layer but the last, while training.
    state_outputs : bool
        Also return the final states.
    projection_size : int, optional
        LSTM projection size (LSTMP).
    lstm_state_clip_min, lstm_state_clip_max : float, optional
        Clip the LSTM cell state to this range after every step (both or neither).
    lstm_state_clip_nan : bool
        With clipping, a NaN cell state becomes ``lstm_state_clip_min``.
    use_sequence_length : bool

    Returns
    -------
    NDArray or list of NDArray
        The output ``(T, N, directions * (projection_size or state_size))``, then with
        ``state_outputs`` the final hidden state (and the final cell state for an LSTM).

    Examples
    --------
    >>> import sparsenet as mx
    >>> from sparsenet.ops.rnn import rnn_param_size
    >>> n = rnn_param_size('gru', input_size=2, state_size=3)
    >>> out, h = mx.nd.RNN(mx.nd.ones((4, 1, 2)), mx.nd.zeros((n,)), mx.nd.zeros((1, 1, 3)),
    ...                    state_size=3, mode='gru', state_outputs=True)
    >>> out.shape, h.shape
    ((4, 1, 3), (1, 1, 3))
    """
    mode = _check_mode(mode)
    if mode != "lstm" and sequence_length is None and state_cell is not None:
        state_cell, sequence_length = None, state_cell  # MXNet's positional order
    if data.dim() != 3:
        raise ShapeError(f"RNN: data must be (sequence length, batch, input size), got shape "
                         f"{tuple(data.shape)}")
    layers, nh = int(num_layers), int(state_size)
    dirs = 2 if _flag(bidirectional) else 1
    proj = _proj(projection_size, mode)
    t, n, ni = data.shape
    views = unpack_parameters(parameters, mode, ni, nh, layers, dirs == 2, proj)
    h_shape = (layers * dirs, n, proj or nh)
    c_shape = (layers * dirs, n, nh)
    if state is None:
        state = data.new_zeros(h_shape)
    elif tuple(state.shape) != h_shape:
        raise ShapeError(f"RNN: state must have shape {h_shape}, got {tuple(state.shape)}")
    if mode == "lstm":
        if state_cell is None:
            state_cell = data.new_zeros(c_shape)
        elif tuple(state_cell.shape) != c_shape:
            raise ShapeError(f"RNN: state_cell must have shape {c_shape}, got "
                             f"{tuple(state_cell.shape)}")
    dropout = float(p)
    train = dropout > 0 and recording.is_training()
    lengths = None
    if _flag(use_sequence_length):
        if sequence_length is None:
            raise InvalidArgumentError("RNN: use_sequence_length=True needs the "
                                       "sequence_length input")
        lengths = _lengths(sequence_length, n)
    lo, hi = _opt_float(lstm_state_clip_min), _opt_float(lstm_state_clip_max)
    if (lo is None) != (hi is None):
        raise InvalidArgumentError(f"RNN: lstm_state_clip_min and lstm_state_clip_max go "
                                   f"together, got {lo} and {hi}")
    if mode == "lstm" and lo is not None:
        if lengths is not None:
            raise InvalidArgumentError("RNN: lstm_state_clip_* with use_sequence_length is not "
                                       "supported")
        out, h, c = _clipped_lstm(data, views, state, state_cell, layers, dirs, proj, lo, hi,
                                  _flag(lstm_state_clip_nan), dropout, train)
    else:
        # dropout acts between layers only (torch warns when it is set for one layer)
        module = _module(mode, ni, nh, layers, dirs, proj, dropout if layers > 1 else 0.0)
        hx = (state, state_cell) if mode == "lstm" else state
        out, states = _run_fused(module, data, _torch_weights(views), hx, lengths, train)
        h, c = states if mode == "lstm" else (states, None)
    if not _flag(state_outputs):
        return out
    return [out, h, c] if mode == "lstm" else [out, h]


def _input_names_for(params):
    """MXNet's inputs of an ``RNN`` node: ``state_cell`` for an LSTM only, ``sequence_length``
    with ``use_sequence_length`` only."""
    return ("data", "parameters") + _required(params)


RNN.input_names_for = _input_names_for


@input_shapes(RNN)
def _rnn_input_shapes(shapes, params):
    shapes = list(shapes)
    data = shapes[0]
    if data is None or len(data) != 3:
        return shapes
    t, n, ni = data
    mode, nh = params["mode"], int(params["state_size"])
    layers, dirs = int(params["num_layers"]), 2 if _flag(params["bidirectional"]) else 1
    proj = _proj(params["projection_size"], mode)
    if len(shapes) > 1 and shapes[1] is None:
        shapes[1] = (rnn_param_size(mode, ni, nh, layers, dirs == 2, proj),)
    if len(shapes) > 2 and shapes[2] is None:
        shapes[2] = (layers * dirs, n, proj or nh)
    if mode == "lstm" and len(shapes) > 3 and shapes[3] is None:
        shapes[3] = (layers * dirs, n, nh)
    seq_at = 4 if mode == "lstm" else 3
    if _flag(params["use_sequence_length"]) and len(shapes) > seq_at and shapes[seq_at] is None:
        shapes[seq_at] = (n,)
    return shapes


@output_shapes(RNN)
def _rnn_output_shapes(params, in_shapes):
    t, n, _ = in_shapes[0]
    mode, nh = params["mode"], int(params["state_size"])
    layers, dirs = int(params["num_layers"]), 2 if _flag(params["bidirectional"]) else 1
    proj = _proj(params["projection_size"], mode)
    outs = [(t, n, dirs * (proj or nh))]
    if _flag(params["state_outputs"]):
        outs.append((layers * dirs, n, proj or nh))
        if mode == "lstm":
            outs.append((layers * dirs, n, nh))
    return outs


@dtype_rule(RNN)
def _rnn_dtypes(in_dtypes, params):
    known = next((d for d in in_dtypes[:2] if d is not None), None)
    seq_at = 4 if params["mode"] == "lstm" else 3
    ins = [d if d is not None or known is None or i == seq_at else known
           for i, d in enumerate(in_dtypes)]
    return ins, [known] * _num_outputs(params)

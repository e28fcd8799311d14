"""The base of MXNet's legacy symbolic recurrent cells (``mx.rnn``): :class:`BaseRNNCell`.

A legacy cell builds Symbols: ``output, states = cell(x_t, states)`` adds one time step
to the graph and ``cell.unroll(length, inputs)`` adds ``length`` of them. Its weights
are variables (:class:`~sparsenet.rnn.params.RNNParams`) named ``<prefix>i2h_weight``,
``<prefix>h2h_weight``, ``<prefix>i2h_bias``, ``<prefix>h2h_bias`` that a Module or an
executor binds. The sequence plumbing (layouts, splitting, merging, the zero begin
states an ``unroll`` starts from) is ``gluon.rnn``'s, shared.

>>> import sparsenet as mx
>>> cell = mx.rnn.GRUCell(3, prefix='gru_')
>>> out, states = cell.unroll(4, mx.sym.var('data'), merge_outputs=True)
>>> out.infer_shape(data=(2, 4, 5))[1]
[(2, 4, 3)]
"""
from .. import ndarray as nd
from .. import symbol as sym
from ..base import InvalidArgumentTypeError, StateError, UnsupportedError
from ..gluon.rnn.sequence_utils import begin_state_for, format_sequence
from ..symbol.name import Prefix
from ..symbol.symbol import Symbol
from .params import RNNParams

__all__ = ["BaseRNNCell", "gluon_step", "split_steps", "merge_steps", "default_begin_state",
           "cells_state_info", "cells_begin_state", "cells_unpack_weights", "cells_pack_weights"]


def gluon_step(cell, inputs, states):
    """One step of ``cell``: its ``gluon`` cell's ``hybrid_forward`` on Symbols with this cell's
    weight variables (``_iW``, ``_hW``, ``_iB``, ``_hB``), named under its prefix."""
    cell._counter += 1
    cell._step._counter = cell._counter
    with Prefix(cell._prefix):
        return cell._step.hybrid_forward(sym, inputs, list(states), i2h_weight=cell._iW,
                                         h2h_weight=cell._hW, i2h_bias=cell._iB,
                                         h2h_bias=cell._hB)


def _check_symbols(inputs):
    items = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    for x in items:
        if not isinstance(x, Symbol):
            raise InvalidArgumentTypeError(
                f"mx.rnn cells build symbolic graphs: unroll takes a Symbol or a list of "
                f"Symbols, got {type(x).__name__} (use mx.gluon.rnn for NDArrays)")


def split_steps(length, inputs, layout):
    """``inputs`` (a Symbol in ``layout`` or a list of step Symbols) as a list of steps."""
    _check_symbols(inputs)
    return format_sequence(length, inputs, layout, False)[0]


def merge_steps(length, outputs, layout, merge_outputs):
    """The step outputs merged into one Symbol in ``layout`` (True), a list (False) or as
    they come (None)."""
    return format_sequence(length, outputs, layout, merge_outputs)[0]


def default_begin_state(cell, inputs, layout):
    """Zero states for ``cell`` whose batch dimension comes from ``inputs`` (a Symbol in
    ``layout`` or a list of step Symbols), so the graph binds for any batch size."""
    _check_symbols(inputs)
    return begin_state_for(cell, sym, None, inputs, 0, layout)


def cells_state_info(cells):
    """The ``state_info`` of ``cells``, concatenated."""
    return sum([c.state_info for c in cells], [])


def cells_begin_state(cells, **kwargs):
    """The begin states of ``cells``, concatenated."""
    return sum([c.begin_state(**kwargs) for c in cells], [])


def cells_unpack_weights(cells, args):
    """``args`` with each cell's weights unpacked in turn."""
    for cell in cells:
        args = cell.unpack_weights(args)
    return args


def cells_pack_weights(cells, args):
    """``args`` with each cell's weights packed in turn."""
    for cell in cells:
        args = cell.pack_weights(args)
    return args


class BaseRNNCell:
    """Abstract base class of the legacy symbolic cells.

    Parameters
    ----------
    prefix : str, default ''
        Prefix of the names of the cell's nodes (and of its weights when ``params`` is None).
    params : RNNParams, optional
        Share these variables (default: a new container with ``prefix``).
    """

    #: False for cells that only unroll (fused, bidirectional)
    _steppable = True

    def __init__(self, prefix="", params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step counters before building another graph with the cell."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", ()):
            cell.reset()

    def __call__(self, inputs, states):
        """One time step: ``(output, new_states)`` Symbols for step input ``inputs``."""
        raise UnsupportedError(f"{type(self).__name__} does not define one step (__call__)")

    @property
    def params(self):
        """The cell's :class:`RNNParams` (taking it marks them as shared)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """Shape and layout of each state: ``[{'shape': (0, H), '__layout__': 'NC'}, ...]``."""
        raise UnsupportedError(f"{type(self).__name__} does not define state_info")

    @property
    def state_shape(self):
        """The shape of each state (0 is the unknown batch size)."""
        return [info["shape"] for info in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def _check_unmodified(self):
        if self._modified:
            raise StateError("After applying modifier cells (e.g. DropoutCell) the base cell "
                             "cannot be called directly. Call the modifier cell instead.")

    def begin_state(self, func=sym.zeros, **kwargs):
        """The initial states: ``func(name='<prefix>begin_state_<k>', **state_info, **kwargs)``.

        Parameters
        ----------
        func : callable, default mx.sym.zeros
            Makes one state: ``mx.sym.zeros``, ``mx.sym.Variable`` (to feed the states),
            ... The batch dimension of ``state_info`` is 0; sparsenet does no backward
            shape inference, so with ``mx.sym.zeros`` give a ``shape`` or let
            :meth:`unroll` make the states (it sizes them from the inputs).
        **kwargs
            More arguments of ``func``.

        Returns
        -------
        list of Symbol
        """
        self._check_unmodified()
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}",
                               **kwargs))
        return states

    def unpack_weights(self, args):
        """Split each packed ``i2h``/``h2h`` weight and bias into one array per gate.

        Parameters
        ----------
        args : dict of str to NDArray
            E.g. ``Module.get_params()[0]``. Not modified.

        Returns
        -------
        dict of str to NDArray
            ``args`` with ``<prefix>i2h_weight`` replaced by ``<prefix>i2h<gate>_weight``
            for each gate (``_i, _f, _c, _o`` for the LSTM, ``_r, _z, _o`` for the GRU).
        """
        args = dict(args)
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ("i2h", "h2h"):
            weight = args.pop(f"{self._prefix}{group}_weight")
            bias = args.pop(f"{self._prefix}{group}_bias")
            for j, gate in enumerate(self._gate_names):
                args[f"{self._prefix}{group}{gate}_weight"] = weight[j * h:(j + 1) * h].copy()
                args[f"{self._prefix}{group}{gate}_bias"] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """The inverse of :meth:`unpack_weights`: one ``i2h``/``h2h`` weight and bias per cell.

        Parameters
        ----------
        args : dict of str to NDArray
            Not modified.

        Returns
        -------
        dict of str to NDArray
        """
        args = dict(args)
        if not self._gate_names:
            return args
        for group in ("i2h", "h2h"):
            for kind in ("weight", "bias"):
                parts = [args.pop(f"{self._prefix}{group}{gate}_{kind}")
                         for gate in self._gate_names]
                args[f"{self._prefix}{group}_{kind}"] = nd.concat(*parts, dim=0)
        return args

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Add ``length`` time steps to the graph.

        Parameters
        ----------
        length : int
            Number of steps.
        inputs : Symbol or list of Symbol
            One Symbol of layout ``layout`` (``(N, T, C)`` for ``'NTC'``), or ``length``
            step Symbols ``(N, C)``.
        begin_state : list of Symbol, optional
            Default: zeros sized from the inputs.
        layout : {'NTC', 'TNC'}
        merge_outputs : bool, optional
            True: one Symbol in ``layout``; False: a list of steps; None: as they come.

        Returns
        -------
        outputs : Symbol or list of Symbol
        states : list of Symbol
            The states after the last step.
        """
        self.reset()
        steps = split_steps(length, inputs, layout)
        states = begin_state if begin_state is not None else \
            default_begin_state(self, steps, layout)
        outputs = []
        for i in range(length):
            output, states = self(steps[i], states)
            outputs.append(output)
        return merge_steps(length, outputs, layout, merge_outputs), states

    def _get_activation(self, inputs, activation, **kwargs):
        """``Activation(act_type=activation)`` for a name, else ``activation(inputs)``."""
        if isinstance(activation, str):
            return sym.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)

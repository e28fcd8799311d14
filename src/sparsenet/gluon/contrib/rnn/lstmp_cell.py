""":class:`LSTMPCell`: an LSTM cell whose recurrent state is a projection of its hidden state
(Sak et al. 2014), with MXNet 1.9.1's parameters (``h2r_weight`` the projection).

>>> import sparsenet as mx
>>> cell = mx.gluon.contrib.rnn.LSTMPCell(4, 2, input_size=3, prefix='p_')
>>> sorted(cell.collect_params().keys())
['p_h2h_bias', 'p_h2h_weight', 'p_h2r_weight', 'p_i2h_bias', 'p_i2h_weight']
>>> [i['shape'] for i in cell.state_info(batch_size=5)]
[(5, 2), (5, 4)]
"""
from ...rnn.basic_cells import _GatedCell
from ...rnn.sequence_utils import node_name

__all__ = ["LSTMPCell"]


class LSTMPCell(_GatedCell):
    r"""Long short-term memory cell with a projection.

    .. math::
        i, f, g, o = \sigma, \sigma, \tanh, \sigma \text{ of }
        W_{ih} x_t + b_{ih} + W_{rh} r_{t-1} + b_{rh}\\
        c_t = f c_{t-1} + i g,\quad h_t = o \tanh(c_t),\quad r_t = W_{hr} h_t

    The output and the first state are ``r_t`` (``projection_size`` wide); the
    second state is ``c_t`` (``hidden_size`` wide).

    Parameters
    ----------
    hidden_size : int
    projection_size : int
    i2h_weight_initializer, h2h_weight_initializer, h2r_weight_initializer : optional
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    input_size : int, default 0
        0: inferred from the first input.
    prefix : str, optional (automatic ``lstmp0_``, ...)
    params : ParameterDict, optional
    """

    _gates = 4

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        self._projection_size = int(projection_size)
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self.h2r_weight = self.params.get("h2r_weight",
                                          shape=(self._projection_size, self._hidden_size),
                                          init=h2r_weight_initializer, allow_deferred_init=True)

    def _recurrent_size(self):
        return self._projection_size

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "lstmp"

    def __repr__(self):
        shape = self.i2h_weight.shape
        return (f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]} -> "
                f"{self.h2r_weight.shape[0]})")

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias,
                       h2h_bias):
        prefix = f"t{self._counter}_"
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias, prefix)
        gates = F.elemwise_add(i2h, h2h, **node_name(F, prefix + "plus0"))
        g = F.SliceChannel(gates, num_outputs=4, **node_name(F, prefix + "slice"))
        in_gate = F.Activation(g[0], act_type="sigmoid", **node_name(F, prefix + "i"))
        forget_gate = F.Activation(g[1], act_type="sigmoid", **node_name(F, prefix + "f"))
        in_transform = F.Activation(g[2], act_type="tanh", **node_name(F, prefix + "c"))
        out_gate = F.Activation(g[3], act_type="sigmoid", **node_name(F, prefix + "o"))
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1]),
                                F.elemwise_mul(in_gate, in_transform),
                                **node_name(F, prefix + "state"))
        hidden = F.elemwise_mul(out_gate, F.Activation(next_c, act_type="tanh"),
                                **node_name(F, prefix + "hidden"))
        next_r = F.FullyConnected(hidden, h2r_weight, num_hidden=self._projection_size,
                                  no_bias=True, **node_name(F, prefix + "out"))
        return next_r, [next_r, next_c]

"""Activation layers: Activation, LeakyReLU, PReLU, ELU, SELU, GELU, Swish.

>>> import sparsenet as mx
>>> mx.gluon.nn.Activation('relu')(mx.nd.array([-1.0, 2.0])).asnumpy()
array([0., 2.], dtype=float32)
"""
from ... import initializer
from ...base import InvalidArgumentError
from ..block import HybridBlock

__all__ = ["Activation", "LeakyReLU", "PReLU", "ELU", "SELU", "GELU", "Swish"]


class Activation(HybridBlock):
    """Apply activation ``activation`` ('relu', 'sigmoid', 'tanh', 'softrelu', 'softsign').

    The block is named after the activation (``sigmoid0``, ``relu0``), as in MXNet.

    >>> import sparsenet as mx
    >>> a = mx.gluon.nn.Activation('sigmoid')
    >>> a
    Activation(sigmoid)
    >>> a(mx.nd.zeros((1,))).asnumpy()
    array([0.5], dtype=float32)
    """

    def __init__(self, activation, **kwargs):
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self):
        return self._act_type

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type)

    def __repr__(self):
        return f"{type(self).__name__}({self._act_type})"


class LeakyReLU(HybridBlock):
    """``max(x, alpha * x)``.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.LeakyReLU(0.1)(mx.nd.array([-1.0, 1.0])).asnumpy()
    array([-0.1,  1. ], dtype=float32)
    """

    def __init__(self, alpha, **kwargs):
        if alpha < 0:
            raise InvalidArgumentError(
                f"LeakyReLU: slope coefficient alpha must be >= 0, got {alpha}")
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="leaky", slope=self._alpha)

    def __repr__(self):
        return f"{type(self).__name__}({self._alpha})"


class PReLU(HybridBlock):
    """Parametric ReLU: ``x`` if ``x > 0`` else ``alpha * x``, with a learned ``alpha``.

    Parameters
    ----------
    alpha_initializer : Initializer
        Initial slope (``Constant(0.25)``).
    in_channels : int
        1 (one slope for all) or the number of channels (axis 1 of the input).

    Examples
    --------
    >>> import sparsenet as mx
    >>> layer = mx.gluon.nn.PReLU()
    >>> layer.initialize()
    >>> layer(mx.nd.array([-2.0, 3.0])).asnumpy()
    array([-0.5,  3. ], dtype=float32)
    >>> layer.alpha.shape
    (1,)
    """

    def __init__(self, alpha_initializer=initializer.Constant(0.25), in_channels=1, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.alpha = self.params.get("alpha", shape=(in_channels,), init=alpha_initializer)

    def hybrid_forward(self, F, x, alpha):
        return F.LeakyReLU(x, alpha, act_type="prelu")


class ELU(HybridBlock):
    """Exponential linear unit with scale ``alpha`` for negative inputs.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.ELU()(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="elu", slope=self._alpha)


class SELU(HybridBlock):
    """Scaled exponential linear unit.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.SELU()(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="selu")


class GELU(HybridBlock):
    """Gaussian error linear unit.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.GELU()(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="gelu")


class Swish(HybridBlock):
    """``x * sigmoid(beta * x)``.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.Swish()(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(self._beta * x)

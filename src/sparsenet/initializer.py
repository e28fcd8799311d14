"""Weight initializers (``mx.init`` / ``mx.initializer``): Zero, One, Constant, Uniform, ...

An initializer is called with an :class:`InitDesc` (the parameter's name and
attributes) and the array to fill. As in MXNet, a parameter-specific
initializer travels in ``desc.attrs['__init__']`` and fills the array whatever
its name; otherwise the name's suffix decides (``weight`` -> the initializer's
rule, ``bias``/``beta`` -> 0, ``gamma`` -> 1). Row_sparse arrays are filled with
every row stored. Random initializers draw from torch's generator, which
``mx.random.seed`` seeds.

>>> import sparsenet as mx
>>> w = mx.nd.zeros((2, 3))
>>> mx.init.Constant(0.5)(mx.init.InitDesc('fc_weight'), w)
>>> w.asnumpy()
array([[0.5, 0.5, 0.5],
       [0.5, 0.5, 0.5]], dtype=float32)
>>> mx.init.create('zeros')
Zero()
"""
import json
import logging
import math

import numpy as np
import torch

from .base import InvalidArgumentError, InvalidArgumentTypeError, ShapeError, UnsupportedError
from .ndarray.cast_storage import dense_to_csr
from .ndarray.ndarray import NDArray, to_tensor
from .ndarray.row_sparse import RowSparseNDArray

__all__ = ["InitDesc", "Initializer", "register", "alias", "create", "Zero", "One",
           "Constant", "Uniform", "Normal", "Xavier", "MSRAPrelu", "LSTMBias"]

_REGISTRY = {}


class InitDesc(str):
    """Name of the array to initialize, with its attributes.

    Parameters
    ----------
    name : str
    attrs : dict, optional
        ``'__init__'`` holds a parameter-specific initializer (object, name or
        JSON from :meth:`Initializer.dumps`).
    global_init : Initializer, optional

    Examples
    --------
    >>> d = InitDesc('dense0_weight', {'__init__': 'ones'})
    >>> d, d.attrs['__init__']
    ('dense0_weight', 'ones')
    """

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


def _fill(arr, values):
    """Write ``values`` (tensor of ``arr``'s shape) into ``arr`` in place; rsp keeps all rows."""
    with torch.no_grad():
        if arr.stype == "default":
            arr._t.copy_(values)
        elif arr.stype == "row_sparse":
            rows = torch.arange(arr.shape[0], device=arr.device)
            arr._replace(RowSparseNDArray._from_parts(
                values.to(device=arr.device, dtype=arr._data.dtype), rows, arr.shape))
        else:
            arr._replace(dense_to_csr(values.to(device=arr.device, dtype=arr._data.dtype)))


def _target(arr):
    """A dense tensor to sample into: ``arr``'s own storage when dense, else a new one."""
    if arr.stype == "default":
        return arr._t
    return torch.empty(arr.shape, dtype=arr._data.dtype, device=arr.device)


def _sample(arr, draw):
    """Fill ``arr`` by ``draw(tensor)`` (an in-place torch sampler)."""
    t = _target(arr)
    with torch.no_grad():
        draw(t)
    if arr.stype != "default":
        _fill(arr, t)


class Initializer:
    """Base class of initializers: subclasses define ``_init_weight(name, arr)``.

    Examples
    --------
    >>> import sparsenet as mx
    >>> @mx.init.register
    ... class Twos(mx.init.Initializer):
    ...     def _init_weight(self, name, arr):
    ...         arr[:] = 2.0
    >>> b = mx.nd.zeros((2,))
    >>> mx.init.create('twos')(mx.init.InitDesc('x_weight'), b)
    >>> b.asnumpy()
    array([2., 2.], dtype=float32)
    """

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Log each initialized array with ``print_func(arr)`` (default: its RMS)."""
        self._verbose = verbose
        if print_func is None:
            def print_func(x):
                return str(float(x._dense_tensor().float().norm()) / math.sqrt(
                    max(1, int(np.prod(x.shape)))))
        self._print_func = print_func
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def dumps(self):
        """The initializer as a JSON string ``[name, kwargs]`` (:func:`create` reads it back).

        >>> Uniform(0.1).dumps()
        '["uniform", {"scale": 0.1}]'
        """
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        """Initialize ``arr`` described by ``desc`` (an :class:`InitDesc` or a name)."""
        if not isinstance(arr, NDArray):
            raise InvalidArgumentTypeError(f"initializer: expected an NDArray to fill, got "
                                           f"{type(arr).__name__}")
        if not isinstance(desc, InitDesc):
            desc = InitDesc(str(desc))
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for suffix, method in (("weight", self._init_weight), ("bias", self._init_bias),
                               ("gamma", self._init_gamma), ("beta", self._init_beta),
                               ("min", self._init_zero), ("max", self._init_one),
                               ("moving_mean", self._init_zero), ("moving_var", self._init_one),
                               ("running_mean", self._init_zero),
                               ("running_var", self._init_one)):
            if desc.endswith(suffix):
                method(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        raise InvalidArgumentError(
            f"Unknown initialization pattern for '{desc}': default "
            f"initialization covers names ending in 'weight', 'bias', 'gamma' "
            f"(1.0) and 'beta' (0.0); give the parameter an init= explicitly")

    def _init_zero(self, _, arr):
        _sample(arr, lambda t: t.zero_())

    def _init_one(self, _, arr):
        _sample(arr, lambda t: t.fill_(1.0))

    _init_bias = _init_zero
    _init_beta = _init_zero
    _init_gamma = _init_one

    def _init_weight(self, name, arr):
        raise UnsupportedError(f"{type(self).__name__} must define _init_weight()")

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    def __hash__(self):
        return hash((type(self).__name__, json.dumps(self._kwargs, sort_keys=True,
                                                      default=str)))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"


def register(klass):
    """Register an :class:`Initializer` subclass under its lower-cased class name.

    >>> register(Zero) is Zero
    True
    """
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise InvalidArgumentTypeError(f"register: expected an Initializer subclass, got {klass!r}")
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def alias(*names):
    """Class decorator registering extra names for an initializer.

    >>> @alias('my_ones')
    ... class MyOnes(One):
    ...     pass
    >>> type(create('my_ones')).__name__
    'MyOnes'
    """
    def reg(klass):
        for name in names:
            _REGISTRY[name.lower()] = klass
        return klass
    return reg


def create(init, **kwargs):
    """Return an initializer from an instance, a registered name or :meth:`~Initializer.dumps` JSON.

    >>> create('uniform', scale=0.5)
    Uniform(scale=0.5)
    >>> create('["normal", {"sigma": 0.1}]')
    Normal(sigma=0.1)
    """
    if isinstance(init, Initializer):
        return init
    if isinstance(init, type) and issubclass(init, Initializer):
        return init(**kwargs)
    if not isinstance(init, str):
        raise InvalidArgumentTypeError(
            f"expected an Initializer, its name or its JSON, got {init!r}")
    text = init.strip()
    if text.startswith("["):
        name, params = json.loads(text)
        kwargs = dict(params, **kwargs)
    else:
        name = text
    try:
        klass = _REGISTRY[name.lower()]
    except KeyError:
        raise InvalidArgumentError(f"unknown initializer {name!r}; registered: "
                                   f"{sorted(_REGISTRY)}") from None
    return klass(**kwargs)


@register
@alias("zeros")
class Zero(Initializer):
    """Fill with 0.

    >>> import sparsenet as mx
    >>> w = mx.nd.ones((2,)); Zero()(InitDesc('w_weight'), w); w.asnumpy()
    array([0., 0.], dtype=float32)
    """

    def _init_weight(self, _, arr):
        self._init_zero(_, arr)


@register
@alias("ones")
class One(Initializer):
    """Fill with 1.

    >>> import sparsenet as mx
    >>> w = mx.nd.zeros((2,)); One()(InitDesc('w_weight'), w); w.asnumpy()
    array([1., 1.], dtype=float32)
    """

    def _init_weight(self, _, arr):
        self._init_one(_, arr)


@register
class Constant(Initializer):
    """Fill with ``value`` (a scalar or an array broadcastable to the parameter).

    >>> import sparsenet as mx
    >>> w = mx.nd.zeros((2, 2)); Constant([1.0, 2.0])(InitDesc('w_weight'), w); w.asnumpy()
    array([[1., 2.],
           [1., 2.]], dtype=float32)
    """

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        value = self.value
        if isinstance(value, (int, float, np.number)):
            _sample(arr, lambda t: t.fill_(float(value)))
            return
        v = to_tensor(value)
        _sample(arr, lambda t: t.copy_(v.to(dtype=t.dtype, device=t.device).expand(t.shape)))

    def dumps(self):
        val = self._kwargs["value"]
        if not np.isscalar(val):
            val = np.asarray(val.asnumpy() if isinstance(val, NDArray) else val).tolist()
        return json.dumps(["constant", {"value": val}])


@register
class Uniform(Initializer):
    """Uniform samples from ``[-scale, scale]``.

    >>> import sparsenet as mx
    >>> w = mx.nd.zeros((100,)); Uniform(0.1)(InitDesc('w_weight'), w)
    >>> bool(abs(w.asnumpy()).max() <= 0.1)
    True
    """

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        s = float(self.scale)
        _sample(arr, lambda t: t.uniform_(-s, s))


@register
class Normal(Initializer):
    """Normal samples with mean 0 and standard deviation ``sigma``.

    >>> import sparsenet as mx
    >>> w = mx.nd.zeros((2, 2)); Normal(0.5)(InitDesc('w_weight'), w); w.shape
    (2, 2)
    """

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        s = float(self.sigma)
        _sample(arr, lambda t: t.normal_(0.0, s))


@register
class Xavier(Initializer):
    """Glorot/"Xavier" initialization: scale ``sqrt(magnitude / factor)`` from the fans.

    ``fan_in = shape[1] * prod(shape[2:])``, ``fan_out = shape[0] * prod(shape[2:])``;
    ``factor_type`` 'avg' (mean of the two), 'in' or 'out'; ``rnd_type``
    'uniform' (``[-scale, scale]``) or 'gaussian' (standard deviation ``scale``).

    >>> import sparsenet as mx
    >>> w = mx.nd.zeros((30, 20)); Xavier()(InitDesc('w_weight'), w)
    >>> bool(abs(w.asnumpy()).max() <= (3 / 25) ** 0.5)
    True
    """

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise ShapeError(f"Xavier initializer cannot be applied to vector '{name}' of shape "
                             f"{shape}; it needs at least 2 dimensions")
        hw = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw, shape[0] * hw
        factors = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}
        if self.factor_type not in factors:
            raise InvalidArgumentError(f"Xavier: factor_type must be 'avg', 'in' or 'out', got "
                                       f"{self.factor_type!r}")
        scale = math.sqrt(self.magnitude / factors[self.factor_type])
        if self.rnd_type == "uniform":
            _sample(arr, lambda t: t.uniform_(-scale, scale))
        elif self.rnd_type == "gaussian":
            _sample(arr, lambda t: t.normal_(0.0, scale))
        else:
            raise InvalidArgumentError(f"Xavier: rnd_type must be 'uniform' or 'gaussian', got "
                                       f"{self.rnd_type!r}")


@register
class MSRAPrelu(Xavier):
    """He/MSRA initialization for PReLU nets: Gaussian Xavier with magnitude ``2 / (1 + slope**2)``.

    >>> MSRAPrelu().magnitude
    1.88235294117647...
    """

    def __init__(self, factor_type="avg", slope=0.25):
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class LSTMBias(Initializer):
    """An LSTM cell's bias: zeros, with the forget gate's quarter set to ``forget_bias``.

    The gates are stacked in MXNet's order (input, forget, cell, output), so the
    second quarter of the ``4 * hidden`` entries is the forget gate's.

    >>> import sparsenet as mx
    >>> b = mx.nd.ones((8,)); LSTMBias(2.0)(InitDesc('lstm_i2h_bias'), b); b.asnumpy()
    array([0., 0., 2., 2., 0., 0., 0., 0.], dtype=float32)
    """

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        hidden = int(arr.shape[0]) // 4

        def fill(t):
            t.zero_()
            t[hidden:2 * hidden] = float(self.forget_bias)
        _sample(arr, fill)

    _init_bias = _init_weight

"""Basic layers: Sequential, HybridSequential, Dense, Dropout, Embedding, Flatten, Lambda.

``Dense`` on a CSR input runs the sparse ``FullyConnected`` kernel: the batch is
never densified, and the weight gradient (dense-shaped, as in MXNet) is
written only where the batch has features.

>>> import sparsenet as mx
>>> net = mx.gluon.nn.Sequential()
>>> net.add(mx.gluon.nn.Dense(2, in_units=4), mx.gluon.nn.Activation('relu'))
>>> net.initialize(init='ones')
>>> x = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 3], [0, 1, 2]), shape=(2, 4))
>>> net(x).asnumpy()
array([[1., 1.],
       [2., 2.]], dtype=float32)
"""
import warnings

from ... import ndarray as nd
from ...base import InvalidArgumentError
from ..block import Block, HybridBlock
from ..utils import _indent
from .activations import Activation

__all__ = ["Sequential", "HybridSequential", "Dense", "Dropout", "Embedding", "Flatten",
           "Lambda", "HybridLambda"]


def _seq_repr(block):
    modstr = "\n".join(f"  ({key}): {_indent(repr(b), 2)}" for key, b in block._children.items())
    return f"{type(block).__name__}(\n{modstr}\n)"


def _seq_getitem(block, key):
    layers = list(block._children.values())[key]
    if isinstance(layers, list):
        net = type(block)(prefix=block._prefix)
        with net.name_scope():
            net.add(*layers)
        return net
    return layers


class Sequential(Block):
    """Run child blocks one after the other.

    >>> import sparsenet as mx
    >>> net = mx.gluon.nn.Sequential()
    >>> net.add(mx.gluon.nn.Dense(3, in_units=2), mx.gluon.nn.Dense(1, in_units=3))
    >>> len(net), net[1].weight.shape
    (2, (1, 3))
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def add(self, *blocks):
        """Append blocks."""
        for block in blocks:
            self.register_child(block)

    def forward(self, x):
        for block in self._children.values():
            x = block(x)
        return x

    def __repr__(self):
        return _seq_repr(self)

    def __getitem__(self, key):
        return _seq_getitem(self, key)

    def __len__(self):
        return len(self._children)

    def hybridize(self, active=True, **kwargs):
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are "
                          f"HybridBlocks. Consider using HybridSequential for the best "
                          f"performance.", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(HybridBlock):
    """Run child HybridBlocks one after the other.

    >>> import sparsenet as mx
    >>> net = mx.gluon.nn.HybridSequential(prefix='hs_')
    >>> with net.name_scope():
    ...     net.add(mx.gluon.nn.Dense(3))
    >>> net[0].name
    'hs_dense0'
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def add(self, *blocks):
        """Append blocks."""
        for block in blocks:
            self.register_child(block)

    def hybrid_forward(self, F, x):
        for block in self._children.values():
            x = block(x)
        return x

    def __repr__(self):
        return _seq_repr(self)

    def __getitem__(self, key):
        return _seq_getitem(self, key)

    def __len__(self):
        return len(self._children)


class Dense(HybridBlock):
    """Fully connected layer ``activation(dot(x, weight.T) + bias)``, weight ``(units, in_units)``.

    Parameters
    ----------
    units : int
    activation : str, optional
        Name of an activation applied to the output.
    use_bias : bool
    flatten : bool
        Flatten inputs to ``(batch, -1)`` (else the product applies to the last axis).
    dtype : str
    weight_initializer, bias_initializer : Initializer or str
    in_units : int
        Input size; 0 infers it at the first forward pass.

    Examples
    --------
    >>> import sparsenet as mx
    >>> d = mx.gluon.nn.Dense(4, activation='relu')
    >>> d.initialize()
    >>> d(mx.nd.ones((2, 3))).shape, d.weight.shape
    ((2, 4), (4, 3))
    """

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype="float32",
                 weight_initializer=None, bias_initializer="zeros", in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(units,), init=bias_initializer,
                                            dtype=dtype, allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def infer_shape(self, x, *args):
        in_units = 1
        for s in (x.shape[1:] if self._flatten else x.shape[-1:]):
            in_units *= s
        self.weight.shape = (self._units, in_units)

    def hybrid_forward(self, F, x, weight, bias=None):
        out = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten)
        if self.act is not None:
            out = self.act(out)
        return out

    def __repr__(self):
        shape = self.weight.shape
        return f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]}, " \
               f"{self.act if self.act else 'linear'})"


class Dropout(HybridBlock):
    """Zero inputs with probability ``rate`` while training (``autograd.record()``).

    >>> import sparsenet as mx
    >>> mx.gluon.nn.Dropout(0.5)(mx.nd.ones((2,))).asnumpy()
    array([1., 1.], dtype=float32)
    """

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes)
        return F.identity(x)

    def __repr__(self):
        return f"{type(self).__name__}(p = {self._rate}, axes={self._axes})"


class Embedding(HybridBlock):
    """Look up rows of a ``(input_dim, output_dim)`` weight at integer ids.

    With ``sparse_grad=True`` the weight gradient is row_sparse: only the rows
    of the ids in the batch (sorted, unique).

    >>> import sparsenet as mx
    >>> e = mx.gluon.nn.Embedding(10, 3, sparse_grad=True)
    >>> e
    Embedding(10 -> 3, float32)
    >>> e.initialize()
    >>> with mx.autograd.record():
    ...     y = e(mx.nd.array([4, 1, 4]))
    >>> y.backward()
    >>> e.weight.grad().indices.asnumpy()
    array([1, 4])
    """

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 sparse_grad=False, **kwargs):
        super().__init__(**kwargs)
        grad_stype = "row_sparse" if sparse_grad else "default"
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True, grad_stype=grad_stype)

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class Flatten(HybridBlock):
    """Reshape to ``(batch, -1)``.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.Flatten()(mx.nd.zeros((2, 3, 4))).shape
    (2, 12)
    """

    def hybrid_forward(self, F, x):
        return F.Flatten(x)

    def __repr__(self):
        return type(self).__name__


class Lambda(Block):
    """Wrap a function of NDArrays (or the name of an ``mx.nd`` operator) as a Block.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.Lambda('tanh')(mx.nd.zeros((1,))).asnumpy()
    array([0.], dtype=float32)
    """

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not hasattr(nd, function):
                raise InvalidArgumentError(f"Function name {function} is not found in ndarray.")
            function = getattr(nd, function)
        elif not callable(function):
            raise InvalidArgumentError(f"Unrecognized function in lambda: {function} of type "
                                       f"{type(function)}")
        self._func_impl = function

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self):
        return f"{type(self).__name__}({getattr(self._func_impl, '__name__', '')})"


class HybridLambda(HybridBlock):
    """Wrap ``function(F, x, *args)`` (or an operator name) as a HybridBlock.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.HybridLambda(lambda F, x: F.relu(x))(mx.nd.array([-1.0])).asnumpy()
    array([0.], dtype=float32)
    """

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not hasattr(nd, function):
                raise InvalidArgumentError(f"Function name {function} is not found in ndarray.")
            name = function
            self._func = lambda F, *args: getattr(F, name)(*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = getattr(function, "__name__", "")
        else:
            raise InvalidArgumentError(f"Unrecognized function in lambda: {function} of type "
                                       f"{type(function)}")

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self):
        return f"{type(self).__name__}({self._func_name})"

"""Normalisation layers: BatchNorm, BatchNormReLU, InstanceNorm, LayerNorm, GroupNorm.

Same constructor arguments, defaults, parameter names (``gamma``, ``beta``,
``running_mean``, ``running_var``) and deferred shape inference
(``in_channels=0``) as MXNet 1.9.1's Gluon. ``BatchNorm`` normalises with the
batch statistics inside ``autograd.record()`` and updates ``running_mean`` and
``running_var`` during ``backward()``, as MXNet does.

>>> import sparsenet as mx
>>> net = mx.gluon.nn.HybridSequential()
>>> net.add(mx.gluon.nn.Dense(4), mx.gluon.nn.BatchNorm(), mx.gluon.nn.Activation('relu'))
>>> net.initialize()
>>> x = mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [0, 3, 1], [0, 2, 3]), shape=(2, 5))
>>> with mx.autograd.record():
...     y = net(x)
>>> y.backward()
>>> net[1].running_mean.shape, y.shape
((4,), (2, 4))
"""
import numpy as np

from ..block import HybridBlock

__all__ = ["BatchNorm", "BatchNormReLU", "InstanceNorm", "LayerNorm", "GroupNorm"]


def _kwargs_repr(kwargs):
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def _norm_params(block, in_channels, center, scale, beta_initializer, gamma_initializer,
                 batch_norm=False):
    """``gamma`` and ``beta``; BatchNorm alone marks a fixed one non-differentiable (as MXNet)."""
    block.gamma = block.params.get("gamma", grad_req="write" if scale else "null",
                                   shape=(in_channels,), init=gamma_initializer,
                                   allow_deferred_init=True,
                                   differentiable=scale or not batch_norm)
    block.beta = block.params.get("beta", grad_req="write" if center else "null",
                                  shape=(in_channels,), init=beta_initializer,
                                  allow_deferred_init=True,
                                  differentiable=center or not batch_norm)


class _BatchNorm(HybridBlock):
    """Batch normalisation, optionally followed by ReLU (see :class:`BatchNorm`)."""

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, fuse_relu=False, beta_initializer="zeros",
                 gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum,
                        "fix_gamma": not scale, "use_global_stats": use_global_stats}
        self.fuse_relu = fuse_relu
        if in_channels != 0:
            self.in_channels = in_channels
        _norm_params(self, in_channels, center, scale, beta_initializer, gamma_initializer,
                     batch_norm=True)
        self.running_mean = self.params.get("running_mean", grad_req="null",
                                            shape=(in_channels,),
                                            init=running_mean_initializer,
                                            allow_deferred_init=True, differentiable=False)
        self.running_var = self.params.get("running_var", grad_req="null",
                                           shape=(in_channels,),
                                           init=running_variance_initializer,
                                           allow_deferred_init=True, differentiable=False)

    def cast(self, dtype):
        """Cast the parameters; float16 stays float32 (batch statistics need the range)."""
        if np.dtype(dtype).name == "float16":
            dtype = "float32"
        super().cast(dtype)

    def infer_shape(self, x, *args):
        c = x.shape[self._kwargs["axis"]]
        for p in (self.gamma, self.beta, self.running_mean, self.running_var):
            p.shape = (c,)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        out = F.BatchNorm(x, gamma, beta, running_mean, running_var, **self._kwargs)
        if self.fuse_relu:
            out = F.Activation(out, act_type="relu")
        return out

    def __repr__(self):
        in_channels = self.gamma.shape[0]
        return f"{type(self).__name__}({_kwargs_repr(self._kwargs)}, " \
               f"in_channels={in_channels if in_channels else None})"


class BatchNorm(_BatchNorm):
    """Batch normalisation: normalise each channel (``axis``) with batch or running statistics.

    Inside ``autograd.record()`` (training) the batch mean and (biased)
    variance normalise, and ``backward()`` updates the running statistics:
    ``running = running * momentum + batch * (1 - momentum)``. Otherwise (and
    with ``use_global_stats``) the running statistics normalise.

    Parameters
    ----------
    axis : int
        The channel axis (1 for NCHW data; -1 or 3 for NHWC).
    momentum : float
    epsilon : float
    center : bool
        Learn ``beta`` (else it stays at its initial value).
    scale : bool
        Learn ``gamma``; ``scale=False`` uses ones instead (MXNet's ``fix_gamma``).
    use_global_stats : bool
    beta_initializer, gamma_initializer : str or Initializer
    running_mean_initializer, running_variance_initializer : str or Initializer
    in_channels : int
        Number of channels; 0 infers it at the first forward pass.

    Examples
    --------
    >>> import sparsenet as mx
    >>> bn = mx.gluon.nn.BatchNorm(in_channels=2)
    >>> bn
    BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, use_global_stats=False, \
in_channels=2)
    >>> bn.initialize()
    >>> x = mx.nd.array([[1.0, 2.0], [3.0, 6.0]])
    >>> with mx.autograd.record():
    ...     y = bn(x)
    >>> y.backward()
    >>> bn.running_mean.data().asnumpy(), bn.running_var.data().asnumpy()
    (array([0.2, 0.4], dtype=float32), array([1. , 1.3], dtype=float32))
    """

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels=0, **kwargs):
        super().__init__(axis=axis, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats, fuse_relu=False,
                         beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)


class BatchNormReLU(_BatchNorm):
    """:class:`BatchNorm` followed by ReLU (same arguments).

    >>> import sparsenet as mx
    >>> bn = mx.gluon.nn.BatchNormReLU(in_channels=1)
    >>> bn.initialize()
    >>> bn(mx.nd.array([[-1.0], [2.0]])).asnumpy()
    array([[0.     ],
           [1.99999]], dtype=float32)
    """

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels=0, **kwargs):
        super().__init__(axis=axis, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats, fuse_relu=True,
                         beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)


class InstanceNorm(HybridBlock):
    """Instance normalisation: each sample's channel over its other (spatial) axes.

    Parameters
    ----------
    axis : int
        The channel axis.
    epsilon : float
    center : bool
        Learn ``beta``.
    scale : bool
        Learn ``gamma`` (default False: gamma stays at its initial ones).
    beta_initializer, gamma_initializer : str or Initializer
    in_channels : int
        0 infers it at the first forward pass.

    Examples
    --------
    >>> import sparsenet as mx
    >>> layer = mx.gluon.nn.InstanceNorm()
    >>> layer.initialize()
    >>> layer(mx.nd.array([[[1.0, 2.0]], [[3.0, 5.0]]])).asnumpy().round(4)
    array([[[-1.,  1.]],
    <BLANKLINE>
           [[-1.,  1.]]], dtype=float32)
    """

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        _norm_params(self, in_channels, center, scale, beta_initializer, gamma_initializer)

    def infer_shape(self, x, *args):
        c = x.shape[self._axis]
        self.gamma.shape = (c,)
        self.beta.shape = (c,)

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, eps=self._epsilon)
        x = F.swapaxes(x, dim1=1, dim2=self._axis)
        return F.swapaxes(F.InstanceNorm(x, gamma, beta, eps=self._epsilon), dim1=1,
                          dim2=self._axis)

    def __repr__(self):
        return f"{type(self).__name__}({_kwargs_repr(self._kwargs)}, " \
               f"in_channels={self.gamma.shape[0]})"


class LayerNorm(HybridBlock):
    """Layer normalisation along ``axis``: ``(x - mean) / sqrt(var + epsilon) * gamma + beta``.

    Parameters
    ----------
    axis : int
    epsilon : float
    center, scale : bool
        Learn ``beta`` / ``gamma``.
    beta_initializer, gamma_initializer : str or Initializer
    in_channels : int
        Size of ``axis``; 0 infers it at the first forward pass.

    Examples
    --------
    >>> import sparsenet as mx
    >>> layer = mx.gluon.nn.LayerNorm()
    >>> layer.initialize()
    >>> layer(mx.nd.array([[1.0, 2.0, 3.0]])).asnumpy().round(4)
    array([[-1.2247,  0.    ,  1.2247]], dtype=float32)
    >>> layer
    LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=3)
    """

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        _norm_params(self, in_channels, center, scale, beta_initializer, gamma_initializer)

    def infer_shape(self, x, *args):
        c = x.shape[self._axis]
        self.gamma.shape = (c,)
        self.beta.shape = (c,)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)

    def __repr__(self):
        return f"{type(self).__name__}({_kwargs_repr(self._kwargs)}, " \
               f"in_channels={self.gamma.shape[0]})"


class GroupNorm(HybridBlock):
    """Group normalisation: channels (axis 1) in ``num_groups`` groups, one gamma/beta per group.

    As in MXNet 1.x, ``gamma`` and ``beta`` have shape ``(num_groups,)``.

    Parameters
    ----------
    num_groups : int
    epsilon : float
    center, scale : bool
        Learn ``beta`` / ``gamma``.
    beta_initializer, gamma_initializer : str or Initializer

    Examples
    --------
    >>> import sparsenet as mx
    >>> layer = mx.gluon.nn.GroupNorm(num_groups=2)
    >>> layer.initialize()
    >>> layer(mx.nd.array([[[1.0], [3.0], [5.0], [9.0]]])).asnumpy().ravel().round(4)
    array([-1.,  1., -1.,  1.], dtype=float32)
    >>> layer.gamma.shape
    (2,)
    """

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "num_groups": num_groups, "center": center,
                        "scale": scale}
        self._num_groups = num_groups
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        _norm_params(self, num_groups, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)

    def __repr__(self):
        return f"{type(self).__name__}({_kwargs_repr(self._kwargs)})"

"""MXNet's operator-style sampler names in ``mx.nd``: ``random_*``, ``sample_*``, ``uniform``, ``normal``.

``random_<dist>`` take numbers (MXNet's ``_random_<dist>`` operators, keyword
order ``shape, ctx, dtype``); ``sample_<dist>`` take NDArrays of parameters
and draw ``shape`` samples per element (MXNet's ``_sample_<dist>``; the
parameter names are the operators': ``sample_normal(mu, sigma)``,
``sample_exponential(lam)`` with ``lam`` the rate). ``mx.nd.uniform`` and
``mx.nd.normal`` are ``random_uniform`` and ``random_normal``. They all run
:mod:`sparsenet.random`'s samplers.

>>> import sparsenet as mx
>>> mx.nd.random_uniform(0, 1, shape=(2, 3)).shape
(2, 3)
>>> mx.nd.sample_normal(mx.nd.array([0.0, 5.0]), mx.nd.array([1.0, 1.0]), shape=4).shape
(2, 4)
"""
__all__ = ["random_uniform", "random_normal", "random_gamma", "random_exponential",
           "random_poisson", "random_negative_binomial", "random_generalized_negative_binomial",
           "random_randint", "sample_uniform", "sample_normal", "sample_gamma",
           "sample_exponential", "sample_poisson", "sample_negative_binomial",
           "sample_generalized_negative_binomial", "sample_multinomial", "uniform", "normal"]


def random_uniform(low=0, high=1, shape=None, ctx=None, dtype=None, out=None, **kwargs):
    """Uniform samples on ``[low, high)`` (alias ``mx.nd.uniform``).

    >>> random_uniform(shape=(2,)).shape
    (2,)
    """
    return _random.uniform(low, high, shape=shape, dtype=dtype, ctx=ctx, out=out)


def random_normal(loc=0, scale=1, shape=None, ctx=None, dtype=None, out=None, **kwargs):
    """Normal samples N(``loc``, ``scale``²) (alias ``mx.nd.normal``).

    >>> random_normal(shape=(2,)).shape
    (2,)
    """
    return _random.normal(loc, scale, shape=shape, dtype=dtype, ctx=ctx, out=out)


def random_gamma(alpha=1, beta=1, shape=None, ctx=None, dtype=None, out=None, **kwargs):
    """Gamma samples with shape ``alpha`` and scale ``beta``.

    >>> random_gamma(2, 2, shape=(3,)).shape
    (3,)
    """
    return _random.gamma(alpha, beta, shape=shape, dtype=dtype, ctx=ctx, out=out)


def random_exponential(lam=1, shape=None, ctx=None, dtype=None, out=None, **kwargs):
    """Exponential samples with rate ``lam`` (mean ``1 / lam``).

    >>> random_exponential(2.0, shape=(3,)).shape
    (3,)
    """
    return _random._sample("exponential", {"lam": lam}, shape, dtype, ctx, out)


def random_poisson(lam=1, shape=None, ctx=None, dtype=None, out=None, **kwargs):
    """Poisson samples with rate ``lam``.

    >>> random_poisson(0.0, shape=(2,)).asnumpy()
    array([0., 0.], dtype=float32)
    """
    return _random.poisson(lam, shape=shape, dtype=dtype, ctx=ctx, out=out)


def random_negative_binomial(k=1, p=1, shape=None, ctx=None, dtype=None, out=None, **kwargs):
    """Negative binomial samples: failures before the ``k``-th success.

    >>> random_negative_binomial(2, 1.0, shape=(2,)).asnumpy()
    array([0., 0.], dtype=float32)
    """
    return _random.negative_binomial(k, p, shape=shape, dtype=dtype, ctx=ctx, out=out)


def random_generalized_negative_binomial(mu=1, alpha=1, shape=None, ctx=None, dtype=None,
                                         out=None, **kwargs):
    """Generalized negative binomial samples with mean ``mu``, variance ``mu + alpha mu²``.

    >>> random_generalized_negative_binomial(0.0, 1.0, shape=(2,)).asnumpy()
    array([0., 0.], dtype=float32)
    """
    return _random.generalized_negative_binomial(mu, alpha, shape=shape, dtype=dtype, ctx=ctx,
                                                 out=out)


def random_randint(low, high, shape=None, ctx=None, dtype=None, out=None, **kwargs):
    """Integers drawn uniformly from ``[low, high)``.

    >>> random_randint(0, 1, shape=(2,)).asnumpy()
    array([0, 0], dtype=int32)
    """
    return _random.randint(low, high, shape=shape, dtype=dtype, ctx=ctx, out=out)


def sample_uniform(low, high, shape=None, dtype=None, out=None, **kwargs):
    """``shape`` uniform samples per element of the NDArrays ``low`` and ``high``.

    >>> import sparsenet as mx
    >>> sample_uniform(mx.nd.array([0.0, 1.0]), mx.nd.array([1.0, 2.0]), shape=3).shape
    (2, 3)
    """
    return _random.uniform(low, high, shape=shape, dtype=dtype, out=out)


def sample_normal(mu, sigma, shape=None, dtype=None, out=None, **kwargs):
    """``shape`` normal samples per element of the NDArrays ``mu`` and ``sigma``.

    >>> import sparsenet as mx
    >>> sample_normal(mx.nd.array([0.0]), mx.nd.array([1.0])).shape
    (1,)
    """
    return _random.normal(mu, sigma, shape=shape, dtype=dtype, out=out)


def sample_gamma(alpha, beta, shape=None, dtype=None, out=None, **kwargs):
    """``shape`` gamma samples per element of the NDArrays ``alpha`` (shape), ``beta`` (scale).

    >>> import sparsenet as mx
    >>> sample_gamma(mx.nd.array([1.0, 2.0]), mx.nd.array([1.0, 1.0])).shape
    (2,)
    """
    return _random.gamma(alpha, beta, shape=shape, dtype=dtype, out=out)


def sample_exponential(lam, shape=None, dtype=None, out=None, **kwargs):
    """``shape`` exponential samples per element of the NDArray of rates ``lam``.

    >>> import sparsenet as mx
    >>> sample_exponential(mx.nd.array([1.0, 2.0]), shape=2).shape
    (2, 2)
    """
    return _random._sample("exponential", {"lam": lam}, shape, dtype, None, out)


def sample_poisson(lam, shape=None, dtype=None, out=None, **kwargs):
    """``shape`` Poisson samples per element of the NDArray of rates ``lam``.

    >>> import sparsenet as mx
    >>> sample_poisson(mx.nd.array([0.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return _random.poisson(lam, shape=shape, dtype=dtype, out=out)


def sample_negative_binomial(k, p, shape=None, dtype=None, out=None, **kwargs):
    """``shape`` negative binomial samples per element of the NDArrays ``k`` and ``p``.

    >>> import sparsenet as mx
    >>> sample_negative_binomial(mx.nd.array([2.0]), mx.nd.array([1.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return _random.negative_binomial(k, p, shape=shape, dtype=dtype, out=out)


def sample_generalized_negative_binomial(mu, alpha, shape=None, dtype=None, out=None, **kwargs):
    """``shape`` generalized negative binomial samples per element of ``mu`` and ``alpha``.

    >>> import sparsenet as mx
    >>> sample_generalized_negative_binomial(mx.nd.array([0.0]), mx.nd.array([1.0])).asnumpy()
    array([0.], dtype=float32)
    """
    return _random.generalized_negative_binomial(mu, alpha, shape=shape, dtype=dtype, out=out)


def sample_multinomial(data, shape=None, get_prob=False, dtype="int32", out=None, **kwargs):
    """Category draws from the distributions in the last axis of ``data``.

    >>> import sparsenet as mx
    >>> sample_multinomial(mx.nd.array([0.0, 1.0])).asnumpy()
    array([1], dtype=int32)
    """
    return _random.multinomial(data, shape=shape, get_prob=get_prob, out=out, dtype=dtype)


uniform = random_uniform
normal = random_normal


# Imported last: sparsenet.random imports sparsenet.ndarray, which imports the names above from
# this module; so that this module can be a process's first import, they must exist by then.
from . import random as _random  # noqa: E402

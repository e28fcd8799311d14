"""Random numbers: ``mx.random`` and ``mx.nd.random`` (seed, samplers, shuffle).

Samplers draw from torch's generator; :func:`seed` seeds it (and every CUDA
device). Like MXNet, it does not seed NumPy: ``mx.test_utils.rand_ndarray``
uses NumPy's global generator.

Each sampler takes its distribution's parameters as numbers (``shape`` draws,
``(1,)`` by default, on ``ctx``) or as NDArrays of one shape ``P`` (the result
has shape ``P + shape``: ``shape`` draws per element, as MXNet's ``sample_*``
operators); mixing the two is an error, as in MXNet. ``dtype`` is float32 by
default (float16, float32 or float64); ``randint`` gives int32 (or int64).
Parameters are checked for every form (MXNet 1.9.1 checks numbers only).

>>> import sparsenet as mx
>>> mx.random.seed(42)
>>> a = mx.random.uniform(shape=(2,))
>>> mx.random.seed(42)
>>> bool((mx.random.uniform(shape=(2,)) == a).asnumpy().all())
True
>>> mx.nd.random.normal(mx.nd.array([0.0, 10.0]), mx.nd.array([1.0, 1.0]), shape=3).shape
(2, 3)
"""
import numbers

import numpy as np
import torch

from .base import InvalidArgumentError, InvalidArgumentTypeError, as_shape, torch_dtype
from .context import as_context, place
from .ndarray.ndarray import NDArray, copy_into
from .ops import sampling
from .ops.sampling import shuffle

__all__ = ["seed", "uniform", "normal", "randn", "randint", "gamma", "exponential", "poisson",
           "negative_binomial", "generalized_negative_binomial", "multinomial", "shuffle",
           "bernoulli", "uniform_like", "normal_like", "gamma_like", "exponential_like",
           "poisson_like", "negative_binomial_like", "generalized_negative_binomial_like"]


def seed(seed_state, ctx="all"):
    """Seed torch's random generators (CPU and every CUDA device).

    >>> seed(0)
    """
    if not isinstance(seed_state, (int, np.integer)):
        raise InvalidArgumentTypeError(f"seed: seed_state must be an int, got "
                                       f"{type(seed_state).__name__}")
    torch.manual_seed(int(seed_state))


def _shape(shape, default):
    if shape is None:
        return default
    return as_shape(shape)


def _finish(t, out, ctx):
    """The samples ``t`` written into ``out``, or as a new array on context ``ctx``."""
    if out is not None:
        return copy_into(NDArray(t), out)
    return place(NDArray(t), ctx)


def _parameter_tensor(dist, name, v):
    if v.stype != "default":
        raise InvalidArgumentTypeError(f"random.{dist}: parameter {name} must be a dense "
                                       f"NDArray, got stype {v.stype!r}")
    return v._t.detach()


def _sample(dist, params, shape, dtype, ctx, out):
    """Draw from ``dist`` with numbers or NDArrays as parameters (MXNet's ``_random_helper``)."""
    arrays = [isinstance(v, NDArray) for v in params.values()]
    if all(arrays):
        tensors = {k: _parameter_tensor(dist, k, v) for k, v in params.items()}
        t = sampling.draw(dist, tensors, _shape(shape, ()), dtype, None)
        return _finish(t, out, next(iter(params.values())).context)
    if any(arrays) or not all(isinstance(v, (numbers.Real, np.generic))
                              for v in params.values()):
        kinds = sorted({type(v).__name__ for v in params.values()})
        raise InvalidArgumentTypeError(f"random.{dist}: distribution parameters must all be "
                                       f"numbers or all NDArrays, got {kinds}")
    ctx = as_context(ctx)
    t = sampling.draw(dist, params, _shape(shape, (1,)), dtype, ctx.torch_device)
    return _finish(t, out, ctx)


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the uniform distribution on ``[low, high)``.

    >>> uniform(0, 1, shape=(3,)).shape
    (3,)
    """
    return _sample("uniform", {"low": low, "high": high}, shape, dtype, ctx, out)


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the normal distribution N(``loc``, ``scale``²); ``scale`` > 0.

    >>> normal(0, 1, shape=(2, 2)).shape
    (2, 2)
    """
    return _sample("normal", {"loc": loc, "scale": scale}, shape, dtype, ctx, out)


def randn(*shape, loc=0, scale=1, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from N(``loc``, ``scale ** 2``) with the shape given positionally.

    >>> randn(2, 3).shape
    (2, 3)
    """
    return normal(loc, scale, shape=shape or None, dtype=dtype, ctx=ctx, out=out)


def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the gamma distribution with shape ``alpha`` and scale ``beta`` (mean αβ).

    >>> gamma(2.0, 3.0, shape=(4,)).shape
    (4,)
    """
    return _sample("gamma", {"alpha": alpha, "beta": beta}, shape, dtype, ctx, out)


def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the exponential distribution with mean ``scale`` (rate ``1 / scale``).

    >>> exponential(shape=(4,)).shape
    (4,)
    """
    if isinstance(scale, (numbers.Real, np.generic)) and scale <= 0:
        raise InvalidArgumentError(f"random.exponential: scale must be positive, got {scale}")
    return _sample("exponential", {"lam": 1.0 / scale}, shape, dtype, ctx, out)


def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the Poisson distribution with rate ``lam`` (float values).

    >>> poisson(2.0, shape=(3,)).shape
    (3,)
    """
    return _sample("poisson", {"lam": lam}, shape, dtype, ctx, out)


def negative_binomial(k=1, p=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples of the number of failures before the ``k``-th success (success probability ``p``).

    Mean ``k (1 - p) / p``, variance ``k (1 - p) / p²``; ``p`` in (0, 1].

    >>> negative_binomial(3, 1.0, shape=(2,)).asnumpy()
    array([0., 0.], dtype=float32)
    """
    return _sample("negative_binomial", {"k": k, "p": p}, shape, dtype, ctx, out)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, ctx=None, out=None,
                                  **kwargs):
    """Samples with mean ``mu`` and variance ``mu + alpha * mu²`` (``alpha = 0``: Poisson).

    >>> generalized_negative_binomial(0.0, 1.0, shape=(2,)).asnumpy()
    array([0., 0.], dtype=float32)
    """
    return _sample("generalized_negative_binomial", {"mu": mu, "alpha": alpha}, shape, dtype,
                   ctx, out)


def randint(low, high, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Integers drawn uniformly from ``[low, high)`` (int32 by default, or int64).

    >>> int(randint(0, 1, shape=(1,)).asscalar())
    0
    """
    ctx = as_context(ctx)
    t = sampling.randint(low, high, _shape(shape, (1,)), dtype, ctx.torch_device)
    return _finish(t, out, ctx)


def multinomial(data, shape=None, get_prob=False, out=None, dtype="int32", **kwargs):
    """Draw category indices from the distributions in the last axis of ``data``.

    ``data`` of shape ``(..., k)`` holds probabilities (non-negative weights,
    normalised per distribution). The result has shape ``data.shape[:-1] +
    shape``; with ``get_prob=True`` the list ``[samples, log_probabilities]``,
    the second differentiable with respect to ``data`` (for REINFORCE).

    >>> import sparsenet as mx
    >>> multinomial(mx.nd.array([[0.0, 1.0], [1.0, 0.0]]), shape=2).asnumpy()
    array([[1, 1],
           [0, 0]], dtype=int32)
    """
    if not isinstance(data, NDArray) or data.stype != "default":
        raise InvalidArgumentTypeError(f"random.multinomial: data must be a dense NDArray, got "
                                       f"{getattr(data, 'stype', type(data).__name__)}")
    res = sampling.multinomial(data._t, _shape(shape, ()), get_prob, dtype)
    if get_prob:
        return [place(NDArray(res[0]), data.context), place(NDArray(res[1]), data.context)]
    return _finish(res, out, data.context)


def bernoulli(prob=0.5, shape=(1,), dtype=None, ctx=None, out=None, **kwargs):
    """0/1 samples that are 1 with probability ``prob`` (sparsenet addition).

    >>> bernoulli(1.0, shape=(2,)).asnumpy()
    array([1., 1.], dtype=float32)
    """
    if not 0 <= prob <= 1:
        raise InvalidArgumentError(f"random.bernoulli: prob must be in [0, 1], got {prob}")
    ctx = as_context(ctx)
    t = torch.bernoulli(torch.full(_shape(shape, (1,)), float(prob), device=ctx.torch_device))
    return _finish(t.to(torch_dtype(dtype)), out, ctx)


# ---------------------------------------------------------------------- *_like
def _like(dist, data, params, out):
    if not isinstance(data, NDArray):
        raise InvalidArgumentTypeError(f"random.{dist}_like: data must be an NDArray, got "
                                       f"{type(data).__name__}")
    t = sampling.draw(dist, params, data.shape, data.dtype.name, data.device)
    return _finish(t, out, data.context)


def uniform_like(data=None, low=0, high=1, out=None, **kwargs):
    """Uniform samples on ``[low, high)`` with the shape and dtype of ``data``.

    >>> import sparsenet as mx
    >>> uniform_like(mx.nd.zeros((2, 2), dtype='float64'), low=5, high=6).dtype
    dtype('float64')
    """
    return _like("uniform", data, {"low": low, "high": high}, out)


def normal_like(data=None, loc=0, scale=1, out=None, **kwargs):
    """Normal samples with the shape and dtype of ``data``.

    >>> import sparsenet as mx
    >>> normal_like(mx.nd.zeros((2, 3))).shape
    (2, 3)
    """
    return _like("normal", data, {"loc": loc, "scale": scale}, out)


def gamma_like(data=None, alpha=1, beta=1, out=None, **kwargs):
    """Gamma samples (shape ``alpha``, scale ``beta``) with the shape and dtype of ``data``.

    >>> import sparsenet as mx
    >>> gamma_like(mx.nd.zeros((2,)), alpha=2, beta=3).shape
    (2,)
    """
    return _like("gamma", data, {"alpha": alpha, "beta": beta}, out)


def exponential_like(data=None, lam=1, out=None, **kwargs):
    """Exponential samples with rate ``lam`` (mean ``1 / lam``), shaped like ``data``.

    >>> import sparsenet as mx
    >>> exponential_like(mx.nd.zeros((2,)), lam=2).shape
    (2,)
    """
    return _like("exponential", data, {"lam": lam}, out)


def poisson_like(data=None, lam=1, out=None, **kwargs):
    """Poisson samples with rate ``lam``, shaped like ``data``.

    >>> import sparsenet as mx
    >>> poisson_like(mx.nd.zeros((2,)), lam=0).asnumpy()
    array([0., 0.], dtype=float32)
    """
    return _like("poisson", data, {"lam": lam}, out)


def negative_binomial_like(data=None, k=1, p=1, out=None, **kwargs):
    """Negative binomial samples (``k`` successes, probability ``p``), shaped like ``data``.

    >>> import sparsenet as mx
    >>> negative_binomial_like(mx.nd.zeros((2,)), k=2, p=1.0).asnumpy()
    array([0., 0.], dtype=float32)
    """
    return _like("negative_binomial", data, {"k": k, "p": p}, out)


def generalized_negative_binomial_like(data=None, mu=1, alpha=1, out=None, **kwargs):
    """Generalized negative binomial samples (mean ``mu``), shaped like ``data``.

    >>> import sparsenet as mx
    >>> generalized_negative_binomial_like(mx.nd.zeros((2,)), mu=0, alpha=1).asnumpy()
    array([0., 0.], dtype=float32)
    """
    return _like("generalized_negative_binomial", data, {"mu": mu, "alpha": alpha}, out)

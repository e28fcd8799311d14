"""Random numbers: ``mx.random.seed`` and samplers (also ``mx.nd.random``).

Samplers draw from torch's generator; :func:`seed` seeds it (and every CUDA
device). Like MXNet, it does not seed NumPy: ``mx.test_utils.rand_ndarray``
uses NumPy's global generator.

>>> import sparsenet as mx
>>> mx.random.seed(42)
>>> a = mx.random.uniform(shape=(2,))
>>> mx.random.seed(42)
>>> bool((mx.random.uniform(shape=(2,)) == a).asnumpy().all())
True
"""
import torch

from .base import torch_dtype
from .context import as_context
from .ndarray.ndarray import NDArray

__all__ = ["seed", "uniform", "normal", "randn", "randint", "exponential", "poisson",
           "shuffle", "bernoulli"]


def seed(seed_state, ctx="all"):
    """Seed torch's random generators (CPU and every CUDA device).

    >>> seed(0)
    """
    if not isinstance(seed_state, int):
        raise TypeError(f"seed must be an int, got {type(seed_state).__name__}")
    torch.manual_seed(seed_state)


def _shape(shape):
    return (shape,) if isinstance(shape, int) else tuple(shape)


def _finish(t, out):
    if out is not None:
        from .ndarray.cast_storage import copy_into
        return copy_into(NDArray(t), out)
    return NDArray(t)


def uniform(low=0.0, high=1.0, shape=(1,), dtype=None, ctx=None, out=None, **kwargs):
    """Samples from U[low, high).

    >>> uniform(0, 1, shape=(3,)).shape
    (3,)
    """
    dev = as_context(ctx).torch_device
    t = torch.empty(_shape(shape), dtype=torch_dtype(dtype), device=dev).uniform_(low, high)
    return _finish(t, out)


def normal(loc=0.0, scale=1.0, shape=(1,), dtype=None, ctx=None, out=None, **kwargs):
    """Samples from N(loc, scale^2).

    >>> normal(0, 1, shape=(2, 2)).shape
    (2, 2)
    """
    dev = as_context(ctx).torch_device
    t = torch.empty(_shape(shape), dtype=torch_dtype(dtype), device=dev).normal_(loc, scale)
    return _finish(t, out)


def randn(*shape, loc=0.0, scale=1.0, dtype=None, ctx=None, **kwargs):
    """Samples from N(loc, scale^2) with the shape given positionally.

    >>> randn(2, 3).shape
    (2, 3)
    """
    return normal(loc, scale, shape=shape or (1,), dtype=dtype, ctx=ctx)


def randint(low, high, shape=(1,), dtype="int32", ctx=None, out=None, **kwargs):
    """Integers drawn uniformly from [low, high).

    >>> int(randint(0, 1, shape=(1,)).asscalar())
    0
    """
    dev = as_context(ctx).torch_device
    t = torch.randint(low, high, _shape(shape), device=dev).to(torch_dtype(dtype))
    return _finish(t, out)


def exponential(scale=1.0, shape=(1,), dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the exponential distribution with mean ``scale``.

    >>> exponential(shape=(4,)).shape
    (4,)
    """
    dev = as_context(ctx).torch_device
    t = torch.empty(_shape(shape), dtype=torch_dtype(dtype), device=dev).exponential_(1.0 / scale)
    return _finish(t, out)


def poisson(lam=1.0, shape=(1,), dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the Poisson distribution with rate ``lam``.

    >>> poisson(2.0, shape=(3,)).shape
    (3,)
    """
    dev = as_context(ctx).torch_device
    t = torch.poisson(torch.full(_shape(shape), float(lam), device=dev)).to(torch_dtype(dtype))
    return _finish(t, out)


def bernoulli(prob=0.5, shape=(1,), dtype=None, ctx=None, out=None, **kwargs):
    """0/1 samples that are 1 with probability ``prob``.

    >>> bernoulli(1.0, shape=(2,)).asnumpy()
    array([1., 1.], dtype=float32)
    """
    dev = as_context(ctx).torch_device
    t = torch.bernoulli(torch.full(_shape(shape), float(prob), device=dev)).to(torch_dtype(dtype))
    return _finish(t, out)


def shuffle(data, **kwargs):
    """A copy of ``data`` with its first axis randomly permuted.

    >>> import sparsenet as mx
    >>> sorted(shuffle(mx.nd.array([1.0, 2.0, 3.0])).asnumpy().tolist())
    [1.0, 2.0, 3.0]
    """
    t = data._dense_tensor()
    return NDArray(t[torch.randperm(t.shape[0], device=t.device)])

"""Random sampling kernels on torch tensors, and the ``_shuffle`` operator.

:mod:`sparsenet.random` (``mx.random``, ``mx.nd.random``) and the
operator-style names (``mx.nd.random_uniform``, ``mx.nd.sample_normal``, ...)
call :func:`draw`. Each distribution's parameters are numbers or tensors of one
shape ``P``; the result has shape ``P + shape``, one independent draw per
element. Parameters are checked (numbers and tensors alike) with the rules of
MXNet 1.9.1's scalar samplers; bad values raise
:class:`~sparsenet.base.InvalidArgumentError` naming the parameter.

All draws come from torch's generator (seeded by ``mx.random.seed``).

>>> import torch
>>> torch.manual_seed(0) and None
>>> draw('uniform', {'low': 0.0, 'high': 1.0}, (3,), 'float32', torch.device('cpu')).shape
torch.Size([3])
>>> draw('normal', {'loc': torch.tensor([0.0, 10.0]), 'scale': torch.tensor([1.0, 1.0])},
...      (4,), 'float32', torch.device('cpu')).shape
torch.Size([2, 4])
"""
import numbers

import numpy as np
import torch

from ..base import InvalidArgumentError, InvalidArgumentTypeError, numpy_dtype, torch_dtype
from .registry import defop

__all__ = ["draw", "multinomial", "randint", "shuffle", "FLOAT_DTYPES", "PARAMETER_RULES"]

FLOAT_DTYPES = ("float16", "float32", "float64")
INT_DTYPES = ("int32", "int64")

# (parameter, test on a float64 tensor, what it must be), per distribution
PARAMETER_RULES = {
    "uniform": (),
    "normal": (("scale", lambda v: v > 0, "positive"),),
    "gamma": (("alpha", lambda v: v > 0, "positive"), ("beta", lambda v: v > 0, "positive")),
    "exponential": (("lam", lambda v: v > 0, "positive"),),
    "poisson": (("lam", lambda v: v >= 0, "non-negative"),),
    "negative_binomial": (("k", lambda v: v >= 0, "non-negative"),
                          ("p", lambda v: (v > 0) & (v <= 1), "in (0, 1]")),
    "generalized_negative_binomial": (("mu", lambda v: v >= 0, "non-negative"),
                                      ("alpha", lambda v: v >= 0, "non-negative")),
}


def sample_dtype(dtype, allowed, name, default="float32"):
    """The torch dtype of the samples: ``dtype`` (None: ``default``) if in ``allowed``."""
    name_ = default if dtype is None else numpy_dtype(dtype).name
    if name_ not in allowed:
        raise InvalidArgumentError(f"{name}: dtype must be one of {list(allowed)}, got "
                                   f"{name_!r}")
    return torch_dtype(name_)


def _as_float64(v, device):
    if isinstance(v, torch.Tensor):
        return v.to(device=device, dtype=torch.float64)
    return torch.tensor(float(v), dtype=torch.float64, device=device)


def _check(dist, params):
    for name, test, what in PARAMETER_RULES[dist]:
        v = params[name]
        if not bool(test(v).all()):
            bad = v[~test(v)].reshape(-1)[0].item() if v.dim() else v.item()
            raise InvalidArgumentError(f"random.{dist}: {name} must be {what}, got {bad}")
    if dist == "uniform" and not bool((params["low"] <= params["high"]).all()):
        raise InvalidArgumentError("random.uniform: low must be less than or equal to high")


def _gamma(alpha, scale):
    """Gamma(shape ``alpha``, scale ``scale``) draws; scale 0 gives 0."""
    g = torch.distributions.Gamma(alpha, torch.ones_like(alpha), validate_args=False).sample()
    return g * scale


def standard_normal(shape, device):
    """N(0, 1) draws in float64: the stream every normal sample of sparsenet comes from.

    ``mx.random.normal`` and SGLD's noise both draw here, so that after ``mx.random.seed(s)``
    they give the same numbers (MXNet's test_sgld relies on it).
    """
    return torch.randn(shape, dtype=torch.float64, device=device)


def _draw_float64(dist, p, shape, device):
    if dist == "uniform":
        return p["low"] + (p["high"] - p["low"]) * torch.rand(shape, dtype=torch.float64,
                                                                device=device)
    if dist == "normal":
        return p["loc"] + p["scale"] * standard_normal(shape, device)
    if dist == "gamma":
        return _gamma(p["alpha"], p["beta"])
    if dist == "exponential":
        return torch.empty(shape, dtype=torch.float64, device=device).exponential_() / p["lam"]
    if dist == "poisson":
        return torch.poisson(p["lam"])
    if dist == "negative_binomial":  # failures before the k-th success: Poisson(Gamma) mixture
        k, prob = p["k"], p["p"]
        rate = torch.where(k > 0, _gamma(torch.where(k > 0, k, 1.0), (1 - prob) / prob), 0.0)
        return torch.poisson(rate)
    if dist == "generalized_negative_binomial":  # mean mu, variance mu + alpha mu^2
        mu, alpha = p["mu"], p["alpha"]
        safe = torch.where(alpha > 0, alpha, 1.0)
        rate = torch.where(alpha > 0, _gamma(1.0 / safe, safe * mu), mu)
        return torch.poisson(rate)
    raise InvalidArgumentError(f"unknown distribution {dist!r}")


def draw(dist, params, shape, dtype, device):
    """Samples of distribution ``dist`` with parameters ``params`` (numbers or tensors).

    Parameters
    ----------
    dist : str
        'uniform' (low, high), 'normal' (loc, scale), 'gamma' (alpha, beta: shape
        and scale), 'exponential' (lam: rate), 'poisson' (lam),
        'negative_binomial' (k, p) or 'generalized_negative_binomial' (mu, alpha).
    params : dict
        Numbers, or tensors of one shape ``P``.
    shape : tuple
        Draws per parameter element; the result has shape ``P + shape``.
    dtype : str or None
        float16, float32 (default) or float64.
    device : torch.device
        Where numbers-only draws are made (tensor parameters keep theirs).
    """
    out_dtype = sample_dtype(dtype, FLOAT_DTYPES, f"random.{dist}")
    tensors = [v for v in params.values() if isinstance(v, torch.Tensor)]
    if tensors:
        device = tensors[0].device
        pshape = tuple(tensors[0].shape)
        for t in tensors[1:]:
            if tuple(t.shape) != pshape:
                raise InvalidArgumentError(
                    f"random.{dist}: the parameter arrays must have one shape, got "
                    f"{[tuple(x.shape) for x in tensors]}")
    else:
        pshape = ()
    shape = tuple(shape)
    p = {k: _as_float64(v, device) for k, v in params.items()}
    _check(dist, p)
    full = pshape + shape
    p = {k: v.reshape(pshape + (1,) * len(shape)).expand(full) for k, v in p.items()}
    return _draw_float64(dist, p, full, device).to(out_dtype)


def randint(low, high, shape, dtype, device):
    """Integers drawn uniformly from ``[low, high)`` (int32 by default, or int64).

    >>> import torch
    >>> randint(0, 1, (2,), None, torch.device('cpu')).tolist()
    [0, 0]
    """
    for name, v in (("low", low), ("high", high)):
        if isinstance(v, torch.Tensor) or not isinstance(v, (numbers.Integral, np.integer)):
            raise InvalidArgumentTypeError(f"random.randint: {name} must be an int, got "
                                           f"{type(v).__name__} {v!r}")
    if not low < high:
        raise InvalidArgumentError(f"random.randint: low must be less than high, got low={low}, "
                                   f"high={high}")
    out_dtype = sample_dtype(dtype, INT_DTYPES, "random.randint", default="int32")
    return torch.randint(int(low), int(high), tuple(shape), device=device, dtype=torch.int64
                         ).to(out_dtype)


def multinomial(data, shape, get_prob, dtype):
    """Category draws from the distributions in the last axis of ``data``.

    ``data`` of shape ``(..., k)`` holds non-negative weights (normalised per
    distribution). The result has shape ``data.shape[:-1] + shape`` (``(1,)``
    when both are empty); with ``get_prob`` also the log-probability of each
    draw, differentiable with respect to ``data``.
    """
    if data.dim() == 0 or data.shape[-1] == 0:
        raise InvalidArgumentError(f"random.multinomial: data needs a last axis of categories, "
                                   f"got shape {tuple(data.shape)}")
    probs = data.reshape(-1, data.shape[-1])
    with torch.no_grad():
        if bool((probs < 0).any()) or not bool(torch.isfinite(probs).all()):
            raise InvalidArgumentError("random.multinomial: probabilities must be finite and "
                                       "non-negative")
        if bool((probs.sum(dim=1) <= 0).any()):
            raise InvalidArgumentError("random.multinomial: each distribution needs a positive "
                                       "total probability")
        n = 1
        for s in shape:
            n *= s
        idx = torch.multinomial(probs.detach().to(torch.float64), max(n, 1), replacement=True)
        idx = idx[:, :n]
    out_shape = tuple(data.shape[:-1]) + tuple(shape)
    out_shape = out_shape or (1,)
    samples = idx.reshape(out_shape).to(torch_dtype(numpy_dtype(dtype)))
    if not get_prob:
        return samples
    norm = probs / probs.sum(dim=1, keepdim=True)
    logp = torch.log(torch.gather(norm, 1, idx)).reshape(out_shape)
    return samples, logp.to(data.dtype)


@defop(name="_shuffle", differentiable=False)
def shuffle(data):
    """A copy of ``data`` with its first axis randomly permuted (alias ``shuffle``).

    >>> import sparsenet as mx
    >>> sorted(mx.nd.random.shuffle(mx.nd.array([1.0, 2.0, 3.0])).asnumpy().tolist())
    [1.0, 2.0, 3.0]
    """
    return data[torch.randperm(data.shape[0], device=data.device)]

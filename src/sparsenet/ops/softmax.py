"""Softmax family along one axis: ``softmax``, ``log_softmax``, ``softmin``.

No sparse kernels (a sparse input falls back to dense, as in MXNet).

>>> import sparsenet as mx
>>> mx.nd.softmin(mx.nd.array([[0.0, 0.0]])).asnumpy()
array([[0.5, 0.5]], dtype=float32)
"""
import torch

from ..base import torch_dtype
from .registry import defop

__all__ = ["softmax", "log_softmax", "softmin"]


def _scaled(data, temperature):
    return data / temperature if temperature else data


def _cast(out, dtype):
    return out.to(torch_dtype(dtype)) if dtype else out


@defop
def softmax(data, *, axis=-1, temperature=None, dtype=None):
    """Softmax along ``axis``: ``exp(x / T) / sum(exp(x / T))``.

    >>> import sparsenet as mx
    >>> mx.nd.softmax(mx.nd.array([[0.0, 0.0]])).asnumpy()
    array([[0.5, 0.5]], dtype=float32)
    """
    return _cast(torch.softmax(_scaled(data, temperature), dim=axis), dtype)


@defop
def log_softmax(data, *, axis=-1, temperature=None, dtype=None):
    """Log of the softmax along ``axis``.

    >>> import sparsenet as mx
    >>> mx.nd.log_softmax(mx.nd.array([[0.0, 0.0]])).asnumpy()
    array([[-0.6931472, -0.6931472]], dtype=float32)
    """
    return _cast(torch.log_softmax(_scaled(data, temperature), dim=axis), dtype)


@defop
def softmin(data, *, axis=-1, temperature=None, dtype=None):
    """Softmin along ``axis``: the softmax of ``-x / T`` (small values get large weights).

    >>> import sparsenet as mx
    >>> mx.nd.softmin(mx.nd.array([[1.0, 2.0, 4.0]]), temperature=2).asnumpy()
    array([[0.5465494 , 0.33149895, 0.12195165]], dtype=float32)
    """
    return _cast(torch.softmax(-_scaled(data, temperature), dim=axis), dtype)

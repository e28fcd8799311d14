"""Fused CPU kernels for the lazy optimizer steps, when the native module is built.

A lazy step (row_sparse gradient, ``lazy_update=True``) changes only the rows the
gradient names. The torch kernels of :mod:`sparsenet.ops.optimizer_ops` gather
those rows, run several elementwise passes and scatter them back;
``sparsenet.ops._rows_native`` (C, built by ``pip install``) reads and writes each
row once, prefetches the rows a few steps ahead and splits the rows between
``torch.get_num_threads()`` threads. Same rule, same arithmetic, one pass: see
BENCHMARKS.md for the measured difference.

:func:`lazy_step` runs a kernel when it applies (CPU, float32 or float64,
contiguous tensors of one dtype, strictly increasing row indices) and returns
False otherwise, so that the caller runs its torch kernel, which also serves
CUDA tensors. Set ``SPARSENET_NATIVE_ROWS=0`` (or :data:`ENABLED` to False) to
use the torch kernels everywhere.

>>> import torch
>>> w = torch.ones(4, 2); g = torch.full((2, 2), 2.0); rows = torch.tensor([1, 3])
>>> lazy_step("sgd", w, (), g, rows, lr=0.5) == available()
True
>>> w[:, 0].tolist() if available() else [1.0, 0.0, 1.0, 0.0]
[1.0, 0.0, 1.0, 0.0]
"""
import math
import os

import torch

try:
    from . import _rows_native as _native
except ImportError:  # built without a C compiler: the torch kernels do the work
    _native = None

__all__ = ["ENABLED", "available", "lazy_step"]

ENABLED = os.environ.get("SPARSENET_NATIVE_ROWS", "1") != "0"
_NUM_ARRAYS = {"sgd": 1, "sgd_mom": 2, "adam": 3, "adagrad": 2}
_DTYPES = (torch.float32, torch.float64)


def available():
    """Whether the native kernels are built and enabled.

    >>> isinstance(available(), bool)
    True
    """
    return ENABLED and _native is not None


def lazy_step(kernel, weight, states, grad_rows, rows, *, lr, wd=0.0, rescale_grad=1.0,
              clip_gradient=-1.0, a=0.0, b=0.0, epsilon=0.0):
    """Run the native lazy ``kernel`` in place; return False where it does not apply.

    Parameters
    ----------
    kernel : {'sgd', 'sgd_mom', 'adam', 'adagrad'}
        The rule, as the torch kernel of the same name in ``optimizer_ops*.py``.
    weight : torch.Tensor
        Every row of the weight, updated in place.
    states : tuple of torch.Tensor
        Every row of each state (momentum; Adam's mean and variance; AdaGrad's
        history), updated in place.
    grad_rows : torch.Tensor
        The gradient's stored rows, ``(len(rows),) + weight.shape[1:]``.
    rows : torch.Tensor
        int64 row of each gradient row.
    lr, wd, rescale_grad, clip_gradient, epsilon : float
        The rule's parameters (``clip_gradient < 0``: no clipping).
    a, b : float
        ``momentum`` for ``'sgd_mom'``; ``beta1, beta2`` for ``'adam'``.

    Returns
    -------
    bool
        True when the step was done; False when the caller's torch kernel must do it
        (not built, not a CPU float tensor, not contiguous, rows not strictly
        increasing). Nothing is written when False is returned.

    Raises
    ------
    IndexError
        A row index is negative or not below ``weight.shape[0]``.
    """
    if not ENABLED or _native is None:
        return False
    tensors = (weight,) + tuple(states)
    dtype, shape = weight.dtype, weight.shape
    if len(tensors) != _NUM_ARRAYS[kernel] or not shape or dtype not in _DTYPES:
        return False
    if rows.dtype != torch.int64 or not rows.is_cpu or not rows.is_contiguous():
        return False
    n = rows.numel()
    if grad_rows.shape != (n,) + tuple(shape[1:]):
        return False
    for t in tensors + (grad_rows,):
        if t.dtype != dtype or not t.is_cpu or not t.is_contiguous():
            return False
    for t in tensors[1:]:
        if t.shape != shape:
            return False
    ptr = [t.data_ptr() for t in tensors] + [0] * (3 - len(tensors))
    clip = -1.0 if clip_gradient is None else float(clip_gradient)
    rc = getattr(_native, kernel)(
        ptr[0], ptr[1], ptr[2], grad_rows.data_ptr(), rows.data_ptr(), n, math.prod(shape[1:]),
        shape[0], dtype == torch.float64, torch.get_num_threads(), float(lr), float(wd),
        float(rescale_grad), clip, float(a), float(b), float(epsilon))
    return rc == 0


"""Constant-filled arrays as graph operators: ``_zeros`` and ``_ones`` (``mx.sym.zeros``/``ones``).

They take no array input, only ``shape``, ``dtype`` and MXNet's ``ctx`` (the
device of the result, default the CPU: a graph bound on a GPU whose constants
must live there names it, e.g. ``mx.sym.zeros(shape, ctx='gpu(0)')``). Their
shape must be fully known: MXNet lets a
``0`` stand for a dimension that backward shape inference fills in; sparsenet's
shape inference runs forward only, so a ``0`` dimension is refused with a
message saying what to give instead.

>>> import sparsenet as mx
>>> mx.sym.zeros((2, 3)).eval()[0].asnumpy()
array([[0., 0., 0.],
       [0., 0., 0.]], dtype=float32)
"""
import re

import torch

from ..base import InvalidArgumentError, torch_dtype
from ..context import Context, as_context
from .registry import defop

__all__ = ["zeros", "ones"]


def _filled(name, value, shape, dtype, ctx):
    shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s <= 0 for s in shape):
        raise InvalidArgumentError(
            f"{name}: every dimension of shape must be known and positive, got {shape}; "
            f"a 0 (MXNet's 'infer this dimension') needs backward shape inference, which "
            f"sparsenet does not do: give the full shape (e.g. begin_state(batch_size=N)), "
            f"or pass the state as a variable")
    device = _device(ctx)
    return torch.full(shape, value, dtype=torch_dtype(dtype or "float32"), device=device)


def _device(ctx):
    """The torch device of MXNet's ``ctx`` parameter: a Context, or its text ``'gpu(0)'``."""
    if ctx is None or ctx == "":
        return torch.device("cpu")
    if isinstance(ctx, str):
        m = re.fullmatch(r"\s*(\w+)\((\d+)\)\s*", ctx)
        if m:
            return Context(m.group(1), int(m.group(2))).torch_device
    return as_context(ctx).torch_device


@defop(name="_zeros", differentiable=False)
def zeros(*, shape=(), ctx=None, dtype="float32"):
    """An array of zeros of ``shape`` (MXNet's ``_zeros``)."""
    return _filled("zeros", 0, shape, dtype, ctx)


@defop(name="_ones", differentiable=False)
def ones(*, shape=(), ctx=None, dtype="float32"):
    """An array of ones of ``shape`` (MXNet's ``_ones``)."""
    return _filled("ones", 1, shape, dtype, ctx)

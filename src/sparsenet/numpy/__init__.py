"""``mxnet.numpy`` (``mx.np``): MXNet 1.9.1's NumPy-semantics arrays, not provided.

sparsenet implements MXNet's legacy NDArray semantics (``mx.nd``, ``mx.sym``),
where the sparse storage types live (see :mod:`sparsenet.util`). This module
exists so that code importing ``mxnet.numpy`` next to its legacy code (MXNet's
own test files do, at the top) imports; any name looked up in it raises
:class:`NumpySemanticsUnsupported`, an :class:`~sparsenet.base.UnsupportedError`
that is also an :class:`AttributeError` (so ``hasattr(mx_np, name)`` is
``False`` and ``getattr(mx_np, name, default)`` gives the default).

>>> import sparsenet.numpy as mx_np
>>> hasattr(mx_np, "zeros")
False
"""
from ..base import UnsupportedError

__all__ = ["NumpySemanticsUnsupported"]


class NumpySemanticsUnsupported(UnsupportedError, AttributeError):
    """A name of ``mxnet.numpy`` was used: NumPy semantics are not provided."""


def __getattr__(name):
    if name.startswith("__"):
        # builtin: module __getattr__ must raise AttributeError for dunders (import machinery)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise NumpySemanticsUnsupported(
        f"mxnet.numpy.{name}: sparsenet implements MXNet's legacy NDArray semantics (mx.nd, "
        f"mx.sym); MXNet's NumPy-semantics arrays (mx.np) are not provided. Use mx.nd.{name} "
        f"where it exists, or NumPy/torch through asnumpy()/to_torch()")

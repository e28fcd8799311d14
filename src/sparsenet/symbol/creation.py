"""``mx.sym.zeros`` and ``mx.sym.ones``: constant arrays as graph nodes (ops ``_zeros``/``_ones``).

>>> import sparsenet as mx
>>> (mx.sym.var('x') + mx.sym.ones((2,), name='one')).eval(x=mx.nd.zeros((2,)))[0].asnumpy()
array([1., 1.], dtype=float32)
"""
from ..base import numpy_dtype
from .op import SYMBOL_OPS

__all__ = ["zeros", "ones"]


def zeros(shape, dtype=None, **kwargs):
    """A node holding zeros of ``shape`` (``name=``, ``attr=`` and attributes as any operator).

    Parameters
    ----------
    shape : int or tuple of int
    dtype : str or numpy dtype, optional
        Default float32.
    """
    return SYMBOL_OPS["_zeros"](shape=shape, dtype=_dtype(dtype), **kwargs)


def ones(shape, dtype=None, **kwargs):
    """A node holding ones of ``shape`` (see :func:`zeros`)."""
    return SYMBOL_OPS["_ones"](shape=shape, dtype=_dtype(dtype), **kwargs)


def _dtype(dtype):
    if dtype is None:
        return "float32"
    return numpy_dtype(dtype).name

"""Conversion methods of the arrays: ``x.astype(dtype)`` and ``x.tostype(stype)``.

They run the ``Cast`` and ``cast_storage`` operators, so a conversion inside
``autograd.record()`` is recorded like any other operator call.

>>> import sparsenet as mx
>>> c = mx.nd.array([[0, 1], [0, 0]]).tostype('csr')
>>> c.stype, c.astype('float64').dtype
('csr', dtype('float64'))
"""
import numpy as np
import torch

from ...base import numpy_dtype
from ...ndarray.stype import check_stype
from ..cast import cast_storage
from ..unary import cast

__all__ = ["astype", "tostype"]

_CACHED_KINDS = (str, type, np.dtype, torch.dtype)  # immutable, hashable dtype spellings


def astype(self, dtype, copy=True):
    """Return the array converted to ``dtype`` (storage type kept).

    With ``copy=False`` the array itself is returned when it already has ``dtype``.

    >>> import sparsenet as mx
    >>> mx.nd.ones((2,)).astype('int32').dtype
    dtype('int32')
    """
    if not copy and numpy_dtype(dtype) == self.dtype:
        return self
    return cast(self, dtype=_dtype_name(dtype))


_NAMES = {}  # dtype as given (a name, a type, a numpy or torch dtype) -> numpy name


def _dtype_name(dtype):
    """``numpy_dtype(dtype).name``, remembered per ``dtype`` (numpy's ``.name`` is a slow
    property); an unsupported dtype raises as :func:`~sparsenet.base.numpy_dtype` does.

    >>> _dtype_name('float16'), _dtype_name(np.int32)
    ('float16', 'int32')
    """
    name = _NAMES.get(dtype) if isinstance(dtype, _CACHED_KINDS) else None
    if name is None:
        name = numpy_dtype(dtype).name
        if isinstance(dtype, _CACHED_KINDS):
            _NAMES[dtype] = name
    return name


def tostype(self, stype):
    """Return the array in storage type ``stype`` ('default', 'csr' or 'row_sparse').

    >>> import sparsenet as mx
    >>> mx.nd.array([[0, 1], [0, 0]]).tostype('csr').stype
    'csr'
    """
    return cast_storage(self, stype=check_stype(stype))

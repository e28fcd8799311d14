"""The operator boundary's error conversion: builtin errors from torch become sparsenet errors.

An operator checks its arguments and raises a sparsenet error naming what was
expected; a bad input it does not check (a shape torch refuses deep inside a
kernel, an axis torch finds out of range) surfaces as a builtin ``RuntimeError``,
``IndexError``, ``TypeError``, ``ValueError``, ``KeyError`` or ``ArithmeticError``
(an integer division by zero). The registry catches those at the call boundary (a
``try`` costs nothing until something is raised) and :func:`raise_op_error` raises
the fitting sparsenet class instead, naming the operator and the input shapes, the
original chained as ``__cause__``.

>>> import sparsenet as mx
>>> try:
...     mx.nd.batch_dot(mx.nd.ones((2, 3, 4)), mx.nd.ones((2, 5, 4)))
... except mx.MXNetError as e:
...     print(type(e).__name__, str(e).split(':')[0])
InvalidArgumentError batch_dot
"""
from ..base import (IndexOutOfRangeError, InvalidArgumentError, InvalidArgumentTypeError,
                    SparsenetError)

__all__ = ["CONVERTED", "raise_op_error"]

# builtin errors converted at the operator boundary (sparsenet errors pass through unchanged)
CONVERTED = (RuntimeError, ValueError, TypeError, IndexError, KeyError, ArithmeticError)
# RuntimeError subclasses that say nothing about the arguments: never converted
_KEPT = (SparsenetError, RecursionError, MemoryError)

_CLASS_OF = ((IndexError, IndexOutOfRangeError), (TypeError, InvalidArgumentTypeError))


def _describe(inputs):
    parts = []
    for a in inputs:
        shape = getattr(a, "shape", None)
        if shape is None:
            parts.append(type(a).__name__)
        else:
            parts.append(f"{tuple(shape)} {getattr(a, 'stype', 'default')}")
    return ", ".join(parts)


def raise_op_error(name, error, inputs):
    """Raise ``error`` (caught at operator ``name``'s boundary) as a sparsenet error.

    Sparsenet errors, recursion and out-of-memory errors are raised unchanged;
    any other builtin error becomes the sparsenet class refining the same builtin
    (``IndexError`` -> :class:`~sparsenet.base.IndexOutOfRangeError`, ``TypeError``
    -> :class:`~sparsenet.base.InvalidArgumentTypeError`, otherwise (a bad value:
    ``RuntimeError`` from torch, ``ValueError``, a ``KeyError`` looking a parameter
    up, ``ZeroDivisionError``) :class:`~sparsenet.base.InvalidArgumentError`), its
    message naming the
    operator and the inputs.

    >>> try:
    ...     raise_op_error('dot', RuntimeError('size mismatch'), [])
    ... except InvalidArgumentError as e:
    ...     print(e)
    dot: size mismatch (inputs: none)
    """
    if isinstance(error, _KEPT) or "out of memory" in str(error):
        raise error
    cls = InvalidArgumentError
    for builtin, sparsenet_class in _CLASS_OF:
        if isinstance(error, builtin):
            cls = sparsenet_class
            break
    message = error.args[0] if isinstance(error, KeyError) and error.args else str(error)
    raise cls(f"{name}: {message} (inputs: {_describe(inputs) or 'none'})") from error

"""The custom operator registry: ``register(name)``, the property of a ``Custom`` call, the
checked calls into user code, and the errors that name the operator.

``Custom(..., op_type=name, **kwargs)`` finds the property class registered under
``name`` and builds it with ``kwargs`` as strings (``str(value)``, as MXNet passes
every keyword). Properties are kept per (class, keywords), so a graph node, its
executors and repeated eager calls share one.

Every call into user code (the property's constructor and methods, the
operator's ``forward`` and ``backward``) goes through :func:`user_call`: an
exception it raises surfaces as a :class:`CustomOpError` naming the ``op_type``
and the method, that is also the builtin class of the original (a ``ValueError``
in ``forward`` becomes a :class:`CustomOpValueError`, catchable as
``mx.MXNetError`` and as ``ValueError``), with the original chained as
``__cause__``.

>>> import sparsenet as mx
>>> @register('doc_identity')
... class IdentityProp(mx.operator.CustomOpProp):
...     pass
>>> prop_for({'op_type': 'doc_identity'}).list_outputs()
['output']
>>> try:
...     prop_for({'op_type': 'no_such_op'})
... except mx.MXNetError as e:
...     print(str(e)[:52])
Cannot find custom operator 'no_such_op'; registered
"""
import logging

import numpy as np

from ..base import (InvalidArgumentError, OperatorArgumentError, SparsenetError,
                    UnknownOperatorError, numpy_dtype)
from ..ndarray.stype import STYPES
from .custom_op import CustomOpProp

__all__ = ["register", "registered", "prop_class", "prop_for", "prop_kwargs", "user_call",
           "checked_infer", "checked_backward_stypes", "numpy_types", "CustomOpError",
           "CustomOpValueError", "CustomOpTypeError",
           "CustomOpIndexError", "CustomOpKeyError", "CustomOpAssertionError",
           "CustomOpArithmeticError", "DTYPE_CODES"]

logger = logging.getLogger("sparsenet.operator")

_PROPS = {}         # op_type -> property class
_INSTANCES = {}     # (op_type, class, keywords) -> property instance

#: MXNet's dtype codes, given to ``create_operator`` as ``in_dtypes``.
DTYPE_CODES = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
               "int64": 6, "bool": 7, "int16": 8}


# ---------------------------------------------------------------------- errors
class CustomOpError(SparsenetError):
    """A custom operator's code raised, or returned something unusable (names the ``op_type``).

    A ``RuntimeError``, as ``MXNetError``; the subclasses also inherit the builtin
    class of the original exception, which is chained as ``__cause__``.
    """


class CustomOpValueError(CustomOpError, ValueError):
    """A custom operator raised a ``ValueError`` (or returned values that do not fit)."""


class CustomOpTypeError(CustomOpError, TypeError):
    """A custom operator raised a ``TypeError``."""


class CustomOpIndexError(CustomOpError, IndexError):
    """A custom operator raised an ``IndexError``."""


class CustomOpKeyError(CustomOpError, KeyError):
    """A custom operator raised a ``KeyError``."""

    def __str__(self):  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class CustomOpAssertionError(CustomOpError, AssertionError):
    """A custom operator's ``assert`` failed."""


class CustomOpArithmeticError(CustomOpError, ArithmeticError):
    """A custom operator raised an ``ArithmeticError`` (e.g. ``ZeroDivisionError``)."""


# most specific first: IndexError and KeyError are LookupErrors, a sparsenet ShapeError is
# a ValueError
_ERROR_CLASSES = ((AssertionError, CustomOpAssertionError), (IndexError, CustomOpIndexError),
                  (KeyError, CustomOpKeyError), (TypeError, CustomOpTypeError),
                  (ArithmeticError, CustomOpArithmeticError), (ValueError, CustomOpValueError))


def user_call(op_type, where, fn, /, *args, **kwargs):
    """Call user code ``fn``; re-raise what it raises as a :class:`CustomOpError` naming
    ``op_type`` and ``where`` (e.g. ``'MyOp.forward'``), the original chained.

    >>> def bad():
    ...     raise ValueError('boom')
    >>> try:
    ...     user_call('mine', 'MyOp.forward', bad)
    ... except ValueError as e:
    ...     print(type(e).__name__, '|', e)
    CustomOpValueError | custom operator 'mine': MyOp.forward raised ValueError: boom
    """
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - every user error is re-raised, named
        cls = next((c for b, c in _ERROR_CLASSES if isinstance(e, b)), CustomOpError)
        raise cls(f"custom operator {op_type!r}: {where} raised {type(e).__name__}: {e}") \
            from e


# ---------------------------------------------------------------------- registry
def register(reg_name):
    """Register a :class:`CustomOpProp` subclass as custom operator ``reg_name`` (a decorator).

    The class is returned unchanged. Registering a name again replaces the
    earlier class (logged, as MXNet does).

    Examples
    --------
    >>> import sparsenet as mx
    >>> @mx.operator.register('doc_noop')
    ... class NoopProp(mx.operator.CustomOpProp):
    ...     pass
    >>> 'doc_noop' in registered()
    True
    """
    if not isinstance(reg_name, str) or not reg_name:
        raise InvalidArgumentError(f"register: the operator name must be a non-empty str, got "
                                   f"{reg_name!r}")

    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise InvalidArgumentError(f"register({reg_name!r}): expected a subclass of "
                                       f"mx.operator.CustomOpProp, got {prop_cls!r}")
        if reg_name in _PROPS and _PROPS[reg_name] is not prop_cls:
            logger.warning("New registration is overriding existing custom operator %s",
                           reg_name)
        _PROPS[reg_name] = prop_cls
        return prop_cls
    return do_register


def registered():
    """Names of the registered custom operators, sorted."""
    return sorted(_PROPS)


def prop_class(op_type):
    """The property class registered as ``op_type``; a clear error listing the others."""
    cls = _PROPS.get(op_type)
    if cls is None:
        raise UnknownOperatorError(
            f"Cannot find custom operator {op_type!r}; registered custom operators: "
            f"{registered() or 'none'} (register one with @mx.operator.register(name))")
    return cls


def prop_kwargs(params):
    """The keywords a property's constructor receives: every parameter but ``op_type``,
    as strings (MXNet's rule).

    >>> prop_kwargs({'op_type': 't', 'scale': 2, 'axes': (0, 1), 'flag': None})
    {'scale': '2', 'axes': '(0, 1)', 'flag': 'None'}
    """
    return {k: v if isinstance(v, str) else str(v) for k, v in params.items()
            if k != "op_type"}


def prop_for(params):
    """The property instance of a ``Custom`` call with parameters ``params`` (shared by calls
    with the same ``op_type`` and keywords)."""
    op_type = params.get("op_type")
    if op_type is None or op_type == "":
        raise OperatorArgumentError("Custom: required argument 'op_type' is missing (the name "
                                    "of a registered custom operator)")
    cls = prop_class(op_type)
    kwargs = prop_kwargs(params)
    key = (op_type, cls, tuple(sorted(kwargs.items())))
    prop = _INSTANCES.get(key)
    if prop is None:
        prop = user_call(op_type, f"{cls.__name__}.__init__", cls, **kwargs)
        _INSTANCES[key] = prop
    return prop


# ---------------------------------------------------------------------- checked inference
def _counts(op_type, prop):
    return (len(user_call(op_type, "list_arguments", prop.list_arguments)),
            len(user_call(op_type, "list_outputs", prop.list_outputs)),
            len(user_call(op_type, "list_auxiliary_states", prop.list_auxiliary_states)))


def _shape_of(value):
    if value is None:
        return None
    dims = tuple(int(d) for d in value)
    return dims if dims else None  # MXNet's empty shape: unknown


def _dtype_of(value):
    return None if value is None else numpy_dtype(value).name


def _stype_of(value):
    if value not in STYPES:
        raise InvalidArgumentError(f"storage type must be one of {STYPES}, got {value!r}")
    return value


_CONVERT = {"infer_shape": _shape_of, "infer_type": _dtype_of, "infer_storage_type": _stype_of}
_WHAT = {"infer_shape": "shapes", "infer_type": "types", "infer_storage_type": "stypes"}


def checked_infer(op_type, prop, method, values):
    """Call ``prop.<method>(values)`` (``infer_shape``, ``infer_type`` or
    ``infer_storage_type``) and check what it returns.

    Returns ``(inputs, outputs, aux)``: shapes as tuples (None where unknown), dtypes
    as names (None where unknown), or storage types.

    >>> import numpy as np
    >>> p = CustomOpProp()
    >>> checked_infer('t', p, 'infer_shape', [[2, 3]])
    ([(2, 3)], [(2, 3)], [])
    >>> checked_infer('t', p, 'infer_type', [np.float16])
    (['float16'], ['float16'], [])
    """
    n_in, n_out, n_aux = _counts(op_type, prop)
    where = f"{type(prop).__name__}.{method}"
    ret = user_call(op_type, where, getattr(prop, method), values)
    if not isinstance(ret, (list, tuple)) or len(ret) not in (2, 3):
        raise CustomOpValueError(f"custom operator {op_type!r}: {where} must return 2 or 3 "
                                 f"lists (inputs, outputs[, auxiliary states]), got {ret!r}")
    ins, outs = list(ret[0]), list(ret[1])
    aux = list(ret[2]) if len(ret) == 3 else []
    for what, got, n in (("input", ins, n_in), ("output", outs, n_out),
                         ("auxiliary state", aux, n_aux)):
        if len(got) != n:
            raise CustomOpValueError(f"custom operator {op_type!r}: {where} returned {len(got)} "
                                     f"{what} {_WHAT[method]}, expected {n}")
    convert = _CONVERT[method]
    return tuple(user_call(op_type, f"{where} (returned value)",
                           lambda vs: [convert(v) for v in vs], part)
                 for part in (ins, outs, aux))


def checked_backward_stypes(op_type, prop, ograd, ins, outs, igrad, aux):
    """Call ``prop.infer_storage_type_backward`` and check what it returns: five lists
    (output gradients, inputs, outputs, input gradients, auxiliary states), each as
    long as the one given, of defined storage types.

    >>> checked_backward_stypes('t', CustomOpProp(), ['default'], ['default'], ['default'],
    ...                         ['undefined'], [])
    (['default'], ['default'], ['default'], ['default'], [])
    """
    where = f"{type(prop).__name__}.infer_storage_type_backward"
    given = (ograd, ins, outs, igrad, aux)
    ret = user_call(op_type, where, prop.infer_storage_type_backward,
                    *[list(g) for g in given])
    if not isinstance(ret, (list, tuple)) or len(ret) not in (4, 5):
        raise CustomOpValueError(f"custom operator {op_type!r}: {where} must return 5 lists "
                                 f"(output gradient, input, output, input gradient and "
                                 f"auxiliary stypes), got {ret!r}")
    ret = [list(r) for r in ret] + ([] if len(ret) == 5 else [list(aux)])
    names = ("output gradient", "input", "output", "input gradient", "auxiliary state")
    for name, got, want in zip(names, ret, given):
        if len(got) != len(want):
            raise CustomOpValueError(f"custom operator {op_type!r}: {where} returned "
                                     f"{len(got)} {name} stypes, expected {len(want)}")
        bad = [s for s in got if s not in STYPES]
        if bad:
            raise CustomOpValueError(f"custom operator {op_type!r}: {where} returned {name} "
                                     f"stype {bad[0]!r}; each must be one of {STYPES}")
    return tuple(ret)


def numpy_types(dtype_names):
    """Dtype names as the numpy types a property's ``infer_type`` receives (None stays).

    >>> numpy_types(['float32', None])
    [<class 'numpy.float32'>, None]
    """
    return [None if d is None else np.dtype(d).type for d in dtype_names]

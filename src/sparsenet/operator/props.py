"""The custom operator registry: ``register(name)``, the property of a ``Custom`` call, the
checked calls into user code, and the errors that name the operator.

``Custom(..., op_type=name, **kwargs)`` finds the property class registered under
``name`` and builds it with ``kwargs`` as strings (``str(value)``, as MXNet passes
every keyword). Properties are kept per (class, keywords), so a graph node, its
executors and repeated eager calls share one; the :data:`MAX_PROPERTIES` most
recently used are kept, so keywords that change on every call take bounded memory.

Every call into user code (the property's constructor and methods, the
operator's ``forward`` and ``backward``) goes through :func:`user_call`: an
exception it raises surfaces as a :class:`CustomOpError` naming the ``op_type``
and the method, that is also of the original's class (a ``ValueError`` in
``forward`` becomes a :class:`CustomOpValueError`, a ``FileNotFoundError`` a
``CustomOpFileNotFoundError``, catchable as ``mx.MXNetError`` and as
``OSError``; see :mod:`sparsenet.operator.errors`), with the original chained as
``__cause__``. What a property returns is checked: shapes are lists of
non-negative ints (a float or a bool is refused, not truncated), dtypes are
dtypes, storage types are storage types.

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
import threading
from collections import OrderedDict

import numpy as np

from ..base import (InvalidArgumentError, InvalidArgumentTypeError, OperatorArgumentError,
                    SparsenetError, UnknownOperatorError, as_shape, numpy_dtype)
from ..ndarray.stype import STYPES
from .custom_op import CustomOpProp
from .errors import (CustomOpArithmeticError, CustomOpAssertionError, CustomOpError,
                     CustomOpIndexError, CustomOpKeyError, CustomOpMemoryError, CustomOpTypeError,
                     CustomOpValueError, user_call, user_error)

__all__ = ["register", "registered", "prop_class", "prop_for", "prop_kwargs", "user_call",
           "checked_infer", "checked_backward_stypes", "numpy_types", "CustomOpError",
           "CustomOpValueError", "CustomOpTypeError",
           "CustomOpIndexError", "CustomOpKeyError", "CustomOpAssertionError",
           "CustomOpArithmeticError", "CustomOpMemoryError", "DTYPE_CODES", "MAX_PROPERTIES"]

logger = logging.getLogger("sparsenet.operator")

#: How many property instances are kept (the most recently used): a graph node, its executors
#: and repeated eager calls with the same keywords share one; a call whose keywords change
#: every time (a step counter, a random seed) does not make the cache grow without bound.
MAX_PROPERTIES = 256

_PROPS = {}                 # op_type -> property class
_INSTANCES = OrderedDict()  # (op_type, class, keywords) -> property instance, LRU order
_INSTANCES_LOCK = threading.Lock()

#: MXNet's dtype codes, given to ``create_operator`` as ``in_dtypes``.
DTYPE_CODES = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
               "int64": 6, "bool": 7, "int16": 8}


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
    with _INSTANCES_LOCK:
        prop = _INSTANCES.get(key)
        if prop is not None:
            _INSTANCES.move_to_end(key)
            return prop
    prop = user_call(op_type, f"{cls.__name__}.__init__", cls, **kwargs)  # outside the lock
    with _INSTANCES_LOCK:
        prop = _INSTANCES.setdefault(key, prop)  # a concurrent first call may have won
        _INSTANCES.move_to_end(key)
        while len(_INSTANCES) > MAX_PROPERTIES:
            _INSTANCES.popitem(last=False)
    return prop


# ---------------------------------------------------------------------- checked inference
def _counts(op_type, prop):
    return (len(user_call(op_type, "list_arguments", prop.list_arguments)),
            len(user_call(op_type, "list_outputs", prop.list_outputs)),
            len(user_call(op_type, "list_auxiliary_states", prop.list_auxiliary_states)))


def _shape_of(value, where):
    """A returned shape as a tuple of non-negative Python ints (None: unknown). Booleans,
    floats and other non-integers are refused, not truncated (:func:`~sparsenet.base.as_shape`);
    a bare int is not a shape here."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)):
        raise InvalidArgumentTypeError(f"{where}: expected a shape (a list of non-negative "
                                       f"ints), got {type(value).__name__} {value!r}")
    dims = as_shape(value, where)
    return dims if dims else None  # MXNet's empty shape: unknown


def _dtype_of(value, where):
    if value is None:
        return None
    try:
        return numpy_dtype(value).name
    except SparsenetError as e:
        raise InvalidArgumentTypeError(f"{where}: {e}") from e


def _stype_of(value, where):
    if not isinstance(value, str) or value not in STYPES:
        raise InvalidArgumentError(f"{where}: storage type must be one of {STYPES}, got "
                                   f"{value!r}")
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
    return tuple(_converted(op_type, where, convert, what, part)
                 for what, part in (("input", ins), ("output", outs), ("auxiliary state", aux)))


def _converted(op_type, where, convert, what, values):
    """``values`` (one list a property returned) converted one by one: our own errors name
    the entry; anything else the user's objects raise (a failing ``__iter__``) is the user's."""
    out = []
    for k, v in enumerate(values):
        name = f"custom operator {op_type!r}: {where} returned {what} {k}"
        try:
            out.append(convert(v, name))
        except SparsenetError:
            raise
        except Exception as e:  # noqa: BLE001 - re-raised named, of its own class too
            raise user_error(op_type, f"{where} (returned {what} {k})", e) from e
    return out


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

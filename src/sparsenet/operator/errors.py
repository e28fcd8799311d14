"""The errors of custom operators, and :func:`user_call`, the one way into user code.

Every call into a custom operator's code (the property's constructor and
methods, the operator's ``forward`` and ``backward``) goes through
:func:`user_call`. An exception it raises surfaces as a :class:`CustomOpError`
naming the ``op_type`` and the method that is *also* an instance of the
original exception's class, whatever that class is, with the original chained
as ``__cause__``: ``except mx.MXNetError``, ``except OSError``, ``except
MemoryError`` and ``except MyOwnError`` all catch what they caught before.

* A builtin with a class of its own here keeps it: a ``ValueError`` becomes a
  :class:`CustomOpValueError` (``CustomOpError`` and ``ValueError``).
* Any other class (``FileNotFoundError``, ``ZeroDivisionError``, a user's
  exception class) gets a class made for it, once, that inherits from both the
  fitting ``CustomOp*Error`` and the original class
  (``CustomOpFileNotFoundError(CustomOpError, FileNotFoundError)``); the
  original's attributes (``errno``, ``filename``, a user class's own fields)
  are copied over.
* Where Python cannot combine the two classes (a layout or method-order
  conflict, a constructor that refuses a message), the fitting
  ``CustomOp*Error`` is raised, the original still chained.

>>> class QuotaError(Exception):
...     pass
>>> def bad():
...     raise QuotaError('over quota')
>>> try:
...     user_call('mine', 'MyOp.forward', bad)
... except QuotaError as e:
...     print(type(e).__name__, isinstance(e, CustomOpError), '|', e)
CustomOpQuotaError True | custom operator 'mine': MyOp.forward raised QuotaError: over quota
"""
import functools

from ..base import OutOfMemoryError, SparsenetError

__all__ = ["CustomOpError", "CustomOpValueError", "CustomOpTypeError", "CustomOpIndexError",
           "CustomOpKeyError", "CustomOpAssertionError", "CustomOpArithmeticError",
           "CustomOpMemoryError", "user_call", "user_error", "error_class_for"]


class CustomOpError(SparsenetError):
    """A custom operator's code raised, or returned something unusable (names the ``op_type``).

    A ``RuntimeError``, as ``MXNetError``; what :func:`user_call` raises is also an
    instance of the original exception's class, which is chained as ``__cause__``.
    """

    def __str__(self):  # KeyError quotes its message, OSError formats its fields: keep ours
        return str(self.args[0]) if self.args else ""


class CustomOpValueError(CustomOpError, ValueError):
    """A custom operator raised a ``ValueError`` (or returned values that do not fit)."""


class CustomOpTypeError(CustomOpError, TypeError):
    """A custom operator raised a ``TypeError``."""


class CustomOpIndexError(CustomOpError, IndexError):
    """A custom operator raised an ``IndexError``."""


class CustomOpKeyError(CustomOpError, KeyError):
    """A custom operator raised a ``KeyError``."""


class CustomOpAssertionError(CustomOpError, AssertionError):
    """A custom operator's ``assert`` failed."""


class CustomOpArithmeticError(CustomOpError, ArithmeticError):
    """A custom operator raised an ``ArithmeticError`` (e.g. ``ZeroDivisionError``)."""


class CustomOpMemoryError(CustomOpError, OutOfMemoryError):
    """A custom operator raised a ``MemoryError``, or declared outputs larger than memory."""


# most specific first: IndexError and KeyError are LookupErrors, a sparsenet ShapeError is
# a ValueError
_ERROR_CLASSES = ((AssertionError, CustomOpAssertionError), (IndexError, CustomOpIndexError),
                  (KeyError, CustomOpKeyError), (TypeError, CustomOpTypeError),
                  (ArithmeticError, CustomOpArithmeticError), (MemoryError, CustomOpMemoryError),
                  (ValueError, CustomOpValueError))
_STATIC = {builtin: cls for builtin, cls in _ERROR_CLASSES}

# attributes of builtin exceptions that live in their C struct (not in __dict__)
_FIELDS = ("errno", "strerror", "filename", "filename2", "characters_written", "name", "path",
           "obj")


def _fitting(original):
    """The static ``CustomOp*Error`` class refining the builtin that ``original`` (a class)
    derives from, or :class:`CustomOpError`."""
    return next((c for b, c in _ERROR_CLASSES if issubclass(original, b)), CustomOpError)


def _restore(original, message):
    """Unpickle helper: the combined error of class ``original`` with ``message``."""
    return error_class_for(original)(message)


@functools.lru_cache(maxsize=256)
def error_class_for(original):
    """The class :func:`user_call` raises for an exception of class ``original``: a
    ``CustomOp*Error`` that is also an ``original`` where Python can combine the two
    (built once per class, a bounded cache), else the fitting ``CustomOp*Error``.

    >>> error_class_for(ValueError).__name__
    'CustomOpValueError'
    >>> cls = error_class_for(FileNotFoundError)
    >>> cls.__name__, issubclass(cls, OSError), issubclass(cls, CustomOpError)
    ('CustomOpFileNotFoundError', True, True)
    """
    if issubclass(original, CustomOpError):
        return original  # a nested custom operator's error: already both
    if original in _STATIC:
        return _STATIC[original]
    fitting = _fitting(original)

    def __new__(cls, message=""):
        return original.__new__(cls, message)

    def __init__(self, message=""):
        BaseException.__init__(self, message)

    def __reduce__(self):
        return _restore, (original, str(self))

    body = {"__new__": __new__, "__init__": __init__, "__str__": CustomOpError.__str__,
            "__reduce__": __reduce__, "__module__": __name__,
            "__doc__": f"A custom operator raised ``{original.__qualname__}``."}
    for bases in ((fitting, original), (original, fitting)):
        try:
            cls = type(f"CustomOp{original.__name__}", bases, dict(body))
            cls("probe")  # the original's constructor takes a message
        except Exception:  # noqa: BLE001 - layout/MRO/metaclass conflicts, odd constructors
            continue
        return cls
    return fitting


def _copy_fields(new, original):
    """Copy the original exception's attributes (``errno``, ``filename``, a user class's own
    fields) onto ``new``, where they can be set."""
    for name in _FIELDS:
        if hasattr(original, name) and isinstance(new, type(original)):
            try:
                setattr(new, name, getattr(original, name))
            except (AttributeError, TypeError):
                pass
    state = getattr(original, "__dict__", None)
    if state:
        try:
            new.__dict__.update(state)
        except (AttributeError, TypeError):
            pass


def user_call(op_type, where, fn, /, *args, **kwargs):
    """Call user code ``fn``; re-raise what it raises as a :class:`CustomOpError` naming
    ``op_type`` and ``where`` (e.g. ``'MyOp.forward'``) that is also of the original's class,
    the original chained.

    >>> def bad():
    ...     raise ValueError('boom')
    >>> try:
    ...     user_call('mine', 'MyOp.forward', bad)
    ... except ValueError as e:
    ...     print(type(e).__name__, '|', e)
    CustomOpValueError | custom operator 'mine': MyOp.forward raised ValueError: boom
    >>> try:
    ...     user_call('mine', 'MyOp.forward', open, '/no/such/file')
    ... except OSError as e:
    ...     print(type(e).__name__, e.errno, e.filename)
    CustomOpFileNotFoundError 2 /no/such/file
    """
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - every user error is re-raised, named
        raise user_error(op_type, where, e) from e


def user_error(op_type, where, error):
    """The error :func:`user_call` raises for ``error``, raised by user code at ``where``
    (raise it ``from error``).

    >>> e = user_error('mine', 'MyProp.infer_shape', ZeroDivisionError('division by zero'))
    >>> type(e).__name__, isinstance(e, ZeroDivisionError), isinstance(e, CustomOpError)
    ('CustomOpZeroDivisionError', True, True)
    """
    message = f"custom operator {op_type!r}: {where} raised {type(error).__name__}: {error}"
    try:
        new = error_class_for(type(error))(message)
    except Exception:  # noqa: BLE001 - a nested error class with an odd constructor
        new = _fitting(type(error))(message)
    _copy_fields(new, error)
    return new

"""``mx.util``: MXNet 1.9.1's utility switches, in legacy (non-NumPy) mode.

MXNet 1.9.1 has two array semantics: the legacy NDArray one (the default, and
the one its sparse storage types live in) and the NumPy-compatible one of
``mx.np``/``mx.npx``, switched on by :func:`set_np`. sparsenet implements the
legacy semantics only, so the queries answer as MXNet does by default
(:func:`is_np_array` and :func:`is_np_shape` are ``False``), switching the
NumPy semantics *off* is accepted, and switching them *on* raises
:class:`~sparsenet.base.UnsupportedError` with what to do instead. Code that
only asks (``if not is_np_array(): ...``), as MXNet's Gluon code and tests do,
runs unchanged.

>>> import sparsenet as mx
>>> mx.util.is_np_array(), mx.util.is_np_shape()
(False, False)
>>> mx.util.set_np_shape(False)
False
>>> with mx.util.np_shape(False):
...     mx.util.is_np_shape()
False
"""
import functools
import inspect
import os
from contextlib import contextmanager

from .base import InvalidArgumentError, UnsupportedError

__all__ = ["is_np_array", "is_np_shape", "set_np_shape", "set_np", "reset_np", "np_shape",
           "np_array", "use_np", "use_np_shape", "use_np_array", "getenv", "setenv", "makedirs",
           "set_module", "get_gpu_count", "get_gpu_memory"]

_NP_HELP = ("sparsenet implements MXNet's legacy NDArray semantics (mx.nd, mx.sym), where "
            "the sparse storage types live; MXNet's NumPy semantics (mx.np / mx.npx, "
            "set_np, use_np) are not provided. Use mx.nd arrays, or torch/NumPy through "
            "to_torch()/asnumpy()")


def _refuse(what):
    raise UnsupportedError(f"{what}: {_NP_HELP}")


def is_np_array():
    """Whether MXNet's NumPy array semantics are on: always ``False`` here (legacy mode).

    >>> import sparsenet as mx
    >>> mx.util.is_np_array()
    False
    """
    return False


def is_np_shape():
    """Whether NumPy shape semantics (zero-size dims, scalars) are on: always ``False`` here.

    >>> import sparsenet as mx
    >>> mx.util.is_np_shape()
    False
    """
    return False


def set_np_shape(active):
    """Turn NumPy shape semantics on or off; return the previous state (``False``).

    ``active=False`` is accepted (it is the state already); ``active=True`` raises
    :class:`~sparsenet.base.UnsupportedError`.

    >>> import sparsenet as mx
    >>> mx.util.set_np_shape(False)
    False
    """
    if active:
        _refuse("set_np_shape(True)")
    return False


def set_np(shape=True, array=True):
    """Turn MXNet's NumPy semantics on (``shape``/``array``): refused unless both are False.

    As in MXNet, ``array=True`` without ``shape=True`` is an invalid combination.

    >>> import sparsenet as mx
    >>> mx.util.set_np(shape=False, array=False)
    """
    if array and not shape:
        raise InvalidArgumentError("set_np: NumPy arrays (array=True) need NumPy shape semantics "
                                   "(shape=True); got shape=False, array=True")
    if shape or array:
        _refuse(f"set_np(shape={shape}, array={array})")


def reset_np():
    """Turn MXNet's NumPy semantics off (``set_np(shape=False, array=False)``): a no-op here.

    >>> import sparsenet as mx
    >>> mx.util.reset_np()
    """
    set_np(shape=False, array=False)


@contextmanager
def np_shape(active=True):
    """Context manager for NumPy shape semantics; only ``active=False`` is accepted.

    >>> import sparsenet as mx
    >>> with mx.util.np_shape(active=False):
    ...     pass
    """
    if active:
        _refuse("np_shape(active=True)")
    yield


@contextmanager
def np_array(active=True):
    """Context manager for NumPy array semantics; only ``active=False`` is accepted.

    >>> import sparsenet as mx
    >>> with mx.util.np_array(active=False):
    ...     pass
    """
    if active:
        _refuse("np_array(active=True)")
    yield


def _np_decorator(name):
    def decorate(func):
        if inspect.isclass(func):
            original_init = func.__init__

            @functools.wraps(original_init)
            def __init__(self, *args, **kwargs):  # noqa: N807
                _refuse(f"{func.__name__} is decorated with {name}")

            __init__.__wrapped_init__ = original_init
            func.__init__ = __init__
            return func
        if not callable(func):
            raise InvalidArgumentError(f"{name}: expected a function or a class, got "
                                       f"{type(func).__name__}")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            _refuse(f"{func.__name__} is decorated with {name}")
        return wrapper
    decorate.__name__ = name
    return decorate


use_np = _np_decorator("use_np")
use_np.__doc__ = """Decorator running a function or class under NumPy semantics.

Decorating works (so modules that decorate some of their functions import);
calling the decorated function, or instantiating the decorated class, raises
:class:`~sparsenet.base.UnsupportedError`: the NumPy semantics are not provided.

>>> import sparsenet as mx
>>> @mx.util.use_np
... def f():
...     return 1
>>> f()
Traceback (most recent call last):
...
sparsenet.base.UnsupportedError: f is decorated with use_np: sparsenet implements MXNet's legacy NDArray semantics (mx.nd, mx.sym), where the sparse storage types live; MXNet's NumPy semantics (mx.np / mx.npx, set_np, use_np) are not provided. Use mx.nd arrays, or torch/NumPy through to_torch()/asnumpy()
"""
use_np_shape = _np_decorator("use_np_shape")
use_np_shape.__doc__ = "Decorator for NumPy shape semantics; see :func:`use_np`."
use_np_array = _np_decorator("use_np_array")
use_np_array.__doc__ = "Decorator for NumPy array semantics; see :func:`use_np`."


def getenv(name):
    """The value of environment variable ``name``, or ``None`` when unset.

    >>> import sparsenet as mx
    >>> mx.util.getenv("SPARSENET_SURELY_UNSET_VARIABLE") is None
    True
    """
    return os.environ.get(name)


def setenv(name, value):
    """Set environment variable ``name`` to ``value`` (a string); ``None`` unsets it.

    >>> import sparsenet as mx
    >>> mx.util.setenv("SPARSENET_DOC_VAR", "1"); mx.util.getenv("SPARSENET_DOC_VAR")
    '1'
    >>> mx.util.setenv("SPARSENET_DOC_VAR", None)
    """
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def makedirs(d):
    """Create directory ``d`` and its parents; no error when it exists (MXNet's helper)."""
    os.makedirs(os.path.expanduser(d), exist_ok=True)


def set_module(module):
    """Decorator setting ``__module__`` of a function or class (MXNet's helper).

    >>> import sparsenet as mx
    >>> @mx.util.set_module("sparsenet.demo")
    ... def f():
    ...     pass
    >>> f.__module__
    'sparsenet.demo'
    """
    def decorator(func):
        if module is not None:
            func.__module__ = module
        return func
    return decorator


def get_gpu_count():
    """The number of visible CUDA devices (0 without CUDA)."""
    import torch  # deferred: keeps `import sparsenet.util` light
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def get_gpu_memory(gpu_dev_id):
    """``(free, total)`` bytes of CUDA device ``gpu_dev_id``."""
    import torch  # deferred: keeps `import sparsenet.util` light
    count = get_gpu_count()
    if not 0 <= int(gpu_dev_id) < count:
        raise InvalidArgumentError(f"get_gpu_memory: gpu_dev_id must be in [0, {count}), "
                                   f"got {gpu_dev_id}")
    free, total = torch.cuda.mem_get_info(int(gpu_dev_id))
    return free, total

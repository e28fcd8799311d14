"""Environment variables, silenced stderr and retried flaky tests.

sparsenet has no separate C runtime: the environment its code reads is
``os.environ``, so :func:`getenv`/:func:`setenv` read and write it.

>>> import os
>>> with environment('SPARSENET_DEMO_VAR', '1'):
...     os.environ['SPARSENET_DEMO_VAR']
'1'
>>> 'SPARSENET_DEMO_VAR' in os.environ
False
"""
import contextlib
import functools
import os
import sys

from ..base import InvalidArgumentError
from ..ndarray.ndarray import waitall

__all__ = ["environment", "getenv", "setenv", "discard_stderr", "retry"]


def getenv(name):
    """The value of the environment variable ``name``, or None when it is unset.

    >>> getenv('SPARSENET_SURELY_UNSET_VARIABLE') is None
    True
    """
    return os.environ.get(name)


def setenv(name, value):
    """Set the environment variable ``name`` to ``value`` (a str); None unsets it.

    >>> setenv('SPARSENET_DEMO_VAR', 'x'); getenv('SPARSENET_DEMO_VAR')
    'x'
    >>> setenv('SPARSENET_DEMO_VAR', None); getenv('SPARSENET_DEMO_VAR') is None
    True
    """
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


@contextlib.contextmanager
def environment(*args):
    """Set environment variables for the ``with`` body and restore them afterwards.

    Parameters
    ----------
    *args
        ``(name, value)``, or one dict ``{name: value}``. A value of None
        unsets the variable; other values are converted with ``str``.

    Examples
    --------
    >>> import os
    >>> with environment({'SPARSENET_A': '1', 'SPARSENET_B': None}):
    ...     os.environ['SPARSENET_A'], 'SPARSENET_B' in os.environ
    ('1', False)
    """
    if len(args) == 1 and isinstance(args[0], dict):
        changes = dict(args[0])
    elif len(args) == 2:
        changes = {args[0]: args[1]}
    else:
        raise InvalidArgumentError(f"environment() expects one dict {{name: value}} or two "
                                   f"arguments (name, value), got {len(args)} argument(s) "
                                   f"{args!r}")
    snapshot = {name: os.environ.get(name) for name in changes}
    try:
        for name, value in changes.items():
            setenv(name, value)
        yield
    finally:
        waitall()  # work queued on a device may still read the variables
        for name, value in snapshot.items():
            setenv(name, value)


@contextlib.contextmanager
def discard_stderr():
    """Discard what is written to stderr: file descriptor 2 and that of ``sys.stderr``.

    >>> import os
    >>> with discard_stderr():
    ...     _ = os.write(2, b'not shown')
    """
    fds = {2}
    try:
        fds.add(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # a stderr that is not a file
        pass
    sys.stderr.flush()
    saved = {fd: os.dup(fd) for fd in sorted(fds)}
    try:
        with open(os.devnull, "w") as sink:
            for fd in saved:
                os.dup2(sink.fileno(), fd)
            try:
                yield
            finally:
                sys.stderr.flush()
                for fd, copy in saved.items():
                    os.dup2(copy, fd)
    finally:
        for copy in saved.values():
            os.close(copy)


def retry(n):
    """Decorator: run a stochastic test up to ``n`` times, until it raises no AssertionError.

    The last attempt's AssertionError propagates; other exceptions propagate at once.

    Parameters
    ----------
    n : int
        Attempts (at least 1).

    Examples
    --------
    >>> calls = []
    >>> @retry(3)
    ... def flaky():
    ...     calls.append(1)
    ...     assert len(calls) == 2
    >>> flaky(); len(calls)
    2
    """
    if not isinstance(n, int) or n <= 0:
        raise InvalidArgumentError(f"retry(n): n must be a positive int (the number of "
                                   f"attempts), got {n!r}")

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            for attempt in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError:
                    if attempt == n - 1:
                        raise
                    waitall()
        return wrapper
    return decorate

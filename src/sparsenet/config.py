"""Run-time switches: the storage-fallback policy and its counters.

When an operator has no kernel for the storage types it is given, sparsenet
densifies the inputs, runs the dense kernel and casts the result back (a
*storage fallback*). What happens then is a policy:

``'warn'`` (default)
    issue one :class:`~sparsenet.base.StorageFallbackWarning` per
    (operator, input storage types) signature, then stay quiet;
``'error'``
    raise :class:`~sparsenet.base.StorageFallbackError` instead of densifying;
``'silent'``
    densify without a word.

The policy comes from :func:`set_storage_fallback`, the
:func:`storage_fallback` context manager, or the environment variable
``SPARSENET_STORAGE_FALLBACK``. MXNet's ``MXNET_STORAGE_FALLBACK_LOG_VERBOSE=0``
is honoured as ``'silent'``. Every fallback is counted whatever the policy;
:func:`fallback_counts` and :func:`fallback_report` show the counters.

>>> import sparsenet as mx
>>> with mx.config.storage_fallback('silent'):
...     y = mx.nd.log(mx.nd.sparse.zeros('csr', (2, 2)))
>>> y.stype
'default'
"""
import collections
import contextlib
import os
import sys
import threading
import warnings

from .base import InvalidArgumentError, StorageFallbackError, StorageFallbackWarning

__all__ = ["POLICIES", "get_storage_fallback", "set_storage_fallback", "storage_fallback",
           "fallback_counts", "fallback_report", "reset_fallback_counts", "report_fallback"]

POLICIES = ("warn", "error", "silent")


def _policy_from_env():
    value = os.environ.get("SPARSENET_STORAGE_FALLBACK")
    if value:
        value = value.strip().lower()
        if value not in POLICIES:
            raise InvalidArgumentError(
                f"SPARSENET_STORAGE_FALLBACK={value!r}: expected one of {POLICIES}")
        return value
    if os.environ.get("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "1").strip() == "0":
        return "silent"
    return "warn"


class _State(threading.local):
    def __init__(self):
        self.policy = None  # None: use the process-wide policy


_process_policy = _policy_from_env()
_local = _State()
_lock = threading.Lock()
_counts = collections.Counter()
_warned = set()


def get_storage_fallback():
    """Return the storage-fallback policy in force in this thread: 'warn', 'error' or 'silent'.

    >>> get_storage_fallback() in POLICIES
    True
    """
    return _local.policy or _process_policy


def set_storage_fallback(policy):
    """Set the process-wide storage-fallback policy ('warn', 'error' or 'silent').

    Returns the previous policy.

    >>> old = set_storage_fallback('error')
    >>> get_storage_fallback()
    'error'
    >>> _ = set_storage_fallback(old)
    """
    global _process_policy
    policy = _check_policy(policy)
    old, _process_policy = _process_policy, policy
    return old


@contextlib.contextmanager
def storage_fallback(policy):
    """Context manager that sets the fallback policy for the current thread only.

    >>> with storage_fallback('silent'):
    ...     get_storage_fallback()
    'silent'
    """
    policy = _check_policy(policy)
    old, _local.policy = _local.policy, policy
    try:
        yield
    finally:
        _local.policy = old


def _check_policy(policy):
    if policy not in POLICIES:
        raise InvalidArgumentError(
            f"storage fallback policy must be one of {POLICIES}, got {policy!r}")
    return policy


def report_fallback(op_name, stypes, detail="", key=None, count=True):
    """Record one fallback of ``op_name`` on input storage types ``stypes`` and apply the policy.

    Called by the operator registry and the symbolic executor; users do not call it.
    ``key`` is what the once-only warning is keyed on (default: the operator and
    its input storage types; the executor passes the graph node so that each
    node warns once); ``count=False`` warns without counting an execution.
    """
    sig_key = (op_name, tuple(stypes))
    key = sig_key if key is None else key
    if count:
        with _lock:
            _counts[sig_key] += 1
    policy = get_storage_fallback()
    if policy == "silent":
        return
    sig = ", ".join(stypes)
    msg = (f"storage fallback: operator '{op_name}' has no kernel for input storage types "
           f"({sig}){detail}; the inputs are densified and the dense kernel runs.")
    if policy == "error":
        raise StorageFallbackError(
            msg + " Set sparsenet.config.set_storage_fallback('warn') (or the environment "
            "variable SPARSENET_STORAGE_FALLBACK=warn) to allow it, or convert the inputs "
            "with .tostype() yourself.")
    with _lock:
        if key in _warned:
            return
        _warned.add(key)
    once = "signature" if key is sig_key else "graph node"
    warnings.warn(msg + f" This warning is shown once per {once}; set "
                  "SPARSENET_STORAGE_FALLBACK=silent to hide it or =error to forbid fallbacks.",
                  StorageFallbackWarning, stacklevel=_caller_level())


def _caller_level():
    """The ``stacklevel`` of the first frame outside sparsenet (the user's line)."""
    level, frame = 2, sys._getframe(2)
    package = __name__.rsplit(".", 1)[0] + "."
    while frame is not None and frame.f_globals.get("__name__", "").startswith(package):
        frame = frame.f_back
        level += 1
    return level


def fallback_counts():
    """Return a dict ``{(op_name, input_stypes): count}`` of the fallbacks seen so far.

    >>> reset_fallback_counts()
    >>> fallback_counts()
    {}
    """
    with _lock:
        return dict(_counts)


def reset_fallback_counts():
    """Clear the fallback counters and the set of signatures already warned about."""
    with _lock:
        _counts.clear()
        _warned.clear()


def fallback_report():
    """Return the fallback counters as a printable table, most frequent first.

    >>> reset_fallback_counts()
    >>> print(fallback_report())
    no storage fallbacks
    """
    counts = fallback_counts()
    if not counts:
        return "no storage fallbacks"
    lines = [f"{'count':>8}  operator (input storage types)"]
    for (name, stypes), n in sorted(counts.items(), key=lambda kv: -kv[1]):
        lines.append(f"{n:>8}  {name}({', '.join(stypes)})")
    return "\n".join(lines)

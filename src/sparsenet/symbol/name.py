"""Automatic node names: ``NameManager`` gives ``dot0``, ``dot1``, ...; ``Prefix`` prefixes.

>>> import sparsenet as mx
>>> with mx.name.Prefix('net_'):
...     mx.sym.relu(mx.sym.var('x')).name
'net_relu0'
"""
import threading

__all__ = ["NameManager", "Prefix", "current"]


class NameManager:
    """Counts names per hint: the first ``dot`` node is ``dot0``, the next ``dot1``.

    Use it as a context manager to get a fresh numbering inside a block.

    Examples
    --------
    >>> with NameManager():
    ...     m = NameManager.current
    ...     m.get(None, 'fc'), m.get(None, 'fc'), m.get('mine', 'fc')
    ('fc0', 'fc1', 'mine')
    """

    _local = threading.local()

    def __init__(self):
        self._counter = {}
        self._old = None

    def get(self, name, hint):
        """Return ``name`` if given, else ``hint`` followed by its next number."""
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return f"{hint}{n}"

    def __enter__(self):
        self._old = current()
        NameManager._local.value = self
        return self

    def __exit__(self, *exc):
        NameManager._local.value = self._old


class Prefix(NameManager):
    """A :class:`NameManager` that prefixes every name (automatic or given).

    >>> with Prefix('block_'):
    ...     NameManager.current.get('w', 'fc')
    'block_w'
    """

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


def current():
    """The name manager in force (a per-thread default outside any ``with`` block).

    >>> with NameManager() as m:
    ...     current() is m
    True
    """
    value = getattr(NameManager._local, "value", None)
    if value is None:
        value = NameManager._local.value = NameManager()
    return value


class _CurrentDescriptor:
    def __get__(self, obj, owner):
        return current()


NameManager.current = _CurrentDescriptor()

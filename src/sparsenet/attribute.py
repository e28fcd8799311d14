"""``mx.AttrScope``: attributes given to every Symbol created inside a ``with`` block.

Keys MXNet treats as hidden (``ctx_group``, ``lr_mult``, ``wd_mult``,
``force_mirroring``, ``mirror_stage``, ``profiler_scope``) are stored as
``__key__`` and shown under both names by ``Symbol.list_attr()``, as in MXNet.
Scopes nest: an inner scope adds to (and overrides) the outer one's attributes.

>>> import sparsenet as mx
>>> with mx.AttrScope(ctx_group='dev1', __layout__='NC'):
...     w = mx.sym.var('w')
>>> sorted(w.list_attr().items())
[('__ctx_group__', 'dev1'), ('__layout__', 'NC'), ('ctx_group', 'dev1')]
"""
import threading

from .base import InvalidArgumentError

__all__ = ["AttrScope", "HIDDEN_KEYS", "hidden_key"]

#: Attribute names MXNet stores as ``__name__`` (and lists under both names).
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
               "profiler_scope")


def hidden_key(key):
    """The stored name of attribute ``key``: ``'lr_mult'`` -> ``'__lr_mult__'``.

    >>> hidden_key('lr_mult'), hidden_key('__layout__'), hidden_key('group')
    ('__lr_mult__', '__layout__', 'group')
    """
    return f"__{key}__" if key in HIDDEN_KEYS else key


class AttrScope:
    """Attribute manager: Symbols created inside ``with AttrScope(...)`` get its attributes.

    Parameters
    ----------
    **kwargs : str
        Attribute names and their string values.

    Examples
    --------
    >>> with AttrScope(group='g'):
    ...     AttrScope.current.get({'k': 'v'}) == {'group': 'g', 'k': 'v'}
    True
    >>> AttrScope.current.get(None)
    {}
    """

    _current = threading.local()

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise InvalidArgumentError(f"Attributes need to be string: AttrScope got "
                                           f"{key}={value!r} ({type(value).__name__})")
        self._attr = kwargs
        self._old_scope = None

    def get(self, attr):
        """The scope's attributes updated with ``attr`` (a dict, or None), as a new dict."""
        ret = dict(self._attr)
        if attr:
            ret.update(attr)
        return ret

    def __enter__(self):
        self._old_scope = _current_scope()
        merged = dict(self._old_scope._attr)
        merged.update(self._attr)
        self._attr = merged
        AttrScope._current.value = self
        return self

    def __exit__(self, *exc):
        AttrScope._current.value = self._old_scope


def _current_scope():
    value = getattr(AttrScope._current, "value", None)
    if value is None:
        value = AttrScope._current.value = AttrScope()
    return value


class _CurrentDescriptor:
    def __get__(self, obj, owner):
        return _current_scope()


AttrScope.current = _CurrentDescriptor()

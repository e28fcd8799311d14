"""Where a dense gradient buffer's nonzeros may be: exact bookkeeping of sparse writes.

A sparse kernel's gradient (``dot(csr, W)``, ``Embedding``) touches a few rows
of a dense weight's gradient buffer. The gradient store scatters those rows
into the buffer and remembers them here, so that the next ``'write'`` clears
only those rows and the Trainer can update only the touched entries. Any
other write to the buffer (its tensor's version counter moves) turns the
answer into "unknown" (None).

>>> import torch
>>> from sparsenet.ndarray.ndarray import NDArray
>>> g = NDArray(torch.zeros(4, 2))
>>> mark_zero(g)
>>> with torch.no_grad():
...     _ = g._t.index_add_(0, torch.tensor([2]), torch.ones(1, 2))
>>> remember(g, 'rows', torch.tensor([2]))
>>> kind, ids = nonzero_entries(g); kind, ids.tolist()
('rows', [2])
"""
import weakref

import torch

__all__ = ["nonzero_entries", "entries", "remember", "forget", "mark_zero", "clear_dense"]

_nonzero = {}          # id(dense grad buffer) -> _Entries or None (where its nonzeros may be)


class _Entries:
    """Where the nonzeros of a dense gradient buffer may be: rows of axis 0 or flat positions."""

    __slots__ = ("tensor", "version", "kind", "index")

    def __init__(self, tensor, kind, index):
        self.tensor = weakref.ref(tensor)
        self.version = tensor._version
        self.kind = kind        # 'rows' or 'flat'
        self.index = index      # int64 tensor (may hold duplicates)


def entries(buf):
    """The buffer's :class:`_Entries`, or None when unknown (or stale)."""
    e = _nonzero.get(id(buf))
    if e is None:
        return None
    t = buf._t
    if e.tensor() is not t or t._version != e.version:
        _nonzero[id(buf)] = None
        return None
    return e


def forget(buf):
    """Declare that ``buf`` was written by something other than the gradient store."""
    if id(buf) in _nonzero:
        _nonzero[id(buf)] = None


def remember(buf, kind, index):
    """Record that ``buf``'s nonzeros lie at ``index`` (``kind``: 'rows' or 'flat')."""
    t = buf._t
    limit = t.shape[0] // 4 if kind == "rows" else t.numel() // 8
    key = id(buf)
    if key not in _nonzero:
        weakref.finalize(buf, _nonzero.pop, key, None)
    _nonzero[key] = None if index.numel() > limit else _Entries(t, kind, index)


def mark_zero(buf):
    """Declare that dense buffer ``buf`` holds zeros (it was just allocated or cleared)."""
    if buf.stype == "default" and buf._t.dim() > 0:
        remember(buf, "rows", buf._t.new_zeros(0, dtype=torch.int64))


def nonzero_entries(buf):
    """Where dense gradient ``buf`` may hold nonzeros: ``('rows', ids)``, ``('flat', pos)`` or None.

    ``None`` means unknown (anywhere). The answer is exact bookkeeping of the
    sparse gradients autograd wrote; any other write to the buffer makes it
    ``None``. Index tensors may contain duplicates.

    Examples
    --------
    >>> import sparsenet as mx
    >>> w = mx.nd.ones((5, 2)); w.attach_grad()
    >>> x = mx.nd.sparse.csr_matrix(([1.0], [3], [0, 1]), shape=(1, 5))
    >>> with mx.autograd.record():
    ...     y = mx.nd.dot(x, w)
    >>> y.backward()
    >>> kind, ids = nonzero_entries(w.grad)
    >>> kind, ids.tolist()
    ('rows', [3])
    """
    e = entries(buf)
    return None if e is None else (e.kind, e.index)


def clear_dense(buf):
    """Zero dense ``buf`` in place: only where its nonzeros may be, when that is known."""
    e = entries(buf)
    t = buf._t
    if e is None:
        t.zero_()
    elif e.index.numel():
        if e.kind == "rows":
            t.index_fill_(0, e.index, 0)
        else:
            t.view(-1).index_fill_(0, e.index, 0)

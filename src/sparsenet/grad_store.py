"""The gradient store: how a torch gradient lands in a variable's gradient buffer.

Backward hands over one torch gradient per variable leaf. Where it goes is a
table of rows, one per case::

    (leaf kind, incoming gradient, buffer stype) -> store action

- leaf kind: ``'full'`` (the leaf has the variable's whole shape: a dense
  array, or the dense graph tensor of a sparse variable, whose gradient is the
  full mathematical gradient) or ``'values'`` (the stored values of a sparse
  array: the row view of a Gluon row_sparse parameter).
- incoming gradient: ``'dense'`` (a dense tensor), ``'rows'`` (a sparse COO
  tensor over axis 0, as ``dot(csr, W)`` and ``Embedding`` give), ``'coo'``
  (any other sparse COO tensor).
- buffer stype: the storage type of the gradient buffer, which never changes.

Every action writes into the existing buffer object: a dense buffer's tensor
is written in place (views and ``to_torch()`` of it stay valid); a sparse
buffer keeps its identity and takes new parts (their number of stored rows
changes with each gradient). ``'write'`` replaces the buffer's content,
``'add'`` accumulates, in every row.

>>> import sparsenet as mx
>>> w = mx.nd.ones((4, 2)); w.attach_grad(stype='row_sparse')
>>> x = mx.nd.sparse.csr_matrix(([1.0, 2.0], [3, 1], [0, 1, 2]), shape=(2, 4))
>>> with mx.autograd.record():
...     y = mx.nd.dot(x, w)
>>> y.backward()
>>> w.grad.indices.asnumpy(), action_name('full', 'rows', 'row_sparse')
(array([1, 3]), '_sparse_into_rsp')
"""
import weakref

import torch

from .base import SparsenetError
from .ndarray import nonzero
from .ndarray.creation import zeros
from .ndarray.ndarray import NDArray, copy_into
from .ndarray.row_sparse import RowSparseNDArray
from .ndarray.stype import CSR, DEFAULT, ROW_SPARSE
from .ops.arithmetic import add_into
from .ops.cast import cast_storage
from .ops.row_kernels import coalesce_rows, group_ids
from .torch_compat import coo_parts, set_grad_enabled

__all__ = ["coo_rows", "store", "store_nograd", "grad_array", "zero_grad", "scale_", "mark_fresh", "take_fresh",
           "is_fresh", "fresh_buffers", "incoming_kind", "action_name", "STORE_TABLE",
           "sum_replicas"]

_fresh = {}            # id(grad buffer) -> weakref, for buffers written since the last step
_NONZERO = nonzero._nonzero


# ---------------------------------------------------------------------- helpers
def _row_major_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return strides[::-1]


def _scatter_parts(g):
    """(kind, index, values) of a sparse COO gradient, as scattered into a dense buffer."""
    idx, vals = coo_parts(g)
    if g.sparse_dim() == 1:
        return "rows", idx[0], vals
    strides = torch.tensor(_row_major_strides(g.shape[:g.sparse_dim()]), dtype=torch.int64,
                           device=idx.device)
    flat = (idx * strides.unsqueeze(1)).sum(0)
    if g.dense_dim():
        inner = int(torch.tensor(g.shape[g.sparse_dim():]).prod())
        flat = (flat.unsqueeze(1) * inner + torch.arange(inner, device=flat.device)).reshape(-1)
        vals = vals.reshape(-1)
    return "flat", flat, vals


def caller_storages(tensors):
    """The storage addresses of ``tensors``: head gradients the caller passed to a backward
    pass, which no gradient store may write into (see :func:`kernel_owned`)."""
    return {t.untyped_storage().data_ptr() for t in tensors}


def kernel_owned(g, callers):
    """Whether gradient ``g`` is the backward kernels' own memory, so a store may sum its
    values in place or keep them as a buffer: no view of a head gradient the caller passed
    (``callers``, from :func:`caller_storages`). An Embedding's backward hands its head
    gradient on as its values rows, so ``g`` may be the caller's array.

    >>> head = torch.ones(3, 2)
    >>> g = torch.sparse_coo_tensor([[2, 0, 2]], head, (4, 2))
    >>> kernel_owned(g, caller_storages([head])), kernel_owned(g, set())
    (False, True)
    """
    if not callers:
        return True
    values = g._values() if g.is_sparse else g
    return values.untyped_storage().data_ptr() not in callers


def coo_rows(g, owned=False):
    """``(values, rows)`` of a sparse COO gradient with one sparse dimension (an Embedding's):
    its distinct rows, sorted, each with the sum of its values rows (in their order).

    Small CPU gradients take the native kernel (:func:`~sparsenet.ops.row_kernels.
    coalesce_rows`; with ``owned``, nobody else holds ``g``'s values and they are summed in
    place); larger ones, on a table of at most 8 rows per id, a scatter into a dense buffer
    (:func:`_scattered_row_sums`), else a stable sort and a gather (:func:`_sorted_row_sums`,
    on the CPU about 2x faster than ``coalesce()``), both with the same sums; other devices
    torch's ``coalesce``. Ids that already increase strictly are kept as they are, values
    and all (a coalesced gradient whose flag torch's leaf accumulation dropped, such as
    ``dot(csr, W)``'s, see :func:`~sparsenet.ops.dot.csr_dense_mm`).

    >>> g = torch.sparse_coo_tensor([[3, 1, 3]], torch.tensor([[1.0], [2.0], [4.0]]), (5, 1))
    >>> values, rows = coo_rows(g)
    >>> rows.tolist(), values.tolist()
    ([1, 3], [[2.0], [5.0]])
    """
    idx, vals = coo_parts(g)
    if g.is_coalesced():
        return vals, idx[0]
    rows = coalesce_rows(idx, vals, in_place=owned)
    if rows is not None:
        return rows[1], rows[0]
    if _distinct_sorted(idx[0]):  # e.g. dot(csr, W)'s rows (see ops.dot.csr_dense_mm)
        return vals, idx[0]
    if idx.is_cpu:
        num_rows = g.shape[0]
        if num_rows <= _SCATTER_ROWS_PER_ID * vals.shape[0] and _in_range(idx[0], num_rows):
            return _scattered_row_sums(idx[0], vals, num_rows)
        return _sorted_row_sums(idx[0], vals)
    idx, vals = coo_parts(g.coalesce())
    return vals, idx[0]


def _distinct_sorted(ids):
    """Whether ``ids`` increase strictly (a coalesced gradient whose flag torch dropped: its
    leaf accumulation rebuilds a sparse gradient without it). One pass, no sort.

    >>> _distinct_sorted(torch.tensor([1, 4, 7])), _distinct_sorted(torch.tensor([1, 1]))
    (True, False)
    """
    n = ids.numel()
    if n < 2:
        return True
    return bool(torch.gt(ids[1:], ids[:-1]).all())


#: ``coo_rows`` sums into a dense buffer when the table has at most this many rows per id
#: (measured on the CPU: 100,000 rows of 1 float from 122,880 ids 4.0 ms against the sort's
#: 21 ms; from 7,680 ids 0.7 against 1.4 ms; 30,000 rows of 16 floats from 2,000 ids 0.45
#: against 0.36 ms, so the sort keeps the sparser cases).
_SCATTER_ROWS_PER_ID = 8


def _in_range(ids, num_rows):
    """Whether every id is in ``[0, num_rows)`` (an id out of range keeps the sort, whose
    rows the caller checks and names in its error)."""
    lo, hi = torch.aminmax(ids)
    return bool(lo >= 0) and bool(hi < num_rows)


def _scattered_row_sums(raw, vals, num_rows):
    """``(sums, rows)`` as :func:`_sorted_row_sums` gives them, bit for bit, by adding the
    ``vals`` rows into a ``num_rows`` buffer in their order (from -0.0, which adds exactly:
    ``-0.0 + x == x`` for every ``x``, signed zeros included) and reading back the rows
    ``raw`` names (``bincount``): ``O(ids + num_rows)`` instead of a sort's
    ``O(ids log ids)``."""
    buf = vals.new_full((num_rows,) + tuple(vals.shape[1:]), -0.0)
    buf.index_add_(0, raw, vals)
    rows = torch.bincount(raw, minlength=num_rows).nonzero().view(-1)
    return buf.index_select(0, rows), rows


def _sorted_row_sums(raw, vals):
    """``(sums, rows)`` of row ids ``raw`` (any order, repeats) and their ``vals`` rows: a
    stable grouping of the ids (:func:`~sparsenet.ops.row_kernels.group_ids`), one gather
    of each row's first values, then the repeats added in their original order (few, in an
    Embedding's gradient).

    >>> sums, rows = _sorted_row_sums(torch.tensor([3, 1, 3]), torch.tensor([[1.0], [2.0], [4.0]]))
    >>> rows.tolist(), sums.tolist()
    ([1, 3], [[2.0], [5.0]])
    """
    rows, starts, perm, where = group_ids(raw, return_inverse=True)
    sums = vals.index_select(0, perm[starts])
    if rows.numel() != raw.numel():  # repeats: add each to its row's first values
        later = torch.ones(raw.numel(), dtype=torch.bool, device=raw.device)
        later[starts] = False
        moved = perm[later]
        sums.index_add_(0, where[moved], vals.index_select(0, moved))
    return sums, rows


def _rsp_parts(g, shape):
    """``(values, row ids)`` of the row_sparse form (array shape ``shape``) of sparse COO
    gradient ``g`` with more than one sparse dimension (one: :func:`coo_rows`)."""
    g = g.coalesce()
    idx, vals = g.indices(), g.values()
    rows, inv = torch.unique(idx[0], sorted=True, return_inverse=True)
    data = vals.new_zeros((rows.numel(),) + tuple(shape[1:]))
    data.index_put_((inv,) + tuple(idx[1:]), vals, accumulate=True)
    return data, rows


def _write(buf, new, add):
    """Write array ``new`` (any storage type) into ``buf``, or add it (``add``)."""
    if add:
        add_into(buf, new)
    else:
        copy_into(new, buf)  # keeps the buffer's storage type, dtype and device
        nonzero.forget(buf)


# ---------------------------------------------------------------------- actions
def _dense_into_dense(buf, var, g, add, owned):
    """A dense gradient into a dense buffer: copied (or added) in place."""
    if add:
        buf._t.add_(g)
    else:
        buf._t.copy_(g)
    key = id(buf)
    if key in _NONZERO:  # nonzero.forget(buf), inlined: the per-step path
        _NONZERO[key] = None


def _scatter_into_dense(buf, var, g, add, owned):
    """A sparse gradient into a dense buffer: ``'write'`` clears only the entries the
    previous sparse write touched (the buffer remembers them), then scatters."""
    t = buf._t
    kind, index, vals = _scatter_parts(g)
    prev = nonzero.entries(buf)
    if not add:
        nonzero.clear_dense(buf)
        prev = None
    vals = vals if vals.dtype == t.dtype else vals.to(t.dtype)
    if kind == "rows":
        t.index_add_(0, index, vals)
    else:
        t.view(-1).index_add_(0, index, vals)
    if (add and prev is None) or (prev is not None and prev.kind != kind):
        nonzero.forget(buf)
        return
    nonzero.remember(buf, kind, index if prev is None else torch.cat([prev.index, index]))


def _sparse_into_rsp(buf, var, g, add, owned):
    """A sparse gradient into a row_sparse buffer: its rows, summed and sorted."""
    data, rows = coo_rows(g, owned) if g.sparse_dim() == 1 else _rsp_parts(g, buf.shape)
    if data.dtype != buf._data.dtype:
        data = data.to(buf._data.dtype)
    if not add and buf._grad is None:
        if not owned and (data.untyped_storage().data_ptr()
                          == g._values().untyped_storage().data_ptr()):
            data = data.clone()  # g's own values (it came coalesced), which others may hold
        buf._data, buf._indices = data, rows  # the buffer takes the rows over
        return
    _write(buf, RowSparseNDArray._from_parts(data, rows, buf.shape), add)


def _cast_into(buf, var, g, add, owned):
    """A full-shaped gradient into a buffer of another storage type: cast (compact)."""
    dense = g.to_dense() if g.is_sparse else g
    _write(buf, cast_storage(NDArray(dense), stype=buf.stype), add)


def _values_into(buf, var, g, add, owned):
    """The gradient w.r.t. a sparse array's stored values: same structure as the array
    (a sparse ``g`` lists some of its stored rows by position)."""
    if g.is_sparse:
        g = g.coalesce()
        new = RowSparseNDArray._from_parts(g.values(), var._indices[g.indices()[0]], var.shape)
    else:
        new = var._with_data(g)
    _write(buf, new, add)


#: (leaf kind, incoming gradient, buffer stype) -> action; every combination is a row
STORE_TABLE = {
    ("full", "dense", DEFAULT): _dense_into_dense,
    ("full", "rows", DEFAULT): _scatter_into_dense,
    ("full", "coo", DEFAULT): _scatter_into_dense,
    ("full", "dense", ROW_SPARSE): _cast_into,
    ("full", "rows", ROW_SPARSE): _sparse_into_rsp,
    ("full", "coo", ROW_SPARSE): _sparse_into_rsp,
    ("full", "dense", CSR): _cast_into,
    ("full", "rows", CSR): _cast_into,
    ("full", "coo", CSR): _cast_into,
    ("values", "dense", DEFAULT): _values_into,
    ("values", "rows", DEFAULT): _values_into,
    ("values", "dense", ROW_SPARSE): _values_into,
    ("values", "rows", ROW_SPARSE): _values_into,
    ("values", "dense", CSR): _values_into,
    ("values", "rows", CSR): _values_into,
}


def incoming_kind(g):
    """``'dense'``, ``'rows'`` or ``'coo'``: the kind of a torch gradient.

    >>> incoming_kind(torch.ones(2)), incoming_kind(torch.ones(2, 2).to_sparse(1))
    ('dense', 'rows')
    """
    if not g.is_sparse:
        return "dense"
    return "rows" if g.sparse_dim() == 1 else "coo"


def action_name(leaf, incoming, buffer_stype):
    """The name of the store action of a table row (for docs and tests).

    >>> action_name('full', 'dense', 'default')
    '_dense_into_dense'
    """
    return STORE_TABLE[(leaf, incoming, buffer_stype)].__name__


# ---------------------------------------------------------------------- entry points
def store(var, g, accumulate=False, owned=False, full=True):
    """Store torch gradient ``g`` of variable ``var`` into ``var.grad`` by its ``grad_req``.

    Parameters
    ----------
    var : NDArray
        A variable (its ``_grad`` buffer and ``_grad_req`` are read).
    g : torch.Tensor
        The gradient of the variable's leaf (dense or sparse COO).
    accumulate : bool
        Add even under ``'write'`` (a second leaf sharing the buffer).
    owned : bool
        Nobody else references ``g``: its parts may be reused in place.
    full : bool
        The leaf has the variable's whole shape (False: a sparse array's values).
    """
    grad_mode = torch.is_grad_enabled()
    set_grad_enabled(False)
    try:
        store_nograd(var, g, accumulate, owned, full)
    finally:
        set_grad_enabled(grad_mode)


def store_nograd(var, g, accumulate=False, owned=False, full=True):
    """:func:`store` for a caller that has switched gradient recording off (backward)."""
    buf = var._grad
    add = accumulate or var._grad_req == "add"
    if g.is_sparse:
        kind = "rows" if g.sparse_dim() == 1 else "coo"
        if not full and kind == "coo":
            g, kind = g.to_dense(), "dense"
    else:
        kind = "dense"
    STORE_TABLE[("full" if full else "values", kind, buf.stype)](buf, var, g, add, owned)
    _fresh[id(buf)] = weakref.ref(buf)


class _Target:
    """A stand-in variable whose buffer receives a gradient (for :func:`grad_array`)."""

    __slots__ = ("_grad", "_grad_req", "_indices", "shape", "stype", "_with_data")

    def __init__(self, var, buf):
        self._grad, self._grad_req, self.shape, self.stype = buf, "write", var.shape, var.stype
        self._indices = getattr(var, "_indices", None)
        self._with_data = getattr(var, "_with_data", None)


def grad_array(var, grads, full=True, stype=None):
    """Torch gradient(s) of ``var`` as a new array of storage type ``stype`` (by default
    that of ``var``'s gradient buffer, else of ``var``); a list of tensors is summed.

    >>> import sparsenet as mx
    >>> x = mx.nd.ones((2, 2)).tostype('row_sparse')
    >>> grad_array(x, torch.ones(2, 2)).stype
    'row_sparse'
    """
    if stype is None:
        stype = var._grad.stype if var._grad is not None else var.stype
    buf = zeros(var.shape, ctx=var.context, dtype=var.dtype, stype=stype)
    if stype == DEFAULT:
        nonzero.mark_zero(buf)
    target = _Target(var, buf)
    if isinstance(grads, torch.Tensor):
        grads = [grads]
    for i, g in enumerate(grads):
        store(target, g.detach(), accumulate=i > 0, full=full)
    _fresh.pop(id(buf), None)
    return buf


def zero_grad(buf):
    """Set a gradient buffer to zero in place (row_sparse/CSR: no stored values).

    A dense buffer whose nonzeros autograd knows is cleared only there.

    >>> import sparsenet as mx
    >>> g = mx.nd.ones((3,))
    >>> zero_grad(g)
    >>> g.asnumpy()
    array([0., 0., 0.], dtype=float32)
    """
    if buf.stype != DEFAULT:
        buf._replace(zeros(buf.shape, ctx=buf.context, dtype=buf.dtype, stype=buf.stype))
        return
    with torch.no_grad():
        nonzero.clear_dense(buf)
    nonzero.mark_zero(buf)


def scale_(arr, scale):
    """Multiply gradient ``arr`` in place by ``scale`` (a scalar tensor); zeros stay zeros."""
    with torch.no_grad():
        if arr.stype != DEFAULT:
            arr._data.mul_(scale)
            return
        e = nonzero.entries(arr)
        arr._t.mul_(scale)
        if e is not None:
            nonzero.remember(arr, e.kind, e.index)


def sum_replicas(grads):
    """Give every buffer of ``grads`` (one parameter's gradient on each of its contexts)
    the sum over all of them, in place (data parallelism: the replicas then take the
    same step). A row_sparse sum stays row_sparse: the union of the rows.

    >>> import sparsenet as mx
    >>> a, b = mx.nd.ones((2,)), mx.nd.ones((2,), ctx=mx.cpu(1)) * 2
    >>> sum_replicas([a, b]); b.asnumpy(), b.context
    (array([3., 3.], dtype=float32), cpu(1))
    """
    if len(grads) < 2:
        return
    first = grads[0]
    with torch.no_grad():
        if first.stype == DEFAULT:
            total = first._t.clone()
            for g in grads[1:]:
                total.add_(g._t.to(total.device))
            for g in grads:
                g._t.copy_(total)
                nonzero.forget(g)
            return
        total = first.copyto(first.context)
        for g in grads[1:]:
            total = total + g.as_in_context(first.context)
        for g in grads:
            g._replace(total.copyto(g.context))


def fresh_buffers():
    """The buffers written by backward since their last update: ``{id(buf): weakref(buf)}``.

    The Trainer reads it once per step (one dict for every parameter; an entry is
    current when its weakref still gives the buffer). Prefer :func:`is_fresh` /
    :func:`take_fresh` elsewhere.
    """
    return _fresh


def mark_fresh(buf):
    """Record that ``buf`` was written by a backward pass (the Trainer updates from it)."""
    _fresh[id(buf)] = weakref.ref(buf)


def is_fresh(buf):
    """Whether a backward pass wrote ``buf`` since the last :func:`take_fresh`.

    >>> import sparsenet as mx
    >>> g = mx.nd.zeros((1,)); mark_fresh(g); is_fresh(g), take_fresh(g), is_fresh(g)
    (True, True, False)
    """
    ref = _fresh.get(id(buf))
    return ref is not None and ref() is buf


def take_fresh(buf):
    """Return :func:`is_fresh` and clear the mark (the update consumed the gradient)."""
    ref = _fresh.pop(id(buf), None)
    return ref is not None and ref() is buf


# ---------------------------------------------------------------------- array methods
def _store_grad(self, g):
    """Store a torch gradient into the buffer according to ``grad_req``."""
    store(self, g.detach(), full=self._grad_is_full())


def _get_fresh_grad(self):
    """1 when a backward pass wrote this variable's gradient since the last optimizer
    step (or since it was set to False), else 0 (MXNet's gradient state).

    >>> import sparsenet as mx
    >>> x = mx.nd.ones((2,)); x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = x * 2
    >>> y.backward()
    >>> x._fresh_grad
    1
    >>> x._fresh_grad = False; x._fresh_grad
    0
    """
    grad = self._grad
    return 0 if grad is None else int(is_fresh(grad))


def _set_fresh_grad(self, state):
    grad = self._grad
    if grad is None:
        raise SparsenetError("_fresh_grad: the array is not an autograd variable and has no "
                             "gradient state; call attach_grad() first")
    if state:
        mark_fresh(grad)
    else:
        take_fresh(grad)


# the gradient-state methods of every array live here, with the store they use
NDArray._store_grad = _store_grad
NDArray._fresh_grad = property(_get_fresh_grad, _set_fresh_grad, doc=_get_fresh_grad.__doc__)

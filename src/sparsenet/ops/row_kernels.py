"""Native CPU row kernels: fused lazy optimizer steps, when the C module is built.

A lazy step (row_sparse gradient, ``lazy_update=True``) changes only the rows the
gradient names. The torch kernels of :mod:`sparsenet.ops.update_rules` gather
those rows, run several elementwise passes and scatter them back;
``sparsenet.ops._row_kernels`` (C, built by ``pip install``) reads and writes each
row once, prefetches the rows a few steps ahead and splits the rows between
``torch.get_num_threads()`` threads. Same rule, same arithmetic, one pass: see
BENCHMARKS.md for the measured difference.

:func:`lazy_step` runs a kernel when it applies (CPU, float32 or float64,
contiguous tensors of one dtype, strictly increasing row indices) and returns
False otherwise, so that the caller runs its torch kernel, which also serves
CUDA tensors. The callers are the rule rows' kernels in
:mod:`sparsenet.ops.update_rules` (one ``*_native`` function per rule). Two
helpers of the training step use the same module: :func:`sgd_dense` and
:func:`sgd_mom_dense` (plain SGD and SGD with momentum on the small dense parameters of
a network in one call) and :func:`coalesce_rows`
(the row_sparse form of a batch's row gradient). :func:`sort_ids`, :func:`unique_ids` and
:func:`group_ids` sort and group a batch's integer ids (CSR columns, gradient rows, pulled
row ids) with one native stable radix argsort, about 10x faster than ``torch.sort`` at
20,000 ids, falling back to torch where it does not apply; :func:`csr_column_sums` uses the
same sort to make ``x.T @ g`` for a CSR ``x`` (the row_sparse gradient of ``W`` in
``dot(x, W)``) in one call. Set
``SPARSENET_NATIVE_ROWS=0`` (or :data:`ENABLED` to False) to use the torch kernels
everywhere.

>>> import torch
>>> w = torch.ones(4, 2); g = torch.full((2, 2), 2.0); rows = torch.tensor([1, 3])
>>> lazy_step("sgd", w, (), g, rows, lr=0.5) == available()
True
>>> w[:, 0].tolist() if available() else [1.0, 0.0, 1.0, 0.0]
[1.0, 0.0, 1.0, 0.0]
"""
import os
import warnings

import torch

from ..base import IndexOutOfRangeError, NativeKernelWarning, SparseFormatError
from ..torch_compat import increment_versions as _bump_versions

try:
    from . import _row_kernels as _native
except ImportError:  # built without a C compiler: the torch kernels do the work
    _native = None

__all__ = ["ENABLED", "available", "lazy_step", "sgd_dense", "sgd_mom_dense", "coalesce_rows",
           "sort_ids", "unique_ids", "group_ids", "csr_column_sums"]

ENABLED = os.environ.get("SPARSENET_NATIVE_ROWS", "1") != "0"
if _native is None and ENABLED:  # told once, at import
    warnings.warn("sparsenet's native row kernels (sparsenet.ops._row_kernels) are not built: "
                  "lazy optimizer steps run on torch's index kernels, with the same results "
                  "but slower. Build them with a C compiler and OpenMP (`pip install -e .`); "
                  "SPARSENET_NATIVE_ROWS=0 silences this.", NativeKernelWarning, stacklevel=2)
_NUM_ARRAYS = {"sgd": 1, "sgd_mom": 2, "adam": 3, "adagrad": 2}
_DTYPES = (torch.float32, torch.float64)
#: Most ids :func:`coalesce_rows` takes (measured, one thread, 128 float32 columns, random
#: ids under 10**6: 2,000 ids 76 against torch's coalesce 172 us, 20,000 ids 1.1 against
#: 2.5 ms, 40,000 ids 2.5 against 4.4 ms); larger gradients go to torch's threads.
_COALESCE_MAX = 1 << 16
_SMALL = 1 << 16  # elements: larger dense weights go to torch's multi-threaded kernels


def available():
    """Whether the native kernels are built and enabled.

    >>> isinstance(available(), bool)
    True
    """
    return ENABLED and _native is not None


def lazy_step(kernel, weight, states, grad_rows, rows, *, lr, wd=0.0, rescale_grad=1.0,
              clip_gradient=-1.0, a=0.0, b=0.0, epsilon=0.0):
    """Run the native lazy ``kernel`` in place; return False where it does not apply.

    Parameters
    ----------
    kernel : {'sgd', 'sgd_mom', 'adam', 'adagrad'}
        The rule, as the torch kernel of the same name in ``ops/update_rules/``.
    weight : torch.Tensor
        Every row of the weight, updated in place.
    states : tuple of torch.Tensor
        Every row of each state (momentum; Adam's mean and variance; AdaGrad's
        history), updated in place.
    grad_rows : torch.Tensor
        The gradient's stored rows, ``(len(rows),) + weight.shape[1:]``.
    rows : torch.Tensor
        int64 row of each gradient row.
    lr, wd, rescale_grad, clip_gradient, epsilon : float
        The rule's parameters (``clip_gradient < 0``: no clipping).
    a, b : float
        ``momentum`` for ``'sgd_mom'``; ``beta1, beta2`` for ``'adam'``.

    Returns
    -------
    bool
        True when the step was done; False when the caller's torch kernel must do it
        (not built, not a CPU float tensor, not contiguous, rows not strictly
        increasing). Nothing is written when False is returned.

    Raises
    ------
    IndexOutOfRangeError
        A row index is negative or not below ``weight.shape[0]`` (nothing is written).

    Examples
    --------
    >>> w, m = torch.ones(3, 2), torch.zeros(3, 2)
    >>> done = lazy_step("sgd_mom", w, (m,), torch.ones(1, 2), torch.tensor([2]), lr=0.5, a=0.9)
    >>> w[:, 0].tolist() if done else [1.0, 1.0, 0.5]
    [1.0, 1.0, 0.5]
    """
    if not ENABLED or _native is None:
        return False
    # as few tensor queries as will do: this runs once per step, often with cold caches
    dtype, shape = weight.dtype, weight.shape
    if (dtype not in _DTYPES or not shape or len(states) + 1 != _NUM_ARRAYS[kernel]
            or rows.dtype != torch.int64 or not rows.is_cpu or not rows.is_contiguous()):
        return False
    n = rows.numel()
    for t in (weight, grad_rows) + tuple(states):
        if t.dtype != dtype or not t.is_cpu or not t.is_contiguous():
            return False
    cols = weight.stride(0)  # elements per row (weight is contiguous)
    if grad_rows.numel() != n * cols:
        return False
    for t in states:
        if t.shape != shape:
            return False
    ptr = [weight.data_ptr()] + [t.data_ptr() for t in states] + [0] * (2 - len(states))
    try:
        rc = getattr(_native, kernel)(
            ptr[0], ptr[1], ptr[2], grad_rows.data_ptr(), rows.data_ptr(), n, cols, shape[0],
            dtype == torch.float64, torch.get_num_threads(), float(lr), float(wd),
            float(rescale_grad), -1.0 if clip_gradient is None else float(clip_gradient),
            float(a), float(b), float(epsilon))
    except IndexError as e:  # checked before anything is written: name it as sparsenet does
        raise IndexOutOfRangeError(f"{kernel} update: {e}") from None
    if rc:
        return False
    _bump_versions((weight,) + tuple(states))  # written through raw pointers
    return True


def sgd_dense(weights, grads, lr, rescale_grad):
    """Plain SGD, ``w = w + (rescale_grad * g) * (-lr)``, on the small dense CPU tensors of a
    list in one native call; return the ``(weight, grad)`` pairs it did not take.

    One call instead of two torch multi-tensor (``foreach``) kernels for the biases and small
    layers of a network, which take more time to dispatch than to compute. The
    per-weight dense SGD rule (``sgd_update``) takes the same path for the same
    tensors, so a list update and one update per weight give the same bits.

    >>> ws, gs = [torch.ones(2), torch.ones(3)], [torch.ones(2), torch.full((3,), 2.0)]
    >>> rest = sgd_dense(ws, gs, lr=0.5, rescale_grad=0.5)
    >>> len(rest) == (0 if available() else 2)
    True
    """
    if not ENABLED or _native is None:
        return list(zip(weights, grads))
    groups, rest = {torch.float32: ([], [], [], []), torch.float64: ([], [], [], [])}, []
    for w, g in zip(weights, grads):
        group = groups.get(w.dtype)
        n = w.numel()
        if (group is not None and g.dtype == w.dtype and n <= _SMALL and w.is_cpu and g.is_cpu
                and w.shape == g.shape and w.is_contiguous() and g.is_contiguous()):
            if n == 0:  # nothing to update (an empty tensor's data pointer is often null)
                continue
            group[0].append(w)
            group[1].append(w.data_ptr())
            group[2].append(g.data_ptr())
            group[3].append(n)
        else:
            rest.append((w, g))
    for dtype, (ws, wp, gp, ns) in groups.items():
        if ws:
            _native.sgd_dense(tuple(wp), tuple(gp), tuple(ns), float(lr), float(rescale_grad),
                              dtype == torch.float64)
            _bump_versions(ws)
    return rest


def sgd_mom_dense(weights, moms, grads, *, lr, momentum, wd=0.0, rescale_grad=1.0,
                  clip_gradient=-1.0):
    """SGD with momentum, the lazy kernel's step (``sgd_mom``) on every element, on the small
    dense CPU tensors of a list in one native call; return the ``(weight, mom, grad)``
    triples it did not take.

    One call instead of four or five torch multi-tensor passes over cache-cold tensors. The
    torch kernel of the dense rule computes each element the same way (the same bits).

    >>> ws, ms, gs = [torch.ones(2)], [torch.zeros(2)], [torch.ones(2)]
    >>> rest = sgd_mom_dense(ws, ms, gs, lr=0.5, momentum=0.9)
    >>> len(rest) == (0 if available() else 1)
    True
    """
    if not ENABLED or _native is None:
        return list(zip(weights, moms, grads))
    groups, rest = {torch.float32: ([], [], [], [], []), torch.float64: ([], [], [], [], [])}, []
    for w, m, g in zip(weights, moms, grads):
        group = groups.get(w.dtype)
        n = w.numel()
        if (group is not None and g.dtype == w.dtype and m.dtype == w.dtype and n <= _SMALL
                and w.is_cpu and g.is_cpu and m.is_cpu and w.shape == g.shape == m.shape
                and w.is_contiguous() and g.is_contiguous() and m.is_contiguous()):
            if n == 0:  # nothing to update (an empty tensor's data pointer is often null)
                continue
            group[0].extend((w, m))
            group[1].append(w.data_ptr())
            group[2].append(m.data_ptr())
            group[3].append(g.data_ptr())
            group[4].append(n)
        else:
            rest.append((w, m, g))
    for dtype, (written, wp, mp, gp, ns) in groups.items():
        if written:
            _native.sgd_mom_dense(tuple(wp), tuple(mp), tuple(gp), tuple(ns), float(lr),
                                  float(momentum), float(wd), float(rescale_grad),
                                  float(clip_gradient), dtype == torch.float64)
            _bump_versions(written)
    return rest


def coalesce_rows(rows, values, in_place=False):
    """Sorted distinct ``rows`` and, for each, the sum of its ``values`` rows; None where the
    native kernel does not apply (then use torch's ``coalesce``).

    The row gradient of ``embedding_bag`` (``dot(csr, W)``) has one row per stored
    value of the batch, with repeats; a row_sparse gradient holds each row once, in
    order. Repeats are summed in their original order. The ids are sorted by the natural
    merge sort of a few ascending runs (a small batch's) or, from 256 ids, the radix
    argsort of :func:`sort_ids`; up to ``_COALESCE_MAX`` ids, where torch's coalesce costs
    more (about 7.8 against 5.6 us at 100 ids of 128 floats, 172 against 76 us at 2,000).
    With ``in_place`` the sums are written over ``values`` (a view of it is returned):
    for values nobody else holds, such as those of a gradient autograd has just handed
    over. ``rows`` is never written (a sparse gradient's ids are often the input's own
    index tensor); it may also be given as the ``(1, n)`` index tensor of a sparse COO
    tensor. Ids that already increase strictly (a coalesced gradient) are returned as
    they are, ``(rows.view(-1), values)``, with nothing copied.

    >>> got = coalesce_rows(torch.tensor([4, 1, 4]), torch.tensor([[1.0], [2.0], [3.0]]))
    >>> got is None or (got[0].tolist(), got[1].tolist()) == ([1, 4], [[2.0], [4.0]])
    True
    """
    if not ENABLED or _native is None:
        return None
    n = rows.numel()
    if (n > _COALESCE_MAX or rows.dtype != torch.int64 or not rows.is_cpu
            or values.dtype not in _DTYPES or not values.is_cpu or values.dim() < 1
            or values.shape[0] != n or not rows.is_contiguous() or not values.is_contiguous()):
        return None
    out_rows = rows.new_empty(n)  # int64 on the CPU, as rows (cheaper than torch.empty here)
    out_values = values if in_place else torch.empty_like(values)
    cols = values.numel() // n if n else 0
    m = _native.coalesce_rows(rows.data_ptr(), values.data_ptr(), n, cols,
                              values.dtype == torch.float64, out_rows.data_ptr(),
                              out_values.data_ptr())
    if m < 0:  # already coalesced: nothing was written
        return rows.view(-1), values
    if in_place:
        _bump_versions((values,))
    return (out_rows, out_values) if m == n else (out_rows[:m], out_values[:m])


# ---------------------------------------------------------------------- grouping ids
#: Fewest ids grouped natively. Below, torch costs about as much (one thread, medians of
#: :func:`sort_ids` against ``torch.sort(stable=True)``: 8 random ids under 10**6 2.9 against
#: 2.9 us, 128 ids 3.4 against 3.9, 512 ids 5.1 against 7.3, 2,000 ids 11 against 60, 20,000
#: ids 0.10 against 1.06 ms; :func:`group_ids` 4.3 against 13 us at 8 ids).
_GROUP_MIN = 16
_ANY_BOUND = (1 << 63) - 1


def _native_group(ids, bound, unique, starts, inverse):
    """``(sorted, order, unique, starts, inverse)`` of ``ids`` by the native radix argsort
    (None for each output not asked for), or None where it does not apply: not built or
    disabled, not a contiguous CPU int64 tensor, fewer than ``_GROUP_MIN`` ids, or an id outside
    ``[0, bound)`` (the caller's torch path then gives the same results, or its own error)."""
    if not ENABLED or _native is None:
        return None
    n = ids.numel()
    if n < _GROUP_MIN or ids.dtype != torch.int64 or not ids.is_cpu or not ids.is_contiguous():
        return None
    bound = _ANY_BOUND if bound is None else min(bound, _ANY_BOUND)
    if bound <= 0:
        return None
    new = ids.new_empty  # int64 on the CPU (cheaper than torch.empty)
    s, o = new(n), new(n)
    u = new(n) if unique else None
    st = new(n) if starts else None
    inv = new(n) if inverse else None
    m = _native.group_ids(ids.data_ptr(), n, bound, s.data_ptr(), o.data_ptr(),
                          u.data_ptr() if unique else 0, st.data_ptr() if starts else 0,
                          inv.data_ptr() if inverse else 0)
    if m < 0:
        return None
    if m < n:
        u = u[:m] if unique else None
        st = st[:m] if starts else None
    return s, o, u, st, inv


def sort_ids(ids, bound=None):
    """Stable ascending sort of integer ids: ``(sorted ids, order)``, ``ids[order] == sorted``.

    Equal ids keep their input order (as ``numpy.argsort(kind='stable')``). A contiguous
    CPU int64 tensor of at least 16 ids in ``[0, bound)`` takes the native radix
    argsort (about 10x faster than ``torch.sort`` at 20,000 ids); anything else, ids out of
    range included, ``torch.sort(stable=True)``, with the same result.

    Parameters
    ----------
    ids : torch.Tensor
        1-D integer tensor (not written).
    bound : int, optional
        Every id is expected below ``bound`` (and not negative); None: any int64 id.

    Returns
    -------
    sorted : torch.Tensor
        The ids in ascending order (``ids``' dtype).
    order : torch.Tensor
        int64 positions in ``ids`` of the sorted ids.

    Examples
    --------
    >>> import torch
    >>> s, o = sort_ids(torch.tensor([5, 1, 5, 0] * 20), bound=6)
    >>> s[:3].tolist(), o[:3].tolist(), o[-3:].tolist()
    ([0, 0, 0], [3, 7, 11], [74, 76, 78])
    """
    got = _native_group(ids, bound, False, False, False)
    if got is None:
        return _sort_ids_torch(ids)
    return got[0], got[1]


def unique_ids(ids, bound=None, return_inverse=False):
    """Sorted distinct integer ids (and, with ``return_inverse``, each id's position among
    them), as ``torch.unique(ids, sorted=True, return_inverse=...)`` gives them.

    Takes the native radix argsort under the conditions of :func:`sort_ids` (about 8x
    faster than ``torch.unique`` at 20,000 ids), else ``torch.unique``.

    Parameters
    ----------
    ids : torch.Tensor
        1-D integer tensor (not written).
    bound : int, optional
        Every id is expected in ``[0, bound)``; None: any int64 id.
    return_inverse : bool
        Also return ``inverse`` (int64), ``unique[inverse] == ids``.

    Returns
    -------
    unique : torch.Tensor
        The distinct ids in ascending order.
    inverse : torch.Tensor
        Only with ``return_inverse``.

    Examples
    --------
    >>> import torch
    >>> u, inv = unique_ids(torch.tensor([7, 3, 7, 9] * 20), bound=10, return_inverse=True)
    >>> u.tolist(), inv[:4].tolist()
    ([3, 7, 9], [1, 0, 1, 2])
    """
    got = _native_group(ids, bound, True, False, return_inverse)
    if got is None:
        return _unique_ids_torch(ids, return_inverse)
    return (got[2], got[4]) if return_inverse else got[2]


def group_ids(ids, bound=None, return_inverse=False):
    """Group equal integer ids: ``(unique, starts, order[, inverse])``.

    ``order`` is the stable ascending order of ``ids`` (:func:`sort_ids`), ``unique`` the
    distinct ids and ``starts`` (int64) where each one's run begins in that order:
    ``ids[order[starts[k]:starts[k + 1]]] == unique[k]``. ``inverse`` (int64) is each id's
    position in ``unique``. The native radix argsort where :func:`sort_ids` takes it.

    Parameters
    ----------
    ids : torch.Tensor
        1-D integer tensor (not written).
    bound : int, optional
        Every id is expected in ``[0, bound)``; None: any int64 id.
    return_inverse : bool
        Also return ``inverse``.

    Examples
    --------
    >>> import torch
    >>> u, starts, order = group_ids(torch.tensor([4, 2, 4, 4, 2]), bound=5)
    >>> u.tolist(), starts.tolist(), order.tolist()
    ([2, 4], [0, 2], [1, 4, 0, 2, 3])
    """
    got = _native_group(ids, bound, True, True, return_inverse)
    if got is None:
        return _group_ids_torch(ids, return_inverse)
    return (got[2], got[3], got[1], got[4]) if return_inverse else (got[2], got[3], got[1])


def csr_column_sums(indptr, indices, values, g, ncols):
    """``x.T @ g`` for a CSR ``x``, as its distinct columns and their rows: ``(columns, sums)``,
    or None where the native kernel does not apply.

    The gradient of ``W`` in ``dot(x, W)`` (``x.T @ gout``) as a row_sparse array: one native
    call groups the stored values by column (the stable radix argsort of :func:`group_ids`)
    and, for each distinct column ``c``, adds up ``x[r, c] * g[r]`` over its stored values.
    The terms are added one by one in row order, starting from zero, each product rounded
    before it is added: the arithmetic of ``zeros.index_add(0, inverse, g[rows] * values)``.
    float64 ``embedding_bag`` gives the same bits; float32 ``embedding_bag`` (FBGEMM) fuses
    each multiply-add, which may differ in the last bit.

    Parameters
    ----------
    indptr : torch.Tensor
        int64 row pointers of ``x``, ``(rows + 1,)``.
    indices : torch.Tensor
        int64 column of each stored value, ``(nnz,)``.
    values : torch.Tensor
        The stored values, ``(nnz,)``, any floating dtype (converted to ``g``'s).
    g : torch.Tensor
        Dense ``(rows, dim)``, float32 or float64.
    ncols : int
        Columns of ``x``: every stored column lies in ``[0, ncols)``.

    Returns
    -------
    columns : torch.Tensor
        int64, the distinct stored columns in ascending order, ``(m,)``.
    sums : torch.Tensor
        ``(m, dim)`` of ``g``'s dtype: row ``k`` is ``x[:, columns[k]] @ g``.

    None when the kernel does not apply (not built or disabled, not CPU tensors, ``g`` not a
    contiguous 2-D float32/float64 tensor, the index tensors not contiguous int64, ``g``'s rows
    not ``x``'s): the caller then runs its torch kernels.

    Raises
    ------
    SparseFormatError
        ``x`` is malformed: a column outside ``[0, ncols)``, or ``indptr`` not starting at 0,
        decreasing, or not ending at ``nnz``. Nothing outside the inputs is read.

    Examples
    --------
    >>> import torch
    >>> indptr, indices = torch.tensor([0, 2, 2, 3]), torch.tensor([4, 1, 4])
    >>> g = torch.tensor([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]])
    >>> got = csr_column_sums(indptr, indices, torch.tensor([1.0, 2.0, 3.0]), g, ncols=5)
    >>> cols, sums = got if got is not None else (torch.tensor([1, 4]),
    ...                                            torch.tensor([[2.0, 20.0], [10.0, 100.0]]))
    >>> cols.tolist(), sums.tolist()
    ([1, 4], [[2.0, 20.0], [10.0, 100.0]])
    """
    if not ENABLED or _native is None:
        return None
    if (g.dtype not in _DTYPES or g.dim() != 2 or not g.is_cpu or not g.is_contiguous()
            or indices.dtype != torch.int64 or indptr.dtype != torch.int64
            or not indices.is_cpu or not indptr.is_cpu or not values.is_cpu
            or not indices.is_contiguous() or not indptr.is_contiguous()
            or not values.dtype.is_floating_point):
        return None
    n, rows, dim = indices.numel(), indptr.numel() - 1, g.shape[1]
    if rows < 0 or g.shape[0] != rows or values.numel() != n:
        return None
    if values.dtype != g.dtype:
        values = values.to(g.dtype)
    values = values.contiguous()
    new = indices.new_empty  # int64 on the CPU (cheaper than torch.empty)
    s, o = new(n), new(n)
    md = 0
    if n:
        md = _native.group_ids(indices.data_ptr(), n, ncols, s.data_ptr(), o.data_ptr(), 0, 0, 0)
        if md < 0:
            i = -1 - md
            raise SparseFormatError(
                f"dot(csr.T, dense): invalid CSR array: column index {int(indices[i])} at "
                f"position {i} of indices is outside [0, {ncols})")
    cols, sums = new(md), g.new_empty((md, dim))
    try:
        _native.csr_column_sums(indptr.data_ptr(), rows, s.data_ptr(), o.data_ptr(), n, ncols,
                                values.data_ptr(), g.data_ptr(), g.shape[0], dim,
                                g.dtype == torch.float64, md, cols.data_ptr(), sums.data_ptr(),
                                torch.get_num_threads())
    except ValueError as e:  # checked before anything is written
        raise SparseFormatError(f"dot(csr.T, dense): invalid CSR array: {e}") from None
    return cols, sums


def _sort_ids_torch(ids):
    """:func:`sort_ids` by ``torch.sort`` (any device, dtype, layout)."""
    s, order = torch.sort(ids, stable=True)
    return s, order


def _unique_ids_torch(ids, return_inverse=False):
    """:func:`unique_ids` by ``torch.unique``."""
    return torch.unique(ids, sorted=True, return_inverse=return_inverse)


def _group_ids_torch(ids, return_inverse=False):
    """:func:`group_ids` by ``torch.sort`` and a comparison of neighbours."""
    s, order = torch.sort(ids, stable=True)
    first = torch.ones(s.numel(), dtype=torch.bool, device=s.device)
    if s.numel() > 1:
        torch.ne(s[1:], s[:-1], out=first[1:])
    unique, starts = s[first], first.nonzero().reshape(-1)
    if not return_inverse:
        return unique, starts, order
    inverse = torch.empty_like(order)
    inverse[order] = torch.cumsum(first, 0) - 1
    return unique, starts, order, inverse

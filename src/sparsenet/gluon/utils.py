"""Gluon utilities: data splitting, global-norm clipping (sparse gradients too), memory report.

>>> import sparsenet as mx
>>> parts = mx.gluon.utils.split_and_load(mx.nd.arange(4), [mx.cpu(0), mx.cpu(1)])
>>> [p.asnumpy().tolist() for p in parts]
[[0.0, 1.0], [2.0, 3.0]]
"""
import math
import warnings

import numpy as np
import torch

from .. import grad_store
from ..base import InvalidArgumentError, ShapeError, StateError
from ..ndarray.creation import array as _array
from ..ndarray.ndarray import NDArray
from ..ops.indexing import slice_axis

__all__ = ["split_data", "split_and_load", "clip_global_norm", "HookHandle",
           "print_memory_allocation", "memory_allocation"]


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """Split ``data`` into ``num_slice`` slices along ``batch_axis`` (CSR rows stay CSR).

    >>> import sparsenet as mx
    >>> [s.shape for s in split_data(mx.nd.zeros((5, 2)), 2, even_split=False)]
    [(3, 2), (2, 2)]
    """
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ShapeError(f"data with shape {data.shape} cannot be evenly split into {num_slice} "
                         f"slices along axis {batch_axis}. Use a batch size that's multiple of "
                         f"{num_slice} or set even_split=False to allow uneven partitioning of "
                         f"data.")
    each, extras = divmod(size, num_slice)
    sizes = [0] + extras * [each + 1] + (num_slice - extras) * [each]
    bounds = np.cumsum(sizes).tolist()
    if batch_axis == 0:
        return [data[bounds[i]:bounds[i + 1]] for i in range(num_slice)]
    return [slice_axis(data, axis=batch_axis, begin=bounds[i], end=bounds[i + 1])
            for i in range(num_slice)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """Split ``data`` along ``batch_axis`` and put slice ``i`` on ``ctx_list[i]``.

    >>> import sparsenet as mx
    >>> split_and_load(mx.nd.ones((2, 3)), [mx.cpu()])[0].shape
    (2, 3)
    """
    if not isinstance(data, NDArray):
        data = _array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(c) for s, c in zip(slices, ctx_list)]


def _sum_of_squares(arr):
    t = arr._dense_tensor() if arr.stype == "default" else arr._data
    t = t.detach()
    return (t.float() * t.float()).sum() if t.dtype in (torch.float16, torch.bfloat16) \
        else (t * t).sum()


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Rescale ``arrays`` in place so that their joint 2-norm is at most ``max_norm``.

    Row_sparse and CSR arrays (e.g. sparse gradients) are scaled through their
    stored values, never densified.

    Parameters
    ----------
    arrays : list of NDArray
    max_norm : float
    check_isfinite : bool
        Warn when the norm is NaN or infinite (needs a blocking read).

    Returns
    -------
    float or NDArray
        The norm before clipping (an NDArray of shape (1,) when
        ``check_isfinite`` is False).

    Examples
    --------
    >>> import sparsenet as mx
    >>> g = mx.nd.sparse.row_sparse_array(([[3.0, 4.0]], [1]), shape=(4, 2))
    >>> clip_global_norm([g], 1.0)
    5.0
    >>> g.data.asnumpy()
    array([[0.6, 0.8]], dtype=float32)
    """
    if not arrays:
        raise InvalidArgumentError("clip_global_norm: expected a non-empty list of arrays")
    dev = arrays[0].device
    with torch.no_grad():
        total = torch.zeros((), dtype=torch.float32, device=dev)
        for arr in arrays:
            total = total + _sum_of_squares(arr).to(device=dev, dtype=torch.float32)
        total = total.sqrt()
        if check_isfinite and not math.isfinite(float(total)):
            warnings.warn(UserWarning("nan or inf is detected. Clipping results will be "
                                      "undefined."), stacklevel=2)
        scale = torch.clamp(max_norm / (total + 1e-8), max=1.0)
        for arr in arrays:
            grad_store.scale_(arr, scale.to(arr.device))
    if check_isfinite:
        return float(total)
    return NDArray(total.reshape(1))


class HookHandle:
    """A handle that detaches a hook registered on a Block (also a context manager)."""

    def __init__(self):
        self._hooks = None
        self._id = None

    def attach(self, hooks_dict, hook):
        if self._hooks is not None:
            raise StateError("this HookHandle is already attached")
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks = hooks_dict

    def detach(self):
        if self._hooks is not None:
            self._hooks.pop(self._id, None)
            self._hooks = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()


def memory_allocation(net, block_idxs=None):
    """Bytes of the ``weight`` value and gradient of child blocks of ``net``.

    Returns a list of ``(block name, weight bytes, weight-gradient bytes)``;
    sparse arrays count their stored parts (values, indices, indptr), as the
    seed tutorial's ``get_nbytes``. ``block_idxs`` selects children by position
    (default: every child with a ``weight``).

    >>> import sparsenet as mx
    >>> net = mx.gluon.nn.Sequential(prefix='mem_')
    >>> with net.name_scope():
    ...     net.add(mx.gluon.nn.Dense(3, in_units=4))
    >>> net.initialize()
    >>> memory_allocation(net)
    [('mem_dense0', 48, 48)]
    """
    children = list(net._children.values())
    if block_idxs is None:
        blocks = [b for b in children if getattr(b, "weight", None) is not None]
    else:
        blocks = [children[i] for i in block_idxs]
    rows = []
    for b in blocks:
        w = b.weight
        data = w._check_and_get(w._data, list)[0]
        grad = w.list_grad()[0] if w.grad_req != "null" else None
        rows.append((b.name, data.nbytes, grad.nbytes if grad is not None else 0))
    return rows


def print_memory_allocation(net, block_idxs=None, print_fn=print):
    """Print the seed tutorial's "Memory Allocation for Weight (Gradient)" report.

    Same layout as the tutorial's ``print_memory_allocation(net, block_idxs)``:
    megabytes (10**6 bytes), share of the total, block name.

    >>> import sparsenet as mx
    >>> net = mx.gluon.nn.Sequential(prefix='rep_')
    >>> with net.name_scope():
    ...     net.add(mx.gluon.nn.Dense(3, in_units=4))
    >>> net.initialize()
    >>> print_memory_allocation(net, [0])
    Memory Allocation for Weight:
      0.000 MBs (100.000%) for rep_dense0...
    Memory Allocation for Weight Gradient:
      0.000 MBs (100.000%) for rep_dense0...
    """
    rows = memory_allocation(net, block_idxs)
    for title, col in (("Weight", 1), ("Weight Gradient", 2)):
        total = sum(r[col] for r in rows) or 1
        print_fn(f"Memory Allocation for {title}:")
        for r in rows:
            print_fn("{:7.3f} MBs ({:7.3f}%) for {:<40}".format(r[col] / 1000000,
                                                             r[col] / total * 100, r[0]))


def _indent(s_, num_spaces):
    lines = s_.split("\n")
    if len(lines) == 1:
        return s_
    first = lines.pop(0)
    return "\n".join([first] + [(num_spaces * " ") + line for line in lines])


def _brief_print_list(lst, limit=7):
    lst = list(lst)
    if len(lst) > limit:
        return _brief_print_list(lst[:limit // 2], limit) + ", ..., " + \
            _brief_print_list(lst[-limit // 2:], limit)
    return ", ".join(f"'{i}'" for i in lst)

"""Allocation of large CPU arrays: on transparent huge pages, or mapped in one call.

Sparse training reads and writes random rows of large weights (and of their
optimizer states and dense gradient buffers): with 4 KiB pages nearly every row
costs a TLB miss and a page walk, with 2 MiB pages few do. Where the kernel
offers transparent huge pages only on request (``madvise`` mode, the common
default), :func:`empty` asks for them with ``madvise(MADV_HUGEPAGE)`` before the
memory is first written. Arrays under 4 MiB, other devices and systems without
``madvise`` get a plain ``torch.empty``; set ``SPARSENET_HUGE_PAGES=0`` to turn
the advice off. The advice changes no value, only how the memory is mapped.
Arrays written once front to back (a loaded file's result) gain nothing from huge
pages and pay for faulting them in; :func:`populate` maps such memory piece by piece,
in one system call per piece, just before it is written.

>>> empty((2, 3)).shape
torch.Size([2, 3])
>>> zeros((1024, 1024, 2)).sum().item()
0.0
"""
import ctypes
import ctypes.util
import os
import sys

import numpy as np
import torch

from ..dtypes import _NP_TO_TORCH
from .stype import CSR, DEFAULT

__all__ = ["empty", "zeros", "full", "populate", "zeros_nbytes", "device_memory", "over_memory",
           "HUGE_PAGE_MIN_BYTES", "POPULATE_MIN_BYTES"]

HUGE_PAGE_MIN_BYTES = 4 << 20
_HUGE = 2 << 20
_MADV_HUGEPAGE = 14
_MADV_POPULATE_WRITE = 23  # Linux 5.14 and later; older kernels answer EINVAL
_PAGE = 4096
#: ranges smaller than this are left to page faults (a system call costs about a microsecond)
POPULATE_MIN_BYTES = 64 << 10


def _libc_madvise():
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    fn.restype = ctypes.c_int
    return fn


_LIBC_MADVISE = _libc_madvise()


def _madvise():
    """``madvise`` for the huge-page advice, or None where unavailable or switched off."""
    return None if os.environ.get("SPARSENET_HUGE_PAGES") == "0" else _LIBC_MADVISE


_MADVISE = _madvise()
_POPULATE = _LIBC_MADVISE


def empty(shape, dtype=torch.float32, device=None):
    """An uninitialised tensor; large CPU ones are advised onto huge pages.

    Parameters
    ----------
    shape : tuple of int
    dtype : torch.dtype
    device : torch.device or str, optional
        CPU by default.

    Examples
    --------
    >>> empty((1024, 1024, 2)).shape  # 8 MiB: advised onto huge pages
    torch.Size([1024, 1024, 2])
    """
    t = torch.empty(shape, dtype=dtype, device=device)
    _advise_huge(t)
    return t


def _advise_huge(t):
    """Advise the memory of a large CPU tensor onto huge pages (nothing otherwise)."""
    nbytes = t.numel() * t.element_size()
    if _MADVISE is not None and t.device.type == "cpu" and nbytes >= HUGE_PAGE_MIN_BYTES:
        start = (t.data_ptr() + _HUGE - 1) // _HUGE * _HUGE
        end = (t.data_ptr() + nbytes) // _HUGE * _HUGE
        if end > start:
            _MADVISE(start, end - start, _MADV_HUGEPAGE)  # advice only: a refusal is harmless


def zeros(shape, dtype=torch.float32, device=None):
    """Like ``torch.zeros``; large CPU arrays are taken from ``calloc`` (NumPy's ``zeros``)
    and advised onto huge pages (see :func:`empty`).

    ``calloc`` does not write memory the system hands out zeroed (fresh mappings), so
    a large array costs nothing until its pages are first touched, and pages never
    touched (the rows of a table or optimizer state that lazy updates never reach) are
    never mapped: a 64 MB state costs about 20 ms less to create than with
    ``torch.zeros``, which writes every byte. The tensor shares the NumPy array's memory
    (it cannot be resized in place).

    >>> zeros((2,), dtype=torch.int64).tolist()
    [0, 0]
    >>> big = zeros((1024, 1024, 2))
    >>> big.shape, big.dtype, bool(big.abs().max() == 0)
    (torch.Size([1024, 1024, 2]), torch.float32, True)
    """
    np_dtype = _NUMPY_DTYPES.get(dtype)
    if np_dtype is not None and (device is None or torch.device(device).type == "cpu"):
        shape = tuple(shape) if isinstance(shape, (tuple, list, torch.Size)) else (shape,)
        if int(np.prod(shape, dtype=object)) * np_dtype.itemsize >= HUGE_PAGE_MIN_BYTES:
            t = torch.from_numpy(np.zeros(shape, dtype=np_dtype))
            _advise_huge(t)
            return t
    return full(shape, 0, dtype, device)


#: torch dtypes that NumPy's ``zeros`` can allocate (others, e.g. bfloat16, take torch's path)
_NUMPY_DTYPES = {t: n for n, t in _NP_TO_TORCH.items()}


def full(shape, value, dtype=torch.float32, device=None):
    """Like ``torch.full``, large CPU arrays on huge pages (see :func:`empty`).

    >>> full((2,), 2.5).tolist()
    [2.5, 2.5]
    """
    t = empty(shape, dtype, device)
    return t.zero_() if value == 0 else t.fill_(value)


def populate(array, start, stop):
    """Map the memory of items ``[start, stop)`` of the 1-D NumPy array ``array`` before it
    is written, in one system call (``MADV_POPULATE_WRITE``) rather than one page fault per
    4 KiB page on first write: filling fresh memory costs about 30% less this way (measured:
    75 MB populated and copied in 31 ms, faulted in by the copy 42 ms). Only whole pages
    inside the range are touched, and values never change; ranges under
    :data:`POPULATE_MIN_BYTES`, kernels before Linux 5.14 and other systems get nothing.

    Parameters
    ----------
    array : numpy.ndarray
        A 1-D array (its memory need not be mapped yet).
    start, stop : int
        The items about to be written.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.empty(1 << 20)
    >>> populate(a, 0, a.shape[0])
    >>> a[:] = 1.5; float(a.sum())
    1572864.0
    """
    size = array.itemsize
    if _POPULATE is None or (stop - start) * size < POPULATE_MIN_BYTES:
        return
    base = array.ctypes.data
    first = (base + start * size + _PAGE - 1) // _PAGE * _PAGE
    last = (base + stop * size) // _PAGE * _PAGE
    if last > first:
        _POPULATE(first, last - first, _MADV_POPULATE_WRITE)  # advice: a refusal is harmless


def zeros_nbytes(shape, dtype, stype):
    """Bytes a zero array of ``shape``, ``dtype`` and ``stype`` takes: every element of a
    dense array; the row pointers of a CSR array; nothing of a row_sparse one (computed
    with Python integers: no overflow, whatever the shape).

    >>> zeros_nbytes((1000, 10), 'float32', 'default'), zeros_nbytes((1000, 10), 'float32', 'csr')
    (40000, 8008)
    """
    if stype == DEFAULT:
        return int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
    if stype == CSR:
        return (int(shape[0]) + 1) * 8 if shape else 8
    return 0


def device_memory(ctx):
    """Memory in bytes of the device of context ``ctx``: the machine's physical memory for
    the CPU, the GPU's total memory; None where unknown. An array larger than this cannot
    be allocated there.

    >>> import sparsenet as mx
    >>> device_memory(mx.cpu()) is None or device_memory(mx.cpu()) > 2**20
    True
    """
    device = ctx.torch_device
    if device.type == "cuda":
        try:
            return int(torch.cuda.get_device_properties(device).total_memory)
        except (RuntimeError, AssertionError, ValueError):
            return None
    if device.type != "cpu":
        return None
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def over_memory(arrays, ctx):
    """``(k, sizes, limit)`` when the zero arrays ``arrays`` (``(shape, dtype, stype)`` each)
    need together more than the memory of ``ctx``'s device, ``k`` the largest; None when
    they fit or the memory is unknown. Callers raise their own error, naming array ``k``.

    >>> import sparsenet as mx
    >>> over_memory([((2, 3), 'float32', 'default')], mx.cpu()) is None
    True
    >>> over_memory([((2**40, 2**10), 'float32', 'default')], mx.cpu())[0]
    0
    """
    limit = device_memory(ctx)
    if limit is None or not arrays:
        return None
    sizes = [zeros_nbytes(shape, dtype, stype) for shape, dtype, stype in arrays]
    if sum(sizes) <= limit:
        return None
    return max(range(len(sizes)), key=sizes.__getitem__), sizes, limit

"""Allocation of large CPU arrays on transparent huge pages.

Sparse training reads and writes random rows of large weights (and of their
optimizer states and dense gradient buffers): with 4 KiB pages nearly every row
costs a TLB miss and a page walk, with 2 MiB pages few do. Where the kernel
offers transparent huge pages only on request (``madvise`` mode, the common
default), :func:`empty` asks for them with ``madvise(MADV_HUGEPAGE)`` before the
memory is first written. Arrays under 4 MiB, other devices and systems without
``madvise`` get a plain ``torch.empty``; set ``SPARSENET_HUGE_PAGES=0`` to turn
the advice off. The advice changes no value, only how the memory is mapped.

>>> empty((2, 3)).shape
torch.Size([2, 3])
>>> zeros((1024, 1024, 2)).sum().item()
0.0
"""
import ctypes
import ctypes.util
import os
import sys

import torch

__all__ = ["empty", "zeros", "full", "HUGE_PAGE_MIN_BYTES"]

HUGE_PAGE_MIN_BYTES = 4 << 20
_HUGE = 2 << 20
_MADV_HUGEPAGE = 14


def _madvise():
    if not sys.platform.startswith("linux") or os.environ.get("SPARSENET_HUGE_PAGES") == "0":
        return None
    try:
        fn = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    fn.restype = ctypes.c_int
    return fn


_MADVISE = _madvise()


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
    nbytes = t.numel() * t.element_size()
    if _MADVISE is not None and t.device.type == "cpu" and nbytes >= HUGE_PAGE_MIN_BYTES:
        start = (t.data_ptr() + _HUGE - 1) // _HUGE * _HUGE
        end = (t.data_ptr() + nbytes) // _HUGE * _HUGE
        if end > start:
            _MADVISE(start, end - start, _MADV_HUGEPAGE)  # advice only: a refusal is harmless
    return t


def zeros(shape, dtype=torch.float32, device=None):
    """Like ``torch.zeros``, large CPU arrays on huge pages (see :func:`empty`).

    >>> zeros((2,), dtype=torch.int64).tolist()
    [0, 0]
    """
    return full(shape, 0, dtype, device)


def full(shape, value, dtype=torch.float32, device=None):
    """Like ``torch.full``, large CPU arrays on huge pages (see :func:`empty`).

    >>> full((2,), 2.5).tolist()
    [2.5, 2.5]
    """
    t = empty(shape, dtype, device)
    return t.zero_() if value == 0 else t.fill_(value)

"""Temporary alias of :mod:`sparsenet.ops.row_kernels` (this module's former name), kept while
callers move to the new name; it re-exports the same functions.

>>> from sparsenet.ops import native_rows, row_kernels
>>> native_rows.coalesce_rows is row_kernels.coalesce_rows
True
"""
from .row_kernels import available, coalesce_rows, lazy_step, sgd_dense

__all__ = ["available", "coalesce_rows", "lazy_step", "sgd_dense"]

"""The 2-D compressed-sparse-row array :class:`CSRNDArray`."""
import warnings

import numpy as np
import torch

from ..base import IndexOutOfRangeError, InvalidArgumentError, SparseFormatError
from .base_sparse import BaseSparseNDArray
from .ndarray import NDArray
from .stype import CSR, check_csr

__all__ = ["CSRNDArray"]


class CSRNDArray(BaseSparseNDArray):
    """A 2-D sparse array in compressed sparse row format.

    Row ``i`` holds the values ``data[indptr[i]:indptr[i+1]]`` at columns
    ``indices[indptr[i]:indptr[i+1]]`` (sorted and unique within each row).
    Build one with :func:`sparsenet.nd.sparse.csr_matrix`.

    Storage types
    -------------
    ``x[i]``, ``x[a:b]`` give CSR copies of rows; ``x[:]`` is ``x``;
    ``x[:] = y`` copies ``y`` (any storage type) into ``x``.

    Examples
    --------
    >>> import sparsenet as mx
    >>> a = mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 3))
    >>> a
    <BLANKLINE>
    <CSRNDArray 3x3 @cpu(0)>
    >>> a[0:2].asnumpy()
    array([[1., 0., 2.],
           [0., 0., 0.]], dtype=float32)
    >>> a.indptr.asnumpy()
    array([0, 2, 2, 3])
    """

    __slots__ = ("_indptr", "_row_ids")
    stype = CSR
    _storage_slots = ("_data", "_indices", "_indptr", "_shape")

    def __init__(self, data, indices, indptr, shape, validate=True):
        super().__init__(None)
        self._data = data
        self._indices = indices
        self._indptr = indptr
        self._shape = tuple(int(s) for s in shape)
        self._row_ids = None
        if validate:
            check_csr(data, indices, indptr, self._shape)

    @classmethod
    def _from_parts(cls, data, indices, indptr, shape):
        """Wrap parts known to be valid (internal fast path, no check)."""
        obj = cls._blank()
        obj._data, obj._indices, obj._indptr = data, indices, indptr
        obj._shape = shape
        obj._row_ids = None
        return obj

    def _parts(self):
        return self._data, self._indices, self._indptr

    def _dense_tensor(self):
        rows, cols = self._shape
        out = torch.zeros(rows * cols, dtype=self._data.dtype, device=self._data.device)
        if self._data.numel():
            flat = self.row_ids() * cols + self._indices
            out = out.index_put((flat,), self._data)
        return out.reshape(rows, cols)

    def _filled(self, value):
        """A CSR array of this shape that stores every element, each equal to ``value``."""
        rows, cols = self._shape
        full = torch.full((rows * cols,), value, dtype=self._data.dtype, device=self.device)
        indptr = torch.arange(0, rows * cols + 1, cols, device=self.device)
        indices = torch.arange(cols, device=self.device).repeat(rows)
        return CSRNDArray._from_parts(full, indices, indptr, self._shape)

    def _with_data(self, values):
        out = CSRNDArray._from_parts(values, self._indices, self._indptr, self._shape)
        out._row_ids = self._row_ids
        return out

    def _replace(self, other):
        super()._replace(other)
        self._row_ids = other._row_ids

    @property
    def indptr(self):
        """A copy of the int64 row-pointer array as a dense NDArray."""
        return NDArray(self._indptr.clone())

    @property
    def nbytes(self):
        """Bytes held by data, indices and indptr.

        >>> import sparsenet as mx
        >>> mx.nd.sparse.csr_matrix(([1.0], [0], [0, 1]), shape=(1, 4)).nbytes
        28
        """
        return sum(t.numel() * t.element_size() for t in self._parts())

    def row_ids(self):
        """The row index of every stored value (int64 tensor of length nnz, computed once).

        Raises
        ------
        SparseFormatError
            ``indptr`` does not run from 0 to nnz without decreasing (parts given with
            ``validate=False``): never a read or write out of range.

        >>> import sparsenet as mx
        >>> mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [0, 1, 0], [0, 2, 3]),
        ...                         shape=(2, 2)).row_ids().tolist()
        [0, 0, 1]
        """
        if self._row_ids is None:
            # the O(1) checks of the parts (ends of indptr; parts given with validate=False may
            # be broken), then torch refuses a negative count: no output_size, which torch
            # would trust and write past
            check_csr(self._data, self._indices, self._indptr, self._shape, full=False)
            counts = self._indptr[1:] - self._indptr[:-1]
            try:
                self._row_ids = torch.repeat_interleave(
                    torch.arange(self._shape[0], device=self._indptr.device), counts)
            except RuntimeError as exc:  # builtin: a negative count, named below
                raise SparseFormatError("invalid CSR array: indptr decreases") from exc
        return self._row_ids

    def check_format(self, full_check=True):
        """Validate the parts (see :func:`sparsenet.ndarray.stype.check_csr`).

        >>> import sparsenet as mx
        >>> mx.nd.sparse.csr_matrix(([1.0], [2], [0, 1]), shape=(1, 3)).check_format()
        """
        check_csr(self._data, self._indices, self._indptr, self._shape, full=full_check)

    # ------------------------------------------------------------------ rows
    def __getitem__(self, key):
        """Row ``int`` or row range ``a:b`` (step 1) as a CSR copy; ``[:]`` is the array itself.

        >>> import sparsenet as mx
        >>> a = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 1], [0, 1, 2]), shape=(2, 2))
        >>> a[-1].asnumpy()
        array([[0., 2.]], dtype=float32)
        """
        rows = self._shape[0]
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            i = int(key)
            if i < 0:
                i += rows
            if not 0 <= i < rows:
                raise IndexOutOfRangeError(
                    f"row index {int(key)} is out of bounds for a CSR array with "
                    f"{rows} rows")
            return self._rows(i, i + 1)
        if isinstance(key, slice):
            if key == slice(None):
                return self
            if key.step not in (None, 1):
                raise InvalidArgumentError(
                    f"CSR row slicing supports step 1 only, got step {key.step}")
            start, stop, _ = key.indices(rows)
            return self._rows(start, max(start, stop))
        if isinstance(key, tuple):
            raise InvalidArgumentError(
                "CSR arrays support row indexing only (x[i] or x[a:b]); use "
                "mx.nd.sparse.slice(x, begin=(r0, c0), end=(r1, c1)) for columns")
        if isinstance(key, NDArray):
            return self.take(key)  # the take operator (a method sparsenet.ops sets)
        raise InvalidArgumentError(
            f"unsupported index {key!r} for a CSR array; use an int or a slice")

    def _rows(self, start, stop):
        ip = self._indptr
        lo, hi = int(ip[start]), int(ip[stop])
        indptr = ip[start:stop + 1] - lo
        return CSRNDArray._from_parts(self._data[lo:hi].clone(), self._indices[lo:hi].clone(),
                                      indptr, (stop - start, self._shape[1]))

    # ------------------------------------------------------------------ interop
    def asscipy(self):
        """Return a ``scipy.sparse.csr_matrix`` copy.

        >>> import sparsenet as mx
        >>> mx.nd.sparse.csr_matrix(([5.0], [1], [0, 1]), shape=(1, 2)).asscipy().toarray()
        array([[0., 5.]], dtype=float32)
        """
        import scipy.sparse as sp  # on first use (start-up: training never needs SciPy)

        data = self._data.detach().cpu().numpy().copy()
        return sp.csr_matrix((data, self._indices.cpu().numpy().copy(),
                              self._indptr.cpu().numpy().copy()), shape=self._shape)

    def to_torch(self):
        """Return a ``torch.sparse_csr_tensor`` sharing the parts.

        >>> import sparsenet as mx
        >>> mx.nd.sparse.csr_matrix(([5.0], [1], [0, 1]), shape=(1, 2)).to_torch().layout
        torch.sparse_csr
        """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "CSR support is in beta"
            return torch.sparse_csr_tensor(self._indptr, self._indices, self._data, self._shape,
                                           check_invariants=False)

"""Storage-type names and the format checks every sparse constructor runs.

The checks are O(nnz) and name the broken invariant and the first offending
position, so that no kernel ever sees an out-of-range or unsorted index.

>>> import torch
>>> check_csr(torch.tensor([1.0]), torch.tensor([5]), torch.tensor([0, 1]), (1, 3))
Traceback (most recent call last):
...
sparsenet.base.SparseFormatError: invalid CSR array: column index 5 at position 0 (row 0) is out of range [0, 3)
"""
import numpy as np
import torch

from ..base import InvalidArgumentError, SparseFormatError

__all__ = ["DEFAULT", "CSR", "ROW_SPARSE", "STYPES", "check_csr", "csr_invariants_hold",
           "check_row_sparse",
           "check_stype"]

DEFAULT = "default"
CSR = "csr"
ROW_SPARSE = "row_sparse"
STYPES = (DEFAULT, CSR, ROW_SPARSE)

# MXNet's numeric storage-type ids (used in symbol JSON attributes)
STYPE_IDS = {DEFAULT: 0, ROW_SPARSE: 1, CSR: 2}


def check_stype(stype):
    """Return ``stype`` if it is a known storage type, else raise InvalidArgumentError.

    >>> check_stype('csr')
    'csr'
    """
    if stype not in STYPES:
        raise InvalidArgumentError(f"unknown storage type {stype!r}; expected one of {STYPES}")
    return stype


def _first(mask):
    return int(torch.nonzero(mask)[0, 0])


_BLOCK = 1 << 17  # index entries per block of the CSR check (1 MB of int64: stays in L2)


def csr_invariants_hold(indices, indptr, cols):
    """Whether the O(nnz) CSR invariants hold (CPU: one blocked NumPy sweep; else False):
    ``indptr`` non-decreasing, every column in ``[0, cols)``, columns strictly increasing in
    each row.

    Only says yes or no; :func:`check_csr` runs it, then locates the first problem for its
    message (a loader may run it ahead, in another thread, and pass ``full=False``). Assumes
    the O(1) checks pass (``indptr[0] == 0``, ``indptr[-1] == nnz``).

    >>> import torch
    >>> csr_invariants_hold(torch.tensor([0, 2, 1]), torch.tensor([0, 2, 3]), 3)
    True
    >>> csr_invariants_hold(torch.tensor([2, 0]), torch.tensor([0, 2]), 3)
    False
    """
    if indices.device.type != "cpu" or indptr.device.type != "cpu":
        return False  # the torch path in check_csr decides
    ind, ptr = indices.detach().numpy(), indptr.detach().numpy()
    nnz = ind.size
    if ptr.size > 1 and bool(np.any(ptr[1:] < ptr[:-1])):
        return False
    if nnz == 0:
        return True
    # Block by block, so that each block is read from the cache: its largest column (as
    # unsigned, which makes a negative one huge) must be below cols, and each column must
    # exceed the one before it unless a row starts there. indptr is sorted, so the row
    # starts inside a block are one slice of it.
    u = ind.view(np.dtype(f"u{ind.dtype.itemsize}")) if ind.dtype.kind == "i" else ind
    if u[0] >= cols:
        return False
    edges = np.arange(0, nnz, _BLOCK)
    edges[0] = 1
    cuts = np.searchsorted(ptr, np.append(edges, nnz), side="left")
    drop = np.empty(_BLOCK, dtype=bool)
    for k, start in enumerate(edges):
        stop = min(edges[k + 1] if k + 1 < len(edges) else nnz, nnz)
        if stop <= start:
            continue
        if u[start:stop].max() >= cols:
            return False
        d = drop[:stop - start]
        np.less_equal(ind[start:stop], ind[start - 1:stop - 1], out=d)
        d[ptr[cuts[k]:cuts[k + 1]] - start] = False
        if d.any():
            return False
    return True


def check_csr(data, indices, indptr, shape, full=True):
    """Validate the parts of a CSR array; raise :class:`SparseFormatError` if broken.

    Parameters
    ----------
    data, indices, indptr : torch.Tensor
        Values (nnz,), column indices (nnz,), row pointers (rows + 1,).
    shape : tuple of int
        ``(rows, cols)``.
    full : bool
        Also check the O(nnz) invariants (index range, sorted unique columns per row).
    """
    def bad(msg):
        raise SparseFormatError(f"invalid CSR array: {msg}")

    if len(shape) != 2:
        bad(f"CSR arrays are 2-D, got shape {tuple(shape)}")
    rows, cols = shape
    if rows < 0 or cols < 0:
        bad(f"negative dimension in shape {tuple(shape)}")
    if data.dim() != 1 or indices.dim() != 1 or indptr.dim() != 1:
        bad(f"data, indices and indptr must be 1-D, got {data.dim()}-D, {indices.dim()}-D "
            f"and {indptr.dim()}-D")
    if indices.dtype.is_floating_point or indptr.dtype.is_floating_point:
        bad("indices and indptr must be integers")
    if indptr.numel() != rows + 1:
        bad(f"indptr has {indptr.numel()} entries; a {rows}x{cols} array needs rows + 1 = "
            f"{rows + 1}")
    if data.numel() != indices.numel():
        bad(f"data has {data.numel()} values but indices has {indices.numel()} entries")
    if int(indptr[0]) != 0:
        bad(f"indptr[0] must be 0, got {int(indptr[0])}")
    if int(indptr[-1]) != data.numel():
        bad(f"indptr[-1] = {int(indptr[-1])} must equal the number of stored values "
            f"{data.numel()}")
    if not full or csr_invariants_hold(indices, indptr, cols):
        return
    # something is broken: find the first offending position for the message
    if rows > 0:
        step = indptr[1:] - indptr[:-1]
        if bool((step < 0).any()):
            r = _first(step < 0)
            bad(f"indptr must be non-decreasing: indptr[{r}] = {int(indptr[r])} > "
                f"indptr[{r + 1}] = {int(indptr[r + 1])}")
    nnz = indices.numel()
    if nnz == 0:
        return
    if bool((indices < 0).any()) or bool((indices >= cols).any()):
        p = _first((indices < 0) | (indices >= cols))
        row = int(torch.searchsorted(indptr, torch.tensor(p, device=indptr.device), right=True)) - 1
        bad(f"column index {int(indices[p])} at position {p} (row {row}) is out of range "
            f"[0, {cols})")
    if nnz > 1:
        # within a row, columns must strictly increase; row starts reset the order
        diff = indices[1:] - indices[:-1]
        starts = torch.zeros(nnz, dtype=torch.bool, device=indices.device)
        inner = indptr[1:-1]
        inner = inner[(inner > 0) & (inner < nnz)]
        starts[inner] = True
        badpos = (diff <= 0) & ~starts[1:]
        if bool(badpos.any()):
            p = _first(badpos) + 1
            row = int(torch.searchsorted(indptr, torch.tensor(p, device=indptr.device),
                                         right=True)) - 1
            what = "duplicate" if int(indices[p]) == int(indices[p - 1]) else "unsorted"
            bad(f"{what} column index {int(indices[p])} at position {p} (row {row}): column "
                f"indices must be sorted and unique within each row; build from "
                f"(data, (row, col)) or scipy to sum duplicates")


def check_row_sparse(data, indices, shape, full=True):
    """Validate the parts of a row_sparse array; raise :class:`SparseFormatError` if broken.

    Parameters
    ----------
    data : torch.Tensor
        Stored rows, shape ``(k,) + shape[1:]``.
    indices : torch.Tensor
        Row ids (k,), sorted ascending, unique, in ``[0, shape[0])``.
    shape : tuple of int
    full : bool
        Also check the O(k) invariants (range, order, uniqueness).

    Examples
    --------
    >>> check_row_sparse(torch.ones(2, 2), torch.tensor([3, 0]), (4, 2))
    Traceback (most recent call last):
    ...
    sparsenet.base.SparseFormatError: invalid row_sparse array: unsorted row index 0 at position 1: indices must be sorted ascending and unique
    """
    def bad(msg):
        raise SparseFormatError(f"invalid row_sparse array: {msg}")

    if len(shape) < 1:
        bad("row_sparse arrays have at least one dimension")
    if indices.dim() != 1:
        bad(f"indices must be 1-D, got {indices.dim()}-D")
    if indices.dtype.is_floating_point:
        bad("indices must be integers")
    if data.dim() != len(shape):
        bad(f"data must have {len(shape)} dimensions (rows, *shape[1:]), got shape "
            f"{tuple(data.shape)}")
    if tuple(data.shape[1:]) != tuple(shape[1:]):
        bad(f"data rows have shape {tuple(data.shape[1:])}, expected {tuple(shape[1:])}")
    if data.shape[0] != indices.numel():
        bad(f"data has {data.shape[0]} rows but indices has {indices.numel()} entries")
    if not full or indices.numel() == 0:
        return
    n = shape[0]
    if bool((indices < 0).any()) or bool((indices >= n).any()):
        p = _first((indices < 0) | (indices >= n))
        bad(f"row index {int(indices[p])} at position {p} is out of range [0, {n})")
    if indices.numel() > 1:
        diff = indices[1:] - indices[:-1]
        if bool((diff <= 0).any()):
            p = _first(diff <= 0) + 1
            what = "duplicate" if int(diff[p - 1]) == 0 else "unsorted"
            bad(f"{what} row index {int(indices[p])} at position {p}: indices must be sorted "
                f"ascending and unique")

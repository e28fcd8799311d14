"""A CSR array built with ``validate=False`` from a malformed ``indptr`` is refused by
``row_ids()`` (what every kernel that needs a value's row calls) with SparseFormatError,
never read or written out of range (``indptr = [0, 2**40, 2]`` crashed the process)."""
import subprocess
import sys

import numpy as np
import pytest
import torch

import sparsenet as mx
from sparsenet.base import SparseFormatError


def _csr(indptr, nnz=2, rows=2, cols=3):
    return mx.nd.sparse.csr_matrix(
        (np.ones(nnz, np.float32), np.zeros(nnz, np.int64), np.array(indptr, np.int64)),
        shape=(rows, cols), validate=False)


@pytest.mark.parametrize("indptr", [[0, 2**40, 2], [0, 3, 2], [1, 1, 3], [0, 1, 1],
                                    [0, -5, 2], [0, 2**62, 2]])
def test_malformed_indptr_is_refused(indptr):
    a = _csr(indptr)
    with pytest.raises(SparseFormatError, match="invalid CSR array"):
        a.row_ids()
    with pytest.raises(mx.MXNetError):
        a.row_ids()


def test_malformed_indptr_in_a_kernel_is_an_error_not_a_crash():
    code = ("import numpy as np, sparsenet as mx\n"
            "a = mx.nd.sparse.csr_matrix((np.ones(2, np.float32), np.zeros(2, np.int64), "
            "np.array([0, 2**40, 2])), shape=(2, 3), validate=False)\n"
            "try:\n    a.asnumpy()\nexcept mx.MXNetError:\n    print('refused')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "refused"


def test_valid_rows_match_numpy():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 4, size=7)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    nnz = int(indptr[-1])
    a = _csr(indptr, nnz=nnz, rows=7)
    assert a.row_ids().tolist() == np.repeat(np.arange(7), counts).tolist()
    assert a.row_ids().dtype == torch.int64

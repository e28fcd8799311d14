"""A large Embedding/``dot(csr, W)`` gradient over a small table is summed by scattering into
a dense buffer (O(ids + rows)), not by sorting the ids (the sort was half of
``sparsenet train``'s epoch at batch 4096 on 100,000 features), with the very sums, bit for
bit, that adding each id's values in their order gives (NumPy reference below)."""
import numpy as np
import pytest
import torch

import sparsenet.grad_store as grad_store
from sparsenet.grad_store import coo_rows
from sparsenet.ops import row_kernels


def _reference(ids, vals):
    """Sorted distinct ids and, per id, its values added in order (float32, NumPy)."""
    rows = np.unique(ids)
    sums = {}
    for i, v in zip(ids.tolist(), vals):
        sums[i] = v.copy() if i not in sums else (sums[i] + v).astype(np.float32)
    return rows, np.stack([sums[r] for r in rows.tolist()])


@pytest.mark.parametrize("n, num_rows, cols", [(5000, 4000, 1), (3000, 20000, 3)])
def test_dense_scatter_sums_equal_the_ordered_sums(n, num_rows, cols, monkeypatch):
    def no_sort(*args):
        raise AssertionError("a table of <= 8 rows per id is not summed by sorting")

    monkeypatch.setattr(grad_store, "_sorted_row_sums", no_sort)
    monkeypatch.setattr(row_kernels, "_COALESCE_MAX", 0)  # past the native coalescing
    rng = np.random.default_rng(0)
    ids = rng.integers(0, num_rows, n)
    vals = rng.normal(size=(n, cols)).astype(np.float32)
    vals[::5] = -0.0  # signed zeros survive: -0.0 alone sums to -0.0
    g = torch.sparse_coo_tensor(torch.from_numpy(ids)[None], torch.from_numpy(vals),
                                (num_rows, cols))
    values, rows = coo_rows(g)
    want_rows, want = _reference(ids, vals)
    assert rows.tolist() == want_rows.tolist()
    assert values.numpy().tobytes() == want.tobytes()


def test_sparse_tables_still_sort(monkeypatch):
    called = []
    real = grad_store._sorted_row_sums

    def spy(*args):
        called.append(True)
        return real(*args)

    monkeypatch.setattr(grad_store, "_sorted_row_sums", spy)
    monkeypatch.setattr(row_kernels, "_COALESCE_MAX", 0)  # past the native coalescing
    ids = torch.randint(0, 1_000_000, (2000,))
    g = torch.sparse_coo_tensor(ids[None], torch.ones(2000, 1), (1_000_000, 1))
    values, rows = coo_rows(g)
    assert called and torch.equal(rows, torch.unique(ids))

"""The callers of the id grouping (``row_kernels.group_ids`` / ``unique_ids``): the column
bags of ``dot(csr.T, dense)`` (``dot(csr, W)``'s weight gradient), the gradient store's
sorted row sums, the kvstore's ``row_ids`` check and ``kernels.unique_inverse``, against
NumPy, on the native path and with the native kernels switched off."""
import numpy as np
import pytest
import scipy.sparse as sp
import torch

import sparsenet as mx
from sparsenet import grad_store
from sparsenet.base import IndexOutOfRangeError
from sparsenet.kvstore.keys import checked_row_ids
from sparsenet.ops import row_kernels
from sparsenet.ops.dot import _column_bags
from sparsenet.ops.kernels import unique_inverse


def _csr(m, n, nnz_per_row, seed):
    rng = np.random.default_rng(seed)
    rows = [np.sort(rng.choice(n, nnz_per_row, replace=False)) for _ in range(m)]
    indices = np.concatenate(rows)
    indptr = np.arange(0, m * nnz_per_row + 1, nnz_per_row)
    data = rng.standard_normal(indices.size)
    return sp.csr_matrix((data, indices, indptr), shape=(m, n))


def test_column_bags_are_the_stable_column_order(row_kernel_path):
    """Within a column the values keep their row-major order (deterministic)."""
    s = _csr(100, 300, 20, 0)
    x = mx.nd.sparse.csr_matrix(s)
    cols, offsets, order = _column_bags(x)
    want_order = np.argsort(s.indices, kind="stable")
    srt = s.indices[want_order]
    np.testing.assert_array_equal(order.numpy(), want_order)
    np.testing.assert_array_equal(cols.numpy(), np.unique(s.indices))
    np.testing.assert_array_equal(offsets.numpy(), np.flatnonzero(np.r_[True, srt[1:] != srt[:-1]]))
    assert cols.dtype == offsets.dtype == order.dtype == torch.int64


@pytest.mark.parametrize("m, n, per", [(100, 5000, 20), (1000, 100000, 20), (50, 30, 10)])
def test_dot_csr_t_dense_against_scipy(row_kernel_path, m, n, per):
    s = _csr(m, n, per, m)
    g = np.random.default_rng(1).standard_normal((m, 4))
    out = mx.nd.sparse.dot(mx.nd.sparse.csr_matrix(s), mx.nd.array(g, dtype="float64"),
                           transpose_a=True)
    assert out.stype == "row_sparse"
    want = (s.T @ g)
    np.testing.assert_array_equal(out.indices.asnumpy(), np.unique(s.indices))
    np.testing.assert_allclose(out.data.asnumpy(), want[np.unique(s.indices)], rtol=1e-12,
                               atol=1e-12)


def test_dot_weight_gradient_against_scipy(row_kernel_path):
    s = _csr(200, 50000, 20, 5)
    g = np.random.default_rng(2).standard_normal((200, 3))
    w = mx.nd.zeros((50000, 3), dtype="float64")
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.sparse.dot(mx.nd.sparse.csr_matrix(s), w)
    y.backward(mx.nd.array(g, dtype="float64"))
    rows = np.unique(s.indices)
    np.testing.assert_array_equal(w.grad.indices.asnumpy(), rows)
    np.testing.assert_allclose(w.grad.data.asnumpy(), (s.T @ g)[rows], rtol=1e-12, atol=1e-12)


def _ordered_sums(ids, vals):
    """Sorted distinct ids and each one's rows added in input order (float32, NumPy)."""
    rows = np.unique(ids)
    sums = {}
    for i, v in zip(ids.tolist(), vals):
        sums[i] = v.copy() if i not in sums else (sums[i] + v).astype(np.float32)
    return rows, np.stack([sums[r] for r in rows.tolist()])


@pytest.mark.parametrize("n, bound", [(3, 5), (2000, 100), (20000, 10 ** 6), (5000, 2 ** 40)])
def test_sorted_row_sums_in_input_order(row_kernel_path, n, bound):
    rng = np.random.default_rng(n)
    ids = rng.integers(0, bound, n)
    vals = rng.normal(size=(n, 3)).astype(np.float32) * 1e4
    sums, rows = grad_store._sorted_row_sums(torch.from_numpy(ids), torch.from_numpy(vals))
    want_rows, want = _ordered_sums(ids, vals)
    np.testing.assert_array_equal(rows.numpy(), want_rows)
    assert sums.numpy().tobytes() == want.tobytes()  # the same additions, in the same order


def test_checked_row_ids(row_kernel_path):
    rng = np.random.default_rng(4)
    ids = rng.integers(0, 1000, 39000)
    got = checked_row_ids(mx.nd.array(ids, dtype="int64"), 1000, "w")
    np.testing.assert_array_equal(got.numpy(), np.unique(ids))
    for bad in (1000, -3):
        ids2 = ids.copy()
        ids2[777] = bad
        with pytest.raises(IndexOutOfRangeError, match=rf"row_ids holds {bad}, out of range "
                                                       r"\[0, 1000\)"):
            checked_row_ids(mx.nd.array(ids2, dtype="int64"), 1000, "w")


def test_unique_inverse(row_kernel_path):
    ids = np.random.default_rng(6).integers(0, 2 ** 35, 3000)
    ids[::2] = ids[1::2]
    u, inv = unique_inverse(torch.from_numpy(ids))
    want_u, want_inv = np.unique(ids, return_inverse=True)
    np.testing.assert_array_equal(u.numpy(), want_u)
    np.testing.assert_array_equal(inv.numpy(), want_inv.reshape(-1))

"""``dot(csr, W)``'s weight gradient made as coalesced rows (``x.T @ gout``) for batches
above ``_RSP_GRAD_MIN_NNZ`` stored values, and the store keeping distinct sorted rows as
they are: values and storage types against NumPy, for row_sparse and dense buffers,
``grad_req='add'``, repeated columns and CSR values that are variables themselves."""
import numpy as np
import pytest
import scipy.sparse as sp
import torch

import sparsenet as mx
from sparsenet import autograd, grad_store
from sparsenet.ops import dot as dot_mod

ROWS, DIM = 5000, 4


def _batch(n_rows, per_row, seed):
    rng = np.random.default_rng(seed)
    ids = np.sort(np.stack([rng.choice(ROWS, per_row, replace=False) for _ in range(n_rows)]), 1)
    vals = rng.random((n_rows, per_row)).astype(np.float32)
    indptr = np.arange(0, n_rows * per_row + 1, per_row)
    return sp.csr_matrix((vals.ravel(), ids.ravel(), indptr), shape=(n_rows, ROWS))


@pytest.mark.parametrize("grad_stype", ["row_sparse", "default"])
@pytest.mark.parametrize("n_rows", [60, 3])  # 1200 stored values (the new path), 60 (the old)
def test_weight_gradient_is_x_transposed_times_gout(grad_stype, n_rows):
    x_sp = _batch(n_rows, 20, seed=n_rows)
    rng = np.random.default_rng(1)
    w_np = rng.standard_normal((ROWS, DIM)).astype(np.float32)
    g_np = rng.standard_normal((n_rows, DIM)).astype(np.float32)
    x = mx.nd.sparse.csr_matrix(x_sp)
    w = mx.nd.array(w_np)
    w.attach_grad(stype=grad_stype)
    with autograd.record():
        out = mx.nd.dot(x, w)
    out.backward(mx.nd.array(g_np))
    np.testing.assert_allclose(out.asnumpy(), x_sp @ w_np, rtol=1e-5, atol=1e-5)
    want = x_sp.T @ g_np
    assert w.grad.stype == grad_stype
    np.testing.assert_allclose(w.grad.asnumpy(), want, rtol=1e-5, atol=1e-5)
    if grad_stype == "row_sparse":
        np.testing.assert_array_equal(w.grad.indices.asnumpy(), np.unique(x_sp.indices))


def test_grad_req_add_sums_two_batches_with_shared_columns():
    a, b = _batch(60, 20, seed=3), _batch(60, 20, seed=4)
    assert a.nnz > dot_mod._RSP_GRAD_MIN_NNZ
    w_np = np.ones((ROWS, DIM), np.float32)
    w = mx.nd.array(w_np)
    w.attach_grad(grad_req="add", stype="row_sparse")
    for x_sp in (a, b):
        with autograd.record():
            loss = mx.nd.dot(mx.nd.sparse.csr_matrix(x_sp), w).sum()
        loss.backward()
    want = (a.T @ np.ones((60, DIM), np.float32)) + (b.T @ np.ones((60, DIM), np.float32))
    np.testing.assert_allclose(w.grad.asnumpy(), want, rtol=1e-5)


def test_weight_used_twice_adds_both_gradients():
    x_sp = _batch(60, 20, seed=5)
    w = mx.nd.array(np.full((ROWS, DIM), 0.5, np.float32))
    w.attach_grad(stype="row_sparse")
    x = mx.nd.sparse.csr_matrix(x_sp)
    with autograd.record():
        loss = (mx.nd.dot(x, w) + 2 * mx.nd.dot(x, w)).sum()
    loss.backward()
    want = 3 * (x_sp.T @ np.ones((60, DIM), np.float32))
    np.testing.assert_allclose(w.grad.asnumpy(), want, rtol=1e-5)


def test_a_retained_graph_gives_the_same_gradient_twice():
    x_sp = _batch(60, 20, seed=8)
    w = mx.nd.array(np.ones((ROWS, DIM), np.float32))
    w.attach_grad(grad_req="add", stype="row_sparse")
    with autograd.record():
        loss = mx.nd.dot(mx.nd.sparse.csr_matrix(x_sp), w).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    want = 2 * (x_sp.T @ np.ones((60, DIM), np.float32))
    np.testing.assert_allclose(w.grad.asnumpy(), want, rtol=1e-5)


def test_csr_values_as_a_variable_still_get_their_gradient():
    x_sp = _batch(60, 20, seed=6)
    rng = np.random.default_rng(2)
    w_np = rng.standard_normal((ROWS, DIM)).astype(np.float32)
    g_np = rng.standard_normal((60, DIM)).astype(np.float32)
    x = mx.nd.sparse.csr_matrix(x_sp)
    x.attach_grad()
    w = mx.nd.array(w_np)
    w.attach_grad(stype="row_sparse")
    with autograd.record():
        out = mx.nd.dot(x, w)
    out.backward(mx.nd.array(g_np))
    rows = np.repeat(np.arange(60), 20)
    want_values = (g_np[rows] * w_np[x_sp.indices]).sum(1)
    got = x.grad.asnumpy()[rows, x_sp.indices]  # at the stored positions
    np.testing.assert_allclose(got, want_values, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.grad.asnumpy(), x_sp.T @ g_np, rtol=1e-5, atol=1e-5)


def test_coo_rows_keeps_distinct_sorted_rows_without_a_copy():
    ids = torch.arange(0, 4000, 2)  # more ids than the native kernel takes
    vals = torch.randn(ids.numel(), 3)
    g = torch.sparse_coo_tensor(ids[None], vals, (5000, 3), check_invariants=False)
    assert not g.is_coalesced()
    got_vals, got_rows = grad_store.coo_rows(g, owned=True)
    assert got_vals.data_ptr() == vals.data_ptr()
    np.testing.assert_array_equal(got_rows.numpy(), ids.numpy())


def test_coo_rows_still_sums_repeats_and_sorts():
    ids = torch.cat([torch.arange(2000, 0, -1), torch.tensor([7, 7])])
    vals = torch.ones(ids.numel(), 2)
    g = torch.sparse_coo_tensor(ids[None], vals, (5000, 2), check_invariants=False)
    got_vals, got_rows = grad_store.coo_rows(g)
    np.testing.assert_array_equal(got_rows.numpy(), np.arange(1, 2001))
    want = np.ones((2000, 2), np.float32)
    want[6] = 3.0  # row 7: once in the range, twice more
    np.testing.assert_array_equal(got_vals.numpy(), want)

"""Sparse gradients: every kernel's gradient against dense torch references, and their storage.

The reference for each case is the same computation written with dense torch
tensors (``torch.autograd``); a row_sparse gradient must equal the dense
gradient on its rows, store exactly the rows the batch touches (sorted,
unique), and be zero elsewhere.
"""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import sparsenet as mx


def _csr(rng, rows, cols, density=0.3):
    dense = rng.random((rows, cols)).astype(np.float32)
    dense[rng.random((rows, cols)) > density] = 0
    return mx.nd.array(dense).tostype("csr"), dense


def _ref_grads(fn, *arrays, head=None):
    """Dense torch gradients of sum(fn(*arrays) * head) with respect to every array."""
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*ts)
    h = torch.ones_like(out) if head is None else torch.tensor(head)
    (out * h).sum().backward()
    return out.detach().numpy(), [t.grad.numpy() for t in ts]


def _check_rsp(grad, dense_ref, expected_rows):
    assert grad.stype == "row_sparse"
    idx = grad.indices.asnumpy()
    np.testing.assert_array_equal(idx, np.asarray(expected_rows))
    np.testing.assert_allclose(grad.data.asnumpy(), dense_ref[idx], rtol=1e-5, atol=1e-6)
    full = grad.asnumpy()
    mask = np.ones(full.shape[0], dtype=bool)
    mask[idx] = False
    assert not full[mask].any()


@pytest.mark.parametrize("gstype", ["default", "row_sparse"])
def test_dot_csr_dense_weight_gradient(gstype):
    rng = np.random.default_rng(0)
    x, xd = _csr(rng, 4, 9)
    wd = rng.standard_normal((9, 3)).astype(np.float32)
    head = rng.standard_normal((4, 3)).astype(np.float32)
    w = mx.nd.array(wd)
    w.attach_grad(stype=gstype)
    with mx.autograd.record():
        y = mx.nd.dot(x, w)
    y.backward(mx.nd.array(head))
    out, (_, gw) = _ref_grads(lambda a, b: a @ b, xd, wd, head=head)
    np.testing.assert_allclose(y.asnumpy(), out, rtol=1e-5)
    if gstype == "default":
        assert w.grad.stype == "default"
        np.testing.assert_allclose(w.grad.asnumpy(), gw, rtol=1e-5, atol=1e-6)
    else:
        _check_rsp(w.grad, gw, np.unique(x.indices.asnumpy()))


@pytest.mark.parametrize("gstype", ["default", "row_sparse"])
def test_dot_csr_transpose_b_gradient(gstype):
    rng = np.random.default_rng(1)
    x, xd = _csr(rng, 5, 12)
    wd = rng.standard_normal((3, 12)).astype(np.float32)
    head = rng.standard_normal((5, 3)).astype(np.float32)
    w = mx.nd.array(wd)
    w.attach_grad(stype=gstype)
    with mx.autograd.record():
        y = mx.nd.dot(x, w, transpose_b=True)
    y.backward(mx.nd.array(head))
    out, (_, gw) = _ref_grads(lambda a, b: a @ b.T, xd, wd, head=head)
    np.testing.assert_allclose(y.asnumpy(), out, rtol=1e-5, atol=1e-6)
    if gstype == "default":
        np.testing.assert_allclose(w.grad.asnumpy(), gw, rtol=1e-5, atol=1e-6)
    else:
        _check_rsp(w.grad, gw, np.flatnonzero(np.abs(gw).sum(1)))


def test_fully_connected_csr_gradients_of_weight_bias_and_input():
    rng = np.random.default_rng(2)
    x, xd = _csr(rng, 6, 10)
    wd = rng.standard_normal((4, 10)).astype(np.float32)
    bd = rng.standard_normal(4).astype(np.float32)
    head = rng.standard_normal((6, 4)).astype(np.float32)
    w, b = mx.nd.array(wd), mx.nd.array(bd)
    for a in (x, w, b):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.FullyConnected(x, w, b, num_hidden=4)
    y.backward(mx.nd.array(head))
    out, (gx, gw, gb) = _ref_grads(lambda a, c, d: a @ c.T + d, xd, wd, bd, head=head)
    np.testing.assert_allclose(y.asnumpy(), out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.grad.asnumpy(), gw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.grad.asnumpy(), gb, rtol=1e-5)
    # the gradient with respect to a CSR input is the full gradient (as MXNet), stored as CSR
    assert x.grad.stype == "csr"
    np.testing.assert_allclose(x.grad.asnumpy(), gx, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("transpose_b", [False, True])
def test_gradient_wrt_csr_input_is_csr(transpose_b):
    rng = np.random.default_rng(3)
    x, xd = _csr(rng, 3, 7)
    wd = rng.standard_normal((3, 7) if transpose_b else (7, 3)).astype(np.float32)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.dot(x, mx.nd.array(wd), transpose_b=transpose_b)
    y.backward()
    _, (gx, _) = _ref_grads((lambda a, c: a @ c.T) if transpose_b else (lambda a, c: a @ c),
                            xd, wd)
    assert x.grad.stype == "csr"  # the full gradient (MXNet 1.9.1), not cut to x's positions
    np.testing.assert_allclose(x.grad.asnumpy(), gx, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("gstype", ["default", "row_sparse"])
def test_embedding_gradient(gstype):
    rng = np.random.default_rng(4)
    wd = rng.standard_normal((8, 3)).astype(np.float32)
    ids = np.array([[5, 1], [5, 7]])
    head = rng.standard_normal((2, 2, 3)).astype(np.float32)
    w = mx.nd.array(wd)
    w.attach_grad(stype=gstype)
    with mx.autograd.record():
        y = mx.nd.Embedding(mx.nd.array(ids), w, input_dim=8, output_dim=3)
    y.backward(mx.nd.array(head))
    gw = np.zeros_like(wd)
    np.add.at(gw, ids.reshape(-1), head.reshape(-1, 3))
    np.testing.assert_allclose(y.asnumpy(), wd[ids])
    if gstype == "default":
        np.testing.assert_allclose(w.grad.asnumpy(), gw, rtol=1e-6)
    else:
        _check_rsp(w.grad, gw, [1, 5, 7])


@pytest.mark.parametrize("gstype", ["default", "row_sparse"])
def test_take_gradient(gstype):
    wd = np.arange(12, dtype=np.float32).reshape(4, 3)
    w = mx.nd.array(wd)
    w.attach_grad(stype=gstype)
    with mx.autograd.record():
        y = mx.nd.take(w, mx.nd.array([3, 0, 3]))
    y.backward()
    gw = np.zeros_like(wd)
    gw[[0, 3]] = [[1, 1, 1], [2, 2, 2]]
    if gstype == "default":
        np.testing.assert_allclose(w.grad.asnumpy(), gw)
    else:
        _check_rsp(w.grad, gw, [0, 3])


def test_row_sparse_grad_req_add_accumulates_union_of_rows():
    w = mx.nd.ones((6, 2))
    w.attach_grad(grad_req="add", stype="row_sparse")
    for ids in ([1, 4], [4, 5]):
        with mx.autograd.record():
            y = mx.nd.Embedding(mx.nd.array(ids), w, input_dim=6, output_dim=2)
        y.backward()
    expect = np.zeros((6, 2), np.float32)
    expect[[1, 5]] = 1
    expect[4] = 2
    _check_rsp(w.grad, expect, [1, 4, 5])


def test_dense_buffer_sparse_gradient_add_accumulates():
    w = mx.nd.ones((6, 2))
    w.attach_grad(grad_req="add")
    for ids in ([1, 4], [4, 5]):
        x = mx.nd.sparse.csr_matrix(([1.0, 1.0], ids, [0, 2]), shape=(1, 6))
        with mx.autograd.record():
            y = mx.nd.dot(x, w)
        y.backward()
    expect = np.zeros((6, 2), np.float32)
    expect[[1, 5]] = 1
    expect[4] = 2
    np.testing.assert_allclose(w.grad.asnumpy(), expect)


def test_weight_used_by_sparse_and_dense_paths_sums_gradients():
    rng = np.random.default_rng(5)
    x, xd = _csr(rng, 3, 5)
    wd = rng.standard_normal((5, 2)).astype(np.float32)
    for gstype in ("default", "row_sparse"):
        w = mx.nd.array(wd)
        w.attach_grad(stype=gstype)
        with mx.autograd.record():
            y = mx.nd.dot(x, w).sum() + (w * w).sum()
        y.backward()
        _, (_, gw) = _ref_grads(lambda a, c: (a @ c).sum() + (c * c).sum(), xd, wd)
        np.testing.assert_allclose(w.grad.asnumpy(), gw, rtol=1e-5, atol=1e-6)
        assert w.grad.stype == gstype


@pytest.mark.parametrize("gstype", ["default", "row_sparse"])
@pytest.mark.parametrize("scaled", [False, True])
def test_weight_used_as_w_and_as_w_transposed(gstype, scaled):
    """Row gradient (dot) plus column gradient (dot transpose_b) of one weight add up."""
    rng = np.random.default_rng(6)
    x, xd = _csr(rng, 3, 6)
    wd = rng.standard_normal((6, 6)).astype(np.float32)
    w = mx.nd.array(wd)
    w.attach_grad(stype=gstype)
    k = 2.0 if scaled else 1.0
    with mx.autograd.record():
        y = (mx.nd.dot(x, w) + k * mx.nd.dot(x, w, transpose_b=True)).sum()
    g, = mx.autograd.grad(y, [w], retain_graph=True)
    y.backward()
    _, (_, gw) = _ref_grads(lambda u, c: (u @ c + k * (u @ c.T)).sum(), xd, wd)
    for got in (g, w.grad):
        assert got.stype == gstype
        np.testing.assert_allclose(got.asnumpy(), gw, rtol=1e-5, atol=1e-6)


def test_grad_function_returns_buffer_stype():
    w = mx.nd.ones((5, 2))
    w.attach_grad(stype="row_sparse")
    x = mx.nd.sparse.csr_matrix(([2.0], [3], [0, 1]), shape=(1, 5))
    with mx.autograd.record():
        y = mx.nd.dot(x, w)
    g, = mx.autograd.grad(y, [w])
    assert g.stype == "row_sparse" and g.indices.asnumpy().tolist() == [3]
    np.testing.assert_allclose(g.data.asnumpy(), [[2.0, 2.0]])


def test_nonzero_entries_track_sparse_writes_and_forget_other_writes():
    w = mx.nd.ones((100, 2))
    w.attach_grad()
    assert mx.autograd.nonzero_entries(w.grad)[1].numel() == 0
    x = mx.nd.sparse.csr_matrix(([1.0, 1.0], [7, 42], [0, 2]), shape=(1, 100))
    with mx.autograd.record():
        y = mx.nd.dot(x, w)
    y.backward()
    kind, rows = mx.autograd.nonzero_entries(w.grad)
    assert kind == "rows" and sorted(rows.tolist()) == [7, 42]
    w.grad[:] = 3.0  # any other write makes the bookkeeping unknown
    assert mx.autograd.nonzero_entries(w.grad) is None
    with mx.autograd.record():
        y = mx.nd.dot(x, w)
    y.backward()
    expect = np.zeros((100, 2), np.float32)
    expect[[7, 42]] = 1
    np.testing.assert_allclose(w.grad.asnumpy(), expect)


def test_zero_grad_clears_dense_and_row_sparse():
    g = mx.nd.ones((3, 2))
    mx.autograd.zero_grad(g)
    assert not g.asnumpy().any()
    r = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2))
    mx.autograd.zero_grad(r)
    assert r.indices.asnumpy().size == 0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["write", "add"]),
                          st.lists(st.integers(0, 39), min_size=0, max_size=6),
                          st.booleans()), min_size=1, max_size=6))
def test_dense_buffer_matches_reference_over_any_sequence(steps):
    """Property: with dirty-row bookkeeping the dense buffer always equals the reference."""
    rng = np.random.default_rng(len(steps))
    wd = rng.standard_normal((40, 3)).astype(np.float32)
    w = mx.nd.array(wd)
    ref = np.zeros_like(wd)
    current = None
    for req, cols, touch in steps:
        if req != current:
            w.attach_grad(grad_req=req)
            ref = np.zeros_like(wd)
            current = req
        cols = sorted(set(cols))
        vals = rng.random(len(cols)).astype(np.float32)
        x = mx.nd.sparse.csr_matrix((vals, cols, [0, len(cols)]), shape=(1, 40))
        head = rng.standard_normal((1, 3)).astype(np.float32)
        with mx.autograd.record():
            y = mx.nd.dot(x, w)
        y.backward(mx.nd.array(head))
        g = np.zeros_like(wd)
        g[cols] = vals[:, None] * head
        ref = g if req == "write" else ref + g
        np.testing.assert_allclose(w.grad.asnumpy(), ref, rtol=1e-5, atol=1e-6)
        if touch:  # a user write between steps
            w.grad[:] = 1.5
            ref = np.full_like(wd, 1.5)

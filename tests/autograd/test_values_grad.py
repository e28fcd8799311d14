"""A row_sparse variable differentiated through the values its kernels read (rule rows with
``values_grad``): ``dot(csr, rsp)`` and ``_square_sum(rsp)`` send their gradients as sparse
rows, as MXNet's backward kernels do, and the variable's dense graph tensor is never filled.
Expected values: NumPy on the dense arrays; gradient rows: MXNet 1.9.1's, measured."""
import numpy as np
import pytest

import sparsenet as mx

X = dict(data=[1.0, 2.0, 3.0], indices=[0, 2, 4], indptr=[0, 2, 3], shape=(2, 6))
V_ROWS = [1, 2, 5]
V_DATA = np.arange(6, dtype=np.float32).reshape(3, 2) + 1


def _x():
    return mx.nd.sparse.csr_matrix((X["data"], X["indices"], X["indptr"]), shape=X["shape"])


def _v():
    v = mx.nd.sparse.row_sparse_array((V_DATA, V_ROWS), shape=(6, 2))
    v.attach_grad(stype="row_sparse")
    return v


def _dense_x():
    return _x().asnumpy().astype(np.float64)


def _dense_v():
    d = np.zeros((6, 2))
    d[V_ROWS] = V_DATA
    return d


def _grad(v):
    return v.grad.indices.asnumpy().tolist(), v.grad.asnumpy()


def test_dot_sends_the_columns_the_batch_stores():
    x, v = _x(), _v()
    with mx.autograd.record():
        y = mx.nd.dot(x, v)
    y.backward()
    rows, dense = _grad(v)
    assert rows == [0, 2, 4]  # measured with MXNet 1.9.1: rows [0, 2, 4], not v's rows
    # d sum(x @ v) / dv = x.T @ ones
    np.testing.assert_allclose(dense, _dense_x().T @ np.ones((2, 2)), rtol=1e-6)
    assert v._gt is not None and v._gt_stamp is None  # the dense graph tensor never filled


def test_square_sum_then_dot_sends_the_stored_rows():
    # MXNet 1.9.1 raises here (SquareSumRspGradImpl needs equal row ids); the gradient is
    # 2 v * (x.T @ 1) on v's stored rows
    x, v = _x(), _v()
    with mx.autograd.record():
        s = mx.nd._internal._square_sum(v, axis=1, keepdims=True)
        z = mx.nd.dot(x, s)
    z.backward()
    rows, dense = _grad(v)
    assert rows == V_ROWS
    want = 2 * _dense_v() * (_dense_x().T @ np.ones((2, 1)))
    np.testing.assert_allclose(dense, want, rtol=1e-6)


def test_two_kernels_add_their_rows():
    x, v = _x(), _v()
    with mx.autograd.record():
        s = mx.nd._internal._square_sum(v, axis=1, keepdims=True)
        z = mx.nd.dot(x, s) + mx.nd.sum(mx.nd.dot(x, v), axis=1, keepdims=True)
    z.backward()
    rows, dense = _grad(v)
    assert rows == [0, 1, 2, 4, 5]  # the union: v's rows and x's columns
    ones = np.ones((2, 1))
    want = 2 * _dense_v() * (_dense_x().T @ ones) + _dense_x().T @ np.ones((2, 2))
    np.testing.assert_allclose(dense, want, rtol=1e-6)
    assert v._gt_stamp is None


def test_an_operator_without_values_grad_still_adds_its_dense_gradient():
    # (v * 3) has no values_grad row: it reads the dense graph tensor, filled on demand
    x, v = _x(), _v()
    with mx.config.storage_fallback("silent"):
        with mx.autograd.record():
            z = mx.nd.sum(mx.nd.dot(x, v)) + mx.nd.sum(mx.nd.exp(v))
        z.backward()
    dense = v.grad.asnumpy()
    want = _dense_x().T @ np.ones((2, 2)) + np.exp(_dense_v())
    np.testing.assert_allclose(dense, want, rtol=1e-5)
    assert v._gt_stamp is not None  # filled for exp


@pytest.mark.parametrize("pulled", [True, False])
def test_factorization_machine_gradient_matches_numpy(pulled):
    # the FM of MXNet's example: 0.5 * (square(dot(x, v)) - dot(square(x), square_sum(v)))
    rng = np.random.default_rng(0)
    xd = np.where(rng.random((4, 30)) < 0.2, rng.standard_normal((4, 30)), 0).astype(np.float32)
    table = rng.standard_normal((30, 3)).astype(np.float32)
    cols = np.flatnonzero(xd.any(axis=0))
    rows = cols if pulled else np.union1d(cols[::2], [0, 29])  # pulled: the batch's rows
    x = mx.nd.array(xd).tostype("csr")
    v = mx.nd.sparse.row_sparse_array((table[rows], rows), shape=table.shape)
    v.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        pairs = 0.5 * mx.nd.sum(mx.nd.square(mx.nd.dot(x, v)))
        diag = 0.5 * mx.nd.sum(mx.nd.dot(x.square(), mx.nd._internal._square_sum(
            v, axis=1, keepdims=True)))
        loss = pairs - diag
    loss.backward()
    vd = np.zeros_like(table, dtype=np.float64)
    vd[rows] = table[rows]
    x64 = xd.astype(np.float64)
    # d/dv of 0.5 * sum((x v)^2) - 0.5 * sum((x^2) (v^2 1)) = x.T (x v) - (x^2).T 1 * v
    want = x64.T @ (x64 @ vd) - ((x64 ** 2).T @ np.ones((4, 1))) * vd
    np.testing.assert_allclose(v.grad.asnumpy(), want, rtol=1e-5, atol=1e-6)
    assert v.grad.indices.asnumpy().tolist() == sorted(set(cols) | set(rows))
    assert v._gt_stamp is None

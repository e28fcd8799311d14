"""Gradients through the sparse dot kernels, against dense torch autograd."""
import itertools

import numpy as np
import pytest
import torch

import sparsenet as mx

from tests.helpers import make_array


def _dense_grads(lhs_np, rhs_np, ta, tb, weights_np):
    a = torch.tensor(lhs_np, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(rhs_np, dtype=torch.float64, requires_grad=True)
    y = (a.t() if ta else a) @ (b.t() if tb else b)
    (y * torch.tensor(weights_np, dtype=torch.float64)).sum().backward()
    return y.detach().numpy(), a.grad.numpy(), b.grad.numpy()


@pytest.mark.parametrize("lhs_stype,rhs_stype,ta,tb", [
    c for c in itertools.product(("default", "csr", "row_sparse"), ("default", "csr", "row_sparse"),
                                 (False, True), (False, True))
    if mx.nd.dot.infer_storage((c[0], c[1]), {"transpose_a": c[2], "transpose_b": c[3]})[1]
    and (c[0], c[1]) != ("default", "default")])
@pytest.mark.parametrize("grad_stype", ["default", "row_sparse"])
def test_dot_gradients_match_dense(lhs_stype, rhs_stype, ta, tb, grad_stype):
    m, k, n = 5, 7, 3
    lhs, lhs_np = make_array((k, m) if ta else (m, k), lhs_stype, density=0.4)
    rhs, rhs_np = make_array((n, k) if tb else (k, n), rhs_stype, density=0.6)
    weights_np = np.random.uniform(-1, 1, size=(m, n)).astype(np.float32)
    weights = mx.nd.array(weights_np)
    # dense inputs get a gradient buffer of grad_stype; sparse inputs get their own stype
    lhs.attach_grad(stype=grad_stype if lhs.stype == "default" else None)
    rhs.attach_grad(stype=grad_stype if rhs.stype == "default" else None)
    with mx.autograd.record():
        y = mx.nd.dot(lhs, rhs, transpose_a=ta, transpose_b=tb)
        loss = mx.nd.sum(y.tostype("default") * weights)
    loss.backward()
    y_ref, ga_ref, gb_ref = _dense_grads(lhs_np, rhs_np, ta, tb, weights_np)
    np.testing.assert_allclose(y.asnumpy(), y_ref, rtol=1e-5, atol=1e-5)
    for arr, dense, ref in ((lhs, lhs_np, ga_ref), (rhs, rhs_np, gb_ref)):
        g = arr.grad
        if arr.stype == "default":
            assert g.stype == grad_stype
            np.testing.assert_allclose(g.asnumpy(), ref, rtol=1e-5, atol=1e-5)
            if grad_stype == "row_sparse":  # rows are sorted and unique
                g.check_format()
        else:
            # the gradient w.r.t. a sparse input has its sparsity structure:
            # the dense gradient at the stored positions
            assert g.stype == arr.stype
            stored = arr.tostype("default").asnumpy() != 0
            np.testing.assert_allclose(g.asnumpy()[stored], ref[stored], rtol=1e-5, atol=1e-5)


def test_row_sparse_weight_gradient_has_exactly_the_touched_rows():
    x = mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [1, 4, 1], [0, 2, 3]), shape=(2, 6))
    w = mx.nd.ones((6, 3))
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.dot(x, w)
    y.backward()
    assert w.grad.stype == "row_sparse"
    assert w.grad.indices.asnumpy().tolist() == [1, 4]
    np.testing.assert_array_equal(w.grad.data.asnumpy(), [[4, 4, 4], [2, 2, 2]])
    assert w.grad.nbytes == 2 * 3 * 4 + 2 * 8  # never a dense 6 x 3 buffer


def test_grad_req_add_accumulates_row_sparse():
    x1 = mx.nd.sparse.csr_matrix(([1.0], [1], [0, 1]), shape=(1, 5))
    x2 = mx.nd.sparse.csr_matrix(([2.0], [3], [0, 1]), shape=(1, 5))
    w = mx.nd.ones((5, 2))
    w.attach_grad(grad_req="add", stype="row_sparse")
    for x in (x1, x2, x1):
        with mx.autograd.record():
            y = mx.nd.dot(x, w)
        y.backward()
    assert w.grad.stype == "row_sparse"
    assert w.grad.indices.asnumpy().tolist() == [1, 3]
    np.testing.assert_array_equal(w.grad.data.asnumpy(), [[2, 2], [2, 2]])

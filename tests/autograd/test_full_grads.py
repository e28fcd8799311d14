"""Gradients with respect to sparse inputs are the full mathematical gradient (as MXNet).

Every expected value below was measured with MXNet 1.9.1 (``mx.autograd`` on the
same inputs) or is the hand-computed derivative; none comes from sparsenet.
"""
import numpy as np
import pytest
import torch

import sparsenet as mx
from sparsenet import grad_store, nd


def _rsp(rows):
    return nd.array(rows).tostype("row_sparse")


def test_elemwise_add_of_row_sparse_variables():
    a = _rsp([[1, 2], [0, 0]])
    a.attach_grad()
    b = _rsp([[0, 0], [3, 4]])
    with mx.autograd.record():
        y = nd.elemwise_add(a, b)
    assert y.stype == "row_sparse"
    y.backward(nd.ones((2, 2)).tostype("row_sparse"))
    # MXNet 1.9.1: row_sparse [[1, 1], [1, 1]] (row 1 is not stored in a, still differentiated)
    assert a.grad.stype == "row_sparse"
    np.testing.assert_array_equal(a.grad.asnumpy(), [[1, 1], [1, 1]])


def test_add_n_of_row_sparse_variables():
    a = _rsp([[1, 2], [0, 0]])
    a.attach_grad()
    with mx.autograd.record():
        y = nd.add_n(a, _rsp([[0, 0], [3, 4]]))
    y.backward(nd.ones((2, 2)).tostype("row_sparse"))
    np.testing.assert_array_equal(a.grad.asnumpy(), [[1, 1], [1, 1]])  # MXNet 1.9.1


def test_dot_csr_times_row_sparse_variable():
    x = nd.array([[1, 0, 2], [0, 3, 0]]).tostype("csr")
    w = _rsp([[1, 1], [0, 0], [0, 0]])
    w.attach_grad()
    with mx.autograd.record():
        y = nd.dot(x, w)
    y.backward(nd.array([[1, 2], [3, 4]]))
    # MXNet 1.9.1: x.T @ head over every row of w, not only the stored row 0
    assert w.grad.stype == "row_sparse"
    np.testing.assert_array_equal(w.grad.asnumpy(), [[1, 2], [9, 12], [2, 4]])


def test_dot_csr_variable_times_dense():
    x = nd.array([[1, 0, 2], [0, 3, 0]]).tostype("csr")
    x.attach_grad()
    w = nd.array([[1, 2], [3, 4], [5, 6]])
    with mx.autograd.record():
        y = nd.dot(x, w)
    y.backward(nd.array([[1, 2], [3, 4]]))
    assert x.grad.stype == "csr"  # MXNet 1.9.1: csr with every position
    np.testing.assert_array_equal(x.grad.asnumpy(), [[5, 11, 17], [11, 25, 39]])


def test_cast_storage_of_a_dense_variable():
    d = nd.array([[1, 0], [0, 0]])
    d.attach_grad()
    with mx.autograd.record():
        z = nd.cast_storage(d, "row_sparse") * 2
    z.backward(nd.ones((2, 2)).tostype("row_sparse"))
    np.testing.assert_array_equal(d.grad.asnumpy(), [[2, 2], [2, 2]])  # MXNet 1.9.1


def test_scalar_times_empty_row_sparse():
    e = nd.sparse.zeros("row_sparse", (2, 2))
    e.attach_grad()
    with mx.autograd.record():
        y = 2 * e
    y.backward()
    assert e.grad.stype == "row_sparse"
    np.testing.assert_array_equal(e.grad.asnumpy(), [[2, 2], [2, 2]])  # MXNet 1.9.1


def test_softmax_output_of_a_csr_variable():
    x = nd.array([[1, 0, 2], [0, 3, 0]]).tostype("csr")
    x.attach_grad()
    with mx.config.storage_fallback("silent"), mx.autograd.record():
        y = nd.SoftmaxOutput(x, nd.array([0, 1]))
    y.backward()
    assert x.grad.stype == "csr"
    # MXNet 1.9.1's values: softmax(x) - onehot(label), at every position
    np.testing.assert_allclose(x.grad.asnumpy(), [
        [-0.7552715539932251, 0.09003057330846786, 0.6652409434318542],
        [0.04527850076556206, -0.09055697917938232, 0.04527850076556206]], rtol=1e-6)


def test_embedding_sparse_grad_on_a_row_sparse_weight():
    w = nd.sparse.row_sparse_array(([[1, 1]], [0]), shape=(5, 2))
    w.attach_grad()
    with mx.config.storage_fallback("silent"), mx.autograd.record():
        y = nd.Embedding(nd.array([0, 2, 2]), w, input_dim=5, output_dim=2, sparse_grad=True)
    y.backward()
    assert w.grad.stype == "row_sparse"
    # MXNet 1.9.1: row 2 (looked up twice, not stored in w) gets [2, 2]
    np.testing.assert_array_equal(w.grad.asnumpy(), [[1, 1], [0, 0], [2, 2], [0, 0], [0, 0]])


@pytest.mark.parametrize("op, expected", [
    (lambda x: x * 3, [[3, 3, 3], [3, 3, 3]]),          # MXNet 1.9.1
    (lambda x: nd.sum(x), [[1, 1, 1], [1, 1, 1]]),      # MXNet 1.9.1
])
def test_csr_variable_through_scalar_and_reduction(op, expected):
    x = nd.array([[1, 0, 2], [0, 3, 0]]).tostype("csr")
    x.attach_grad()
    with mx.autograd.record():
        y = op(x)
    y.backward()
    assert x.grad.stype == "csr"
    np.testing.assert_array_equal(x.grad.asnumpy(), expected)


def test_chain_of_sparse_results_against_dense_torch():
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((5, 3)).astype(np.float32)
    dense[[1, 3]] = 0
    head = rng.standard_normal((5, 3)).astype(np.float32)
    a = nd.array(dense).tostype("row_sparse")
    a.attach_grad()
    with mx.autograd.record():
        y = nd.elemwise_mul(a * 2 + a, a) - a
    y.backward(nd.array(head))
    t = torch.tensor(dense, requires_grad=True)
    ((t * 2 + t) * t - t).mul(torch.tensor(head)).sum().backward()
    np.testing.assert_allclose(a.grad.asnumpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_autograd_grad_of_a_sparse_variable_not_read_is_zero():
    a = _rsp([[1, 2], [0, 0]])
    a.attach_grad()
    x = nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        y = x * 3
    ga, gx = mx.autograd.grad(y, [a, x])
    np.testing.assert_array_equal(ga.asnumpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(gx.asnumpy(), [3, 3])


def test_a_sparse_variable_updated_in_place_is_read_fresh():
    a = _rsp([[1, 2], [0, 0]])
    a.attach_grad()
    with mx.autograd.record():
        y = nd.sum(a * a)
    y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), [[2, 4], [0, 0]])
    a[:] = nd.array([[0, 0], [5, 1]])  # new values and structure
    with mx.autograd.record():
        y = nd.sum(a * a)
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), [26])
    np.testing.assert_array_equal(a.grad.asnumpy(), [[0, 0], [10, 2]])


def test_gluon_row_views_keep_their_row_gradient():
    emb = mx.gluon.nn.Embedding(6, 2, sparse_grad=True)
    emb.initialize()
    with mx.autograd.record():
        out = emb(nd.array([1, 4, 4]))
    out.backward()
    g = emb.weight.grad()
    assert g.stype == "row_sparse"
    np.testing.assert_array_equal(g.indices.asnumpy(), [1, 4])
    np.testing.assert_array_equal(g.data.asnumpy(), [[1, 1], [2, 2]])


# ---------------------------------------------------------------------- views stay valid
def test_views_of_a_dense_gradient_see_the_next_backward():
    w = nd.ones((3, 2))
    w.attach_grad()
    view = w.grad.to_torch()
    row = w.grad[1]
    with mx.autograd.record():
        y = nd.sum(w * 4)
    y.backward()
    np.testing.assert_array_equal(view.numpy(), np.full((3, 2), 4.0))
    np.testing.assert_array_equal(row.asnumpy(), [4, 4])
    with mx.autograd.record():
        y = nd.sum(w * 5)
    y.backward()
    np.testing.assert_array_equal(view.numpy(), np.full((3, 2), 5.0))


def test_views_of_a_dense_gradient_of_a_sparse_kernel():
    w = nd.ones((4, 2))
    w.attach_grad()
    view = w.grad.to_torch()
    x = nd.sparse.csr_matrix(([1.0, 2.0], [3, 1], [0, 1, 2]), shape=(2, 4))
    with mx.autograd.record():
        y = nd.dot(x, w)
    y.backward()
    np.testing.assert_array_equal(view.numpy(), [[0, 0], [2, 2], [0, 0], [1, 1]])


# ---------------------------------------------------------------------- autograd errors
def test_second_backward_without_retain_graph_raises_mxnet_error():
    x = nd.array([1, 2])
    x.attach_grad()
    with mx.autograd.record():
        y = x * 2
    y.backward()
    with pytest.raises(mx.MXNetError, match="already freed"):  # MXNet 1.9.1 raises MXNetError
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = nd.array([1, 2])
    x.attach_grad(grad_req="add")
    with mx.autograd.record():
        y = x * x
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [4, 8])


@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
def test_detach_of_sparse_arrays(stype):
    x = nd.array([[1, 0], [0, 2]]).tostype(stype)
    d = x.detach()
    assert d.stype == stype  # MXNet 1.9.1 keeps the storage type
    np.testing.assert_array_equal(d.asnumpy(), [[1, 0], [0, 2]])


# ---------------------------------------------------------------------- the store table
def test_store_table_has_a_row_for_every_case():
    for leaf in ("full", "values"):
        for incoming in ("dense", "rows") + (("coo",) if leaf == "full" else ()):
            for buf in ("default", "row_sparse", "csr"):
                assert (leaf, incoming, buf) in grad_store.STORE_TABLE


def test_grad_req_add_accumulates_full_gradients_of_sparse_variables():
    a = _rsp([[1, 2], [0, 0]])
    a.attach_grad(grad_req="add")
    for _ in range(2):
        with mx.autograd.record():
            y = a * 3
        y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), np.full((2, 2), 6.0))

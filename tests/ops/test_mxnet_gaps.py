"""Operator behaviours closed against MXNet 1.9.1: straight-through estimators, make_loss on
sparse inputs, dot's forward_stype='default', dense-with-sparse-vector broadcasts,
broadcast_div(csr, dns), quadratic(rsp), integer round, and the gradient of maximum/minimum
on ties.

Expected values are measured with MXNet 1.9.1 (hard-coded) or computed with NumPy.
"""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.ops.registry import get_op

X10 = [-2.5, -1.5, -0.5, -0.4, 0.0, 0.4, 0.5, 1.5, 2.5, 3.7]
M = [[0.0, 1.5, 0.0], [-2.5, 0.0, 0.3]]


# ------------------------------------------------------------------ round_ste / sign_ste
@pytest.mark.parametrize("name,values", [
    # measured with MXNet 1.9.1
    ("round_ste", [-3.0, -2.0, -1.0, -0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0]),
    ("sign_ste", [-1.0, -1.0, -1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
])
def test_ste_forward_and_straight_through_gradient(name, values):
    x = mx.nd.array(X10)
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd.contrib, name)(x)
        z = (y * mx.nd.arange(10)).sum()
    z.backward()
    np.testing.assert_array_equal(y.asnumpy(), np.array(values, np.float32))
    # measured with MXNet 1.9.1: the head gradient passes through unchanged
    np.testing.assert_array_equal(x.grad.asnumpy(), np.arange(10, dtype=np.float32))


def test_ste_keep_the_storage_type():
    a = mx.nd.array(M).tostype("csr")
    r = mx.nd.array(M + [[0.0, 0.0, 0.0]]).tostype("row_sparse")
    with mx.config.storage_fallback("error"):
        rc, sc = mx.nd.contrib.round_ste(a), mx.nd.contrib.sign_ste(a)
        rr, sr = mx.nd.contrib.round_ste(r), mx.nd.contrib.sign_ste(r)
    assert (rc.stype, sc.stype, rr.stype, sr.stype) == ("csr", "csr", "row_sparse", "row_sparse")
    # measured with MXNet 1.9.1 (0.3 rounds to an explicit zero, kept)
    np.testing.assert_array_equal(rc.data.asnumpy(), [2.0, -3.0, 0.0])
    np.testing.assert_array_equal(sc.data.asnumpy(), [1.0, -1.0, 1.0])
    np.testing.assert_array_equal(rr.indices.asnumpy(), [0, 1])
    np.testing.assert_array_equal(sr.data.asnumpy(), [[0.0, 1.0, 0.0], [-1.0, 0.0, 1.0]])


def test_ste_gradient_through_a_sparse_intermediate():
    x = mx.nd.array(M)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.sign_ste(x.tostype("csr") * 3)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((2, 3), 3.0, np.float32))


def test_round_of_integers_keeps_the_dtype():
    # measured with MXNet 1.9.1: round/round_ste of int32 give int32, sign_ste too
    x = mx.nd.array([3, -2, 0], dtype="int32")
    for fn in (mx.nd.round, mx.nd.contrib.round_ste, mx.nd.contrib.sign_ste):
        assert fn(x).dtype == np.int32
    np.testing.assert_array_equal(mx.nd.round(x).asnumpy(), [3, -2, 0])
    np.testing.assert_array_equal(mx.nd.contrib.sign_ste(x).asnumpy(), [1, -1, 0])


# ------------------------------------------------------------------ make_loss
@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
def test_make_loss_keeps_sparse_and_its_gradient_is_ones(stype):
    a = mx.nd.array(M).tostype(stype)
    with mx.config.storage_fallback("error"):
        out = mx.nd.make_loss(a)
    assert out.stype == stype  # measured with MXNet 1.9.1
    np.testing.assert_array_equal(out.asnumpy(), np.array(M, np.float32))
    assert out.data is not a.data  # a copy
    x = mx.nd.array(M)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.make_loss(x.tostype(stype) * 3)
    y.backward()
    # measured with MXNet 1.9.1 (dense x): d(make_loss(3x))/dx = 3, the head gradient ignored
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((2, 3), 3.0, np.float32))


# ------------------------------------------------------------------ dot
def test_dot_forward_stype_default_forces_dense():
    a = mx.nd.array([[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]]).tostype("csr")
    with mx.config.storage_fallback("error"):
        out = mx.nd.dot(mx.nd.array([[1.0, 2.0], [3.0, 4.0]]), a, forward_stype="default")
        rsp = mx.nd.dot(a, mx.nd.ones((2, 2)), transpose_a=True, forward_stype="default")
    assert out.stype == "default" and rsp.stype == "default"
    # measured with MXNet 1.9.1
    np.testing.assert_array_equal(out.asnumpy(), [[4.0, 1.0, 0.0], [8.0, 3.0, 0.0]])
    np.testing.assert_array_equal(rsp.asnumpy(), [[2.0, 2.0], [1.0, 1.0], [0.0, 0.0]])
    dot = get_op("dot")  # the symbolic pass agrees with the eager call
    assert dot.infer_storage(("default", "csr"), {"forward_stype": "default"}) == ("default", True)
    assert dot.infer_storage(("csr", "default"), {"transpose_a": True}) == ("row_sparse", True)
    assert dot.infer_storage(("csr", "default"), {"transpose_a": True,
                                                  "forward_stype": "default"})[0] == "default"


def test_dot_csr_transposed_with_dense_transposed_is_dense_without_fallback():
    a = mx.nd.array([[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]]).tostype("csr")
    b = mx.nd.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with mx.config.storage_fallback("error"):
        out = mx.nd.dot(a, b, transpose_a=True, transpose_b=True)
    assert out.stype == "default"
    # measured with MXNet 1.9.1
    np.testing.assert_array_equal(out.asnumpy(), [[4.0, 8.0, 12.0], [1.0, 3.0, 5.0],
                                                  [0.0, 0.0, 0.0]])


# ------------------------------------------------------------------ dense (+-) sparse vector
@pytest.mark.parametrize("op,np_op", [("broadcast_add", np.add), ("broadcast_sub", np.subtract),
                                      ("broadcast_plus", np.add),
                                      ("broadcast_minus", np.subtract)])
@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
@pytest.mark.parametrize("vec", [[[0.0, 1.0, 0.0]], [[2.0], [0.0]]])
def test_dense_with_a_sparse_vector(op, np_op, stype, vec):
    lhs = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    v = np.array(vec, np.float32)
    with mx.config.storage_fallback("error"):
        out = getattr(mx.nd, op)(mx.nd.array(lhs), mx.nd.array(v).tostype(stype))
        back = getattr(mx.nd, op)(mx.nd.array(v).tostype(stype), mx.nd.array(lhs))
    assert out.stype == "default" and back.stype == "default"
    np.testing.assert_array_equal(out.asnumpy(), np_op(lhs, v))
    np.testing.assert_array_equal(back.asnumpy(), np_op(v, lhs))


def test_dense_plus_row_sparse_row_vector_measured():
    out = mx.nd.broadcast_add(mx.nd.array([[1, 2, 3], [4, 5, 6]]),
                              mx.nd.array([[0, 1, 0]]).tostype("row_sparse"))
    # measured with MXNet 1.9.1 (through a fallback there)
    np.testing.assert_array_equal(out.asnumpy(), [[1.0, 3.0, 3.0], [4.0, 6.0, 6.0]])


# ------------------------------------------------------------------ broadcast_div(csr, dns)
def test_broadcast_div_csr_dense_equal_shapes_keeps_the_nans():
    a = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]], np.float32)
    d = np.array([[0.0, 2.0, 4.0], [1.0, np.nan, 0.0]], np.float32)
    with mx.config.storage_fallback("error"):
        out = mx.nd.broadcast_div(mx.nd.array(a).tostype("csr"), mx.nd.array(d))
    assert out.stype == "csr"
    out.check_format()
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(out.asnumpy(), a / d)
    assert out.data.shape == (5,)  # 2 stored values + the 3 NaNs of 0/0 and 0/NaN


def test_broadcast_div_csr_by_a_vector_divides_the_stored_values():
    a = mx.nd.array([[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]]).tostype("csr")
    with mx.config.storage_fallback("error"):
        row = mx.nd.broadcast_div(a, mx.nd.array([[0.0, 1.0, 2.0]]))
        col = mx.nd.broadcast_div(a, mx.nd.array([[0.0], [1.0]]))
    assert row.stype == col.stype == "csr"
    # measured with MXNet 1.9.1: only the stored values are divided
    np.testing.assert_array_equal(row.asnumpy(), [[0.0, 1.0, 0.0], [np.inf, 0.0, 0.0]])
    np.testing.assert_array_equal(col.asnumpy(), [[0.0, np.inf, 0.0], [2.0, 0.0, 0.0]])


# ------------------------------------------------------------------ the rest
def test_quadratic_of_row_sparse_with_zero_constant_stays_row_sparse():
    r = mx.nd.array([[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]]).tostype("row_sparse")
    with mx.config.storage_fallback("error"):
        out = mx.nd.contrib.quadratic(r, a=1, b=2, c=0)
    assert out.stype == "row_sparse"  # MXNet 1.9.1: default (a fallback), same values
    np.testing.assert_array_equal(out.asnumpy(), [[0.0, 3.0, 0.0], [8.0, 0.0, 0.0]])


def test_negative_axis_in_range_still_works():
    # measured with MXNet 1.9.1: axis=-2 of a 2-D array is axis 0 (axis=-3 and 5 raise)
    np.testing.assert_array_equal(mx.nd.sum(mx.nd.ones((2, 3)), axis=-2).asnumpy(),
                                  [2.0, 2.0, 2.0])


# ------------------------------------------------------------------ maximum / minimum gradients
_A, _B = [[1, 2, 3], [0, 0, 5]], [[1, 3, 2], [0, 1, 5]]


@pytest.mark.parametrize("call,grad_a,grad_b", [
    # measured with MXNet 1.9.1 (head gradient 2): a tie sends the whole gradient to lhs
    (lambda x, y: mx.nd._internal._maximum(x, y), [[2, 0, 2], [2, 0, 2]], [[0, 2, 0], [0, 2, 0]]),
    (lambda x, y: mx.nd._internal._minimum(x, y), [[2, 2, 0], [2, 2, 2]], [[0, 0, 2], [0, 0, 0]]),
    (lambda x, y: mx.nd.maximum(x, y), [[2, 0, 2], [2, 0, 2]], [[0, 2, 0], [0, 2, 0]]),
    (lambda x, y: mx.nd.broadcast_minimum(x, y), [[2, 2, 0], [2, 2, 2]], [[0, 0, 2], [0, 0, 0]]),
    (lambda x, y: mx.nd.broadcast_maximum(x, y[:1]), [[2, 0, 2], [0, 0, 2]],
     [[2, 4, 0], [0, 0, 0]]),
    (lambda x, y: mx.nd._internal._maximum(x.tostype("row_sparse"), y.tostype("row_sparse")),
     [[2, 0, 2], [2, 0, 2]], [[0, 2, 0], [0, 2, 0]]),
])
def test_maximum_minimum_gradient_on_ties(call, grad_a, grad_b):
    x, y = mx.nd.array(_A), mx.nd.array(_B)
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        out = call(x, y)
    out.backward(mx.nd.ones(out.shape) * 2)
    np.testing.assert_array_equal(x.grad.asnumpy(), grad_a)
    np.testing.assert_array_equal(y.grad.asnumpy(), grad_b)


def test_maximum_minimum_propagate_nan():
    a = mx.nd.array([np.nan, 1.0, np.nan, 2.0])
    b = mx.nd.array([1.0, np.nan, np.nan, 1.0])
    # measured with MXNet 1.9.1
    np.testing.assert_array_equal(mx.nd.maximum(a, b).asnumpy(), [np.nan, np.nan, np.nan, 2.0])
    np.testing.assert_array_equal(mx.nd.minimum(a, b).asnumpy(), [np.nan, np.nan, np.nan, 1.0])

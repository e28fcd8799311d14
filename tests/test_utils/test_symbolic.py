"""mx.test_utils symbolic checks: forward, backward and finite-difference gradients.

Expected values were measured with MXNet 1.9.1 or computed by hand. Gradients
are checked for dense arguments (a CSR argument only as data, not differentiated).
"""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet import test_utils as tu
from sparsenet.base import InvalidArgumentError

A, B = mx.sym.var("a"), mx.sym.var("b")
LOC = [np.array([1., 2.]), np.array([3., 4.])]


def test_check_symbolic_forward_lists_dicts_and_failure():
    sym = A * B
    outs = tu.check_symbolic_forward(sym, LOC, [np.array([3., 8.])])
    assert outs[0].asnumpy().tolist() == [3.0, 8.0] and outs[0].dtype == np.float32
    out_name = sym.list_outputs()[0]
    tu.check_symbolic_forward(sym, {"a": LOC[0], "b": LOC[1]}, {out_name: np.array([3., 8.])})
    with pytest.raises(AssertionError) as info:
        tu.check_symbolic_forward(sym, LOC, [np.array([3., 8.5])])
    msg = str(info.value)
    # measured with MXNet 1.9.1 (the output name differs: MXNet numbers _mul nodes globally)
    assert ("Error 277.777783 exceeds tolerance rtol=1.000000e-04, atol=1.000000e-03 (mismatch "
            f"50.000000%).\nLocation of maximum error: (1,), EXPECTED_{out_name}=8.50000000, "
            f"FORWARD_{out_name}=8.00000000") in msg
    with pytest.raises(InvalidArgumentError, match="keys of the given location do not match"):
        tu.check_symbolic_forward(sym, {"a": LOC[0]}, [np.array([3., 8.])])
    with pytest.raises(InvalidArgumentError, match="2 symbol arguments"):
        tu.check_symbolic_forward(sym, LOC[:1], [np.array([3., 8.])])


def test_check_symbolic_forward_dtypes_nan_and_sparse_location():
    outs = tu.check_symbolic_forward(A * B, LOC, [np.array([3., 8.])], dtype=np.float64)
    assert outs[0].dtype == np.float64
    ints = [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)]
    outs = tu.check_symbolic_forward(A * B, ints, [np.array([3, 8])], dtype="asnumpy")
    assert outs[0].dtype == np.int32
    nan = np.array([np.nan, 1.0])
    tu.check_symbolic_forward(A * 1, [nan], [nan], equal_nan=True)
    with pytest.raises(AssertionError):
        tu.check_symbolic_forward(A * 1, [nan], [nan])
    with pytest.raises(InvalidArgumentError, match="dtype must be"):
        tu.check_symbolic_forward(A * B, LOC, [np.array([3., 8.])], dtype=np.int32)
    x = mx.sym.var("x", stype="csr")
    csr = mx.nd.array([[0., 1.], [2., 0.]]).tostype("csr")
    outs = tu.check_symbolic_forward(mx.sym.dot(x, B), {"x": csr, "b": np.array([[1.], [3.]])},
                                     [np.array([[3.], [2.]])])
    assert outs[0].stype == "default"


def test_check_symbolic_backward_grad_reqs():
    np.random.seed(0)
    grads = tu.check_symbolic_backward(A * B, LOC, [np.array([2., 1.])],
                                       {"a": np.array([6., 4.]), "b": np.array([2., 2.])},
                                       grad_req={"a": "add", "b": "null"})
    # measured with MXNet 1.9.1: 'add' keeps the random start, 'null' leaves it untouched
    np.testing.assert_allclose(grads["a"].asnumpy(), [7.764052391052246, 4.4001569747924805],
                               rtol=1e-6)
    np.testing.assert_allclose(grads["b"].asnumpy(), [0.978738009929657, 2.2408931255340576],
                               rtol=1e-6)
    sym = A * B
    grads = tu.check_symbolic_backward(sym, {"a": LOC[0], "b": LOC[1]},
                                       {sym.list_outputs()[0]: np.array([2., 1.])},
                                       [np.array([6., 4.]), np.array([2., 2.])])
    assert grads["a"].asnumpy().tolist() == [6.0, 4.0] and grads["b"].dtype == np.float32
    with pytest.raises(AssertionError) as info:
        tu.check_symbolic_backward(A * B, LOC, [np.array([1., 1.])],
                                   [np.array([3., 4.]), np.array([1., 2.5])])
    assert ("Error 416.666647 exceeds tolerance rtol=1.000000e-04, atol=1.000000e-03 (mismatch "
            "50.000000%).\nLocation of maximum error: (1,), EXPECTED_b=2.50000000, "
            "BACKWARD_b=2.00000000") in str(info.value)  # measured with MXNet 1.9.1
    with pytest.raises(InvalidArgumentError, match=r"expected gradients for \['c'\]"):
        tu.check_symbolic_backward(A * B, LOC, [np.array([1., 1.])], {"c": np.ones(2)})


def test_check_symbolic_backward_row_sparse_gradient_buffer():
    np.random.seed(0)
    grads = tu.check_symbolic_backward(mx.sym.dot(A, B), [np.array([[1., 2.]]),
                                                          np.array([[3.], [4.]])],
                                       [np.array([[1.]])],
                                       [np.array([[3., 4.]]), np.array([[1.], [2.]])],
                                       grad_stypes={"b": "row_sparse"})
    # measured with MXNet 1.9.1
    assert grads["a"].stype == "default" and grads["b"].stype == "row_sparse"
    assert grads["b"].asnumpy().tolist() == [[1.0], [2.0]]


def test_check_symbolic_backward_ignores_a_list_of_grad_stypes():
    # MXNet 1.9.1 looks argument names up in the list: none is found, every buffer is dense
    grads = tu.check_symbolic_backward(mx.sym.dot(A, B), [np.array([[1., 2.]]),
                                                          np.array([[3.], [4.]])],
                                       [np.array([[1.]])],
                                       [np.array([[3., 4.]]), np.array([[1.], [2.]])],
                                       grad_stypes=["row_sparse", "row_sparse"])
    assert grads["a"].stype == "default" and grads["b"].stype == "default"


def test_simple_forward():
    assert tu.simple_forward(A * B, a=LOC[0], b=LOC[1]).tolist() == [3.0, 8.0]
    group = mx.sym.Group([A * B, mx.sym.elemwise_add(A, B, name="apb")])
    outs = tu.simple_forward(group, a=LOC[0], b=LOC[1])
    assert [o.tolist() for o in outs] == [[3.0, 8.0], [4.0, 6.0]]


def test_numeric_grad_equals_mxnet():
    exe = (A * B).simple_bind(mx.cpu(), a=(2,), b=(2,))
    loc = {"a": np.array([1., 2.]), "b": np.array([3., 4.])}
    g = tu.numeric_grad(exe, loc, eps=1e-2)
    # measured with MXNet 1.9.1 (float32 rounding of the finite differences included)
    np.testing.assert_array_equal(g["a"], np.array([2.9999733, 4.000044], dtype=np.float32))
    np.testing.assert_array_equal(g["b"], np.array([1.0000229, 2.0000458], dtype=np.float32))
    assert g["a"].dtype == np.float32
    np.testing.assert_array_equal(exe.arg_dict["a"].asnumpy(), [1., 2.])  # restored
    exe = mx.sym.sin(A).simple_bind(mx.cpu(), a=(3,))
    g = tu.numeric_grad(exe, {"a": np.array([0.5, 1.0, 2.0])}, eps=1e-3)
    # one float32 ulp of sin (torch's kernel, not MXNet's) is 3e-5 after dividing by eps
    np.testing.assert_allclose(g["a"], [0.8776187896728516, 0.540316104888916,
                                        -0.41610002517700195], rtol=1e-4)
    exe = (A * A * B).simple_bind(mx.cpu(), a=(2,), b=(2,))
    g = tu.numeric_grad(exe, {"a": np.array([1.5, -2.0]), "b": np.array([3.0, 0.5])},
                        eps=2 ** -9)
    assert g["a"].tolist() == [9.0, -2.0] and g["b"].tolist() == [2.25, 4.0]
    exe = (A * B).simple_bind(mx.cpu(), a=(2,), b=(2,),
                              type_dict={"a": np.float64, "b": np.float64})
    g = tu.numeric_grad(exe, {"a": np.array([1., 2.]), "b": np.array([3., 4.])}, eps=1e-2,
                        dtype=np.float64)
    np.testing.assert_allclose(g["a"], [3.000000000000025, 4.0000000000000036], rtol=1e-14)
    assert g["a"].dtype == np.float64


def test_check_numeric_gradient_passes_and_fails():
    tu.check_numeric_gradient(A * B, LOC)
    tu.check_numeric_gradient(mx.sym.sin(A), [np.array([1., 2.])])
    tu.check_numeric_gradient(mx.sym.abs(A), [np.array([1., 2.])], grad_nodes={"a": "add"})
    tu.check_numeric_gradient(A * B, LOC, grad_nodes={"a": "null", "b": "write"})
    tu.check_numeric_gradient(A * B, LOC, grad_nodes=["b"])
    np.random.seed(0)
    tu.check_numeric_gradient(mx.sym.dot(A, B), [np.random.rand(3, 4), np.random.rand(4, 2)],
                              numeric_eps=1e-3, rtol=1e-2, atol=1e-3)
    tu.check_numeric_gradient(mx.sym.dot(A, B), [np.random.rand(3, 4), np.random.rand(4, 2)],
                              dtype=np.float64)
    # BlockGrad stops the gradient: backward gives a*p, finite differences 2*a*p
    with pytest.raises(AssertionError) as info:
        tu.check_numeric_gradient(mx.sym.BlockGrad(A) * A, [np.array([1., 2.])])
    msg = str(info.value)
    assert "(mismatch 100.000000%)" in msg and "NUMERICAL_a=" in msg and "BACKWARD_a=" in msg
    with pytest.raises(InvalidArgumentError, match="numeric_eps 1e-06 is too small"):
        tu.check_numeric_gradient(A * B, LOC, numeric_eps=1e-6)
    with pytest.raises(InvalidArgumentError, match=r"grad_nodes \['c'\] are not arguments"):
        tu.check_numeric_gradient(A * B, LOC, grad_nodes=["c"])


def test_check_numeric_gradient_with_csr_data_and_sparse_gradient_buffer():
    np.random.seed(1)
    csr = mx.nd.array([[0., 1., 0.], [2., 0., 3.]]).tostype("csr")
    w = np.random.rand(3, 2)
    x, wv = mx.sym.var("x", stype="csr"), mx.sym.var("w")
    # measured with MXNet 1.9.1: both pass
    tu.check_numeric_gradient(mx.sym.dot(x, wv), {"x": csr, "w": w}, grad_nodes=["w"],
                              rtol=1e-2, atol=1e-3)
    tu.check_numeric_gradient(mx.sym.dot(x, wv), {"x": csr, "w": w}, grad_nodes=["w"],
                              grad_stype_dict={"w": "row_sparse"}, rtol=1e-2, atol=1e-3)

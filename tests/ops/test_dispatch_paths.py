"""The registry's short paths give what the general path gives.

A dense-only operator called with ``out=`` now runs on the registry's dense path and hands
its result to the same ``out`` writer; arrays given positionally skip the general argument
parsing; ``astype`` remembers the numpy name of each dtype spelling. Expected values come
from NumPy; the storage type of ``out`` is kept as MXNet keeps it.
"""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import InvalidArgumentTypeError, OperatorArgumentError, ShapeError
from sparsenet.ops.methods import conversion


def _x():
    return np.arange(8, dtype=np.float32).reshape(2, 4) - 3


def test_dense_out_receives_the_result_and_is_returned():
    x = mx.nd.array(_x())
    out = mx.nd.ones((2, 4))
    res = mx.nd.relu(x, out=out)
    assert res is out
    np.testing.assert_array_equal(out.asnumpy(), np.maximum(_x(), 0))


def test_sparse_out_keeps_its_storage_type():
    out = mx.nd.zeros((2, 4)).tostype("row_sparse")
    res = mx.nd.relu(mx.nd.array(_x()), out=out)
    assert res is out and out.stype == "row_sparse"
    np.testing.assert_array_equal(out.asnumpy(), np.maximum(_x(), 0))
    np.testing.assert_array_equal(out.indices.asnumpy(), [1])  # row 0 is all zero


def test_out_of_the_wrong_shape_raises():
    with pytest.raises(ShapeError, match="shape mismatch"):
        mx.nd.relu(mx.nd.array(_x()), out=mx.nd.zeros((4, 2)))


def test_multi_output_op_fills_each_out():
    a, b = mx.nd.zeros((2, 2)), mx.nd.zeros((2, 2))
    res = mx.nd.split(mx.nd.array(_x()), num_outputs=2, axis=1, out=[a, b])
    assert res[0] is a and res[1] is b
    np.testing.assert_array_equal(a.asnumpy(), _x()[:, :2])
    np.testing.assert_array_equal(b.asnumpy(), _x()[:, 2:])


def test_out_with_a_parameter_keyword():
    out = mx.nd.zeros((2,))
    mx.nd.sum(mx.nd.array(_x()), axis=1, out=out)
    np.testing.assert_allclose(out.asnumpy(), _x().sum(axis=1))


def test_out_outside_record_builds_no_graph():
    x = mx.nd.array(_x())
    x.attach_grad()
    out = mx.nd.zeros((2, 4))
    mx.nd.relu(x, out=out)
    assert not out._t.requires_grad


def test_positional_arrays_and_unknown_parameter():
    w = mx.nd.ones((3,))
    res = mx.nd.sgd_update(w, mx.nd.ones((3,)), lr=0.5, out=w)
    assert res is w
    np.testing.assert_allclose(w.asnumpy(), [0.5, 0.5, 0.5])
    with pytest.raises(OperatorArgumentError, match="unexpected parameter"):
        mx.nd.sgd_update(w, mx.nd.ones((3,)), lr=0.5, not_a_param=1, out=w)


def test_update_operator_keeps_weight_when_out_is_another_array():
    w, out = mx.nd.ones((2,)), mx.nd.zeros((2,))
    mx.nd.sgd_update(w, mx.nd.ones((2,)), lr=0.25, out=out)
    np.testing.assert_allclose(w.asnumpy(), [1.0, 1.0])  # weight_out: the copy is updated
    np.testing.assert_allclose(out.asnumpy(), [0.75, 0.75])


@pytest.mark.parametrize("spelling,name", [("float64", "float64"), (np.float16, "float16"),
                                           (np.dtype("int32"), "int32"),
                                           ("float64", "float64")])  # again, remembered
def test_astype_spellings(spelling, name):
    y = mx.nd.array([1.5, 2.5]).astype(spelling)
    assert y.dtype == np.dtype(name)
    np.testing.assert_array_equal(y.asnumpy(), np.array([1.5, 2.5]).astype(name))


def test_astype_rejects_an_unsupported_dtype_every_time():
    x = mx.nd.array([1.0])
    for _ in range(2):  # never remembered
        with pytest.raises(InvalidArgumentTypeError, match="unsupported dtype"):
            x.astype("complex128")
    assert "complex128" not in conversion._NAMES

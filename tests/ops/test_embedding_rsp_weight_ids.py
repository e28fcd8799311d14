"""Embedding on a row_sparse weight (a Module's or executor's ``stype='row_sparse'`` table):
rows and gradients equal NumPy's, float ids truncated, and an out-of-range id raises
IndexOutOfRangeError naming it, whether the weight stores every row (the lookup itself
checks the ids) or only some (the ids are checked first)."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import IndexOutOfRangeError

W = np.arange(1, 13, dtype=np.float32).reshape(4, 3)  # no zero row: tostype keeps all


def _bound(ids_dtype, weight):
    data = mx.sym.var("data")
    w = mx.sym.var("w", stype="row_sparse")
    out = mx.sym.Embedding(data, weight=w, input_dim=4, output_dim=3, sparse_grad=True)
    exe = out.simple_bind(mx.cpu(), data=(3,), w=(4, 3), type_dict={"data": ids_dtype},
                          stype_dict={"w": "row_sparse"}, grad_req={"data": "null", "w": "write"})
    exe.arg_dict["w"][:] = weight
    return exe


def _partial_rows():
    """``W`` stored as rows 0, 1 and 3 (row 2 absent: zeros)."""
    return mx.nd.sparse.row_sparse_array((W[[0, 1, 3]], [0, 1, 3]), shape=(4, 3))


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_every_row_stored_looks_up_and_differentiates_as_numpy(dtype):
    exe = _bound(dtype, mx.nd.array(W).tostype("row_sparse"))
    assert exe.arg_dict["w"]._stores_every_row()
    ids = np.array([3, 0, 3])
    exe.arg_dict["data"][:] = mx.nd.array(ids, dtype=dtype)
    out = exe.forward(is_train=True)[0]
    np.testing.assert_array_equal(out.asnumpy(), W[ids])
    exe.backward(mx.nd.ones((3, 3)))
    grad = np.zeros_like(W)
    np.add.at(grad, ids, 1.0)
    assert exe.grad_dict["w"].stype == "row_sparse"
    np.testing.assert_array_equal(exe.grad_dict["w"].asnumpy(), grad)


def test_float_ids_are_truncated_on_a_row_sparse_weight():
    exe = _bound("float32", mx.nd.array(W).tostype("row_sparse"))
    exe.arg_dict["data"][:] = mx.nd.array([2.7, 0.2, 1.9])
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), W[[2, 0, 1]])


@pytest.mark.parametrize("stored", ["every row", "some rows"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
@pytest.mark.parametrize("bad", [4, -1, 100])
def test_an_out_of_range_id_raises_and_names_it(stored, dtype, bad):
    weight = mx.nd.array(W).tostype("row_sparse") if stored == "every row" else _partial_rows()
    exe = _bound(dtype, weight)
    exe.arg_dict["data"][:] = mx.nd.array([0, bad, 1], dtype=dtype)
    for train in (False, True):
        with pytest.raises(IndexOutOfRangeError, match=rf"id {bad} is out of range \[0, 4\)"):
            exe.forward(is_train=train)
    with pytest.raises(IndexError):  # the builtin too
        exe.forward()


def test_some_rows_stored_give_zero_rows_for_the_absent_ones():
    exe = _bound("int64", _partial_rows())
    exe.arg_dict["data"][:] = mx.nd.array([2, 3, 0], dtype="int64")
    expected = W[[2, 3, 0]].copy()
    expected[0] = 0.0
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), expected)

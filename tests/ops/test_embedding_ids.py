"""Embedding's ids: checked against the table (IndexOutOfRangeError naming the id), float ids
truncated to integers, integer ids taken as they are, on the eager and recorded paths."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet import autograd
from sparsenet.base import IndexOutOfRangeError

W = np.arange(12, dtype=np.float32).reshape(4, 3)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_ids_of_every_dtype_look_up_the_numpy_rows(dtype):
    ids = np.array([[3, 0], [1, 1]]).astype(dtype)
    out = mx.nd.Embedding(mx.nd.array(ids, dtype=dtype), mx.nd.array(W), input_dim=4,
                          output_dim=3)
    np.testing.assert_array_equal(out.asnumpy(), W[ids.astype(np.int64)])


def test_float_ids_are_truncated_as_before():
    out = mx.nd.Embedding(mx.nd.array([2.7, 0.2]), mx.nd.array(W), input_dim=4, output_dim=3)
    np.testing.assert_array_equal(out.asnumpy(), W[[2, 0]])


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
@pytest.mark.parametrize("bad", [4, -1, 100])
def test_an_out_of_range_id_raises_and_names_it(dtype, bad):
    ids = mx.nd.array([0, bad, 1], dtype=dtype)
    with pytest.raises(IndexOutOfRangeError, match=rf"id {bad} is out of range \[0, 4\)"):
        mx.nd.Embedding(ids, mx.nd.array(W), input_dim=4, output_dim=3)
    with pytest.raises(IndexError):  # the builtin too
        mx.nd.Embedding(ids, mx.nd.array(W), input_dim=4, output_dim=3)


def test_an_out_of_range_id_raises_while_recording_and_leaves_the_gradient_alone():
    w = mx.nd.array(W)
    w.attach_grad(stype="row_sparse")
    with pytest.raises(IndexOutOfRangeError, match="id 9 is out of range"):
        with autograd.record():
            mx.nd.Embedding(mx.nd.array([1, 9]), w, input_dim=4, output_dim=3)
    with autograd.record():
        y = mx.nd.Embedding(mx.nd.array([1, 3, 1]), w, input_dim=4, output_dim=3).sum()
    y.backward()
    expected = np.zeros_like(W)
    expected[1] = 2
    expected[3] = 1
    np.testing.assert_array_equal(w.grad.asnumpy(), expected)


def test_gluon_embedding_rejects_a_bad_id():
    emb = mx.gluon.nn.Embedding(4, 3, sparse_grad=True)
    emb.initialize()
    with pytest.raises(IndexOutOfRangeError, match="id 4 is out of range"):
        with autograd.record():
            emb(mx.nd.array([0, 4]))

"""``NDArray.copy`` of a dense array: a new buffer with the same values, dtype and context,
cut from any graph outside ``autograd.record()`` and recorded inside it."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet import autograd


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64"])
def test_dense_copy_is_independent_and_keeps_dtype(dtype):
    a = mx.nd.array([[1, 2], [3, 4]], dtype=dtype)
    b = a.copy()
    b[:] = 7
    np.testing.assert_array_equal(a.asnumpy(), np.array([[1, 2], [3, 4]], dtype=dtype))
    assert b.dtype == np.dtype(dtype) and b.stype == "default"


def test_copy_keeps_a_logical_host_context():
    a = mx.nd.ones((2,), ctx=mx.cpu(1))
    assert a.copy().context == mx.cpu(1)
    assert mx.nd.ones((2,)).copy().context == mx.cpu(0)


def test_copy_of_a_variable_outside_record_is_not_in_the_graph():
    w = mx.nd.ones((2, 2))
    w.attach_grad()
    c = w.copy()
    assert not c._t.requires_grad
    c[:] = 5  # writing the copy leaves the variable alone
    np.testing.assert_array_equal(w.asnumpy(), np.ones((2, 2)))


def test_copy_inside_record_carries_the_gradient():
    w = mx.nd.array([[1.0, 2.0]])
    w.attach_grad()
    with autograd.record():
        y = (w * 3).copy().sum()
    y.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), [[3.0, 3.0]])


def test_sparse_copy_keeps_its_storage():
    r = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2))
    c = r.copy()
    assert c.stype == "row_sparse"
    np.testing.assert_array_equal(c.asnumpy(), r.asnumpy())

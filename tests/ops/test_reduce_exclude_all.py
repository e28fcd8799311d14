"""``exclude=True`` without an axis reduces every axis, as MXNet 1.9.1 does (measured:
``mx.nd.sum(mx.nd.arange(12).reshape((3, 4)), exclude=True)`` is ``[66.]``, ``max`` 11,
``axis=(0, 1), exclude=True`` the array itself, ``keepdims=True`` shape (1, 1))."""
import numpy as np
import pytest

import sparsenet as mx


@pytest.mark.parametrize("axis", [None, ()])
def test_exclude_without_axis_reduces_everything(axis):
    x = mx.nd.arange(12).reshape((3, 4))
    kw = {} if axis is None else {"axis": axis}
    assert mx.nd.sum(x, exclude=True, **kw).asnumpy().tolist() == [66.0]
    assert mx.nd.max(x, exclude=True, **kw).asnumpy().tolist() == [11.0]
    assert mx.nd.sum(x, exclude=True, keepdims=True, **kw).shape == (1, 1)


def test_exclude_every_axis_keeps_the_array():
    x = mx.nd.arange(12).reshape((3, 4))
    np.testing.assert_array_equal(mx.nd.sum(x, axis=(0, 1), exclude=True).asnumpy(),
                                  np.arange(12, dtype=np.float32).reshape(3, 4))

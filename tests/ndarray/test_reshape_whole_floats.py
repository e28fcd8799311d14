"""NDArray.reshape takes float dimensions that are whole numbers (MXNet 1.9.1's nightly dist
test writes ``reshape((num_rows/2, 2))``); other floats are still refused."""
import numpy as np
import pytest

import sparsenet as mx


def test_whole_float_dimensions_reshape_as_ints():
    x = mx.nd.array(np.arange(8, dtype=np.float32))
    got = x.reshape((8 / 2, 2))
    assert got.shape == (4, 2)
    np.testing.assert_array_equal(got.asnumpy(), np.arange(8, dtype=np.float32).reshape(4, 2))
    assert x.reshape(shape=(2.0, -1)).shape == (2, 4)


@pytest.mark.parametrize("bad", [(2.5, 2), (float("nan"), 2), (float("inf"), 1)])
def test_other_float_dimensions_are_refused(bad):
    with pytest.raises(mx.MXNetError) as info:
        mx.nd.zeros((4, 2)).reshape(bad)
    assert isinstance(info.value, TypeError)

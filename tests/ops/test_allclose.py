"""``mx.nd.contrib.allclose`` (operator ``_contrib_allclose``): values measured with MXNet 1.9.1."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import InvalidArgumentError, StorageFallbackError

allclose = mx.nd.contrib.allclose
nan, inf = np.nan, np.inf


def _flag(a, b, *args, **kwargs):
    out = allclose(mx.nd.array(a), mx.nd.array(b), *args, **kwargs)
    assert out.dtype == np.uint8 and out.shape == (1,)
    return int(out.asnumpy()[0])


@pytest.mark.parametrize("a, b, args, kwargs, expected", [
    ([1, 2, 3], [1, 2, 3.00001], (), {}, 1),
    ([1, 2, 3], [2, 3, 4.00001], (), {}, 0),
    ([nan], [nan], (), {}, 1),                       # equal_nan defaults to True
    ([nan], [nan], (), {"equal_nan": False}, 0),
    ([nan], [1.0], (), {}, 0),
    ([1.0], [nan], (), {}, 0),
    ([inf], [inf], (), {}, 1),
    ([inf], [1.0], (), {}, 0),
    ([1e10, 1e-7], [1.00001e10, 1e-8], (), {}, 0),   # MXNet's doc example
    ([1e10, 1e-8], [1.00001e10, 1e-9], (), {}, 0),   # float32 rounding, as MXNet
    ([1.0], [1.0001], (1e-3,), {}, 1),                # rtol positionally
    ([1.0], [1.1], (0.0, 0.2), {}, 1),                # rtol, atol positionally
    ([1.0], [1.1], (), {"atol": 0.2}, 1),
    ([[1, 2], [3, 4]], [[1, 2], [3, 4]], (), {}, 1),
], ids=str)
def test_values_equal_mxnet(a, b, args, kwargs, expected):
    assert _flag(a, b, *args, **kwargs) == expected


def test_infinities_compare_like_numpy():
    # MXNet 1.9.1 returns 1 for both (|a - b| = inf <= rtol * inf); NumPy and sparsenet 0
    assert _flag([1.0], [inf]) == 0 and _flag([inf], [-inf]) == 0
    assert not np.allclose([1.0], [inf]) and not np.allclose([inf], [-inf])


def test_dtypes_shapes_and_errors():
    f16 = mx.nd.array([[1, 2], [3, 4]], dtype="float16")
    assert int(allclose(f16, f16).asnumpy()[0]) == 1
    i32 = mx.nd.array([1, 2], dtype="int32")
    assert int(allclose(i32, i32).asnumpy()[0]) == 1
    assert int(allclose(i32, mx.nd.array([1.0, 2.0])).asnumpy()[0]) == 1  # MXNet raises
    with pytest.raises(InvalidArgumentError, match=r"one shape, got \(2,\) and \(2, 2\)"):
        allclose(mx.nd.ones(2), mx.nd.ones((2, 2)))
    with pytest.raises(ValueError, match=r"\(2,\) and \(3,\)"):
        allclose(mx.nd.ones(2), mx.nd.ones(3))


def test_sparse_inputs_fall_back_under_the_policy():
    c = mx.nd.array([[1, 0], [0, 2]]).tostype("csr")
    with pytest.raises(StorageFallbackError):
        allclose(c, c)
    with mx.config.storage_fallback("silent"):
        assert int(allclose(c, c.tostype("default")).asnumpy()[0]) == 1
        assert int(allclose(c, (c * 2)).asnumpy()[0]) == 0


def test_symbolic_operator():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    out = mx.sym._contrib_allclose(a, b, rtol=0.1)
    res = out.eval(a=mx.nd.array([1.0, 2.0]), b=mx.nd.array([1.05, 2.0]))[0]
    assert res.asnumpy().tolist() == [1]

"""mx.test_utils tolerances: MXNet 1.9.1's per-dtype defaults (measured) and how they combine."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet import test_utils as tu
from sparsenet.base import InvalidArgumentError


def test_default_tables_equal_mxnet():
    rt, at, eps = tu.default_rtols(), tu.default_atols(), tu.default_numeric_eps()
    f16, f32, f64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
    assert (rt[f16], rt[f32], rt[f64]) == (1e-2, 1e-4, 1e-5)
    assert (at[f16], at[f32], at[f64]) == (1e-1, 1e-3, 1e-20)
    for t in (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64):
        assert rt[np.dtype(t)] == 0 and at[np.dtype(t)] == 0
    assert eps == {f16: 0.015625, f32: 0.001953125, f64: 6.103515625e-05}
    assert tu.default_dtype() is np.float32


def test_get_rtol_atol_etol():
    # measured with MXNet 1.9.1: float64's defaults when no dtype is given
    assert (tu.get_rtol(), tu.get_atol(), tu.get_etol()) == (1e-05, 1e-20, 0)
    assert tu.get_rtol(dtype=np.dtype("float16")) == 0.01
    assert tu.get_atol(dtype=np.dtype(np.float32)) == 0.001
    assert tu.get_rtol(0.5) == 0.5 and tu.get_etol(0.5) == 0.5
    # MXNet 1.9.1 raises KeyError for a scalar type; any dtype spelling works here
    assert tu.get_rtol(dtype=np.float32) == 1e-4 and tu.get_atol(dtype="float16") == 0.1


def test_get_tols_takes_the_larger_default():
    # measured with MXNet 1.9.1
    assert tu.get_tols(mx.nd.ones(2), np.ones(2), None, None) == (0.0001, 0.001)
    assert tu.get_tols(np.ones(2, dtype="float16"), np.ones(2), None, None) == (0.01, 0.1)
    assert tu.get_tols(1.0, 2, None, None) == (1e-05, 1e-20)
    assert tu.get_tols(np.ones(2, dtype="int32"), np.ones(2, dtype="int64"), None, None) == (0, 0)
    assert tu.get_tols(np.ones(2, dtype="float32"), np.ones(2, dtype="float32"),
                       {np.dtype(np.float32): 0.5}, 3) == (0.5, 3)
    assert tu.get_tols(mx.nd.ones(2, dtype="float64"), np.ones(2), {"float64": 0.25},
                       None) == (0.25, 1e-20)


def test_get_tolerance_and_effective_dtype():
    assert tu.get_tolerance(np.ones(2), None, tu.default_rtols()) == 1e-05
    assert tu.get_tolerance(np.ones(2), {np.dtype(np.float32): 0.5}, tu.default_rtols()) == 1e-5
    assert tu.get_tolerance(np.ones(2), 0.5, tu.default_rtols()) == 0.5
    assert tu.effective_dtype(mx.nd.ones(2)) == np.dtype(np.float32)
    assert tu.effective_dtype(np.ones(2, dtype="int8")) == np.dtype(np.int8)
    with pytest.raises(InvalidArgumentError, match="no default tolerance for dtype complex64"):
        tu.get_tolerance(np.ones(2, dtype=np.complex64), None, tu.default_rtols())

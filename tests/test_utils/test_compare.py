"""mx.test_utils comparisons: MXNet 1.9.1's tolerances, verdicts and failure reports.

Expected messages and printed lines were measured with MXNet 1.9.1.
"""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet import test_utils as tu


def _message(f, *args, **kwargs):
    with pytest.raises(AssertionError) as info:
        f(*args, **kwargs)
    return str(info.value)


def test_report_of_numpy_arrays_matches_mxnet(capsys):
    msg = _message(tu.assert_almost_equal, np.array([1., 2., 3.]), np.array([1., 2.5, 3.]))
    assert msg == ("\nItems are not equal:\nError 20000.000000 exceeds tolerance rtol=1.000000e-05,"
                   " atol=1.000000e-20 (mismatch 33.333333%).\nLocation of maximum error: (1,), "
                   "a=2.00000000, b=2.50000000\n ACTUAL: array([1., 2., 3.])\n DESIRED: "
                   "array([1. , 2.5, 3. ])")
    out = capsys.readouterr().out
    assert out == ("\n*** Maximum errors for vector of size 3:  rtol=1e-05, atol=1e-20\n\n"
                   "  1: Error 20000.000000  Location of error: (1,), a=2.00000000, "
                   "b=2.50000000\n")


def test_report_of_ndarrays_uses_float32_tolerances_and_names():
    msg = _message(tu.assert_almost_equal, mx.nd.array([1., 2., 3.]), mx.nd.array([1., 2.5, 3.]),
                   names=("got", "want"))
    assert msg == ("\nItems are not equal:\nError 400.000000 exceeds tolerance rtol=1.000000e-04,"
                   " atol=1.000000e-03 (mismatch 33.333333%).\nLocation of maximum error: (1,), "
                   "got=2.00000000, want=2.50000000\n ACTUAL: array([1., 2., 3.], dtype=float32)"
                   "\n DESIRED: array([1. , 2.5, 3. ], dtype=float32)")
    tu.assert_almost_equal(mx.nd.array([1., 2., 3.]), np.array([1., 2.00001, 3.]))


def test_mismatch_count_and_listing(capsys):
    a = np.arange(20.).reshape(4, 5)
    msg = _message(tu.assert_almost_equal, a, a * 1.1)
    assert ("Error 9090.909091 exceeds tolerance rtol=1.000000e-05, atol=1.000000e-20 (mismatch "
            "at least 55.000000%).\nLocation of maximum error: (3, 2), a=17.00000000, "
            "b=18.70000000\n ACTUAL:") in msg
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln][1:]
    # measured with MXNet 1.9.1: the worst ten, in this order
    assert [ln.split("error: ")[1].split(")")[0] + ")" for ln in lines] == [
        "(3, 2)", "(2, 4)", "(1, 2)", "(2, 1)", "(2, 2)", "(3, 4)", "(3, 1)", "(0, 4)",
        "(1, 3)", "(2, 3)"]
    assert lines[0] == "  1: Error 9090.909091  Location of error: (3, 2), a=17.00000000, " \
                       "b=18.70000000"
    msg = _message(tu.assert_almost_equal, a, a * 1.1, mismatches=(2, 3))
    assert "(mismatch at least 20.000000%)" in msg
    assert len([ln for ln in capsys.readouterr().out.splitlines() if ln]) == 3
    msg = _message(tu.assert_almost_equal, a, a * 1.1, mismatches=(2, 0))
    assert "(mismatch 95.000000%)" in msg


def test_shapes_broadcast_or_fail():
    tu.assert_almost_equal(np.ones(3), np.ones((2, 3)))
    msg = _message(tu.assert_almost_equal, np.ones(3), np.ones((2, 3)) * 2)
    assert "(mismatch 100.000000%)" in msg and "Location of maximum error: (0, 0)" in msg
    msg = _message(tu.assert_almost_equal, np.ones(3), np.ones((2, 3)), use_broadcast=False)
    assert msg == ("\nItems are not equal: a.shape = (3,) and b.shape = (2, 3) are not equal\n "
                   "ACTUAL: array([1., 1., 1.])\n DESIRED: array([[1., 1., 1.],\n       "
                   "[1., 1., 1.]])")
    msg = _message(tu.assert_almost_equal, np.ones(3), np.ones(4), names=("x", "y"))
    assert "x.shape = (3,) and y.shape = (4,) do not broadcast together" in msg


def test_nan_bool_int_and_scalar_cases():
    msg = _message(tu.assert_almost_equal, np.array([np.nan]), np.array([np.nan]))
    assert msg == ("\nItems are not equal:\nError nan exceeds tolerance rtol=1.000000e-05, "
                   "atol=1.000000e-20 (mismatch 100.000000%).\nLocation of maximum error: (0,),"
                   " a=nan, b=nan\n ACTUAL: array([nan])\n DESIRED: array([nan])")
    tu.assert_almost_equal(np.array([np.nan]), np.array([np.nan]), equal_nan=True)
    msg = _message(tu.assert_almost_equal, np.array([1.0, np.nan]), np.array([1.0, 2.0]))
    assert "Error nan exceeds" in msg and "(mismatch 50.000000%)" in msg
    # a matching NaN pair is not reported as the worst error (MXNet 1.9.1 reports it)
    msg = _message(tu.assert_almost_equal, np.array([np.nan, 1.0]), np.array([np.nan, 3.0]),
                   equal_nan=True)
    assert "Location of maximum error: (1,), a=1.00000000, b=3.00000000" in msg
    msg = _message(tu.assert_almost_equal, np.array([True, False]), np.array([True, True]))
    assert "Arrays are not equal" in msg and "Mismatched elements: 1 / 2 (50%)" in msg
    msg = _message(tu.assert_almost_equal, np.array([1, 2]), np.array([1, 3]))
    assert msg.startswith("\nItems are not equal:\nError 100000000000000000000.000000 exceeds "
                          "tolerance rtol=0.000000e+00, atol=0.000000e+00 (mismatch 50.000000%)")
    msg = _message(tu.assert_almost_equal, np.array([3], dtype=np.uint8),
                   np.array([1], dtype=np.uint8))
    assert "a=3.00000000, b=1.00000000" in msg and "Error 200000000000000000000.0" in msg
    assert _message(tu.assert_almost_equal, 1.0, 2.0) == (
        "\nItems are not equal:\nError 50000.000000 exceeds tolerance rtol=1.000000e-05, "
        "atol=1.000000e-20.\n\n ACTUAL: 1.0\n DESIRED: 2.0")
    msg = _message(tu.assert_almost_equal, np.float32(1.0), np.float32(2.0))
    assert msg.startswith("\nItems are not equal:\nError 833.333333 exceeds tolerance "
                          "rtol=1.000000e-04, atol=1.000000e-03.\n\n")
    tu.assert_almost_equal(1.0, 1.00001)


def test_tolerance_arguments_and_infinities():
    tu.assert_almost_equal(np.array([1.0, 2.0]), np.array([1.0, 2.3]), rtol=0.1, atol=0.1)
    tu.assert_almost_equal(np.array([1.0, 2.0]), np.array([1.0, 2.3]),
                           rtol={np.dtype(np.float64): 0.2})
    tu.assert_almost_equal(np.array([1.0, np.inf]), np.array([1.0, np.inf]))
    msg = _message(tu.assert_almost_equal, np.array([1.0, np.inf]), np.array([1.0, -np.inf]))
    assert "Error nan exceeds" in msg and "a=inf, b=-inf" in msg
    # MXNet 1.9.1 passes these two NDArray comparisons (its allclose operator); NumPy's rule
    # fails them
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(mx.nd.array([1.0, np.inf]), mx.nd.array([1.0, -np.inf]))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(mx.nd.array([1.0, 1.0]), mx.nd.array([1.0, np.inf]))


def test_sparse_arrays_compare_without_fallback():
    c = mx.nd.array([[1, 0], [0, 2]]).tostype("csr")
    tu.assert_almost_equal(c, c)
    tu.assert_almost_equal(c, c.tostype("default"))
    tu.assert_almost_equal(c.tostype("row_sparse"), c)
    msg = _message(tu.assert_almost_equal, c, c * 2)
    assert ("Error 1428.571411 exceeds tolerance rtol=1.000000e-04, atol=1.000000e-03 (mismatch "
            "50.000000%).\nLocation of maximum error: (1, 1), a=2.00000000, b=4.00000000") in msg


def test_assert_allclose_with_err_and_ignore_nan():
    tu.assert_allclose(np.array([1.0, 2.0]), np.array([1.0, 2.0000001]))
    msg = _message(tu.assert_allclose, np.array([1.0, 2.0]), np.array([1.0, 2.00001]))
    assert "Error 49.999750 exceeds tolerance rtol=1.000000e-07, atol=0.000000e+00" in msg
    tu.assert_allclose(np.array([np.nan, 2.0]), np.array([np.nan, 2.0]))
    a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0, 9.0])
    tu.assert_almost_equal_with_err(a, b, etol=0.3)
    msg = _message(tu.assert_almost_equal_with_err, a, b, etol=0.2, names=("p", "q"))
    assert "(mismatch 25.000000%)" in msg and "p=4.00000000, q=9.00000000" in msg
    msg = _message(tu.assert_almost_equal_with_err, a, b)  # etol 0: the plain assertion
    assert "(mismatch 25.000000%)" in msg
    nan = np.nan
    tu.assert_almost_equal_with_err(np.array([nan, 1.0]), np.array([nan, 1.0]), etol=0.4,
                                    equal_nan=True)
    tu.assert_almost_equal_ignore_nan(np.array([nan, 1.0]), np.array([5.0, 1.0]))
    msg = _message(tu.assert_almost_equal_ignore_nan, np.array([nan, 1.0]),
                   np.array([5.0, 2.0]), names=("l", "r"))
    assert "Location of maximum error: (1,), l=1.00000000, r=2.00000000" in msg
    assert tu.almost_equal_ignore_nan(np.array([nan, 1.0]), np.array([2.0, 1.0]))
    assert not tu.almost_equal_ignore_nan(np.array([nan, 1.0]), np.array([2.0, 1.5]))


def test_almost_equal_same_check_shapes_location_error():
    # measured with MXNet 1.9.1: float64 tolerances (1e-5, 1e-20) whatever the dtype
    assert tu.almost_equal(np.ones(2), np.ones(2) + 1e-6)
    assert not tu.almost_equal(np.ones(2), np.ones(2) + 1e-4)
    assert not tu.almost_equal(np.ones(2, dtype=np.float32), np.ones(2) + 1e-4)
    assert tu.almost_equal(np.ones(2), np.ones((2, 2)))
    assert not tu.almost_equal(np.ones(2), np.ones(3))
    assert tu.almost_equal(mx.nd.ones(2), np.ones(2))
    assert tu.almost_equal(np.array([np.nan]), np.array([np.nan]), equal_nan=True)
    with pytest.raises(AssertionError, match=r"a.shape = \(2,\) and b.shape = \(2, 2\)"):
        tu.almost_equal(np.ones(2), np.ones((2, 2)), use_broadcast=False)
    assert tu.same(mx.nd.ones(2), np.ones(2)) and not tu.same(np.ones(2), np.ones(3))
    msg = _message(tu.checkShapes, np.ones(2), np.ones(3))
    assert msg == ("\nItems are not equal: a.shape = (2,) and b.shape = (3,) are not equal\n "
                   "ACTUAL: array([1., 1.])\n DESIRED: array([1., 1., 1.])")
    tu.checkShapes(mx.nd.ones((2, 3)), np.zeros((2, 3)))
    assert tu.locationError(np.array([1., 2.]), np.array([1., 3.]), (np.int64(1),),
                            ("x", "y")) == "Location of error: (1,), x=2.00000000, y=3.00000000"
    assert tu.locationError(np.array([1., 2.]), np.array([1., 3.]), (1,), ("x", "y"),
                            maxError=True).startswith("Location of maximum error: (1,)")


def test_assert_exception():
    tu.assert_exception(int, ValueError, "x")
    tu.assert_exception(lambda **kw: int(kw["v"]), ValueError, v="x")
    with pytest.raises(AssertionError, match="<lambda> did not raise ValueError"):
        tu.assert_exception(lambda: None, ValueError)
    # MXNet 1.9.1 passes here (its own assert is caught as the expected AssertionError)
    with pytest.raises(AssertionError, match="did not raise AssertionError"):
        tu.assert_exception(lambda: None, AssertionError)
    with pytest.raises(ZeroDivisionError):
        tu.assert_exception(lambda: 1 / 0, ValueError)

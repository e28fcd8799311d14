"""mx.test_utils: random sparse arrays (exact nnz, distributions) and comparisons."""
import os

import numpy as np
import pytest

import sparsenet as mx
from sparsenet import test_utils as tu


def test_rand_ndarray_csr_exact_nnz_and_numpy_seed():
    np.random.seed(3)
    a = tu.rand_ndarray((50, 40), "csr", density=0.1)
    np.random.seed(3)
    b = tu.rand_ndarray((50, 40), "csr", density=0.1)
    assert a.nnz == 200 and a.dtype == np.float32
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    a.check_format()
    vals = a.data.asnumpy()
    assert vals.min() >= 0 and vals.max() < 1
    mx.random.seed(1)  # mx.random.seed does not drive rand_ndarray (MXNet semantics)
    c = tu.rand_ndarray((50, 40), "csr", density=0.1)
    assert not np.array_equal(a.asnumpy(), c.asnumpy())


def test_rand_ndarray_large_csr_is_fast_and_uniform():
    a = tu.rand_ndarray((1000, 1000000), "csr", density=0.00001)
    assert a.nnz == 10000
    cols = a.indices.asnumpy()
    assert 400000 < cols.mean() < 600000  # uniform over the columns
    rows = np.diff(a.indptr.asnumpy())
    assert 5 < rows.mean() < 15


def test_rand_sparse_ndarray_row_sparse_and_options():
    arr, (data, idx) = tu.rand_sparse_ndarray((200, 3), "row_sparse", density=0.3)
    assert arr.stype == "row_sparse" and 30 < idx.size < 90
    np.testing.assert_array_equal(arr.indices.asnumpy(), idx)
    np.testing.assert_array_equal(arr.data.asnumpy(), data)
    arr, (data, idx) = tu.rand_sparse_ndarray((10, 2), "row_sparse", rsp_indices=[7, 2],
                                              data_init=5.0)
    assert idx.tolist() == [2, 7] and (data == 5).all()
    arr, (p, i, d) = tu.rand_sparse_ndarray((6, 30), "csr", density=0.5,
                                            distribution="powerlaw")
    lengths = np.diff(p.asnumpy())
    assert arr.nnz == 90 and lengths[0] >= 1 and (lengths > 0).all()
    assert lengths[3] > lengths[1]
    arr, _ = tu.rand_sparse_ndarray((4, 8), "csr", density=0.9, modifier_func=lambda v: 2 * v)
    vals = arr.data.asnumpy()
    assert (vals < 2).all() and (vals >= 0).all() and vals.max() > 1  # values doubled
    bad, _ = tu.rand_sparse_ndarray((5, 20), "csr", density=0.8, shuffle_csr_indices=True)
    with pytest.raises(mx.base.SparseFormatError):
        bad.check_format()
    with pytest.raises(ValueError, match="density must be in"):
        tu.rand_sparse_ndarray((2, 2), "csr", density=2)
    with pytest.raises(ValueError, match="stype must be"):
        tu.rand_sparse_ndarray((2, 2), "dense")


def test_dense_rand_ndarray_and_shapes():
    a = tu.rand_ndarray((3, 4), dtype="float64")
    assert a.stype == "default" and a.dtype == np.float64
    for s in (tu.rand_shape_2d(), tu.rand_shape_3d(), tu.rand_shape_nd(5)):
        assert all(1 <= d <= 10 for d in s)
    assert len(tu.rand_shape_nd(4, dim=3)) == 4


def test_assert_almost_equal_and_same():
    a = mx.nd.array([1.0, 2.0, 3.0])
    tu.assert_almost_equal(a, np.array([1.0, 2.0, 3.00001]))
    tu.assert_almost_equal(a.tostype("row_sparse"), a)
    with pytest.raises(AssertionError, match=r"mismatch 33.333333%.*\n.*got=2.0+, want=2.50+"):
        tu.assert_almost_equal(a, np.array([1.0, 2.5, 3.0]), names=("got", "want"))
    with pytest.raises(AssertionError, match="do not broadcast together"):
        tu.assert_almost_equal(a, np.ones((2, 2)))
    tu.assert_almost_equal(np.array([np.nan]), np.array([np.nan]), equal_nan=True)
    assert tu.almost_equal(a, a.asnumpy()) and not tu.almost_equal(a, np.zeros(3))
    assert tu.same(a, np.array([1.0, 2.0, 3.0])) and not tu.same(a, a * 2)


def test_contexts_and_environment():
    assert tu.default_context() == mx.cpu()
    tu.set_default_context(mx.cpu(0))
    assert tu.default_context() == mx.cpu(0)
    assert list(tu.list_gpus()) == list(range(mx.num_gpus()))
    os.environ.pop("SN_X", None)
    with tu.environment({"SN_X": "1", "SN_Y": None}):
        assert os.environ["SN_X"] == "1" and "SN_Y" not in os.environ
    assert "SN_X" not in os.environ
    tu.assert_exception(mx.nd.ones((2,)).asscalar, ValueError)
    with pytest.raises(AssertionError, match="did not raise"):
        tu.assert_exception(lambda: None, ValueError)

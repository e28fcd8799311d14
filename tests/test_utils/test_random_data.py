"""mx.test_utils random data: MXNet's draw order, return types and options.

Expected values were measured with MXNet 1.9.1 (same NumPy seed, same call).
"""
import numpy as np
import pytest
import scipy.sparse as sp

import sparsenet as mx
from sparsenet import test_utils as tu
from sparsenet.base import InvalidArgumentError


def test_row_sparse_equals_mxnet_for_a_seed():
    np.random.seed(7)
    arr, (data, idx) = tu.rand_sparse_ndarray((6, 2), "row_sparse", density=0.5)
    # measured with MXNet 1.9.1
    assert idx.tolist() == [0, 2]
    np.testing.assert_allclose(data, [[0.5011204481124878, 0.07205113023519516],
                                      [0.26843899488449097, 0.4998824894428253]], rtol=1e-7)
    assert isinstance(data, np.ndarray) and isinstance(idx, np.ndarray)
    assert data.dtype == np.float32 and idx.dtype == np.int64
    np.testing.assert_array_equal(arr.indices.asnumpy(), idx)
    np.testing.assert_array_equal(arr.data.asnumpy(), data)


def test_row_sparse_data_init_still_draws_values_like_mxnet():
    np.random.seed(7)
    _, (data, idx) = tu.rand_sparse_ndarray((6, 2), "row_sparse", density=0.5, data_init=4.0)
    assert idx.tolist() == [0, 2] and (data == 4).all()
    # the next draw equals MXNet's: the values were drawn, then overwritten (MXNet 1.9.1)
    assert np.random.rand() == pytest.approx(0.6792299961209405, rel=1e-12)


def test_row_sparse_modifier_and_random_density():
    np.random.seed(7)
    _, (data, _) = tu.rand_sparse_ndarray((6, 2), "row_sparse", density=0.5,
                                          modifier_func=lambda v: v + 10)
    np.testing.assert_allclose(data, [[10.501120448112488, 10.072051130235195],
                                      [10.268438994884491, 10.499882489442825]], rtol=1e-6)
    np.random.seed(3)
    _, (_, idx) = tu.rand_sparse_ndarray((6, 2), "row_sparse")
    assert idx.tolist() == [1, 2, 5]  # density drawn from U[0,1), MXNet 1.9.1


def test_csr_returns_indptr_indices_data_ndarrays():
    np.random.seed(0)
    arr, parts = tu.rand_sparse_ndarray((4, 5), "csr", density=0.5)
    assert len(parts) == 3 and all(isinstance(p, mx.nd.NDArray) for p in parts)
    indptr, indices, data = parts
    np.testing.assert_array_equal(indptr.asnumpy(), arr.indptr.asnumpy())
    np.testing.assert_array_equal(indices.asnumpy(), arr.indices.asnumpy())
    np.testing.assert_array_equal(data.asnumpy(), arr.data.asnumpy())
    assert indptr.dtype == np.int64 and data.dtype == np.float32 and arr.nnz == 10


def test_powerlaw_equals_mxnet_for_a_seed():
    np.random.seed(3)
    arr, (indptr, indices, data) = tu.rand_sparse_ndarray((4, 6), "csr", density=0.5,
                                                          distribution="powerlaw")
    # measured with MXNet 1.9.1
    assert indptr.asnumpy().tolist() == [0, 2, 6, 11, 12]
    assert indices.asnumpy().tolist() == [0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 0]
    np.testing.assert_allclose(data.asnumpy(), [
        2.1020450592041016, 2.786000967025757, 2.4165875911712646, 2.792689800262451,
        1.2520450353622437, 1.4152785539627075, 1.5825185775756836, 1.103882908821106,
        1.8821789026260376, 1.0607225894927979, 1.9142096042633057, 2.022144317626953],
        rtol=1e-7)
    np.random.seed(3)  # a row as wide as the matrix is filled with one value
    arr, _ = tu.rand_sparse_ndarray((3, 4), "csr", density=0.75, distribution="powerlaw")
    np.testing.assert_allclose(arr.asnumpy(), [
        [2.1020450592041016, 2.022144317626953, 0.0, 0.0],
        [2.786000967025757] * 4,
        [1.5825185775756836, 2.792689800262451, 1.2520450353622437, 0.0]], rtol=1e-7)


def test_powerlaw_rejects_too_few_values():
    with pytest.raises(InvalidArgumentError, match=r"powerlaw needs density \* rows \* cols"):
        tu.rand_sparse_ndarray((4, 6), "csr", density=0.1, distribution="powerlaw")
    with pytest.raises(InvalidArgumentError, match="cannot place 12 values"):
        tu.rand_sparse_ndarray((3, 4), "csr", density=1.0, distribution="powerlaw")
    with pytest.raises(InvalidArgumentError, match="for CSR only"):
        tu.rand_sparse_ndarray((3, 4), "row_sparse", distribution="powerlaw")
    with pytest.raises(ValueError, match="distribution must be"):
        tu.rand_sparse_ndarray((3, 4), "csr", distribution="zipf")
    with pytest.raises(ValueError, match="a CSR array is 2-D"):
        tu.rand_sparse_ndarray((3, 4, 2), "csr")
    with pytest.raises(mx.MXNetError, match=r"rsp_indices must be in \[0, 3\)"):
        tu.rand_sparse_ndarray((3, 4), "row_sparse", rsp_indices=[0, 3])


def test_csr_options_apply_to_both_distributions():
    np.random.seed(1)
    arr, _ = tu.rand_sparse_ndarray((4, 8), "csr", density=0.5, data_init=7.0,
                                    distribution="powerlaw")
    assert (arr.data.asnumpy() == 7).all() and arr.nnz == 16
    arr, _ = tu.rand_sparse_ndarray((4, 8), "csr", density=0.5, modifier_func=lambda v: -v,
                                    distribution="powerlaw")
    assert (arr.data.asnumpy() < -1).all()
    bad, (indptr, indices, _) = tu.rand_sparse_ndarray((4, 8), "csr", density=0.5,
                                                       distribution="powerlaw",
                                                       shuffle_csr_indices=True)
    rows = np.split(indices.asnumpy(), indptr.asnumpy()[1:-1])
    assert [sorted(r.tolist()) for r in rows] == [list(range(len(r))) for r in rows]
    with pytest.raises(mx.base.SparseFormatError):
        bad.check_format()


def test_dense_rand_ndarray_equals_mxnet_and_applies_modifier():
    np.random.seed(5)
    a = tu.rand_ndarray((2, 2))
    np.testing.assert_allclose(a.asnumpy(), [[0.4412274956703186, -0.3308701515197754],
                                             [2.4307711124420166, -0.2520921230316162]],
                               rtol=1e-7)  # measured with MXNet 1.9.1
    assert a.dtype == np.float32 and a.context == tu.default_context()
    np.random.seed(5)
    b = tu.rand_ndarray((2, 2), modifier_func=abs)
    np.testing.assert_array_equal(b.asnumpy(), np.abs(a.asnumpy()))


def test_shapes_samples_and_uniform_arrays_equal_mxnet():
    np.random.seed(5)
    # measured with MXNet 1.9.1
    assert tu.rand_shape_2d() == (4, 7)
    assert tu.rand_shape_3d(3, 4, 5) == (3, 1, 2)
    assert tu.rand_shape_nd(3, 4) == (1, 1, 4)
    assert tu.rand_shape_2d(2, 2, allow_zero_size=True) == (2, 0)
    np.random.seed(5)
    population = list(range(10))
    assert tu.random_sample(population, 4) == [9, 5, 2, 4]
    assert population == list(range(10))
    with pytest.raises(InvalidArgumentError, match=r"k must be in \[0, 2\]"):
        tu.random_sample([1, 2], 3)
    np.random.seed(5)
    (u,) = tu.random_uniform_arrays((3,), low=2, high=3)
    np.testing.assert_allclose(u, [2.2219932079315186, 2.870732307434082, 2.206719160079956],
                               rtol=1e-7)
    assert u.dtype == np.float32
    with pytest.raises(TypeError):
        tu.random_uniform_arrays((2,), foo=1)
    np.random.seed(0)
    x, y = tu.rand_coord_2d(0, 10, 5, 9)
    assert (int(x), int(y)) == (5, 5)
    a, b = tu.random_arrays((2,), ())
    assert a.shape == (2,) and b.shape == () and b.dtype == np.float32


def test_assign_each_and_shuffle_csr_column_indices():
    out = tu.assign_each(np.array([1.0, 2.0], dtype=np.float32), lambda v: v * 2)
    assert out.dtype == np.float64 and out.tolist() == [2.0, 4.0]
    assert tu.assign_each(np.array([1, 2]), None).tolist() == [1, 2]
    assert tu.assign_each2(np.array([1., 2.]), np.array([3., 4.]),
                           lambda x, y: x + y).tolist() == [4.0, 6.0]
    with pytest.raises(InvalidArgumentError, match="one shape"):
        tu.assign_each2(np.ones(2), np.ones(3), max)
    m = sp.csr_matrix(np.arange(1, 13).reshape(2, 6))
    np.random.seed(2)
    tu.shuffle_csr_column_indices(m)
    # measured with MXNet 1.9.1: only the indices move
    assert m.indices.tolist() == [4, 1, 3, 2, 5, 0, 5, 4, 3, 1, 2, 0]
    assert m.data.tolist() == list(range(1, 13))


def test_create_sparse_array_and_zd():
    np.random.seed(5)
    a = tu.create_sparse_array((6, 2), "row_sparse")
    assert a.indices.asnumpy().tolist() == [0, 2, 4]  # measured with MXNet 1.9.1
    np.testing.assert_allclose(a.data.asnumpy(), [[0.765907883644104, 0.51841801404953],
                                                  [0.29680049419403076, 0.18772122263908386],
                                                  [0.0807412713766098, 0.7384402751922607]],
                               rtol=1e-7)
    b = tu.create_sparse_array((5, 3), "row_sparse", rsp_indices=[4, 1], data_init=3.0)
    assert b.indices.asnumpy().tolist() == [1, 4] and (b.data.asnumpy() == 3).all()
    assert tu.create_sparse_array_zd((5, 3), "row_sparse", density=0.9).nnz == 0
    c = tu.create_sparse_array_zd((5, 3), "row_sparse", density=0.9, rsp_indices=[0, 2])
    assert c.indices.asnumpy().tolist() == [0, 2] and c.data.shape == (2, 3)
    d = tu.create_sparse_array_zd((5, 3), "csr", density=0.4, data_init=7)
    assert d.nnz == 6 and (d.data.asnumpy() == 7).all()
    with pytest.raises(InvalidArgumentError, match="stype must be 'csr' or 'row_sparse'"):
        tu.create_sparse_array((5, 3), "default")


def test_empty_row_sparse_and_ctx():
    arr, (data, idx) = tu.rand_sparse_ndarray((4, 3), "row_sparse", density=0.0,
                                              ctx=mx.cpu(0))
    assert arr.nnz == 0 and data.shape == (0, 3) and idx.size == 0
    assert arr.context == mx.cpu(0)


def test_row_sparse_density_over_one_keeps_every_row_csr_raises():
    # MXNet 1.9.1: rand_ndarray((3, 4), 'row_sparse', density=1.5) stores rows [0 1 2];
    # the CSR generator raises ValueError("density has to be between 0 and 1")
    a = mx.test_utils.rand_ndarray((3, 4), "row_sparse", density=1.5)
    assert a.indices.asnumpy().tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="density"):
        mx.test_utils.rand_ndarray((3, 4), "csr", density=1.5)


def test_num_aux_of_sparse_arrays():
    # MXNet 1.9.1: row_sparse 1, csr 2
    assert mx.nd.sparse.zeros("row_sparse", (2, 2))._num_aux == 1
    assert mx.nd.sparse.zeros("csr", (2, 2))._num_aux == 2

"""Seed 002, "RowSparseNDArray - NDArray for Sparse Gradient Updates", up to "Sparse Optimizers".

Each test is one code block of the tutorial, run with ``import sparsenet as mx``.
The extracted text lost some ``mx.nd.`` prefixes (``Y =, W)``); the calls are
restored as the reference (mxnet_semantics.md) states. The expected values are
the tutorial's and MXNet 1.9.1's.
"""
import numpy as np
import pytest

import sparsenet as mx


def test_dot_and_its_gradient_by_hand():
    X = mx.nd.array([[1, 0]])
    W = mx.nd.array([[3, 4, 5], [6, 7, 8]])
    Y = mx.nd.dot(X, W)
    out = {'X': X, 'W': W, 'Y': Y}
    np.testing.assert_array_equal(out['Y'].asnumpy(), [[3, 4, 5]])
    grad_W = mx.nd.dot(X, mx.nd.ones_like(Y), transpose_a=True)
    np.testing.assert_array_equal(grad_W.asnumpy(), [[1, 1, 1], [0, 0, 0]])


def test_array_creation():
    shape = (6, 2)
    data_list = [[1, 2], [3, 4]]
    indices_list = [1, 4]
    a = mx.nd.sparse.row_sparse_array((data_list, indices_list), shape=shape)
    data_np = np.array([[1, 2], [3, 4]])
    indices_np = np.array([1, 4])
    b = mx.nd.sparse.row_sparse_array((data_np, indices_np), shape=shape)
    out = {'a': a, 'b': b}
    expected = np.zeros(shape)
    expected[[1, 4]] = [[1, 2], [3, 4]]
    for arr in out.values():
        assert arr.stype == 'row_sparse'
        np.testing.assert_array_equal(arr.asnumpy(), expected)
    assert a.dtype == np.float32 and b.dtype == np.int64


def test_setting_type():
    a = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 4]), shape=(6, 2))
    # Float32 is used by default
    c = mx.nd.sparse.array(a)
    # Create a 16-bit float array
    d = mx.nd.array(a, dtype=np.float16)
    assert (c.dtype, d.dtype) == (np.float32, np.float16)
    assert (c.stype, d.stype) == ('row_sparse', 'row_sparse')


def test_inspecting_arrays():
    a = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 4]), shape=(6, 2))
    np.testing.assert_array_equal(a.asnumpy(), [[0, 0], [1, 2], [0, 0], [0, 0], [3, 4], [0, 0]])
    # Access data array
    data = a.data
    # Access indices array
    indices = a.indices
    out = {'a.stype': a.stype, 'data': data, 'indices': indices}
    assert out['a.stype'] == 'row_sparse'
    np.testing.assert_array_equal(out['data'].asnumpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(out['indices'].asnumpy(), [1, 4])


def test_storage_type_conversion():
    # Create a dense NDArray
    ones = mx.nd.ones((2, 2))
    # Cast the storage type from `default` to `row_sparse`
    rsp = ones.tostype('row_sparse')
    # Cast the storage type from `row_sparse` to `default`
    dense = rsp.tostype('default')
    out = {'rsp': rsp, 'dense': dense}
    assert out['rsp'].stype == 'row_sparse' and out['dense'].stype == 'default'
    np.testing.assert_array_equal(out['dense'].asnumpy(), np.ones((2, 2)))

    ones = mx.nd.ones((2, 2))
    rsp = mx.nd.sparse.cast_storage(ones, 'row_sparse')
    dense = mx.nd.sparse.cast_storage(rsp, 'default')
    assert rsp.stype == 'row_sparse' and dense.stype == 'default'
    np.testing.assert_array_equal(dense.asnumpy(), np.ones((2, 2)))


def test_copy():
    a = mx.nd.ones((2, 2)).tostype('row_sparse')
    b = a.copy()
    c = mx.nd.sparse.zeros('row_sparse', (2, 2))
    c[:] = a
    d = mx.nd.sparse.zeros('row_sparse', (2, 2))
    out = {'b is a': b is a, 'b.asnumpy()': b.asnumpy(), 'c.asnumpy()': c.asnumpy(),
           'd.asnumpy()': d.asnumpy()}
    assert out['b is a'] is False
    np.testing.assert_array_equal(out['b.asnumpy()'], np.ones((2, 2)))
    np.testing.assert_array_equal(out['c.asnumpy()'], np.ones((2, 2)))
    np.testing.assert_array_equal(out['d.asnumpy()'], np.zeros((2, 2)))

    e = mx.nd.sparse.zeros('row_sparse', (2, 2))
    f = mx.nd.sparse.zeros('row_sparse', (2, 2))
    g = mx.nd.ones(e.shape)
    e[:] = g
    out = {'e.stype': e.stype, 'f.stype': f.stype, 'g.stype': g.stype}
    assert out == {'e.stype': 'row_sparse', 'f.stype': 'row_sparse', 'g.stype': 'default'}
    np.testing.assert_array_equal(e.asnumpy(), np.ones((2, 2)))


def test_retain_row_slices():
    data = [[1, 2], [3, 4], [5, 6]]
    indices = [0, 2, 3]
    rsp = mx.nd.sparse.row_sparse_array((data, indices), shape=(5, 2))
    # Retain row 0 and row 1
    rsp_retained = mx.nd.sparse.retain(rsp, mx.nd.array([0, 1]))
    out = {'rsp.asnumpy()': rsp.asnumpy(), 'rsp_retained': rsp_retained,
           'rsp_retained.asnumpy()': rsp_retained.asnumpy()}
    np.testing.assert_array_equal(out['rsp.asnumpy()'],
                                  [[1, 2], [0, 0], [3, 4], [5, 6], [0, 0]])
    assert out['rsp_retained'].stype == 'row_sparse'
    np.testing.assert_array_equal(out['rsp_retained.asnumpy()'],
                                  [[1, 2], [0, 0], [0, 0], [0, 0], [0, 0]])


def _transpose_dot():
    shape = (3, 5)
    data = [7, 8, 9]
    indptr = [0, 2, 2, 3]
    indices = [0, 2, 1]
    # A csr matrix as lhs
    lhs = mx.nd.sparse.csr_matrix((data, indices, indptr), shape=shape)
    # A dense matrix as rhs
    rhs = mx.nd.ones((3, 2))
    # row_sparse result is inferred from sparse operator dot(csr.T, dense) based on input stypes
    transpose_dot = mx.nd.sparse.dot(lhs, rhs, transpose_a=True)
    return transpose_dot


def test_sparse_operators_and_storage_type_inference():
    transpose_dot = _transpose_dot()
    out = {'transpose_dot': transpose_dot, 'transpose_dot.asnumpy()': transpose_dot.asnumpy()}
    assert out['transpose_dot'].stype == 'row_sparse'
    np.testing.assert_array_equal(out['transpose_dot.asnumpy()'],
                                  [[7, 7], [9, 9], [8, 8], [0, 0], [0, 0]])

    a = transpose_dot.copy()
    b = a * 2  # b will be a RowSparseNDArray since zero multiplied by 2 is still zero
    c = a + mx.nd.ones((5, 2))  # c will be a dense NDArray
    assert {'b.stype': b.stype, 'c.stype': c.stype} == {'b.stype': 'row_sparse',
                                                        'c.stype': 'default'}


def test_storage_fallback():
    a = _transpose_dot().copy()
    with mx.config.storage_fallback('warn'):
        mx.config.reset_fallback_counts()
        with pytest.warns(mx.base.StorageFallbackWarning, match="'log'"):
            e = mx.nd.sparse.zeros('row_sparse', a.shape)
            d = mx.nd.log(a)  # dense operator with a sparse input
            e = mx.nd.log(a, out=e)  # dense operator with a sparse output
    out = {'a.stype': a.stype, 'd.stype': d.stype, 'e.stype': e.stype}
    # stypes of a and e will be not changed
    assert out == {'a.stype': 'row_sparse', 'd.stype': 'default', 'e.stype': 'row_sparse'}
    np.testing.assert_allclose(e.asnumpy(), d.asnumpy())
    assert d.asnumpy()[0, 0] == pytest.approx(np.log(7))


def test_gpu_block_reports_mxneterror_without_a_gpu():
    gpu_device = mx.gpu()  # Change this to mx.cpu() in absence of GPUs.
    try:
        a = mx.nd.sparse.zeros('row_sparse', (100, 100), ctx=gpu_device)
        assert a.context == gpu_device
    except mx.MXNetError as err:
        assert not mx.test_utils.list_gpus()
        assert "gpu(0) is not available" in str(err)

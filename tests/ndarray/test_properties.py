"""Property tests (hypothesis): storage round trips and constructor validation."""
import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sparsenet as mx
from sparsenet.base import SparseFormatError

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

values = st.sampled_from([0.0, 0.0, 0.0, 1.0, -2.5, 3.25, 1e-3])


def sparse_matrices(max_rows=7, max_cols=7):
    return hnp.arrays(np.float32, st.tuples(st.integers(0, max_rows), st.integers(0, max_cols)),
                      elements=values)


def sparse_tensors():
    return hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0,
                                                   max_side=5), elements=values)


@SETTINGS
@given(sparse_matrices())
def test_dense_csr_scipy_round_trip(x):
    c = mx.nd.array(x).tostype("csr")
    c.check_format()
    np.testing.assert_array_equal(c.asnumpy(), x)
    ref = sp.csr_matrix(x)
    got = c.asscipy()
    np.testing.assert_array_equal(got.indptr, ref.indptr)
    np.testing.assert_array_equal(got.indices, ref.indices)
    np.testing.assert_array_equal(got.data, ref.data)
    again = mx.nd.sparse.csr_matrix(got)
    np.testing.assert_array_equal(again.asnumpy(), x)
    np.testing.assert_array_equal(c.tostype("default").asnumpy(), x)


@SETTINGS
@given(sparse_tensors())
def test_dense_row_sparse_round_trip(x):
    r = mx.nd.array(x, dtype="float64").tostype("row_sparse")
    r.check_format()
    np.testing.assert_array_equal(r.asnumpy(), x)
    kept = np.nonzero(x.reshape(x.shape[0], -1).any(axis=1))[0] if x.size else np.zeros(0)
    np.testing.assert_array_equal(r.indices.asnumpy(), kept)
    if x.ndim == 2:
        c = r.tostype("csr")
        c.check_format()
        np.testing.assert_array_equal(c.asnumpy(), x)
        np.testing.assert_array_equal(c.tostype("row_sparse").asnumpy(), x)


def _valid_csr(data, indices, indptr, shape):
    """Independent oracle: do the parts satisfy every CSR invariant (columns in any order
    within a row, which the constructor sorts; no duplicates)?"""
    rows, cols = shape
    if len(indptr) != rows + 1 or len(data) != len(indices):
        return False
    if indptr[0] != 0 or indptr[-1] != len(data):
        return False
    if any(indptr[i] > indptr[i + 1] for i in range(rows)):
        return False
    for i in range(rows):
        row = indices[indptr[i]:indptr[i + 1]]
        if any(c < 0 or c >= cols for c in row):
            return False
        if len(set(row)) != len(row):
            return False
    return True


@SETTINGS
@given(st.integers(0, 4), st.integers(0, 5), st.data())
def test_csr_constructor_accepts_exactly_the_valid_parts(rows, cols, data):
    nnz = data.draw(st.integers(0, 6))
    indices = data.draw(st.lists(st.integers(-2, cols + 1), min_size=nnz, max_size=nnz))
    n_data = data.draw(st.sampled_from([nnz, nnz, nnz, nnz + 1, max(nnz - 1, 0)]))
    vals = [float(v) for v in range(1, n_data + 1)]
    indptr = sorted(data.draw(st.lists(st.integers(0, nnz), min_size=rows + 1,
                                       max_size=rows + 1)))
    if data.draw(st.booleans()) and rows + 1 > 0:
        indptr[0], indptr[-1] = 0, nnz
    if data.draw(st.booleans()) and rows > 1:
        indptr = indptr[::-1]  # occasionally non-monotone
    shape = (rows, cols)
    ok = _valid_csr(vals, indices, indptr, shape)
    try:
        a = mx.nd.sparse.csr_matrix((vals, indices, indptr), shape=shape)
    except (SparseFormatError, ValueError):
        assert not ok, f"valid parts rejected: {vals, indices, indptr, shape}"
        return
    assert ok, f"invalid parts accepted: {vals, indices, indptr, shape}"
    ref = sp.csr_matrix((np.array(vals, dtype=np.float32), indices, indptr), shape=shape)
    np.testing.assert_array_equal(a.asnumpy(), ref.toarray())
    a.check_format()  # stored sorted


@SETTINGS
@given(st.integers(0, 6), st.data())
def test_rsp_constructor_accepts_exactly_the_valid_parts(rows, data):
    k = data.draw(st.integers(0, 5))
    indices = data.draw(st.lists(st.integers(-2, rows + 1), min_size=k, max_size=k))
    n_data = data.draw(st.sampled_from([k, k, k + 1]))
    vals = np.arange(1, 2 * n_data + 1, dtype=np.float32).reshape(n_data, 2)
    ok = (n_data == k and all(0 <= i < rows for i in indices)
          and all(indices[j] < indices[j + 1] for j in range(k - 1)))
    try:
        a = mx.nd.sparse.row_sparse_array((vals, indices), shape=(rows, 2))
    except (SparseFormatError, ValueError):
        assert not ok
        return
    assert ok
    ref = np.zeros((rows, 2), dtype=np.float32)
    ref[indices] = vals
    np.testing.assert_array_equal(a.asnumpy(), ref)

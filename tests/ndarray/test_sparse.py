"""CSRNDArray and RowSparseNDArray: creation from every source, properties, indexing, copies.

References: SciPy for CSR, NumPy dense arrays, and MXNet 1.9.1 behaviour from
reference/mxnet_semantics.md §1.1-1.3.
"""
import numpy as np
import pytest
import scipy.sparse as sp
import torch

import sparsenet as mx
from sparsenet.base import NotSupportedForSparseNDArray, SparseFormatError
from sparsenet.ndarray import stype as stype_module

DENSE = np.array([[1, 0, 2], [0, 0, 0], [0, 3, 0], [4, 5, 6]], dtype=np.float32)


def _csr_parts():
    m = sp.csr_matrix(DENSE)
    return m.data, m.indices, m.indptr


# ---------------------------------------------------------------------- CSR creation
@pytest.mark.parametrize("make", [
    lambda: mx.nd.sparse.csr_matrix(_csr_parts(), shape=(4, 3)),
    lambda: mx.nd.sparse.csr_matrix(_csr_parts()),
    lambda: mx.nd.sparse.csr_matrix(DENSE),
    lambda: mx.nd.sparse.csr_matrix(DENSE.tolist()),
    lambda: mx.nd.sparse.csr_matrix(mx.nd.array(DENSE)),
    lambda: mx.nd.sparse.csr_matrix(sp.csr_matrix(DENSE)),
    lambda: mx.nd.sparse.csr_matrix(sp.coo_matrix(DENSE)),
    lambda: mx.nd.sparse.csr_matrix(mx.nd.array(DENSE).tostype("csr")),
    lambda: mx.nd.sparse.csr_matrix(mx.nd.array(DENSE).tostype("row_sparse")),
    lambda: mx.nd.sparse.array(sp.csr_matrix(DENSE)),
    lambda: mx.nd.array(sp.csr_matrix(DENSE)),
    lambda: mx.nd.array(DENSE).tostype("csr"),
    lambda: mx.nd.sparse.cast_storage(mx.nd.array(DENSE), "csr"),
    lambda: mx.nd.sparse.csr_matrix((DENSE[DENSE != 0], np.nonzero(DENSE)), shape=(4, 3)),
], ids=["parts+shape", "parts", "numpy", "list", "ndarray", "scipy", "scipy-coo", "csr",
        "rsp", "sparse.array", "nd.array(scipy)", "tostype", "cast_storage", "coo-tuple"])
def test_csr_from_every_source(make):
    a = make()
    assert isinstance(a, mx.nd.sparse.CSRNDArray) and a.stype == "csr"
    assert a.shape == (4, 3)
    np.testing.assert_array_equal(a.asnumpy(), DENSE)
    ref = sp.csr_matrix(DENSE)
    np.testing.assert_array_equal(a.indptr.asnumpy(), ref.indptr)
    np.testing.assert_array_equal(a.indices.asnumpy(), ref.indices)
    np.testing.assert_array_equal(a.data.asnumpy(), ref.data)
    assert a.indices.dtype == np.int64 and a.indptr.dtype == np.int64
    a.check_format()


def test_csr_dtype_rules():
    assert mx.nd.sparse.csr_matrix(([1, 2], [0, 1], [0, 2]), shape=(1, 2)).dtype == np.float32
    parts = (np.array([1, 2], dtype=np.int64), [0, 1], [0, 2])
    assert mx.nd.sparse.csr_matrix(parts, shape=(1, 2)).dtype == np.int64
    assert mx.nd.sparse.csr_matrix(DENSE.astype(np.float64)).dtype == np.float64
    assert mx.nd.sparse.csr_matrix(DENSE, dtype="float16").dtype == np.float16
    a = mx.nd.array(DENSE).tostype("csr").astype("float64")
    assert a.stype == "csr" and a.dtype == np.float64


def test_csr_coo_duplicates_are_summed_like_scipy():
    a = mx.nd.sparse.csr_matrix(([1.0, 2.0, 5.0], ([0, 0, 1], [1, 1, 0])), shape=(2, 2))
    np.testing.assert_array_equal(a.asnumpy(), [[0, 3], [5, 0]])
    assert a.nnz == 2


def test_csr_empty_and_explicit_zeros():
    e = mx.nd.sparse.csr_matrix((3, 4))
    assert e.shape == (3, 4) and e.nnz == 0
    np.testing.assert_array_equal(e.asnumpy(), np.zeros((3, 4)))
    z = mx.nd.sparse.csr_matrix(([0.0, 1.0], [0, 1], [0, 2]))
    assert z.nnz == 2  # explicit zeros are kept, as in MXNet
    assert mx.nd.sparse.zeros("csr", (2, 5)).indptr.asnumpy().tolist() == [0, 0, 0]
    assert mx.nd.zeros((2, 5), stype="csr").stype == "csr"
    assert mx.nd.sparse.empty("csr", (2, 5)).nnz == 0


@pytest.mark.parametrize("parts,shape,match", [
    (([1.0, 2.0], [0, 1], [0, 3, 2]), (2, 3), r"indptr\[-1\] = 2 must equal|non-decreasing"),
    (([1.0, 2.0], [0, 1], [0, 2, 5]), (2, 3), r"indptr\[-1\] = 5 must equal the number"),
    (([1.0, 2.0], [0, 1], [1, 2, 2]), (2, 3), r"indptr\[0\] must be 0"),
    (([1.0, 2.0], [0, 1], [0, 2]), (2, 3), r"indptr has 2 entries; a 2x3 array needs"),
    (([1.0, 2.0], [0, 3], [0, 1, 2]), (2, 3), r"column index 3 at position 1 \(row 1\) is out "
                                              r"of range \[0, 3\)"),
    (([1.0, 2.0], [0, -1], [0, 1, 2]), (2, 3), r"column index -1 .* out of range"),
    (([1.0, 2.0], [1, 1], [0, 2, 2]), (2, 3), r"duplicate column index 1 at position 1"),
    (([1.0, 2.0, 3.0], [0, 1], [0, 2, 2]), (2, 3), r"data has 3 values but indices has 2"),
    (([1.0, 2.0], [0, 1], [0, 2, 1]), (2, 3), r"indptr\[-1\] = 1 must equal"),
    (([1.0], [0.5], [0, 1]), (1, 3), r"indices must be integers"),
])
def test_csr_constructor_rejects_inconsistent_parts(parts, shape, match):
    with pytest.raises((SparseFormatError, ValueError), match=match):
        mx.nd.sparse.csr_matrix(parts, shape=shape)


def test_csr_indptr_decrease_message():
    with pytest.raises(SparseFormatError, match=r"indptr must be non-decreasing: indptr\[1\] = 3"):
        mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [0, 1, 2], [0, 3, 2, 3]), shape=(3, 3))


def test_validate_false_skips_checks_and_check_format_catches():
    bad = mx.nd.sparse.csr_matrix(([1.0, 2.0], [2, 0], [0, 2]), shape=(1, 3), validate=False)
    with pytest.raises(SparseFormatError, match="unsorted"):
        bad.check_format()
    bad.check_format(full_check=False)  # O(1) checks only


@pytest.mark.parametrize("indices,indptr,ok", [
    ([2, 0, 1], [0, 1, 1, 3, 3, 3], True),   # empty rows in the middle and at the end
    ([0, 1, 1], [0, 0, 0, 2, 3, 3], True),   # same column across a row boundary
    ([2, 2], [0, 1, 2, 2, 2, 2], True),
    ([0, 2, 1], [0, 0, 0, 3, 3, 3], False),  # drop inside a row after empty rows
    ([0, 1, 1], [0, 0, 0, 3, 3, 3], False),  # duplicate inside the last non-empty row
    ([1, 0], [0, 0, 0, 0, 0, 2], False),     # drop inside the very last row
    ([0, 3], [0, 1, 1, 2, 2, 2], False),     # out of range although sorted
])
@pytest.mark.parametrize("block", [1, 2, 1 << 16])
def test_csr_check_row_boundaries(indices, indptr, ok, block, monkeypatch):
    # the check runs block by block: block sizes 1 and 2 put block edges at every position
    monkeypatch.setattr(stype_module, "_BLOCK", block)
    # the answer by hand: every row's columns strictly increase and lie in [0, 3)
    ind, ptr = np.array(indices), np.array(indptr)
    want = all(np.all(np.diff(ind[a:b]) > 0) and np.all((ind[a:b] >= 0) & (ind[a:b] < 3))
               for a, b in zip(ptr[:-1], ptr[1:]))
    assert want == ok
    for dt in (torch.int64, torch.int32):
        parts = (torch.ones(len(indices)), torch.tensor(indices, dtype=dt),
                 torch.tensor(indptr, dtype=dt))
        if ok:
            mx.nd.sparse.CSRNDArray(*parts, (5, 3)).check_format()
        else:
            with pytest.raises(SparseFormatError, match="out of range|unsorted|duplicate"):
                mx.nd.sparse.CSRNDArray(*parts, (5, 3))


def test_csr_check_large_random_agrees_with_scipy():
    m = sp.random(2000, 300, density=0.05, format="csr", random_state=4)
    m.sort_indices()
    ind = torch.from_numpy(m.indices.astype(np.int64))
    ptr = torch.from_numpy(m.indptr.astype(np.int64))
    mx.nd.sparse.CSRNDArray(torch.ones(m.nnz), ind, ptr, m.shape).check_format()
    row = 1000
    a, b = int(ptr[row]), int(ptr[row + 1])
    assert b - a >= 2
    bad = ind.clone()
    bad[a], bad[a + 1] = ind[a + 1], ind[a]  # swap two columns inside row 1000
    with pytest.raises(SparseFormatError, match=rf"unsorted column index .* \(row {row}\)"):
        mx.nd.sparse.CSRNDArray(torch.ones(m.nnz), bad, ptr, m.shape)
    strided = torch.stack([ind, ind]).t()[:, 0]  # a non-contiguous view is checked too
    mx.nd.sparse.CSRNDArray(torch.ones(m.nnz), strided, ptr, m.shape).check_format()


# ---------------------------------------------------------------------- CSR behaviour
def test_csr_row_indexing_and_slicing():
    a = mx.nd.array(DENSE).tostype("csr")
    for key in (0, 2, -1, -4):
        r = a[key]
        assert r.stype == "csr" and r.shape == (1, 3)
        np.testing.assert_array_equal(r.asnumpy(), DENSE[[key]])
        r.check_format()
    for key in (slice(1, 3), slice(0, 4), slice(2, None), slice(None, -1), slice(3, 1)):
        r = a[key]
        np.testing.assert_array_equal(r.asnumpy(), DENSE[key])
        assert r.indptr.asnumpy()[0] == 0
        r.check_format()
    assert a[:] is a
    s = a[1:3]
    s._data += 100  # a copy: the original is untouched
    np.testing.assert_array_equal(a.asnumpy(), DENSE)
    with pytest.raises(ValueError, match="step 1 only"):
        a[::2]
    with pytest.raises(ValueError, match="row indexing only"):
        a[:, 1]
    with pytest.raises(IndexError, match="out of bounds"):
        a[4]


def test_csr_properties_and_unsupported_methods():
    a = mx.nd.array(DENSE).tostype("csr")
    assert len(a) == 4 and a.ndim == 2 and a.nnz == 6
    assert a.nbytes == 6 * 4 + 6 * 8 + 5 * 8
    assert repr(a) == "\n<CSRNDArray 4x3 @cpu(0)>"
    with pytest.raises(NotImplementedError, match="size is ambiguous"):
        a.size
    with pytest.raises(NotSupportedForSparseNDArray):
        a.reshape((3, 4))
    with pytest.raises(NotImplementedError, match="asscalar"):
        a.asscalar()
    d = a.data
    d[:] = 0  # .data is a copy
    assert a.data.asnumpy().sum() == DENSE.sum()
    np.testing.assert_array_equal(a.asscipy().toarray(), DENSE)
    with mx.config.storage_fallback("silent"):
        t = a.T  # no sparse transpose (as MXNet): falls back to a dense result
    assert t.stype == "default"
    np.testing.assert_array_equal(t.asnumpy(), DENSE.T)


def test_csr_assignment_and_copyto():
    a = mx.nd.sparse.zeros("csr", (4, 3))
    a[:] = mx.nd.array(DENSE)
    assert a.stype == "csr"
    np.testing.assert_array_equal(a.asnumpy(), DENSE)
    b = mx.nd.sparse.zeros("csr", (4, 3))
    b[:] = a
    b._data[0] = 99
    assert a.asnumpy()[0, 0] == 1  # copied, not shared
    c = mx.nd.sparse.zeros("csr", (4, 3))
    c[:] = DENSE  # NumPy source
    np.testing.assert_array_equal(c.asnumpy(), DENSE)
    d = mx.nd.sparse.zeros("csr", (4, 3))
    d[:] = mx.nd.array(DENSE).tostype("row_sparse")
    np.testing.assert_array_equal(d.asnumpy(), DENSE)
    f = mx.nd.sparse.zeros("csr", (2, 2))
    f[:] = 1.5
    np.testing.assert_array_equal(f.asnumpy(), np.full((2, 2), 1.5))
    with pytest.raises(ValueError, match=r"assignment to \[:\] only"):
        a[1:2] = mx.nd.ones((1, 3))
    dense = mx.nd.zeros((4, 3))
    assert a.copyto(dense) is dense
    np.testing.assert_array_equal(dense.asnumpy(), DENSE)
    with pytest.raises(ValueError, match="shape mismatch"):
        a.copyto(mx.nd.zeros((2, 2)))
    e = a.copy()
    assert e is not a and e.stype == "csr"
    np.testing.assert_array_equal(e.asnumpy(), DENSE)


def test_csr_inplace_ops_keep_stype():
    a = mx.nd.array(DENSE).tostype("csr")
    a *= 2
    assert a.stype == "csr"
    np.testing.assert_array_equal(a.asnumpy(), DENSE * 2)
    with mx.config.storage_fallback("silent"):
        a += 1  # (a + 1) is dense; the result is cast back into the CSR array
    assert a.stype == "csr"
    np.testing.assert_array_equal(a.asnumpy(), DENSE * 2 + 1)


def test_csr_is_2d_only():
    with pytest.raises(ValueError, match="2-D"):
        mx.nd.ones((2, 2, 2)).tostype("csr")
    with pytest.raises(ValueError, match="2-D"):
        mx.nd.sparse.zeros("csr", (2, 2, 2))


# ---------------------------------------------------------------------- row_sparse
RSP_DENSE = np.array([[0, 0], [1, 2], [0, 0], [0, 0], [3, 4], [0, 0]], dtype=np.float32)


@pytest.mark.parametrize("make", [
    lambda: mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 4]), shape=(6, 2)),
    lambda: mx.nd.sparse.row_sparse_array((np.array([[1, 2], [3, 4]], dtype=np.float32),
                                           np.array([1, 4])), shape=(6, 2)),
    lambda: mx.nd.sparse.row_sparse_array(RSP_DENSE),
    lambda: mx.nd.sparse.row_sparse_array(mx.nd.array(RSP_DENSE)),
    lambda: mx.nd.sparse.row_sparse_array(mx.nd.array(RSP_DENSE).tostype("row_sparse")),
    lambda: mx.nd.sparse.row_sparse_array(mx.nd.array(RSP_DENSE).tostype("csr")),
    lambda: mx.nd.array(RSP_DENSE).tostype("row_sparse"),
    lambda: mx.nd.sparse.cast_storage(mx.nd.array(RSP_DENSE), "row_sparse"),
], ids=["lists", "numpy", "dense-numpy", "ndarray", "rsp", "csr", "tostype", "cast_storage"])
def test_rsp_from_every_source(make):
    a = make()
    assert isinstance(a, mx.nd.sparse.RowSparseNDArray) and a.stype == "row_sparse"
    assert a.shape == (6, 2)
    np.testing.assert_array_equal(a.asnumpy(), RSP_DENSE)
    np.testing.assert_array_equal(a.indices.asnumpy(), [1, 4])
    np.testing.assert_array_equal(a.data.asnumpy(), [[1, 2], [3, 4]])
    a.check_format()


def test_rsp_dtypes_nd_and_shapes():
    b = mx.nd.sparse.row_sparse_array((np.array([[1, 2]]), np.array([1])), shape=(3, 2))
    assert b.dtype == np.int64  # NumPy source keeps its dtype (MXNet)
    assert mx.nd.array(b, dtype=np.float16).dtype == np.float16
    assert mx.nd.array(b, dtype=np.float16).stype == "row_sparse"
    x = np.zeros((4, 2, 3), dtype=np.float32)
    x[2] = 1
    r = mx.nd.array(x).tostype("row_sparse")
    assert r.indices.asnumpy().tolist() == [2] and r.data.shape == (1, 2, 3)
    np.testing.assert_array_equal(r.asnumpy(), x)
    one = mx.nd.sparse.row_sparse_array(([5.0], [3]), shape=(5,))
    np.testing.assert_array_equal(one.asnumpy(), [0, 0, 0, 5, 0])
    inferred = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [2]))
    assert inferred.shape == (3, 2)
    assert mx.nd.sparse.row_sparse_array((6, 2)).indices.shape == (0,)


@pytest.mark.parametrize("data,indices,shape,match", [
    ([[1, 2], [3, 4]], [3, 0], (4, 2), "unsorted row index 0 at position 1"),
    ([[1, 2], [3, 4]], [1, 1], (4, 2), "duplicate row index 1 at position 1"),
    ([[1, 2]], [9], (4, 2), r"row index 9 at position 0 is out of range \[0, 4\)"),
    ([[1, 2]], [-1], (4, 2), r"row index -1 .* out of range"),
    ([[1, 2], [3, 4]], [0], (4, 2), "data has 2 rows but indices has 1"),
    ([[1, 2, 3]], [0], (4, 2), r"data rows have shape \(3,\), expected \(2,\)"),
])
def test_rsp_constructor_rejects_inconsistent_parts(data, indices, shape, match):
    with pytest.raises(SparseFormatError, match=match):
        mx.nd.sparse.row_sparse_array((data, indices), shape=shape)


def test_rsp_indexing_assignment_copy():
    a = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 4]), shape=(6, 2))
    assert a[:] is a
    with pytest.raises(ValueError, match=r"supports x\[:\] only"):
        a[1]
    c = mx.nd.sparse.zeros("row_sparse", (6, 2))
    c[:] = a
    np.testing.assert_array_equal(c.asnumpy(), RSP_DENSE)
    e = mx.nd.sparse.zeros("row_sparse", (6, 2))
    e[:] = mx.nd.ones((6, 2))
    assert e.stype == "row_sparse" and e.indices.shape == (6,)
    f = mx.nd.sparse.zeros("row_sparse", (3, 2))
    f[:] = 0  # a scalar stores every row, as MXNet
    assert f.indices.asnumpy().tolist() == [0, 1, 2]
    g = a.copy()
    assert g is not a
    g._data += 1
    np.testing.assert_array_equal(a.asnumpy(), RSP_DENSE)
    dense = mx.nd.zeros((6, 2))
    a.copyto(dense)
    np.testing.assert_array_equal(dense.asnumpy(), RSP_DENSE)
    csr = mx.nd.sparse.zeros("csr", (6, 2))
    a.copyto(csr)
    np.testing.assert_array_equal(csr.asnumpy(), RSP_DENSE)
    assert repr(a) == "\n<RowSparseNDArray 6x2 @cpu(0)>"
    assert a.nbytes == 2 * 2 * 4 + 2 * 8


def test_rsp_mul_zero_keeps_rows_and_plus_scalar_is_dense():
    a = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 4]), shape=(6, 2))
    z = a * 0
    assert z.stype == "row_sparse" and z.indices.asnumpy().tolist() == [1, 4]
    d = a + 1
    assert d.stype == "default"
    np.testing.assert_array_equal(d.asnumpy(), RSP_DENSE + 1)
    with mx.config.storage_fallback("silent"):
        a += 1
    assert a.stype == "row_sparse" and a.indices.shape == (6,)


def test_retain_method_and_function():
    a = mx.nd.sparse.row_sparse_array(([[1, 2], [3, 4], [5, 6]], [0, 2, 3]), shape=(5, 2))
    r = a.retain(mx.nd.array([3, 0, 3]))
    assert r.indices.asnumpy().tolist() == [0, 3]
    np.testing.assert_array_equal(r.data.asnumpy(), [[1, 2], [5, 6]])
    k = mx.nd.sparse.retain(a, mx.nd.array([4, 1]))  # absent rows become explicit zero rows
    assert k.indices.asnumpy().tolist() == [1, 4]
    np.testing.assert_array_equal(k.asnumpy(), np.zeros((5, 2)))
    k.check_format()
    with pytest.raises(IndexError, match=r"row id 7 is out of range \[0, 5\)"):
        mx.nd.sparse.retain(a, mx.nd.array([7]))


def test_csr_rsp_conversion_keeps_values():
    x = np.array([[0, 0, 0], [1, 0, 2], [0, 0, 0]], dtype=np.float32)
    c = mx.nd.array(x).tostype("csr")
    r = c.tostype("row_sparse")
    assert r.indices.asnumpy().tolist() == [1]
    np.testing.assert_array_equal(r.asnumpy(), x)
    back = r.tostype("csr")
    np.testing.assert_array_equal(back.indptr.asnumpy(), [0, 0, 2, 2])
    np.testing.assert_array_equal(back.asnumpy(), x)


def test_to_torch_views():
    c = mx.nd.array(DENSE).tostype("csr")
    t = c.to_torch()
    assert t.layout == torch.sparse_csr
    np.testing.assert_array_equal(t.to_dense().numpy(), DENSE)
    r = mx.nd.array(RSP_DENSE).tostype("row_sparse")
    np.testing.assert_array_equal(r.to_torch().to_dense().numpy(), RSP_DENSE)
    back = mx.nd.from_torch(r.to_torch())
    assert back.stype == "row_sparse"
    np.testing.assert_array_equal(back.asnumpy(), RSP_DENSE)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_sparse_on_gpu():
    c = mx.nd.sparse.csr_matrix(_csr_parts(), shape=(4, 3), ctx=mx.gpu())
    assert c.context == mx.gpu(0)
    w = mx.nd.ones((3, 2), ctx=mx.gpu())
    np.testing.assert_array_equal(mx.nd.dot(c, w).asnumpy(), DENSE @ np.ones((3, 2)))
    g = mx.nd.dot(c, mx.nd.ones((4, 2), ctx=mx.gpu()), transpose_a=True)
    assert g.stype == "row_sparse" and g.context == mx.gpu(0)
    np.testing.assert_array_equal(g.asnumpy(), DENSE.T @ np.ones((4, 2)))
    r = mx.nd.array(RSP_DENSE, ctx=mx.gpu()).tostype("row_sparse")
    np.testing.assert_array_equal((r * 2).asnumpy(), RSP_DENSE * 2)
    np.testing.assert_array_equal(c.as_in_context(mx.cpu()).asnumpy(), DENSE)


def test_csr_constructor_sorts_columns_within_rows():
    # MXNet 1.9.1 accepts these parts (dense view [[2, 0, 1], [0, 3, 0]]) and keeps the
    # column indices [2, 0, 1] unsorted; sparsenet gives the same values, sorted
    a = mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [2, 0, 1], [0, 2, 3]), shape=(2, 3))
    assert a.indices.asnumpy().tolist() == [0, 2, 1]
    assert a.data.asnumpy().tolist() == [2.0, 1.0, 3.0]
    np.testing.assert_array_equal(a.asnumpy(), [[2, 0, 1], [0, 3, 0]])
    a.check_format()
    with pytest.raises(mx.base.SparseFormatError, match="duplicate column index"):
        mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [2, 0, 2], [0, 3, 3]), shape=(2, 3))


@pytest.mark.parametrize("make", [
    lambda: mx.nd.sparse.csr_matrix(([], [], [0, 0, 0])),
    lambda: mx.nd.sparse.row_sparse_array(([], [])),
])
def test_sparse_parts_without_values_need_a_shape(make):
    # MXNet 1.9.1: ValueError "invalid shape"
    with pytest.raises(ValueError, match="cannot infer the shape"):
        make()
    with pytest.raises(mx.MXNetError):
        make()

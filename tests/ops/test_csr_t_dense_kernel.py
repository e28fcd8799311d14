"""``x.T @ g`` for a CSR ``x`` as a row_sparse array: the native ``csr_column_sums`` kernel
(``ops/column_sums.h``) behind ``sparsenet.ops.dot.csr_t_dense_rsp``, the row_sparse gradient
of ``W`` in ``dot(csr, W)``.

References: SciPy's ``x.T @ g`` in float64 (float32 results within a tolerance), a
hand-computed case, and torch's sequential sum ``zeros.index_add(0, inverse, g[rows] * values)``
for the bits (the kernel adds each column's terms in row order, from zero, products rounded
before the add). Malformed CSR parts (a column outside the shape, an indptr that does not
start at 0, decreases or does not end at nnz) raise ``SparseFormatError`` without reading
outside the inputs.
"""
import numpy as np
import pytest
import scipy.sparse as sp
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sparsenet as mx
from sparsenet.base import SparseFormatError
from sparsenet.ndarray.csr import CSRNDArray
from sparsenet.ops import dot as dot_mod
from sparsenet.ops import row_kernels

native = pytest.mark.skipif(not row_kernels.available(),
                            reason="native row kernels not built (or disabled)")

_SETTINGS = settings(max_examples=80, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _csr(data, indices, indptr, shape):
    """A CSR array from parts, unchecked (malformed parts reach the kernel as they are)."""
    return CSRNDArray._from_parts(torch.as_tensor(data), torch.as_tensor(indices, dtype=torch.int64),
                                  torch.as_tensor(indptr, dtype=torch.int64), shape)


def _sequential(x, g):
    """torch's sequential sum, the order and rounding the kernel promises: distinct columns and
    ``zeros.index_add(0, inverse, g[rows] * values)``."""
    cols, inv = torch.unique(x._indices, sorted=True, return_inverse=True)
    rows = torch.repeat_interleave(torch.arange(x.shape[0]), x._indptr[1:] - x._indptr[:-1])
    contrib = g.index_select(0, rows) * x._data.to(g.dtype).unsqueeze(1)
    return cols, g.new_zeros((cols.numel(), g.shape[1])).index_add(0, inv, contrib)


def _scipy(x, g):
    """float64 ``x.T @ g`` by SciPy, restricted to the stored columns (sorted, distinct)."""
    xs = sp.csr_matrix((x._data.double().numpy(), x._indices.numpy(), x._indptr.numpy()),
                       shape=x.shape)
    full = np.asarray(xs.T @ g.double().numpy())
    cols = np.unique(x._indices.numpy())
    return cols, full[cols]


@st.composite
def csr_and_g(draw):
    """A well-formed CSR ``x`` (rows may be empty, columns repeat across rows) and a dense
    ``g`` with ``x``'s rows."""
    rows = draw(st.integers(0, 40))
    ncols = draw(st.sampled_from([1, 2, 7, 100, 5000, 2 ** 20]))
    density = draw(st.sampled_from(["empty", "sparse", "dense", "few_columns"]))
    dim = draw(st.sampled_from([0, 1, 2, 3, 16, 17, 128]))
    dtype = draw(st.sampled_from([torch.float32, torch.float64]))
    vdtype = draw(st.sampled_from([dtype, torch.float32, torch.float64]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    pool = rng.choice(ncols, size=min(ncols, 3), replace=False)  # few_columns: heavy repeats
    indices, indptr = [], [0]
    for _ in range(rows):
        if density == "empty" or rng.random() < 0.2:
            k = 0
        elif density == "sparse":
            k = int(rng.integers(1, min(ncols, 30) + 1))
        elif density == "dense":
            k = int(rng.integers(1, min(ncols, 600) + 1))
        else:
            k = int(rng.integers(1, pool.size + 1))
        src = pool if density == "few_columns" else ncols
        indices.append(np.sort(rng.choice(src, size=k, replace=False)).astype(np.int64))
        indptr.append(indptr[-1] + k)
    ind = np.concatenate(indices) if indices else np.zeros(0, np.int64)
    values = torch.from_numpy(rng.standard_normal(ind.size)).to(vdtype)
    x = _csr(values, ind, indptr, (rows, ncols))
    g = torch.from_numpy(rng.standard_normal((rows, dim))).to(dtype)
    return x, g


def _check_against_references(x, g, cols, data):
    ref_cols, ref = _scipy(x, g)
    np.testing.assert_array_equal(cols.numpy(), ref_cols)
    assert data.dtype == g.dtype and tuple(data.shape) == (ref_cols.size, g.shape[1])
    if g.dtype == torch.float64 and x._data.dtype == torch.float64:
        np.testing.assert_allclose(data.numpy(), ref, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_allclose(data.double().numpy(), ref, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------- hand-computed
def test_hand_computed_case():
    # x = [[1, 0, 0, 0, 2],      g = [[1, 10],
    #      [0, 0, 0, 0, 0],           [2, 20],
    #      [0, 3, 0, 0, 4]]           [3, 30]]
    # x.T @ g: column 1 -> 3 * g[2] = [9, 90]; column 4 -> 2 * g[0] + 4 * g[2] = [14, 140]
    # (column 0 -> 1 * g[0] = [1, 10])
    x = _csr(torch.tensor([1.0, 2.0, 3.0, 4.0]), [0, 4, 1, 4], [0, 2, 2, 4], (3, 5))
    g = torch.tensor([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]])
    r = dot_mod.csr_t_dense_rsp(x, g)
    assert r.stype == "row_sparse" and r.shape == (5, 2)
    assert r.indices.asnumpy().tolist() == [0, 1, 4]
    assert r.data.asnumpy().tolist() == [[1.0, 10.0], [9.0, 90.0], [14.0, 140.0]]
    got = mx.nd.dot(x, mx.nd.array(g.numpy()), transpose_a=True)
    assert got.stype == "row_sparse"
    assert got.data.asnumpy().tolist() == [[1.0, 10.0], [9.0, 90.0], [14.0, 140.0]]


@native
def test_native_function_hand_computed():
    cols, sums = row_kernels.csr_column_sums(
        torch.tensor([0, 2, 2, 4]), torch.tensor([0, 4, 1, 4]), torch.tensor([1.0, 2.0, 3.0, 4.0]),
        torch.tensor([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]]), 5)
    assert cols.tolist() == [0, 1, 4]
    assert sums.tolist() == [[1.0, 10.0], [9.0, 90.0], [14.0, 140.0]]


@pytest.mark.parametrize("dim", [1, 3])
def test_sums_start_from_positive_zero(dim):
    """-1 * 0.0 is -0.0; a sum from zeros (index_add's, SciPy's) gives +0.0."""
    x = _csr(torch.tensor([-1.0, 2.0]), [0, 1], [0, 2], (1, 2))
    r = dot_mod.csr_t_dense_rsp(x, torch.zeros(1, dim))
    assert r._data.eq(0).all() and not torch.signbit(r._data).any()


# ---------------------------------------------------------------------- property tests
@_SETTINGS
@given(csr_and_g())
def test_matches_scipy(case):
    x, g = case
    r = dot_mod.csr_t_dense_rsp(x, g)
    _check_against_references(x, g, r._indices, r._data)


@native
@_SETTINGS
@given(csr_and_g())
def test_native_kernel_matches_scipy_and_sequential_bits(case):
    x, g = case
    got = row_kernels.csr_column_sums(x._indptr, x._indices, x._data, g, x.shape[1])
    assert got is not None
    cols, data = got
    _check_against_references(x, g, cols, data)
    ref_cols, ref = _sequential(x, g)  # the same terms in the same order: the same bits
    assert torch.equal(cols, ref_cols)
    assert torch.equal(data, ref)
    assert not torch.signbit(data[data == 0]).any()  # sums start from +0.0, as index_add's


@native
@_SETTINGS
@given(csr_and_g())
def test_bit_identical_to_torch_fallback_where_it_sums_in_order(case):
    """The torch path adds in the same order with the same rounding for up to 512 values
    (index_add) and in float64 (embedding_bag); float32 embedding_bag (FBGEMM) fuses the
    multiply-add and is only compared within a tolerance."""
    x, g = case
    native_r = dot_mod.csr_t_dense_rsp(x, g)
    row_kernels.ENABLED = False
    try:
        torch_r = dot_mod.csr_t_dense_rsp(x, g)
    finally:
        row_kernels.ENABLED = True
    assert torch.equal(native_r._indices, torch_r._indices)
    same_order = (x._data.numel() <= dot_mod._SMALL_NNZ
                  or (g.dtype == torch.float64 and x._data.dtype == torch.float64))
    if same_order:
        assert torch.equal(native_r._data, torch_r._data)
    else:
        torch.testing.assert_close(native_r._data, torch_r._data, rtol=1e-4, atol=1e-4)


@native
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("dim", [1, 16, 128])
def test_large_batches_and_threads_give_the_same_bits(dtype, dim):
    """30,000 values (the large path), columns repeated; split between threads, each column
    is still summed by one thread in row order."""
    rng = np.random.default_rng(7)
    rows, per, ncols = 1500, 20, 50_000
    ind = np.concatenate([np.sort(rng.choice(ncols, per, replace=False)) for _ in range(rows)])
    x = _csr(torch.from_numpy(rng.standard_normal(ind.size)).to(dtype), ind,
             np.arange(0, rows * per + 1, per), (rows, ncols))
    g = torch.from_numpy(rng.standard_normal((rows, dim))).to(dtype)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = dot_mod.csr_t_dense_rsp(x, g)
        torch.set_num_threads(2)
        two = dot_mod.csr_t_dense_rsp(x, g)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(one._indices, two._indices) and torch.equal(one._data, two._data)
    ref_cols, ref = _sequential(x, g)
    assert torch.equal(one._indices, ref_cols) and torch.equal(one._data, ref)
    _check_against_references(x, g, one._indices, one._data)


def test_empty_matrix_and_zero_dim():
    for rows, dim in ((0, 4), (3, 0), (3, 4), (0, 0)):
        x = _csr(torch.zeros(0), np.zeros(0, np.int64), np.zeros(rows + 1, np.int64), (rows, 6))
        r = dot_mod.csr_t_dense_rsp(x, torch.ones(rows, dim))
        assert r._indices.numel() == 0 and tuple(r._data.shape) == (0, dim)
        assert r.shape == (6, dim)
    x = _csr(torch.tensor([1.0, 2.0]), [3, 1], [0, 1, 2], (2, 5))
    r = dot_mod.csr_t_dense_rsp(x, torch.ones(2, 0))
    assert r._indices.tolist() == [1, 3] and tuple(r._data.shape) == (2, 0)


def test_autograd_weight_gradient_matches_scipy():
    """The backward of dot(csr, W) w.r.t. W (more than _RSP_GRAD_MIN_NNZ values: the kernel's
    coalesced rows) against SciPy."""
    rng = np.random.default_rng(3)
    rows, per, ncols, dim = 100, 20, 5000, 8
    ind = np.concatenate([np.sort(rng.choice(ncols, per, replace=False)) for _ in range(rows)])
    vals = rng.random(ind.size).astype(np.float32)
    indptr = np.arange(0, rows * per + 1, per)
    x = mx.nd.sparse.csr_matrix((vals, ind, indptr), shape=(rows, ncols))
    w = mx.nd.array(rng.standard_normal((ncols, dim)).astype(np.float32))
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.dot(x, w)
    head = rng.standard_normal((rows, dim)).astype(np.float32)
    y.backward(mx.nd.array(head))
    ref = np.asarray(sp.csr_matrix((vals.astype(np.float64), ind, indptr), shape=(rows, ncols)).T
                     @ head.astype(np.float64))
    np.testing.assert_allclose(w.grad.asnumpy(), ref, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------- fallbacks
@pytest.mark.parametrize("variant", ["disabled", "noncontiguous_g", "int32_indices", "float16_g"])
def test_fallbacks_give_the_same_result(variant):
    x = _csr(torch.tensor([1.0, 2.0, 3.0, 4.0] * 5),
             np.array([0, 4, 1, 4] * 5), np.array([0, 2, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20]),
             (11, 5))
    g = torch.arange(22.0).reshape(11, 2)
    expect_cols, expect = _scipy(x, g)
    if variant == "disabled":
        row_kernels.ENABLED = False
    elif variant == "noncontiguous_g":
        g = torch.arange(22.0).reshape(2, 11).t()
        expect_cols, expect = _scipy(x, g.contiguous())
    elif variant == "int32_indices":
        x._indices = x._indices.to(torch.int32)
    elif variant == "float16_g":
        g = g.half()
    try:
        assert row_kernels.csr_column_sums(x._indptr, x._indices, x._data, g, 5) is None
        if variant == "float16_g":
            return  # the torch path's own dtype rules; only the native decline is checked
        r = dot_mod.csr_t_dense_rsp(x, g)
    finally:
        row_kernels.ENABLED = True
    np.testing.assert_array_equal(r._indices.numpy(), expect_cols)
    np.testing.assert_allclose(r._data.double().numpy(), expect)


# ---------------------------------------------------------------------- malformed input
_MALFORMED = {
    "column at the bound": ([1.0, 2.0], [0, 5], [0, 1, 2], "outside [0, 5)"),
    "negative column": ([1.0, 2.0], [0, -1], [0, 1, 2], "outside [0, 5)"),
    "huge column": ([1.0, 2.0], [0, 2 ** 62], [0, 1, 2], "outside [0, 5)"),
    "indptr not from 0": ([1.0, 2.0], [0, 1], [1, 1, 2], "start at 0"),
    "indptr past nnz": ([1.0, 2.0], [0, 1], [0, 1, 7], "end at the number"),
    "indptr short of nnz": ([1.0, 2.0], [0, 1], [0, 1, 1], "end at the number"),
    "indptr decreasing": ([1.0, 2.0, 3.0], [0, 1, 2], [0, 2, 1, 3], "decreases at row 1"),
    "indptr huge in the middle": ([1.0, 2.0], [0, 1], [0, 2 ** 40, 2], "decreases"),
}


@native
@pytest.mark.parametrize("name", sorted(_MALFORMED))
def test_malformed_csr_raises_sparse_format_error(name):
    data, indices, indptr, words = _MALFORMED[name]
    rows = len(indptr) - 1
    x = _csr(torch.tensor(data), indices, indptr, (rows, 5))
    g = torch.ones(rows, 3)
    with pytest.raises(SparseFormatError, match="invalid CSR array") as e:
        dot_mod.csr_t_dense_rsp(x, g)
    assert words in str(e.value)
    assert isinstance(e.value, ValueError) and isinstance(e.value, mx.MXNetError)
    with pytest.raises(SparseFormatError):
        row_kernels.csr_column_sums(x._indptr, x._indices, x._data, g, 5)


@native
def test_native_entry_checks_its_arguments():
    """The C entry itself refuses sizes that do not fit and a sort that is not one."""
    native_mod = row_kernels._native
    ip = torch.tensor([0, 1, 2])
    s, o = torch.tensor([1, 3]), torch.tensor([1, 0])
    v, g = torch.tensor([1.0, 2.0]), torch.ones(2, 2)
    cols, out = torch.empty(2, dtype=torch.int64), torch.full((2, 2), -7.0)

    def call(rows=2, sorted_=s, order=o, n=2, ncols=5, grows=2, md=2):
        native_mod.csr_column_sums(ip.data_ptr(), rows, sorted_.data_ptr(), order.data_ptr(), n,
                                   ncols, v.data_ptr(), g.data_ptr(), grows, 2, False, md,
                                   cols.data_ptr(), out.data_ptr(), 1)

    call()
    assert cols.tolist() == [1, 3] and out.tolist() == [[2.0, 2.0], [1.0, 1.0]]
    out.fill_(-7.0)
    for bad in (dict(grows=1), dict(md=3), dict(md=1), dict(n=-1), dict(rows=-1),
                dict(order=torch.tensor([0, 2])), dict(order=torch.tensor([0, -1])),
                dict(sorted_=torch.tensor([3, 1])), dict(sorted_=torch.tensor([1, 5])),
                dict(sorted_=torch.tensor([-1, 1]))):
        with pytest.raises(ValueError):
            call(**bad)
    assert out.eq(-7.0).all()  # nothing written on refusal

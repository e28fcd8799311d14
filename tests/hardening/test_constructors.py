"""Issue 19, items 1-3: every constructor validates its input, whatever its origin (SciPy,
NumPy, lists), and raises its documented error naming the argument."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import sparsenet as mx
from sparsenet.base import InvalidArgumentTypeError, ShapeError, SparseFormatError


def test_scipy_input_is_validated():
    # repro: row 1's value landed in row 0 (index -1), or 5 GB were allocated (index 1e9)
    for bad in (-1, 10**9):
        m = sp.csr_matrix((np.float32([1, 2]), [0, bad], [0, 1, 2]), shape=(2, 3))
        for make in (mx.nd.sparse.csr_matrix, mx.nd.sparse.array, mx.nd.array):
            with pytest.raises(SparseFormatError, match=f"column index {bad} at position 1 is "
                                                        r"out of range \[0, 3\)"):
                make(m)
    m = sp.csr_matrix((np.float32([1, 2]), [0, 1], [0, 2, 1]), shape=(2, 3))
    with pytest.raises(SparseFormatError, match="indptr"):
        mx.nd.sparse.csr_matrix(m)
    # a valid SciPy matrix with unsorted and repeated columns is summed and sorted
    ok = sp.csr_matrix((np.float32([1, 2, 3, 4]), [2, 0, 2, 2], [0, 3, 4]), shape=(2, 3))
    np.testing.assert_array_equal(mx.nd.sparse.csr_matrix(ok).asnumpy(), ok.toarray())


@pytest.mark.parametrize("shape,error,where", [
    ((-1, 3), ShapeError, "dimension 0 is negative"),
    ((2, -5), ShapeError, "dimension 1 is negative"),
    ((2.5, 3), InvalidArgumentTypeError, "dimension 0 is float"),
    ((True, 3), InvalidArgumentTypeError, "dimension 0 is bool"),
    ("ab", InvalidArgumentTypeError, "dimension 0 is str"),
])
def test_bad_shapes_are_refused_by_every_constructor(shape, error, where):
    # MXNet 1.9.1 raises for each (MXNetError / TypeError / OverflowError, measured)
    makers = [lambda s: mx.nd.zeros(s), lambda s: mx.nd.ones(s), lambda s: mx.nd.empty(s),
              lambda s: mx.nd.full(s, 1.0), lambda s: mx.nd.sparse.zeros('csr', s),
              lambda s: mx.nd.sparse.zeros('row_sparse', s),
              lambda s: mx.nd.random.uniform(shape=s)]
    for make in makers:
        with pytest.raises(error, match=where):
            make(shape)
        with pytest.raises(mx.MXNetError):
            make(shape)


def test_complex_values_are_refused():
    with pytest.raises(InvalidArgumentTypeError, match="complex128"):
        mx.nd.sparse.csr_matrix((np.array([1 + 2j]), [0], [0, 1]), shape=(1, 2))
    with pytest.raises(InvalidArgumentTypeError, match="complex128"):
        mx.nd.array(np.array([1 + 2j]))
    with pytest.raises(InvalidArgumentTypeError, match="complex128"):
        mx.nd.sparse.csr_matrix(sp.csr_matrix(np.array([[1 + 1j, 0]])))


def test_strings_with_a_dtype_are_numbers_as_in_mxnet():
    # measured with MXNet 1.9.1: mx.nd.array(['1', '2'], dtype='int32') -> [1 2]
    np.testing.assert_array_equal(mx.nd.array(['1', '2'], dtype='int32').asnumpy(), [1, 2])
    with pytest.raises(InvalidArgumentTypeError, match="strings"):
        mx.nd.array(['x'], dtype='int32')


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.integers(-3, 4), st.floats(-2, 4), st.booleans()),
                min_size=1, max_size=3))
def test_constructors_accept_exactly_non_negative_integer_shapes(dims):
    valid = all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims)
    for make in (mx.nd.zeros, lambda s: mx.nd.sparse.zeros('row_sparse', s)):
        if valid:
            assert make(tuple(dims)).shape == tuple(dims)
        else:
            with pytest.raises((ShapeError, InvalidArgumentTypeError)):
                make(tuple(dims))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.lists(st.integers(-6, 6), min_size=1,
                                                      max_size=6))
def test_scipy_parts_outside_the_shape_never_pass(rows, cols, idx):
    indptr = np.linspace(0, len(idx), rows + 1).astype(np.int64)
    m = sp.csr_matrix((np.ones(len(idx), np.float32), np.array(idx), indptr),
                      shape=(rows, cols))
    if all(0 <= i < cols for i in idx):
        np.testing.assert_array_equal(mx.nd.sparse.csr_matrix(m).asnumpy(), m.toarray())
    else:
        with pytest.raises(SparseFormatError):
            mx.nd.sparse.csr_matrix(m)


def test_libsvm_labels_edited_by_the_caller_do_not_change_later_epochs(tmp_path):
    path = tmp_path / "a.libsvm"
    path.write_text("".join(f"{i} 0:{i + 1}\n" for i in range(6)))
    it = mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(2,), batch_size=2)
    for batch in it:
        batch.label[0][:] = 7
    it.reset()
    assert [b.label[0].asnumpy().tolist() for b in it] == [[0, 1], [2, 3], [4, 5]]

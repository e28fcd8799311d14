"""Seed 000, "Sparse NDArrays with Gluon": generating the data and measuring its memory.

The tutorial's code, run with ``import sparsenet as mx``, at the tutorial's full size.
One token differs: the tutorial calls ``np.product``, which NumPy 2 removed; it runs
as ``np.prod`` (see docs/differences.md).
"""
import numpy as np

import sparsenet as mx

np_product = getattr(np, "product", np.prod)


def get_nbytes(array):
    fn = lambda a: a.size * np.dtype(a).itemsize  # noqa: E731 - the tutorial's code
    if isinstance(array, mx.ndarray.sparse.CSRNDArray):
        return fn(array.data) + fn(array.indices) + fn(array.indptr)
    elif isinstance(array, mx.ndarray.sparse.RowSparseNDArray):
        return fn(array.data) + fn(array.indices)
    elif isinstance(array, mx.ndarray.NDArray):
        return fn(array)
    else:
        TypeError('{} not supported'.format(type(array)))


def test_generating_sparse_data_and_memory(capsys):
    num_samples = 1000
    num_features = 1000000
    data = mx.test_utils.rand_ndarray((num_samples, num_features), stype='csr', density=0.00001)
    # generate label: 1 if row sum above average, 0 otherwise.
    label = data.sum(axis=1) > data.sum(axis=1).mean()

    print(type(data))
    print(data[:10].asnumpy())
    print('{:,.0f} elements'.format(np_product(data.shape)))
    print('{:,.0f} non-zero elements'.format(data.data.size))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "<class 'sparsenet.ndarray.csr.CSRNDArray'>"
    assert out[1].startswith("[[0. 0. 0. ... 0. 0. 0.]")
    assert out[-2:] == ['1,000,000,000 elements', '10,000 non-zero elements']

    print('NDarray:', get_nbytes(data.tostype('default'))/1000000, 'MBs')
    print('CSRNDArray', get_nbytes(data)/1000000, 'MBs')
    out = capsys.readouterr().out.splitlines()
    assert out == ['NDarray: 4000.0 MBs', 'CSRNDArray 0.128008 MBs']

    assert label.stype == 'default' and label.shape == (num_samples,)
    sums = data.sum(axis=1).asnumpy()
    np.testing.assert_array_equal(label.asnumpy(), (sums > sums.mean()).astype(np.float32))
    assert data.nbytes == get_nbytes(data) == 128008  # the built-in equals the tutorial's


def test_batch_memory_sparse_vs_dense():
    data = mx.test_utils.rand_ndarray((1000, 1000000), stype='csr', density=0.00001)[:10]
    sparse_mb = get_nbytes(data) / 1000000
    dense = data.tostype('default')
    assert get_nbytes(dense) / 1000000 == 40.0  # 'dense batch: 40.0 MBs'
    assert sparse_mb < 0.01  # 'sparse batch: 0.001348 MBs' for 10 rows of ~10 values
    assert sparse_mb == (data.nnz * 12 + 11 * 8) / 1e6

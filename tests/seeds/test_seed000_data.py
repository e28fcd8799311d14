"""Seed 000 ("Sparse NDArrays with Gluon"): the data steps as written, ``import sparsenet as mx``.

The cells below are the tutorial's generation, LibSVM writing and LibSVMIter
reading code, unchanged except:
- ``import mxnet as mx`` -> ``import sparsenet as mx``;
- ``np.product`` -> ``np.prod`` (NumPy 2 removed ``np.product``; see docs/differences.md);
- the cell printing ``get_nbytes(data.tostype('default'))`` for the whole
  1000 x 1,000,000 matrix is left out (it allocates 4 GB; the same call is
  exercised on one batch below);
- ``%%timeit`` cells run once; the Gluon training loop keeps its data side only
  (the model is another package's test).
"""
import os

import numpy as np

import sparsenet as mx


def test_seed000_write_and_read(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    import time  # noqa: F401 - as in the seed

    num_samples = 1000
    num_features = 1000000
    data = mx.test_utils.rand_ndarray((num_samples, num_features), stype='csr', density=0.00001)
    # generate label: 1 if row sum above average, 0 otherwise.
    label = data.sum(axis=1) > data.sum(axis=1).mean()

    print(type(data))
    print(data[:10].asnumpy())
    print('{:,.0f} elements'.format(np.prod(data.shape)))
    print('{:,.0f} non-zero elements'.format(data.data.size))

    def get_nbytes(array):
        fn = lambda a: a.size * np.dtype(a).itemsize  # noqa: E731
        if isinstance(array, mx.ndarray.sparse.CSRNDArray):
            return fn(array.data) + fn(array.indices) + fn(array.indptr)
        elif isinstance(array, mx.ndarray.sparse.RowSparseNDArray):
            return fn(array.data) + fn(array.indices)
        elif isinstance(array, mx.ndarray.NDArray):
            return fn(array)
        else:
            TypeError('{} not supported'.format(type(array)))

    print('CSRNDArray', get_nbytes(data)/1000000, 'MBs')

    def save_as_libsvm(filepath, data, label):
        with open(filepath, 'w') as openfile:
            for row_idx in range(data.shape[0]):
                data_sample = data[row_idx]
                label_sample = label[row_idx]
                col_idxs = data_sample.indices.asnumpy().tolist()
                values = data_sample.data.asnumpy().tolist()
                label_str = str(label_sample.asscalar())
                value_strs = ['{}:{}'.format(idx, value) for idx, value in zip(col_idxs, values)]
                value_str = " ".join(value_strs)
                sample_str = '{} {}\n'.format(label_str, value_str)
                openfile.write(sample_str)

    filepath = 'dataset.libsvm'
    save_as_libsvm(filepath, data, label)

    with open(filepath, 'r') as openfile:
        lines = [openfile.readline() for _ in range(10)]
    for line in lines:
        print(line[:80] + '...' if len(line) > 80 else line)

    data_iter = mx.io.LibSVMIter(data_libsvm=filepath, data_shape=(num_features,),
                                 label_shape=(1,), batch_size=10)
    for batch in data_iter:
        data = batch.data[0]
        print('data.stype: {}'.format(data.stype))
        label = batch.label[0]
        print('label.stype: {}'.format(label.stype))
        break

    ctx = mx.gpu() if mx.test_utils.list_gpus() else mx.cpu()
    data_on_ctx = data.as_in_context(ctx)
    data_on_ctx.wait_to_read()
    print('sparse batch: {} MBs'.format(get_nbytes(data)/1000000))
    data = data.tostype('default')  # avoid timing this sparse to dense conversion
    print('dense batch: {} MBs'.format(get_nbytes(data)/1000000))
    data_on_ctx = data.as_in_context(ctx)
    data_on_ctx.wait_to_read()

    out = capsys.readouterr().out.splitlines()
    assert out[0] == "<class 'sparsenet.ndarray.csr.CSRNDArray'>"
    assert "1,000,000,000 elements" in out and "10,000 non-zero elements" in out
    assert "CSRNDArray 0.128008 MBs" in out
    assert "data.stype: csr" in out and "label.stype: default" in out
    assert "dense batch: 40.0 MBs" in out
    sparse_mb = float(next(s for s in out if s.startswith("sparse batch:")).split()[2])
    assert 0 < sparse_mb < 0.01
    first = next(s for s in out if s[:4] in ("0.0 ", "1.0 "))
    assert ":" in first  # the file's lines as the tutorial shows them

    assert os.path.getsize(filepath) > 100000

    # the training loop's data side: reset() then iterate, every epoch
    for _ in range(3):
        rows = 0
        batches = 0
        data_iter.reset()
        for batch in data_iter:
            data = batch.data[0]
            data = data.as_in_context(ctx)
            label = batch.label[0].as_in_context(ctx)
            assert data.stype == 'csr' and data.shape == (10, num_features)
            assert label.shape == (10,)
            rows += data.shape[0] - batch.pad
            batches += 1
        assert (batches, rows) == (100, 1000)  # MXNet 1.9.1 gives 150 batches after a reset


def test_seed000_file_reads_back_exactly(tmp_path):
    """The tutorial's writer output, read by load_libsvm, equals the generated arrays."""
    data = mx.test_utils.rand_ndarray((200, 1000000), stype='csr', density=0.00001)
    label = data.sum(axis=1) > data.sum(axis=1).mean()
    path = tmp_path / 'dataset.libsvm'
    with open(path, 'w') as f:
        for i in range(data.shape[0]):
            row = data[i]
            pairs = zip(row.indices.asnumpy().tolist(), row.data.asnumpy().tolist())
            f.write('{} {}\n'.format(str(label[i].asscalar()),
                                     " ".join('{}:{}'.format(k, v) for k, v in pairs)))
    back, back_label = mx.io.load_libsvm(str(path), num_features=1000000)
    assert (back.asscipy() != data.asscipy()).nnz == 0
    assert back.data.asnumpy().tobytes() == data.data.asnumpy().tobytes()
    np.testing.assert_array_equal(back_label.asnumpy(), label.asnumpy())
    mx.io.save_libsvm(str(path), data, label)  # the same in one call
    again, again_label = mx.io.load_libsvm(str(path), num_features=1000000)
    assert again.data.asnumpy().tobytes() == data.data.asnumpy().tobytes()
    np.testing.assert_array_equal(again_label.asnumpy(), label.asnumpy())

"""Gluon datasets, samplers and DataLoader: CSR samples batch into CSR (MXNet 1.9.1 densified)."""
import numpy as np
import pytest
import scipy.sparse as sp

import sparsenet as mx
from sparsenet.gluon.data import (ArrayDataset, BatchSampler, DataLoader, RandomSampler,
                                  SequentialSampler, SimpleDataset, default_batchify_fn)


def csr(rows=7, cols=5, seed=0):
    m = sp.random(rows, cols, density=0.4, format="csr", random_state=seed, dtype=np.float32)
    return m, mx.nd.sparse.csr_matrix(m)


def test_array_dataset_samples():
    m, x = csr()
    ds = ArrayDataset(x, mx.nd.arange(7), np.arange(7) * 2)
    d, y, z = ds[3]
    assert d.stype == "csr" and d.shape == (1, 5)
    np.testing.assert_array_equal(d.asnumpy(), m[3].toarray())
    assert y == 3.0 and z == 6 and len(ds) == 7
    with pytest.raises(ValueError, match="same length"):
        ArrayDataset(x, np.arange(3))


@pytest.mark.parametrize("last_batch,sizes", [("keep", [3, 3, 1]), ("discard", [3, 3]),
                                              ("rollover", [3, 3])])
@pytest.mark.parametrize("workers", [0, 2])
def test_csr_batches_stay_csr(last_batch, sizes, workers):
    m, x = csr()
    loader = DataLoader(ArrayDataset(x, mx.nd.arange(7)), batch_size=3, last_batch=last_batch,
                        num_workers=workers)
    got = list(loader)
    assert [d.shape[0] for d, _ in got] == sizes and len(loader) == len(sizes)
    for k, (d, y) in enumerate(got):
        assert d.stype == "csr" and d.shape[1] == 5
        rows = y.asnumpy().astype(int)
        assert rows.tolist() == list(range(3 * k, 3 * k + len(rows)))
        np.testing.assert_array_equal(d.asnumpy(), m[rows].toarray())
        d.check_format()


def test_generic_path_equals_the_gather_path():
    """A transformed dataset goes sample by sample through batchify: same batches."""
    m, x = csr(9)
    np.random.seed(1)
    fast = list(DataLoader(ArrayDataset(x, mx.nd.arange(9)), batch_size=4, shuffle=True))
    np.random.seed(1)
    slow = list(DataLoader(ArrayDataset(x, mx.nd.arange(9)).transform(lambda a, b: (a, b)),
                           batch_size=4, shuffle=True))
    for (a, y1), (b, y2) in zip(fast, slow):
        assert a.stype == b.stype == "csr"
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
        np.testing.assert_array_equal(y1.asnumpy(), y2.asnumpy())
        assert y1.dtype == y2.dtype


def test_shuffle_covers_everything_once():
    _, x = csr(10)
    loader = DataLoader(ArrayDataset(x, np.arange(10)), batch_size=4, shuffle=True)
    for _ in range(2):
        seen = np.concatenate([y.asnumpy() for _, y in loader])
        assert sorted(seen.tolist()) == list(range(10))


def test_dense_and_tuple_batchify():
    ds = SimpleDataset([(mx.nd.ones((2,)) * i, i, np.float32(i) / 2) for i in range(5)])
    d, a, b = next(iter(DataLoader(ds, batch_size=3)))
    assert d.shape == (3, 2) and d.asnumpy()[:, 0].tolist() == [0, 1, 2]
    assert a.asnumpy().tolist() == [0, 1, 2] and a.dtype == np.int64
    assert b.dtype == np.float32
    single = next(iter(DataLoader(ArrayDataset(mx.nd.arange(6).reshape((3, 2))), batch_size=2)))
    assert single.shape == (2, 2)


def test_batchify_rejects_mixed_or_multirow_sparse():
    _, x = csr()
    with pytest.raises(ValueError, match="single rows"):
        default_batchify_fn([x[0:2], x[2:4]])
    with pytest.raises(TypeError, match="one storage type"):
        default_batchify_fn([x[0], mx.nd.ones((1, 5))])


def test_samplers_and_argument_checks():
    assert list(SequentialSampler(3, 2)) == [2, 3, 4]
    assert sorted(RandomSampler(5)) == list(range(5))
    b = BatchSampler(SequentialSampler(5), 2, "rollover")
    assert list(b) == [[0, 1], [2, 3]] and list(b) == [[4, 0], [1, 2], [3, 4]]
    with pytest.raises(ValueError, match="last_batch must be"):
        BatchSampler(SequentialSampler(5), 2, "pad")
    with pytest.raises(ValueError, match="batch_size must be given"):
        DataLoader(SimpleDataset([1]))
    with pytest.raises(ValueError, match="not both"):
        DataLoader(SimpleDataset([1]), 1, shuffle=True, sampler=SequentialSampler(1))
    with pytest.raises(ValueError, match="must not be given with batch_sampler"):
        DataLoader(SimpleDataset([1]), 1, batch_sampler=BatchSampler(SequentialSampler(1), 1))


def test_dataset_helpers():
    ds = SimpleDataset(list(range(10)))
    assert list(ds.filter(lambda v: v > 6)) == [7, 8, 9]
    assert list(ds.take(3)) == [0, 1, 2] and len(ds.take(None)) == 10
    assert [list(ds.shard(3, k)) for k in range(3)] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert list(ds.transform(lambda v: v + 1, lazy=False))[:2] == [1, 2]
    assert list(ds.sample(SequentialSampler(2, 5))) == [5, 6]
    with pytest.raises(TypeError, match="Sampler"):
        ds.sample([1, 2])
    with pytest.raises(ValueError, match="shard index"):
        ds.shard(2, 2)

"""NDArrayIter: MXNet 1.9.1's batches (measured), with CSR data and labels kept CSR."""
import numpy as np
import pytest
import scipy.sparse as sp

import sparsenet as mx
from sparsenet.io import NDArrayIter

# measured with MXNet 1.9.1: NDArrayIter(arange(10).reshape(10, 1), arange(10), 3, handle)
MXNET = {
    "pad": [[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 0, 1]]] * 3,
    "discard": [[[0, 1, 2], [3, 4, 5], [6, 7, 8]]] * 3,
    "roll_over": [[[0, 1, 2], [3, 4, 5], [6, 7, 8]],
                  [[9, 0, 1], [2, 3, 4], [5, 6, 7]],
                  [[8, 9, 0], [1, 2, 3], [4, 5, 6], [7, 8, 9]]],
}
PADS = {"pad": [0, 0, 0, 2], "discard": [0, 0, 0], "roll_over": [0, 0, 0, 0]}


def csr_column(n):
    """An (n, 3) CSR whose row i holds i + 1 at column i % 3."""
    return mx.nd.sparse.csr_matrix((np.arange(1, n + 1, dtype=np.float32),
                                    np.arange(n) % 3, np.arange(n + 1)), shape=(n, 3))


@pytest.mark.parametrize("handle", sorted(MXNET))
@pytest.mark.parametrize("kind", ["dense", "csr"])
def test_batches_match_mxnet(handle, kind):
    data = (mx.nd.arange(10).reshape((10, 1)) if kind == "dense" else csr_column(10))
    it = NDArrayIter(data, mx.nd.arange(10), 3, last_batch_handle=handle)
    for want in MXNET[handle]:
        got = []
        for b in it:
            assert b.data[0].stype == ("default" if kind == "dense" else "csr")
            rows = b.label[0].asnumpy().astype(int).tolist()
            got.append(rows)
            if kind == "csr":
                dense = b.data[0].asnumpy()
                assert dense.shape == (3, 3)
                assert dense.sum(axis=1).tolist() == [r + 1 for r in rows]
            assert list(b.index) == rows
            assert b.pad == PADS[handle][len(got) - 1]
        assert got == want
        it.reset()


def test_batch_larger_than_data_wraps():
    it = NDArrayIter(np.arange(10).reshape(10, 1), np.arange(10), 20)
    b = it.next()
    assert b.data[0].shape == (20, 1) and b.pad == 10
    assert b.label[0].asnumpy().tolist() == list(range(10)) * 2


def test_shuffle_csr_labels_and_scipy_input():
    np.random.seed(0)
    x = sp.random(11, 6, density=0.5, format="csr", random_state=1, dtype=np.float32)
    lab = mx.nd.sparse.csr_matrix(sp.eye(11, 4, format="csr", dtype=np.float32))
    it = NDArrayIter(x, lab, 4, shuffle=True, last_batch_handle="discard")
    for _ in range(2):
        seen = []
        for b in it:
            assert b.data[0].stype == "csr" and b.label[0].stype == "csr"
            idx = b.index
            seen.extend(idx.tolist())
            np.testing.assert_array_equal(b.data[0].asnumpy(), x.toarray()[idx])
            np.testing.assert_array_equal(b.label[0].asnumpy(), np.eye(11, 4)[idx])
        assert len(seen) == 8 and len(set(seen)) == 8
        it.reset()


def test_names_provide_and_multiple_inputs():
    it = NDArrayIter({"a": np.zeros((4, 2)), "b": mx.nd.ones((4, 3))}, {"y": np.arange(4)}, 2)
    assert repr(it.provide_data) == ("[DataDesc[a,(2, 2),<class 'numpy.float32'>,NCHW], "
                                     "DataDesc[b,(2, 3),<class 'numpy.float32'>,NCHW]]")
    assert repr(it.provide_label) == "[DataDesc[y,(2,),<class 'numpy.float32'>,NCHW]]"
    it = NDArrayIter([np.zeros((4, 2)), np.ones((4, 1))], None, 2, data_name="x")
    assert [d.name for d in it.provide_data] == ["_0_x", "_1_x"]
    assert it.provide_label == [] and it.next().label == []


def test_batch_axis_from_layout():
    x = mx.nd.arange(24).reshape((3, 4, 2))  # T, N, C
    it = NDArrayIter(x, None, 2, layout="TNC", last_batch_handle="discard")
    assert it.provide_data[0].shape == (3, 2, 2)
    np.testing.assert_array_equal(it.next().data[0].asnumpy(), x.asnumpy()[:, 0:2])


@pytest.mark.parametrize("kw,msg", [
    ({"last_batch_handle": "keep"}, "last_batch_handle must be one of"),
    ({"batch_size": 0}, "batch_size must be a positive integer"),
    ({"label": np.zeros(3)}, "same number of examples"),
])
def test_bad_arguments(kw, msg):
    args = {"data": np.zeros((4, 2)), "batch_size": 2, **kw}
    with pytest.raises(ValueError, match=msg):
        NDArrayIter(**args)
    with pytest.raises(TypeError, match="must be an NDArray"):
        NDArrayIter({"x": "text"})


def test_hard_reset_forgets_rolled_rows():
    it = NDArrayIter(np.arange(5).reshape(5, 1), None, 2, last_batch_handle="roll_over")
    assert len(list(it)) == 2
    it.hard_reset()
    assert it.next().data[0].asnumpy().ravel().tolist() == [0, 1]


@pytest.mark.parametrize("handle", sorted(MXNET))
@pytest.mark.parametrize("chunk_bytes", [1, 200, 1 << 20])
def test_shuffled_batches_gathered_in_chunks(monkeypatch, handle, chunk_bytes):
    # the rows of several shuffled batches are gathered at once (io/ndarray_iter.py
    # _chunked); every batch must still hold exactly the rows of its index, in order
    from sparsenet.io import ndarray_iter
    monkeypatch.setattr(ndarray_iter, "_CHUNK_BYTES", chunk_bytes)
    np.random.seed(3)
    n, bs = 23, 4
    dense = np.random.rand(n, 5).astype(np.float32)
    chw = np.random.rand(2, n, 3).astype(np.float32)  # batch axis 1
    csr = sp.random(n, 7, density=0.4, format="csr", random_state=2, dtype=np.float32)
    it = NDArrayIter({"a": dense, "b": csr}, {"y": np.arange(n, dtype=np.float32)}, bs,
                     shuffle=True, last_batch_handle=handle)
    it_t = NDArrayIter(chw, None, bs, shuffle=True, last_batch_handle=handle, layout="CNH")
    for _ in range(3):
        seen = 0
        for b in it:
            idx = np.asarray(b.index)
            assert len(idx) == bs
            np.testing.assert_array_equal(b.data[0].asnumpy(), dense[idx])
            assert b.data[1].stype == "csr"
            np.testing.assert_array_equal(b.data[1].asnumpy(), csr[idx].toarray())
            np.testing.assert_array_equal(b.label[0].asnumpy(), idx.astype(np.float32))
            seen += 1
        assert seen >= n // bs
        for b in it_t:
            np.testing.assert_array_equal(b.data[0].asnumpy(), chw[:, np.asarray(b.index)])
        it.reset()
        it_t.reset()

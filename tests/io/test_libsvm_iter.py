"""LibSVMIter: MXNet's interface, epoch semantics, labels, sharding, cache and streaming agree."""
import numpy as np
import pytest
import scipy.sparse as sp

import sparsenet as mx
from sparsenet.base import SparsenetError
from sparsenet.io import LibSVMIter

# the two ways of reading: parsed once and replayed, or streamed every epoch in tiny chunks
MODES = {"cached": {}, "streamed": {"cache_bytes": 0, "chunk_size": 16}}


@pytest.fixture(params=sorted(MODES))
def mode(request):
    return MODES[request.param]


def ten_rows(write, name="d.svm"):
    # row i has label i and feature (i % 4) = i + 1
    return write("".join(f"{i} {i % 4}:{i + 1}\n" for i in range(10)), name)


def epoch(it):
    out = []
    for b in it:
        d = b.data[0]
        assert d.stype == "csr" and d.shape[1] == 4
        out.append((b.label[0].asnumpy().astype(int).tolist(), b.pad, list(b.index)))
        np.testing.assert_array_equal(
            d.asnumpy(), [[0] * (r % 4) + [r + 1] + [0] * (3 - r % 4) for r in b.index])
    return out


def test_round_batch_pads_from_the_start_without_drift(write, backend, mode):
    it = LibSVMIter(data_libsvm=ten_rows(write), data_shape=(4,), batch_size=3, **mode)
    expected = [([0, 1, 2], 0, [0, 1, 2]), ([3, 4, 5], 0, [3, 4, 5]), ([6, 7, 8], 0, [6, 7, 8]),
                ([9, 0, 1], 2, [9, 0, 1])]
    assert epoch(it) == expected
    assert epoch(it) == []  # no auto-reset, as MXNet
    for _ in range(3):  # every epoch starts at row 0 (MXNet drifts: row 2, then row 1, ...)
        it.reset()
        assert epoch(it) == expected


def test_round_batch_false_gives_a_short_last_batch(write, backend, mode):
    it = LibSVMIter(data_libsvm=ten_rows(write), data_shape=(4,), batch_size=4,
                    round_batch=False, **mode)
    out = epoch(it)
    assert out[-1] == ([8, 9], 0, [8, 9])
    assert [len(o[0]) for o in out] == [4, 4, 2]


@pytest.mark.parametrize("round_batch", [True, False])
def test_batch_larger_than_the_file(write, backend, mode, round_batch):
    it = LibSVMIter(data_libsvm=write("0 0:1\n1 1:2\n2 2:3\n"), data_shape=(4,), batch_size=8,
                    round_batch=round_batch, **mode)
    for _ in range(2):
        out = epoch(it)
        if round_batch:
            assert out == [([0, 1, 2, 0, 1, 2, 0, 1], 5, [0, 1, 2, 0, 1, 2, 0, 1])]
        else:
            assert out == [([0, 1, 2], 0, [0, 1, 2])]
        it.reset()


def test_reset_before_first_epoch_and_mid_epoch(write, backend, mode):
    it = LibSVMIter(data_libsvm=ten_rows(write), data_shape=(4,), batch_size=3, **mode)
    it.reset()  # the seed does this: it must not add batches (MXNet 1.9.1 gives 150 of 100)
    assert len(epoch(it)) == 4
    it.reset()
    it.next()
    it.next()
    it.reset()  # mid-epoch: back to row 0
    assert epoch(it)[0] == ([0, 1, 2], 0, [0, 1, 2])


def test_iter_next_and_getters(write, backend, mode):
    it = LibSVMIter(data_libsvm=ten_rows(write), data_shape=(4,), batch_size=4, **mode)
    with pytest.raises(SparsenetError, match="call iter_next"):
        it.getdata()
    assert it.iter_next()
    assert it.getlabel()[0].asnumpy().tolist() == [0, 1, 2, 3]
    assert it.getpad() == 0 and list(it.getindex()) == [0, 1, 2, 3]
    assert it.getdata()[0].shape == (4, 4)
    assert it.iter_next() and it.iter_next()
    assert it.getpad() == 2
    assert not it.iter_next()
    with pytest.raises(StopIteration):
        it.next()


def test_provide_data_label_and_names(write):
    it = LibSVMIter(data_libsvm=ten_rows(write), data_shape=(4,), label_shape=(1,), batch_size=5,
                    dtype="float64", data_name="x", label_name="y", ctx="cpu",
                    label_libsvm="NULL")
    assert repr(it.provide_data) == "[DataDesc[x,(5, 4),<class 'numpy.float64'>,NCHW]]"
    assert repr(it.provide_label) == "[DataDesc[y,(5,),<class 'numpy.float64'>,NCHW]]"
    b = it.next()
    assert b.data[0].dtype == np.float64 and b.label[0].dtype == np.float64


@pytest.mark.parametrize("kw,exc,msg", [
    ({"data_shape": (2, 3)}, ValueError, "data_shape must be a 1-D shape"),
    ({"data_shape": 4, "label_shape": (3,)}, ValueError, "label_shape must be \\(1,\\)"),
    ({"data_shape": (4,), "batch_size": 0}, ValueError, "batch_size must be a positive"),
    ({"data_shape": (4,), "dtype": "float16"}, ValueError, "dtype must be 'float32' or"),
    ({"data_shape": (4,), "duplicates": "last"}, ValueError, "duplicates must be"),
])
def test_bad_parameters(write, kw, exc, msg):
    with pytest.raises(exc, match=msg):
        LibSVMIter(data_libsvm=ten_rows(write), **kw)


def test_index_beyond_data_shape_is_an_error(write, backend, mode):
    with pytest.raises(mx.io.LibSVMFormatError, match="d.svm:8:3: feature index 7 out of range "
                                                      r"\[0, 4\) in token '7:1'"):
        it = LibSVMIter(data_libsvm=write("0 0:1\n" * 7 + "1 7:1\n", "d.svm"), data_shape=(4,),
                        batch_size=2, **mode)
        for _ in it:
            pass


def test_label_file_as_mxnet(write, backend, mode):
    """The batches MXNet 1.9.1 gives for this pair of files (measured), minus its drift."""
    d = write("1 0:1 2:2\n0 1:3\n1 3:4\n0 0:5\n1 4:6\n", "d.svm")
    lab = write("9 0:1 1:0.5\n8 2:1\n7 0:2\n6 1:1\n5 2:3\n", "l.svm")
    it = LibSVMIter(data_libsvm=d, data_shape=(5,), label_libsvm=lab, label_shape=(3,),
                    batch_size=2, **mode)
    assert it.provide_label[0].shape == (2, 3)
    got = [(b.label[0].stype, b.label[0].asnumpy().tolist(), b.pad, list(b.index)) for b in it]
    assert got == [("csr", [[1, 0.5, 0], [0, 0, 1]], 0, [0, 1]),
                   ("csr", [[2, 0, 0], [0, 1, 0]], 0, [2, 3]),
                   ("csr", [[0, 0, 3], [1, 0.5, 0]], 1, [4, 0])]


@pytest.mark.parametrize("label_rows,data_rows", [(3, 5), (6, 5)])
def test_label_file_row_mismatch(write, backend, mode, label_rows, data_rows):
    d = write("".join(f"1 {i % 3}:1\n" for i in range(data_rows)), "d.svm")
    lab = write("".join("0 0:1\n" for _ in range(label_rows)), "l.svm")
    with pytest.raises(mx.io.LibSVMFormatError,
                       match=f"label_libsvm '.*l.svm' has {label_rows} rows but "
                             f"data_libsvm '.*d.svm' has {data_rows}: every data "
                             f"row needs one label row"):
        it = LibSVMIter(data_libsvm=d, data_shape=(3,), label_libsvm=lab, label_shape=(2,),
                        batch_size=2, **mode)
        for _ in it:
            pass


def test_sharded_label_file_too_short(write, backend, mode):
    d = write("".join(f"0 {i % 4}:{i}\n" for i in range(20)), "d.svm")
    lab = write("".join(f"0 0:{i}\n" for i in range(12)), "l.svm")
    with pytest.raises(mx.io.LibSVMFormatError, match="label_libsvm '.*l.svm' ends after 12 rows, "
                                                      "but part 1 of 2 of data_libsvm '.*d.svm' "
                                                      "needs label rows 11 to 19"):
        it = LibSVMIter(data_libsvm=d, data_shape=(4,), label_libsvm=lab, label_shape=(1,),
                        batch_size=3, num_parts=2, part_index=1, **mode)
        for _ in it:
            pass


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 10, 16])
def test_sharded_iterators_cover_every_row_once(write, backend, mode, n):
    path = write("".join(f"{i} {i % 4}:1\n" for i in range(37)))
    seen = []
    for k in range(n):
        it = LibSVMIter(data_libsvm=path, data_shape=(4,), batch_size=5, round_batch=False,
                        num_parts=n, part_index=k, **mode)
        for b in it:
            seen.extend(b.label[0].asnumpy().astype(int).tolist())
    assert seen == list(range(37))


@pytest.mark.parametrize("n", [2, 3, 5])
def test_sharded_label_file_stays_aligned(write, backend, mode, n):
    d = write("".join(f"0 {i % 4}:{i}\n" for i in range(23)), "d.svm")
    lab = write("".join(f"0 0:{i}\n" for i in range(23)), "l.svm")
    pairs = []
    for k in range(n):
        it = LibSVMIter(data_libsvm=d, data_shape=(4,), label_libsvm=lab, label_shape=(1,),
                        batch_size=4, round_batch=False, num_parts=n, part_index=k, **mode)
        for b in it:
            dv = b.data[0].asnumpy().sum(axis=1)
            lv = b.label[0].asnumpy()[:, 0]
            pairs.extend(zip(dv.tolist(), lv.tolist()))
    assert pairs == [(float(i), float(i)) for i in range(23)]


def test_multilabel_batches(write, backend, mode):
    it = LibSVMIter(data_libsvm=write("1,2 0:1\n0 1:1\n3 2:1\n"), data_shape=(3,),
                    label_shape=(4,), multilabel=True, batch_size=2, **mode)
    got = [b.label[0].asnumpy().tolist() for b in it]
    assert got == [[[0, 1, 1, 0], [1, 0, 0, 0]], [[0, 0, 0, 1], [0, 1, 1, 0]]]


def test_compressed_and_directory_inputs(tmp_path, backend):
    import gzip
    d = tmp_path / "dir"
    d.mkdir()
    (d / "a.svm.gz").write_bytes(gzip.compress("".join(f"{i} {i % 4}:{i + 1}\n"
                                                       for i in range(6)).encode()))
    (d / "b.svm").write_text("".join(f"{i} {i % 4}:{i + 1}\n" for i in range(6, 10)))
    it = LibSVMIter(data_libsvm=str(d), data_shape=(4,), batch_size=3, chunk_size=8)
    assert epoch(it)[-1] == ([9, 0, 1], 2, [9, 0, 1])
    it.reset()
    assert len(epoch(it)) == 4


def test_cached_and_streamed_agree_on_a_bigger_file(tmp_path, backend):
    rng = np.random.default_rng(0)
    X = sp.random(1001, 50, density=0.1, format="csr", random_state=rng, dtype=np.float32)
    y = np.arange(1001) % 2
    path = str(tmp_path / "big.svm")
    mx.io.save_libsvm(path, X, y)
    runs = []
    for kw in ({}, {"cache_bytes": 0, "chunk_size": 997}, {"cache_bytes": 0}):
        it = LibSVMIter(data_libsvm=path, data_shape=(50,), batch_size=64, **kw)
        batches = [(b.data[0].asscipy(), b.label[0].asnumpy(), b.pad) for b in it]
        runs.append(batches)
        full = sp.vstack([m for m, _, _ in batches])[:1001]
        assert (full != X).nnz == 0
    for a, b in zip(runs[0], runs[1]):
        assert (a[0] != b[0]).nnz == 0 and np.array_equal(a[1], b[1]) and a[2] == b[2]


def test_streaming_keeps_a_bounded_read_ahead(tmp_path, monkeypatch):
    from sparsenet.io.libsvm import stream as libsvm_stream
    path = tmp_path / "s.svm"
    path.write_text("".join(f"1 {i % 9}:1\n" for i in range(5000)))
    seen = []
    real_next = libsvm_stream.ChunkStream.__next__

    def spy(self):
        seen.append(len(self._pending))
        return real_next(self)

    monkeypatch.setattr(libsvm_stream.ChunkStream, "__next__", spy)
    it = LibSVMIter(data_libsvm=str(path), data_shape=(9,), batch_size=100, prefetch_buffer=3,
                    chunk_size=256, cache_bytes=0)
    assert sum(b.data[0].shape[0] for b in it) == 5000
    assert len(seen) > 100 and max(seen) <= 3


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs CUDA")
def test_gpu_batches(write):
    it = LibSVMIter(data_libsvm=ten_rows(write), data_shape=(4,), batch_size=3, ctx=mx.gpu(0))
    b = it.next()
    assert b.data[0].context == mx.gpu(0) and b.label[0].context == mx.gpu(0)

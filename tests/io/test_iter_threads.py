"""Data iterators shared by threads: they take turns, and no batch is lost or doubled.

Two threads drain one iterator with ``next()`` (or ``for``); together they must get
exactly the batches of a single-threaded drain, as a multiset of batches (each batch
the tuple of its rows' labels and its ``pad``), epoch after epoch.
"""
import gzip
import sys
import threading
from collections import Counter

import numpy as np
import pytest
import zstandard

import sparsenet as mx

ROWS = 203      # not a multiple of any batch size below: every epoch ends on a short batch
FEATURES = 7
EPOCHS = 4
THREADS = 2


@pytest.fixture(autouse=True)
def _switch_often():
    """Let the interpreter switch threads often, so that the drains interleave."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _lines(n=ROWS):
    return "".join(f"{i} {i % FEATURES}:{i + 1} {(i + 1 + i % (FEATURES - 1)) % FEATURES}:0.5\n"
                   for i in range(n))


def _write(path, text):
    data = text.encode()
    if path.suffix == ".gz":
        with gzip.open(path, "wb") as f:
            f.write(data)
    elif path.suffix == ".zst":
        path.write_bytes(zstandard.ZstdCompressor().compress(data))
    else:
        path.write_bytes(data)
    return str(path)


def _key(batch):
    """A batch as (its rows' labels, its data rows' sums, pad): hashable, order kept."""
    labels = batch.label[0].asnumpy()
    data = batch.data[0]
    dense = data.asnumpy() if hasattr(data, "asnumpy") else np.asarray(data)
    sums = dense.reshape(dense.shape[0], -1).sum(axis=1)
    return (tuple(labels.reshape(labels.shape[0], -1)[:, 0].tolist()),
            tuple(np.round(sums, 4).tolist()), int(batch.pad or 0))


def _drain_alone(it):
    return Counter(_key(b) for b in it)


def _drain_shared(it, use_for):
    """Drain ``it`` from THREADS threads at once; the batches they got, and any error."""
    got, errors = [], []
    barrier = threading.Barrier(THREADS)

    def work():
        mine = []
        try:
            barrier.wait(30)
            if use_for:
                for b in it:
                    mine.append(_key(b))
            else:
                while True:
                    try:
                        b = it.next()
                    except StopIteration:
                        break
                    mine.append(_key(b))
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)
        got.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a drain hung"
    if errors:
        raise errors[0]
    return Counter(got)


def _check(make, use_for=False):
    """Epoch after epoch, two threads sharing an iterator get the batches one thread gets
    from an iterator made alike (the same NumPy seed: shuffled orders are drawn by
    ``reset()``, which runs in this thread)."""
    np.random.seed(7)
    alone = make()
    expected = []
    for _ in range(EPOCHS):
        expected.append(_drain_alone(alone))
        alone.reset()
    assert sum(expected[0].values()) > 2
    np.random.seed(7)
    it = make()
    for epoch, want in enumerate(expected):
        got = _drain_shared(it, use_for)
        assert got == want, f"epoch {epoch}: {got - want} extra, {want - got} missing"
        it.reset()


@pytest.mark.parametrize("round_batch", [True, False])
@pytest.mark.parametrize("suffix,cache", [(".svm", "cached"), (".svm", "streamed"),
                                          (".gz", "streamed"), (".zst", "streamed")])
def test_libsvm_iter_shared_by_two_threads(tmp_path, suffix, cache, round_batch):
    """Plain files small enough are cached (batches replayed); compressed ones stream."""
    path = _write(tmp_path / f"d{suffix}", _lines())
    kw = {"cache_bytes": 0} if cache == "streamed" else {}

    def make():
        return mx.io.LibSVMIter(data_libsvm=path, data_shape=(FEATURES,), batch_size=4,
                                round_batch=round_batch, chunk_size=256, **kw)

    _check(make)


def test_libsvm_iter_shared_by_two_threads_in_for_loops(tmp_path):
    path = _write(tmp_path / "d.gz", _lines())
    _check(lambda: mx.io.LibSVMIter(data_libsvm=path, data_shape=(FEATURES,), batch_size=5,
                                    chunk_size=200), use_for=True)


def _arrays():
    x = np.arange(ROWS * 3, dtype=np.float32).reshape(ROWS, 3)
    return x, np.arange(ROWS, dtype=np.float32)


@pytest.mark.parametrize("handle", ["pad", "discard", "roll_over"])
@pytest.mark.parametrize("shuffle", [False, True])
def test_ndarray_iter_shared_by_two_threads(handle, shuffle):
    x, y = _arrays()
    _check(lambda: mx.io.NDArrayIter(x, y, batch_size=4, shuffle=shuffle,
                                     last_batch_handle=handle))


def test_ndarray_iter_with_csr_data_shared_by_two_threads():
    x, y = _arrays()
    csr = mx.nd.array(x).tostype("csr")
    _check(lambda: mx.io.NDArrayIter(csr, y, batch_size=6, shuffle=False))


@pytest.mark.parametrize("round_batch", [True, False])
def test_csv_iter_shared_by_two_threads(tmp_path, round_batch):
    x, y = _arrays()
    data = tmp_path / "d.csv"
    label = tmp_path / "l.csv"
    data.write_text("".join(",".join(str(v) for v in row) + "\n" for row in x))
    label.write_text("".join(f"{v}\n" for v in y))
    _check(lambda: mx.io.CSVIter(data_csv=str(data), data_shape=(3,), label_csv=str(label),
                                 batch_size=4, round_batch=round_batch))


@pytest.mark.parametrize("ahead", [1, None])
def test_prefetching_iter_shared_by_two_threads(tmp_path, ahead):
    path = _write(tmp_path / "d.zst", _lines())

    def make():
        inner = mx.io.LibSVMIter(data_libsvm=path, data_shape=(FEATURES,), batch_size=1,
                                 chunk_size=256)
        return mx.io.PrefetchingIter(inner, ahead=ahead)  # many batches: many hand-overs

    _check(make)


def test_resize_iter_shared_by_two_threads():
    x, y = _arrays()

    def make():
        return mx.io.ResizeIter(mx.io.NDArrayIter(x, y, batch_size=4), 77)

    _check(make)
    # exactly `size` batches per epoch, whoever takes them
    it = make()
    assert sum(_drain_shared(it, False).values()) == 77

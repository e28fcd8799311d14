"""mx.io.PrefetchingIter: MXNet 1.9.1's zipped batches and renames; a thread that ends."""
import gc
import threading
import traceback

import numpy as np
import pytest

import sparsenet as mx


def _within(seconds, fn):
    """fn() in a helper thread; fail (instead of hanging) when it takes over ``seconds``."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            out["error"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still blocked after {seconds} s"
    if "error" in out:
        raise out["error"]
    return out.get("value")


def _pair():
    a = mx.io.NDArrayIter({"data": mx.nd.arange(10).reshape((5, 2))},
                          {"lab": mx.nd.arange(5)}, batch_size=2)
    b = mx.io.NDArrayIter({"data": mx.nd.arange(10).reshape((5, 2)) + 100},
                          {"lab": mx.nd.arange(5) + 100}, batch_size=2)
    return a, b


def _epoch(it):
    return [([d.asnumpy().tolist() for d in b.data], [x.asnumpy().tolist() for x in b.label],
             b.pad) for b in it]


# measured with MXNet 1.9.1 on _pair() with the renames below
PAIR_EPOCH = [
    ([[[0, 1], [2, 3]], [[100, 101], [102, 103]]], [[0, 1], [100, 101]], 0),
    ([[[4, 5], [6, 7]], [[104, 105], [106, 107]]], [[2, 3], [102, 103]], 0),
    ([[[8, 9], [0, 1]], [[108, 109], [100, 101]]], [[4, 0], [104, 100]], 1),
]


def test_two_iterators_zipped_and_renamed():
    it = mx.io.PrefetchingIter(list(_pair()), rename_data=[{"data": "d1"}, {"data": "d2"}],
                               rename_label=[{"lab": "l1"}, {"lab": "l2"}])
    assert [(d.name, d.shape) for d in it.provide_data] == [("d1", (2, 2)), ("d2", (2, 2))]
    assert [(d.name, d.shape) for d in it.provide_label] == [("l1", (2,)), ("l2", (2,))]
    assert it.batch_size == 2
    for _ in range(2):
        batches = list(it)
        assert _epoch(iter(batches)) == PAIR_EPOCH
        assert batches[0].provide_data == it.provide_data
        assert batches[0].provide_label == it.provide_label
        assert not it.iter_next() and not it.iter_next()  # measured: False at the end
        it.reset()


def test_single_iterator_without_label():
    it = mx.io.PrefetchingIter(mx.io.NDArrayIter(mx.nd.arange(10).reshape((5, 2)),
                                                 batch_size=2))
    # measured with MXNet 1.9.1
    assert it.provide_label == [] and it.provide_data[0].name == "data"
    batch = it.next()
    assert batch is it.current_batch and it.getlabel() == [] and it.getpad() == 0
    assert it.getdata()[0].asnumpy().tolist() == [[0, 1], [2, 3]]
    assert list(it.getindex()) == [0, 1]
    it.reset()
    assert [b.data[0].asnumpy().tolist() for b in it] == [[[0, 1], [2, 3]], [[4, 5], [6, 7]],
                                                           [[8, 9], [0, 1]]]


def test_tuple_of_iterators_and_layout_kept():
    a, b = _pair()
    it = mx.io.PrefetchingIter((a, b))  # MXNet 1.9.1 takes only a list (AttributeError)
    assert [d.name for d in it.provide_data] == ["data", "data"]
    c = mx.io.NDArrayIter(mx.nd.ones((4, 2)), batch_size=2, layout="NC")
    it = mx.io.PrefetchingIter([c], rename_data=[{"data": "y"}])
    # MXNet 1.9.1 resets the renamed layout to 'NCHW' (measured); the layout is kept here
    assert it.provide_data[0].layout == "NC" and it.provide_data[0].name == "y"


@pytest.mark.parametrize("sizes", [((4, 2), (6, 2)), ((6, 2), (4, 2)), ((5, 2), (6, 2))],
                         ids=["second-longer", "first-longer", "pad-differs"])
def test_iterators_that_disagree(sizes):
    a, b = (mx.io.NDArrayIter(mx.nd.zeros(s), batch_size=2) for s in sizes)
    it = mx.io.PrefetchingIter([a, b])
    # MXNet 1.9.1: AssertionError "Number of entry mismatches between iterators", and
    # AttributeError ('NoneType' object has no attribute 'pad') when the first is longer
    with pytest.raises(mx.io.IteratorMismatchError,
                       match="ended but|different pad") as info:
        _within(10, lambda: list(it))
    assert isinstance(info.value, AssertionError) and isinstance(info.value, mx.MXNetError)


def test_bad_renames():
    a, b = _pair()
    # MXNet 1.9.1: KeyError 'data'
    with pytest.raises(mx.base.InvalidArgumentError, match=r"rename_data\[0\] .* no new name "
                                                           r"for 'data'"):
        mx.io.PrefetchingIter([a], rename_data=[{"x": "y"}])
    # MXNet 1.9.1 silently drops the second iterator's names (zip), measured
    with pytest.raises(mx.base.InvalidArgumentError, match="rename_data must be a list of 2"):
        mx.io.PrefetchingIter([a, b], rename_data=[{"data": "y"}])
    with pytest.raises(mx.base.InvalidArgumentError, match=r"rename_label\[1\]"):
        mx.io.PrefetchingIter([a, b], rename_label=[{"lab": "x"}, {}])
    with pytest.raises(mx.base.InvalidArgumentError, match="at least one iterator"):
        mx.io.PrefetchingIter([])
    with pytest.raises(mx.base.InvalidArgumentError, match=r"iters\[0\] must be a DataIter"):
        mx.io.PrefetchingIter([object()])


class _Counting(mx.io.DataIter):
    """Batches 0..n-1 of shape (1,); records the thread of each next() call."""

    def __init__(self, n, fail_at=None):
        super().__init__(1)
        self.n, self.fail_at, self.i = n, fail_at, 0
        self.threads, self.called = [], threading.Event()

    provide_data = [mx.io.DataDesc("data", (1,))]
    provide_label = []

    def reset(self):
        self.i = 0

    def next(self):
        self.threads.append(threading.current_thread().name)
        self.called.set()
        if self.i == self.fail_at:
            self.i += 1
            raise ValueError("broken record")
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        return mx.io.DataBatch([mx.nd.array([self.i - 1])], [], pad=0)


def test_fetches_in_a_background_thread_from_construction():
    src = _Counting(3)
    it = mx.io.PrefetchingIter(src)
    assert src.called.wait(10)  # the first batch is fetched before anyone asks
    batches = _within(10, lambda: [b.data[0].asnumpy().tolist() for b in it])
    assert batches == [[0], [1], [2]]
    assert set(src.threads) == {"PrefetchingIter"}
    assert threading.current_thread().name != "PrefetchingIter"


def test_producer_exception_is_raised_in_the_consumer():
    src = _Counting(4, fail_at=1)
    it = mx.io.PrefetchingIter(src)
    assert _within(10, it.next).data[0].asnumpy().tolist() == [0]
    with pytest.raises(ValueError, match="broken record") as info:
        _within(10, it.next)
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "next" in frames and "_fetch" in frames  # the background thread's own frames
    notes = getattr(info.value, "__notes__", ["_Counting iters[0]"])
    assert "_Counting iters[0]" in notes[0]
    # the failure is handed out once; iteration goes on, and reset starts over
    assert _within(10, lambda: [b.data[0].asnumpy().tolist() for b in it]) == [[2], [3]]
    it.reset()
    assert _within(10, it.next).data[0].asnumpy().tolist() == [0]
    with pytest.raises(ValueError, match="broken record"):  # again at the same record
        _within(10, it.next)
    src.fail_at = None
    it.reset()
    assert _within(10, lambda: len(list(it))) == 4


def test_thread_ends_when_the_iterator_is_collected():
    it = mx.io.PrefetchingIter(list(_pair()))
    thread = it._worker.thread
    assert thread.is_alive()
    it.next()
    del it
    gc.collect()
    thread.join(10)
    assert not thread.is_alive()  # MXNet 1.9.1's threads hold the iterator and never end


def test_reset_mid_epoch_restarts_without_new_threads():
    it = mx.io.PrefetchingIter(list(_pair()))
    before = threading.active_count()
    for _ in range(5):
        it.next()
        _within(10, it.reset)
    assert threading.active_count() == before
    assert _epoch(it) == [(d, lab, p) for d, lab, p in PAIR_EPOCH]


def test_wraps_csv_iter_and_resize_iter(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1,2\n3,4\n5,6\n")
    csv = mx.io.CSVIter(data_csv=str(p), data_shape=(2,), batch_size=2)
    it = mx.io.ResizeIter(mx.io.PrefetchingIter(csv, rename_data=[{"data": "x"}]), 3)
    assert it.provide_data[0].name == "x"
    got = [(b.data[0].asnumpy()[:, 0].tolist(), b.pad) for b in it]
    assert got == [([1, 3], 0), ([5, 1], 1), ([1, 3], 0)]


def _settled(it, src):
    """Wait until the thread is idle; the number of next() calls it made so far."""
    def idle():
        with it._worker.cond:
            while it._worker.running:
                it._worker.cond.wait()
        return len(src.threads)
    return _within(10, idle)


@pytest.mark.parametrize("ahead, batch_values, expect_ahead", [
    (1, 1, 1),  # MXNet's: one batch ahead
    (None, 1, 8),  # small batches: eight ready
    (None, 5 << 20, 3),  # 20 MiB batches: three fit in 64 MiB
    (None, 40 << 20, 1),  # a batch over half the budget: one, as MXNet
])
def test_batches_kept_ready(ahead, batch_values, expect_ahead):
    class Big(_Counting):
        def next(self):
            b = super().next()
            return mx.io.DataBatch([mx.nd.zeros((batch_values,))], [], pad=0) if b else b
    src = Big(20)
    it = mx.io.PrefetchingIter(src, ahead=ahead)
    assert _settled(it, src) == expect_ahead
    taken = 0
    for _ in range(expect_ahead):  # the thread waits until all but a quarter are taken
        it.next()
        taken += 1
        fetched = _settled(it, src)
        assert taken < fetched <= taken + expect_ahead
    fetched = [len(src.threads)]
    for b in it:
        taken += 1
        fetched.append(_settled(it, src))
        assert taken <= fetched[-1] <= min(taken + expect_ahead, 21)
    assert taken == 20 and fetched[-1] == 21  # the end is fetched once ...
    with pytest.raises(StopIteration):
        it.next()
    assert len(src.threads) == 21  # ... and given again without calling next()


def test_reset_while_fetching_ahead_keeps_the_order():
    src = _Counting(30)
    it = mx.io.PrefetchingIter(src)
    for k in range(4):
        got = [int(it.next().data[0].asnumpy()[0]) for _ in range(k + 3)]
        assert got == list(range(k + 3))
        _within(10, it.reset)
    assert [int(b.data[0].asnumpy()[0]) for b in it] == list(range(30))


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "8"])
def test_ahead_must_be_a_positive_integer(bad):
    with pytest.raises(mx.MXNetError, match="ahead must be a positive integer"):
        mx.io.PrefetchingIter(_Counting(2), ahead=bad)


@pytest.mark.parametrize("cache_bytes", [None, 0])  # a cached part; a streamed one
def test_batches_read_ahead_stay_intact(tmp_path, cache_bytes):
    # up to 8 batches are fetched before the consumer uses them: no iterator may hand out
    # a buffer that its next batch overwrites
    path = tmp_path / "d.svm"
    path.write_text("".join(f"{i} {i % 7}:{i + 1}\n" for i in range(200)))
    kw = dict(data_libsvm=str(path), data_shape=(7,), batch_size=9, cache_bytes=cache_bytes,
              chunk_size=64)
    want = [(b.data[0].asnumpy(), b.label[0].asnumpy()) for b in mx.io.LibSVMIter(**kw)]
    it = mx.io.PrefetchingIter(mx.io.LibSVMIter(**kw))
    def filled():  # let the thread read 8 batches ahead before any is used
        with it._worker.cond:
            while it._worker.running:
                it._worker.cond.wait()
        return len(it._worker.ready)
    assert _within(10, filled) == 8
    got = _within(10, lambda: [(b.data[0].asnumpy(), b.label[0].asnumpy()) for b in it])
    assert len(got) == len(want) == 23
    for (gd, gl), (wd, wl) in zip(got, want):
        np.testing.assert_array_equal(gd, wd)
        np.testing.assert_array_equal(gl, wl)

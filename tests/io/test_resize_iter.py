"""mx.io.ResizeIter: MXNet 1.9.1's batch sequences; sizes that would loop forever rejected."""
import pytest

import sparsenet as mx


def _five():
    return mx.io.NDArrayIter(mx.nd.arange(10).reshape((5, 2)), mx.nd.arange(5), batch_size=2)


def _epoch(it):
    return [(b.data[0].asnumpy()[:, 0].tolist(), b.label[0].asnumpy().tolist(), b.pad)
            for b in it]


def test_longer_than_the_data_wraps_around():
    r = mx.io.ResizeIter(_five(), 5)
    assert r.provide_data == [mx.io.DataDesc("data", (2, 2))]
    assert r.provide_label == [mx.io.DataDesc("softmax_label", (2,))]
    assert r.batch_size == 2
    # measured with MXNet 1.9.1, the same in both epochs
    want = [([0, 2], [0, 1], 0), ([4, 6], [2, 3], 0), ([8, 0], [4, 0], 1),
            ([0, 2], [0, 1], 0), ([4, 6], [2, 3], 0)]
    for _ in range(2):
        assert _epoch(r) == want
        r.reset()


def test_reset_internal_false_continues():
    r = mx.io.ResizeIter(_five(), 2, reset_internal=False)
    # measured with MXNet 1.9.1
    got = []
    for _ in range(3):
        got.append([(d, p) for d, _, p in _epoch(r)])
        r.reset()
    assert got == [[([0, 2], 0), ([4, 6], 0)], [([8, 0], 1), ([0, 2], 0)],
                   [([4, 6], 0), ([8, 0], 1)]]


def test_batches_pass_through_and_counters():
    src = _five()
    r = mx.io.ResizeIter(src, 2)
    batch = r.next()
    # measured with MXNet 1.9.1: next() builds a new DataBatch; cur counts batches
    assert isinstance(batch, mx.io.DataBatch) and batch is not r.current_batch
    assert r.cur == 1 and list(r.getindex()) == [0, 1] and r.getpad() == 0
    assert r.getdata()[0] is r.current_batch.data[0]
    assert r.iter_next() and not r.iter_next() and r.cur == 2
    assert list(mx.io.ResizeIter(_five(), 0)) == []


def test_sizes_that_never_end_are_rejected():
    # MXNet 1.9.1 iterates forever with size -1 or 2.5 (measured: 7 of 7 batches taken)
    for size in (-1, 2.5, "3", True):
        with pytest.raises(mx.base.InvalidArgumentError, match="size must be a non-negative"):
            mx.io.ResizeIter(_five(), size)


def test_empty_iterator_is_an_error():
    empty = mx.io.NDArrayIter(mx.nd.zeros((1, 2)), batch_size=2, last_batch_handle="discard")
    r = mx.io.ResizeIter(empty, 2)
    # MXNet 1.9.1 gives no batch and no error (measured)
    with pytest.raises(mx.io.EmptyIteratorError, match="yields no batch even right after "
                                                       "reset"):
        list(r)
    with pytest.raises(mx.MXNetError, match="no current batch"):
        mx.io.ResizeIter(_five(), 1).getdata()


def test_default_bucket_key_is_copied():
    src = _five()
    src.default_bucket_key = 7
    assert mx.io.ResizeIter(src, 1).default_bucket_key == 7

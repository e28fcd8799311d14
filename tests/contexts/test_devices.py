"""Host contexts are devices of their own, as in MXNet: ``cpu(1)`` arrays report ``cpu(1)``,
results go to the first input's context, copies between contexts are real copies.

Expected contexts were measured with MXNet 1.9.1 (see each test)."""
import numpy as np
import pytest

import sparsenet as mx


def test_arrays_report_the_context_they_were_created_on():
    # measured with MXNet 1.9.1: every creation path keeps the context it was given
    c1, c2 = mx.cpu(1), mx.cpu(2)
    assert mx.nd.ones((2,), ctx=c1).context == c1
    assert mx.nd.zeros((2,), ctx=c2).context == c2
    assert mx.nd.array([1, 2], ctx=c1).context == c1
    assert mx.nd.arange(3, ctx=c2).context == c2
    assert mx.nd.random.uniform(shape=(2,), ctx=c2).context == c2
    assert mx.nd.sparse.zeros('row_sparse', (3, 2), ctx=c1).context == c1
    assert mx.nd.sparse.csr_matrix(([1.0], [0], [0, 1]), shape=(1, 2), ctx=c2).context == c2
    with c2:
        assert mx.nd.zeros((1,)).context == c2
    assert mx.nd.ones((1,)).context == mx.cpu(0)


def test_results_go_to_the_first_inputs_context():
    # measured with MXNet 1.9.1: (cpu0 + cpu1) -> cpu(0), (cpu1 + cpu2) -> cpu(1),
    # (cpu2 + cpu1) -> cpu(2), dot(cpu0, cpu1) -> cpu(0); unary ops and slices keep it
    a, c = mx.nd.ones((2,), ctx=mx.cpu(1)), mx.nd.ones((2,), ctx=mx.cpu(2))
    assert (mx.nd.ones((2,)) + a).context == mx.cpu(0)
    assert (a + c).context == mx.cpu(1)
    assert (c + a).context == mx.cpu(2)
    assert mx.nd.dot(mx.nd.ones((2, 2)), a).context == mx.cpu(0)
    assert (a * 2).context == mx.cpu(1)
    assert a[0:1].context == mx.cpu(1)
    assert a.copy().context == mx.cpu(1)
    s = mx.nd.sparse.zeros('row_sparse', (3, 2), ctx=mx.cpu(1))
    assert mx.nd.sparse.retain(s, mx.nd.array([0], ctx=mx.cpu(1))).context == mx.cpu(1)
    np.testing.assert_array_equal((a + c).asnumpy(), [2.0, 2.0])


def test_copies_between_contexts_are_real_copies():
    a = mx.nd.ones((2,), ctx=mx.cpu(1))
    b = a.as_in_context(mx.cpu(2))
    b[:] = 5  # measured with MXNet 1.9.1: a stays [1, 1]
    np.testing.assert_array_equal(a.asnumpy(), [1.0, 1.0])
    assert b.context == mx.cpu(2) and a.as_in_context(mx.cpu(1)) is a
    d = a.copyto(mx.cpu(0))
    assert d.context == mx.cpu(0)
    rsp = mx.nd.array([[1, 0], [0, 2]]).tostype('row_sparse').copyto(mx.cpu(2))
    assert rsp.stype == 'row_sparse' and rsp.context == mx.cpu(2)
    np.testing.assert_array_equal(rsp.asnumpy(), [[1, 0], [0, 2]])


def test_gradient_buffers_and_autograd_stay_on_the_context():
    x = mx.nd.array([1.0, 2.0], ctx=mx.cpu(2))
    x.attach_grad()
    with mx.autograd.record():
        y = (x * x).sum()
    y.backward()
    assert x.grad.context == mx.cpu(2) and y.context == mx.cpu(2)
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0])  # d(x^2)/dx = 2x


@pytest.mark.parametrize("n", [2, 3])
def test_split_and_load_places_each_part(n):
    ctxs = [mx.cpu(i) for i in range(n)]
    parts = mx.gluon.utils.split_and_load(mx.nd.arange(6).reshape((6, 1)), ctxs)
    assert [p.context for p in parts] == ctxs
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts]),
                                  np.arange(6).reshape(6, 1))


def test_libsvm_batches_come_on_the_iterators_context(tmp_path):
    path = tmp_path / "d.libsvm"
    path.write_text("1 0:1 2:3\n0 1:2\n")
    it = mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(3,), batch_size=2, ctx=mx.cpu(2))
    batch = next(iter(it))
    assert batch.data[0].context == mx.cpu(2) and batch.label[0].context == mx.cpu(2)
    np.testing.assert_array_equal(batch.data[0].asnumpy(), [[1, 0, 3], [0, 2, 0]])

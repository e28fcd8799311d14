"""The native lazy-step kernels (sparsenet.ops._row_kernels) against the torch index-op kernels
they replace on CPU: the same bits on random shapes, rows and parameters; untouched rows unchanged;
the same bits on any number of threads; bad rows refused before anything is written."""
import multiprocessing
import sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsenet as mx
from sparsenet.ops import row_kernels

pytestmark = pytest.mark.skipif(not row_kernels.available(),
                                reason="native row kernels not built")

# kernel -> (operator, number of states, extra parameters)
KERNELS = {
    "sgd": (mx.nd.sgd_update, 0, {}),
    "sgd_mom": (mx.nd.sgd_mom_update, 1, {"momentum": 0.9}),
    "adam": (mx.nd.adam_update, 2, {"beta1": 0.8, "beta2": 0.95, "epsilon": 1e-6}),
    "adagrad": (mx.nd.sparse.adagrad_update, 1, {"epsilon": 1e-7}),
}


def run_op(kernel, native, w0, states0, rows, grad_rows, params, monkeypatch):
    op, _, extra = KERNELS[kernel]
    monkeypatch.setattr(row_kernels, "ENABLED", native)
    w = mx.nd.array(w0, dtype=w0.dtype)
    states = [mx.nd.array(s, dtype=s.dtype) for s in states0]
    g = mx.nd.sparse.row_sparse_array((grad_rows, rows), shape=w0.shape, dtype=w0.dtype)
    op(w, g, *states, out=w, lazy_update=True, **params, **extra)
    return w.asnumpy(), [s.asnumpy() for s in states]


@settings(max_examples=60, deadline=None)
@given(kernel=st.sampled_from(sorted(KERNELS)), f64=st.booleans(),
       nrows=st.integers(1, 40), tail=st.sampled_from([(), (1,), (5,), (2, 3)]),
       data=st.data(), wd=st.sampled_from([0.0, 0.1]), rescale=st.sampled_from([1.0, 1.5]),
       clip=st.sampled_from([-1.0, 0.7]))
def test_native_equals_torch_kernel(kernel, f64, nrows, tail, data, wd, rescale, clip):
    dtype = np.float64 if f64 else np.float32
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, nrows - 1)))), dtype=np.int64)
    rng = np.random.default_rng(nrows * 7 + len(rows))
    shape = (nrows,) + tail
    w0 = rng.standard_normal(shape).astype(dtype)
    states0 = [np.abs(rng.standard_normal(shape)).astype(dtype)
               for _ in range(KERNELS[kernel][1])]
    grad_rows = rng.standard_normal((len(rows),) + tail).astype(dtype)
    params = dict(lr=0.1, wd=wd, rescale_grad=rescale, clip_gradient=clip)
    with pytest.MonkeyPatch.context() as mp:
        got = run_op(kernel, True, w0, states0, rows, grad_rows, params, mp)
        ref = run_op(kernel, False, w0, states0, rows, grad_rows, params, mp)
    # the two kernels compute each element in the same order and precision: the same bits
    np.testing.assert_array_equal(got[0], ref[0], err_msg="weight")
    for a, b in zip(got[1], ref[1]):
        np.testing.assert_array_equal(a, b, err_msg="state")
    untouched = np.setdiff1d(np.arange(nrows), rows)
    assert np.array_equal(got[0][untouched], w0[untouched])
    for s, s0 in zip(got[1], states0):
        assert np.array_equal(s[untouched], s0[untouched])


def test_native_matches_hand_computed_adam():
    w = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    m, v = torch.zeros(3, 2), torch.zeros(3, 2)
    g = torch.tensor([[0.5, -1.0]])
    assert row_kernels.lazy_step("adam", w, (m, v), g, torch.tensor([1]), lr=0.1, a=0.9, b=0.99,
                                 epsilon=0.0)
    # m = 0.1 g, v = 0.01 g^2, step = lr * m / sqrt(v) = 0.1 * sign(g)
    np.testing.assert_allclose(w.numpy(), [[1, 2], [2.9, 4.1], [5, 6]], rtol=1e-6)
    np.testing.assert_allclose(m.numpy()[1], [0.05, -0.1], rtol=1e-6)
    np.testing.assert_allclose(v.numpy()[1], [0.0025, 0.01], rtol=1e-5)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_same_bits_on_any_thread_count(kernel):
    _, nstates, extra = KERNELS[kernel]
    a, b = {"sgd_mom": (0.9, 0.0), "adam": (0.9, 0.999)}.get(kernel, (0.0, 0.0))
    gen = torch.Generator().manual_seed(3)
    w0 = torch.randn(20000, 64, generator=gen)
    s0 = [torch.rand(20000, 64, generator=gen) for _ in range(nstates)]
    rows = torch.randperm(20000, generator=gen)[:6000].sort().values
    g = torch.randn(6000, 64, generator=gen)
    results = []
    old = torch.get_num_threads()
    try:
        for threads in (1, 2, 3, 4):
            torch.set_num_threads(threads)
            w, s = w0.clone(), [x.clone() for x in s0]
            assert row_kernels.lazy_step(kernel, w, tuple(s), g, rows, lr=0.05, wd=0.01,
                                         a=a, b=b, epsilon=extra.get("epsilon", 0.0))
            results.append([w] + s)
    finally:
        torch.set_num_threads(old)
    for other in results[1:]:
        for x, y in zip(results[0], other):
            assert torch.equal(x, y)


@pytest.mark.parametrize("bad", [-1, 5])
def test_out_of_range_row_raises_and_writes_nothing(bad):
    w = torch.ones(5, 2)
    with pytest.raises(IndexError, match=rf"row index {bad} at position 1 of the gradient is "
                                         r"out of range for a weight with 5 rows"):
        row_kernels.lazy_step("sgd", w, (), torch.ones(2, 2), torch.tensor([0, bad]), lr=1.0)
    assert torch.equal(w, torch.ones(5, 2))


@pytest.mark.parametrize("rows", [[2, 0], [1, 1]])
def test_rows_not_increasing_fall_back_untouched(rows):
    w = torch.ones(4, 2)
    assert not row_kernels.lazy_step("sgd", w, (), torch.ones(2, 2), torch.tensor(rows), lr=1.0)
    assert torch.equal(w, torch.ones(4, 2))


def test_unsupported_tensors_fall_back():
    rows, g = torch.tensor([0, 2]), torch.ones(2, 3)
    cases = [
        (torch.ones(4, 3, dtype=torch.float16), (), g.half()),  # dtype
        (torch.ones(3, 4).t(), (), g),                          # not contiguous
        (torch.ones(4, 3), (), g.double()),                     # mixed dtypes
        (torch.ones(4, 3), (), torch.ones(2, 4)),               # gradient rows of another shape
    ]
    for w, states, grad in cases:
        before = w.clone()
        assert not row_kernels.lazy_step("sgd", w, states, grad, rows, lr=1.0)
        assert torch.equal(w, before)
    assert not row_kernels.lazy_step("sgd", torch.ones(4, 3), (), g, rows.int(), lr=1.0)
    assert not row_kernels.lazy_step("sgd_mom", torch.ones(4, 3), (torch.ones(5, 3),), g, rows,
                                     lr=1.0, a=0.9)


def test_disabled_uses_torch_kernel(monkeypatch):
    monkeypatch.setattr(row_kernels, "ENABLED", False)
    w = torch.ones(3, 1)
    assert not row_kernels.lazy_step("sgd", w, (), torch.ones(1, 1), torch.tensor([1]), lr=1.0)
    out = mx.nd.sgd_update(mx.nd.ones((3, 1)), mx.nd.sparse.row_sparse_array(
        ([[1.0]], [1]), shape=(3, 1)), lr=0.5)
    assert out.asnumpy().ravel().tolist() == [1.0, 0.5, 1.0]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_tensors_use_torch_kernels():
    w = torch.ones(4, 2, device="cuda")
    assert not row_kernels.lazy_step("sgd", w, (), torch.ones(1, 2, device="cuda"),
                                     torch.tensor([1], device="cuda"), lr=1.0)


def _child_step(_):
    w = torch.from_numpy(np.zeros((30000, 32), dtype=np.float32))
    rows = torch.from_numpy(np.arange(0, 30000, 2))
    row_kernels.lazy_step("sgd", w, (), torch.from_numpy(np.ones((15000, 32), np.float32)),
                          rows, lr=1.0)
    return float(w[0, 0]), float(w[1, 0])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork start method")
def test_forked_child_runs_kernels():
    old = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        _child_step(0)  # the parent's thread team exists before the fork
        with multiprocessing.get_context("fork").Pool(2) as pool:
            res = pool.map_async(_child_step, range(2))
            assert res.get(timeout=60) == [(-1.0, 0.0), (-1.0, 0.0)]
    finally:
        torch.set_num_threads(old)


@settings(max_examples=60, deadline=None)
@given(n=st.sampled_from([0, 1, 2, 7, 100, 256, 1000, 1024]),
       tail=st.sampled_from([(), (1,), (4,), (2, 3), (300,)]), f64=st.booleans(),
       span=st.sampled_from([1, 3, 50, 2000]))
def test_coalesce_rows_equals_torch_coalesce(n, tail, f64, span):
    dtype = torch.float64 if f64 else torch.float32
    gen = torch.Generator().manual_seed(n * 31 + span)
    rows = torch.randint(0, span, (n,), generator=gen)
    values = torch.randn((n,) + tail, generator=gen, dtype=dtype)
    got = row_kernels.coalesce_rows(rows, values)
    r2, v2 = rows.clone(), values.clone()  # in place: rows summed, then moved along chains
    in_place = row_kernels.coalesce_rows(r2, v2, in_place=True)
    assert torch.equal(in_place[0], got[0]) and torch.equal(in_place[1], got[1])
    assert in_place[1].data_ptr() == v2.data_ptr()
    assert torch.equal(r2, rows)  # the ids are never written
    ref = torch.sparse_coo_tensor(rows[None], values, (span,) + tail,
                                  check_invariants=True).coalesce()
    assert torch.equal(got[0], ref.indices()[0])
    # sums of up to n terms in another order: rounding grows with the terms
    bound = n * float(values.abs().max()) if n else 0.0
    tol = dict(rtol=0, atol=1e-15 * bound) if f64 else dict(rtol=0, atol=1.2e-7 * bound)
    np.testing.assert_allclose(got[1].numpy(), ref.values().numpy(), **tol)


def test_coalesce_rows_sums_repeats_in_order():
    rows = torch.tensor([7, 2, 7, 7, 0])
    values = torch.tensor([[1e8], [1.0], [1.0], [-1e8], [3.0]])
    ids, sums = row_kernels.coalesce_rows(rows, values)
    assert ids.tolist() == [0, 2, 7]
    assert sums.ravel().tolist() == [3.0, 1.0, 0.0]  # (1e8 + 1) - 1e8 in float32, in order


def test_coalesce_rows_declines_large_or_foreign_input():
    n = row_kernels._COALESCE_MAX + 1
    assert row_kernels.coalesce_rows(torch.zeros(n, dtype=torch.int64), torch.zeros(n, 2)) is None
    assert row_kernels.coalesce_rows(torch.tensor([1, 0]), torch.ones(2, 2).half()) is None
    assert row_kernels.coalesce_rows(torch.tensor([1, 0]).int(), torch.ones(2, 2)) is None


def test_sgd_dense_list_against_numpy():
    rng = np.random.default_rng(5)
    shapes = [(3,), (4, 5), (2, 2, 2)]
    w0 = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    g = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    big = torch.ones(300, 300)  # over the small-array limit: left to the caller
    ws = [torch.from_numpy(w.copy()) for w in w0] + [big]
    rest = row_kernels.sgd_dense(ws, [torch.from_numpy(x) for x in g] + [torch.ones(300, 300)],
                                 lr=0.25, rescale_grad=0.5)
    assert len(rest) == 1 and rest[0][0] is big
    assert torch.equal(big, torch.ones(300, 300))
    for w, a, b in zip(ws, w0, g):
        np.testing.assert_allclose(w.numpy(), a - 0.25 * (0.5 * b), rtol=1e-6, atol=1e-7)
    w64 = torch.ones(3, dtype=torch.float64)
    assert not row_kernels.sgd_dense([w64], [torch.full((3,), 2.0, dtype=torch.float64)],
                                     lr=0.1, rescale_grad=1.0)
    assert w64.tolist() == [0.8, 0.8, 0.8]


@settings(max_examples=40, deadline=None)
@given(f64=st.booleans(), shape=st.sampled_from([(1,), (7,), (4, 5), (2, 3, 4), (128, 128)]),
       wd=st.sampled_from([0.0, 1e-4, 0.1]), rescale=st.sampled_from([1.0, 1 / 128, 1.5]),
       clip=st.sampled_from([-1.0, 0.7]), momentum=st.sampled_from([0.0, 0.9]),
       seed=st.integers(0, 1000))
def test_dense_sgd_mom_native_equals_torch_kernel(f64, shape, wd, rescale, clip, momentum,
                                                   seed):
    """The dense SGD-momentum rule: one native call for the small tensors, torch's multi-tensor
    kernels otherwise (and without the native module): the same bits."""
    dtype = np.float64 if f64 else np.float32
    rng = np.random.default_rng(seed)
    w0, m0, g0 = (rng.standard_normal(shape).astype(dtype) for _ in range(3))
    params = dict(lr=0.1, momentum=momentum, wd=wd, rescale_grad=rescale, clip_gradient=clip)
    out = {}
    for native in (True, False):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(row_kernels, "ENABLED", native)
            w, m = mx.nd.array(w0, dtype=dtype), mx.nd.array(m0, dtype=dtype)
            for _ in range(2):  # twice: the second step starts from a nonzero momentum
                mx.nd.sgd_mom_update(w, mx.nd.array(g0, dtype=dtype), m, out=w, **params)
            out[native] = (w.asnumpy(), m.asnumpy())
    np.testing.assert_array_equal(out[True][0], out[False][0], err_msg="weight")
    np.testing.assert_array_equal(out[True][1], out[False][1], err_msg="momentum")
    # and the rule itself, in float64 NumPy (MXNet's formula)
    w, m = w0.astype(np.float64), m0.astype(np.float64)
    for _ in range(2):
        g = rescale * g0.astype(np.float64)
        if clip >= 0:
            g = np.clip(g, -clip, clip)
        m = momentum * m - 0.1 * wd * w - 0.1 * g
        w = w + m
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(out[True][0], w, **tol)
    np.testing.assert_allclose(out[True][1], m, **tol)


def test_sgd_mom_dense_list_takes_small_cpu_tensors_only():
    ws = [torch.ones(3), torch.ones(300, 300), torch.ones(4, dtype=torch.float64)]
    ms = [torch.zeros(3), torch.zeros(300, 300), torch.zeros(4, dtype=torch.float64)]
    gs = [torch.ones(3), torch.ones(300, 300), torch.full((4,), 2.0, dtype=torch.float64)]
    rest = row_kernels.sgd_mom_dense(ws, ms, gs, lr=0.5, momentum=0.9)
    assert len(rest) == 1 and rest[0][0] is ws[1]  # over the small-array limit: the caller's
    assert torch.equal(ws[1], torch.ones(300, 300))
    assert ws[0].tolist() == [0.5] * 3 and ms[0].tolist() == [-0.5] * 3
    assert ws[2].tolist() == [0.0] * 4 and ms[2].tolist() == [-1.0] * 4  # by hand: -0.5 * 2
    b, mom = torch.ones(3, requires_grad=True), torch.zeros(3)
    z = (b * b).sum()
    with torch.no_grad():
        assert row_kernels.sgd_mom_dense([b], [mom], [torch.ones(3)], lr=0.1, momentum=0.9) == []
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_native_writes_are_seen_by_autograd():
    """A weight changed by a native kernel after being saved for backward makes backward raise,
    as a torch in-place op would (the kernels bump the version counter)."""
    w = torch.ones(4, 2, requires_grad=True)
    x = torch.full((4, 2), 3.0, requires_grad=True)
    y = (w * x).sum()  # saves w for x's gradient
    with torch.no_grad():
        before = w._version
        assert row_kernels.lazy_step("sgd", w, (), torch.ones(1, 2), torch.tensor([2]), lr=0.5)
        assert w._version > before
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    b = torch.ones(3, requires_grad=True)
    z = (b * b).sum()
    with torch.no_grad():
        assert row_kernels.sgd_dense([b], [torch.ones(3)], lr=0.1, rescale_grad=1.0) == []
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_backward_leaves_the_batch_alone():
    """The row gradient's ids are the CSR batch's own index tensor: coalescing must not sort
    them in place (the batch would change under the user)."""
    x = mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0, 4.0], [1, 5, 1, 3], [0, 2, 4]), shape=(2, 6))
    before = (x.indices.asnumpy().copy(), x.data.asnumpy().copy())
    w = mx.nd.ones((6, 3))
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.dot(x, w)
    y.backward()
    assert w.grad.indices.asnumpy().tolist() == [1, 3, 5]
    np.testing.assert_allclose(w.grad.data.asnumpy()[:, 0], [1.0 + 3.0, 4.0, 2.0])
    assert np.array_equal(x.indices.asnumpy(), before[0])
    assert np.array_equal(x.data.asnumpy(), before[1])

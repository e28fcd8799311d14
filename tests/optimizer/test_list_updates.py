"""List updates (one call for every parameter of a step) against per-parameter NumPy steps.

The Updater hands a Trainer step's parameters to the optimizer as lists; Adam and AdaGrad
then give every weight of a list to their update operator's list entry at once (torch's
fused Adam runs the small dense ones in one call), SGD as before. These tests check the
values against NumPy (float64 reference, float32 tolerance) and that a list update gives
the same bits as one update per weight.
"""
import numpy as np
import pytest
import torch

import sparsenet as mx
from sparsenet.optimizer.optimizer import _has_list_form
from sparsenet.torch_compat import fused_adam_many

SHAPES = [(4, 3), (3,), (5, 2), (1,), (2, 2, 2)]


def _problem(seed, rsp=False):
    rng = np.random.default_rng(seed)
    ws = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    gs = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    rows = [None] * len(SHAPES)
    if rsp:  # the first weight gets a row_sparse gradient of rows 0 and 2
        rows[0] = np.array([0, 2])
        gs[0][[1, 3]] = 0.0
    return ws, gs, rows


def _grad(g, rows):
    if rows is None:
        return mx.nd.array(g)
    return mx.nd.sparse.row_sparse_array((g[rows], rows), shape=g.shape)


def _adam_np(w, g, m, v, t, lr, wd, rescale, clip, b1=0.9, b2=0.999, eps=1e-8, rows=None):
    lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    sel = slice(None) if rows is None else rows
    gg = g[sel] * rescale + wd * w[sel]
    if clip is not None:
        gg = np.clip(gg, -clip, clip)
    m[sel] = b1 * m[sel] + (1 - b1) * gg
    v[sel] = b2 * v[sel] + (1 - b2) * gg * gg
    w[sel] -= lr_t * m[sel] / (np.sqrt(v[sel]) + eps)


def _adagrad_np(w, g, h, lr, wd, rescale, clip, eps=1e-7, rows=None):
    sel = slice(None) if rows is None else rows
    gg = g[sel] * rescale
    if clip is not None:
        gg = np.clip(gg, -clip, clip)
    h[sel] += gg * gg
    w[sel] -= lr * (gg / np.sqrt(h[sel] + eps) + wd * w[sel])


@pytest.mark.parametrize("rescale,clip,wd", [(1.0, None, 0.0), (0.25, None, 0.01),
                                             (0.5, 0.3, 0.1)])
@pytest.mark.parametrize("rsp", [False, True])
def test_adam_list_update_equals_numpy_per_parameter_steps(rescale, clip, wd, rsp):
    ws0, gs, rows = _problem(1, rsp)
    opt = mx.optimizer.Adam(learning_rate=0.05, wd=wd, rescale_grad=rescale,
                            clip_gradient=clip)
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.array(w) for w in ws0]
    ref = [w.astype(np.float64) for w in ws0]
    st = [(np.zeros_like(r), np.zeros_like(r)) for r in ref]
    for t in (1, 2, 3):
        upd(list(range(len(ws))), [_grad(g, r) for g, r in zip(gs, rows)], ws)
        for w, g, (m, v), r in zip(ref, gs, st, rows):
            _adam_np(w, g.astype(np.float64), m, v, t, 0.05, wd, rescale, clip, rows=r)
    for w, r in zip(ws, ref):
        np.testing.assert_allclose(w.asnumpy(), r, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rsp", [False, True])
def test_adagrad_list_update_equals_numpy_per_parameter_steps(rsp):
    ws0, gs, rows = _problem(2, rsp)
    opt = mx.optimizer.AdaGrad(learning_rate=0.1, wd=0.01, rescale_grad=0.5,
                               clip_gradient=0.4)
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.array(w) for w in ws0]
    ref = [w.astype(np.float64) for w in ws0]
    hs = [np.zeros_like(r) for r in ref]
    for _ in range(3):
        upd(list(range(len(ws))), [_grad(g, r) for g, r in zip(gs, rows)], ws)
        for w, g, h, r in zip(ref, gs, hs, rows):
            _adagrad_np(w, g.astype(np.float64), h, 0.1, 0.01, 0.5, 0.4, rows=r)
    for w, r in zip(ws, ref):
        np.testing.assert_allclose(w.asnumpy(), r, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kwargs", [
    ("adam", {"rescale_grad": 1 / 128}), ("adam", {"wd": 0.01, "clip_gradient": 0.5}),
    ("adam", {}), ("adagrad", {"wd": 0.01}), ("sgd", {"wd": 1e-3}),
    ("sgd", {"momentum": 0.9, "wd": 1e-3, "clip_gradient": 0.2})])
def test_list_update_gives_the_bits_of_one_update_per_weight(name, kwargs):
    ws0, gs, rows = _problem(3, rsp=True)
    lists, singles = [mx.nd.array(w) for w in ws0], [mx.nd.array(w) for w in ws0]
    a = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=0.1, **kwargs))
    b = mx.optimizer.get_updater(mx.optimizer.create(name, learning_rate=0.1, **kwargs))
    for _ in range(3):
        grads = [_grad(g, r) for g, r in zip(gs, rows)]
        a(list(range(len(lists))), grads, lists)
        for i, (w, g) in enumerate(zip(singles, grads)):
            b(i, g, w)
    for x, y in zip(lists, singles):
        assert torch.equal(x._t, y._t)


def test_list_update_with_a_learning_rate_schedule_counts_in_order():
    """Indices with different update counts: each reads the rate of its own turn, as one
    update per index does (the scheduler sees num_update after each count)."""
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    sched2 = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    a = mx.optimizer.get_updater(mx.optimizer.Adam(learning_rate=1.0, lr_scheduler=sched))
    b = mx.optimizer.get_updater(mx.optimizer.Adam(learning_rate=1.0, lr_scheduler=sched2))
    lists = [mx.nd.ones((2,)), mx.nd.ones((3,))]
    singles = [mx.nd.ones((2,)), mx.nd.ones((3,))]
    a(1, mx.nd.ones((3,)), lists[1])  # index 1 ahead of index 0
    b(1, mx.nd.ones((3,)), singles[1])
    for _ in range(2):
        a([0, 1], [mx.nd.ones((2,)), mx.nd.ones((3,))], lists)
        b(0, mx.nd.ones((2,)), singles[0])
        b(1, mx.nd.ones((3,)), singles[1])
    for x, y in zip(lists, singles):
        assert torch.equal(x._t, y._t)


def test_a_subclass_that_overrides_the_step_keeps_its_own_path():
    class Halved(mx.optimizer.Adam):
        def _fused(self, weight, grad, state, step, lazy):
            super()._fused(weight, grad * 0.5, state, step, lazy)

    assert _has_list_form(mx.optimizer.Adam) and _has_list_form(mx.optimizer.AdaGrad)
    assert not _has_list_form(Halved)
    ws = [mx.nd.ones((2,)), mx.nd.ones((2,))]
    ref = [mx.nd.ones((2,)), mx.nd.ones((2,))]
    mx.optimizer.get_updater(Halved(learning_rate=0.1))([0, 1], [mx.nd.ones((2,))] * 2, ws)
    plain = mx.optimizer.get_updater(mx.optimizer.Adam(learning_rate=0.1))
    plain([0, 1], [mx.nd.full((2,), 0.5)] * 2, ref)
    for x, y in zip(ws, ref):
        assert torch.equal(x._t, y._t)


def test_multi_precision_items_of_a_list_update_through_their_master_copy():
    opt = mx.optimizer.Adam(learning_rate=0.1, multi_precision=True)
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.ones((3,), dtype="float16"), mx.nd.ones((3,))]
    upd([0, 1], [mx.nd.ones((3,), dtype="float16"), mx.nd.ones((3,))], ws)
    # first Adam step: w - lr * m/(sqrt(v)+eps) with bias correction = 1 - 0.1
    np.testing.assert_allclose(ws[0].asnumpy().astype(np.float32), np.full(3, 0.9), rtol=1e-3)
    np.testing.assert_allclose(ws[1].asnumpy(), np.full(3, 0.9), rtol=1e-6)
    assert upd.states[0][0].dtype == np.float32  # the master copy


def test_fused_adam_many_equals_one_call_per_tensor_and_declines_other_dtypes():
    gen = torch.Generator().manual_seed(0)
    shapes = [(16, 16), (16,), (7, 3)]
    make = [[torch.randn(s, generator=gen) for s in shapes] for _ in range(4)]
    make[3] = [t.abs() for t in make[3]]
    a = [[t.clone() for t in ts] for ts in make]
    b = [[t.clone() for t in ts] for ts in make]
    odd = [torch.ones(2, dtype=torch.float64)] * 4
    kw = dict(lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.1)
    rest = fused_adam_many(*[ts + [o.clone()] for ts, o in zip(a, odd)], **kw)
    assert rest in ([3], [0, 1, 2, 3])
    if rest == [3]:
        for i in range(len(shapes)):
            fused_adam_many(*[[ts[i]] for ts in b], **kw)
        for x, y in zip(a, b):
            for p, q in zip(x[:3], y):
                assert torch.equal(p, q)

"""lazy_update='exact': lazy cost, standard result. Training with 'exact' must equal training
with the standard rule (lazy_update=False) to float tolerance, schedules included."""
import numpy as np
import pytest

import sparsenet as mx
from optim_helpers import as_grad, as_weight, flatten_state, grad_sequence

SCHEDULES = {
    "constant": lambda: None,
    "factor": lambda: mx.lr_scheduler.FactorScheduler(step=3, factor=0.7, base_lr=0.1),
    "cosine": lambda: mx.lr_scheduler.CosineScheduler(max_update=30, base_lr=0.1,
                                                      final_lr=0.01, warmup_steps=3),
}

# (optimizer name, constructor arguments): every setting with a closed form
EXACT_CASES = [
    ("sgd", dict(momentum=0.0, wd=0.05)),
    ("sgd", dict(momentum=0.9, wd=0.0)),
    ("sgd", dict(momentum=0.9, wd=0.1, clip_gradient=0.8, rescale_grad=1.5)),
]


def train(name, kwargs, lazy, grads, stype="default", sched=None, shape=None, seed=0):
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal(shape).astype(np.float32)
    opt = mx.optimizer.create(name, lazy_update=lazy, lr_scheduler=sched, **kwargs)
    weight = as_weight(w0, stype)
    state = opt.create_state_multi_precision(0, weight)
    for g, rows in grads:
        opt.update_multi_precision(0, weight, as_grad(g, rows), state)
    opt.sync(weight, state)
    return weight, state


def sparse_grads(shape, steps, rng, density=0.3):
    """Row subsets with long gaps: some rows appear once, some never."""
    out = []
    for _ in range(steps):
        rows = np.sort(np.flatnonzero(rng.random(shape[0]) < density))
        g = np.zeros(shape, dtype=np.float32)
        g[rows] = rng.standard_normal((len(rows),) + shape[1:]).astype(np.float32)
        out.append((g, rows))
    return out


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
@pytest.mark.parametrize("name,kwargs", EXACT_CASES)
def test_exact_equals_standard_training(name, kwargs, schedule):
    shape = (12, 3)
    grads = sparse_grads(shape, 20, np.random.default_rng(1))
    grads[7] = (np.zeros(shape, np.float32), np.zeros(0, np.int64))  # an empty gradient
    w_std, s_std = train(name, kwargs, False, grads, sched=SCHEDULES[schedule](), shape=shape)
    w_ex, s_ex = train(name, kwargs, "exact", grads, sched=SCHEDULES[schedule](), shape=shape)
    np.testing.assert_allclose(w_ex.asnumpy(), w_std.asnumpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(flatten_state(s_ex), flatten_state(s_std)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kwargs", EXACT_CASES[-1:])
def test_exact_on_row_sparse_weight_with_dense_steps_and_small_window(name, kwargs,
                                                                      monkeypatch):
    shape = (10, 2)
    rng = np.random.default_rng(4)
    grads = sparse_grads(shape, 9, rng)
    grads[4] = grad_sequence(shape, ["all"], rng, dense=True)[0]
    monkeypatch.setattr(mx.optimizer.Optimizer, "exact_window", 3)
    w_std, _ = train(name, kwargs, False, grads, stype="row_sparse", shape=shape)
    w_ex, _ = train(name, kwargs, "exact", grads, stype="row_sparse", shape=shape)
    assert w_ex.stype == "row_sparse"
    np.testing.assert_allclose(w_ex.asnumpy(), w_std.asnumpy(), rtol=1e-5, atol=1e-6)


def test_exact_rows_are_lazy_until_they_reappear_or_sync():
    opt = mx.optimizer.SGD(learning_rate=0.1, wd=0.1, lazy_update="exact")
    w = mx.nd.ones((3, 1))
    st = opt.create_state(0, w)
    g0 = mx.nd.sparse.row_sparse_array(([[0.0]], [0]), shape=(3, 1))
    g1 = mx.nd.sparse.row_sparse_array(([[0.0]], [1]), shape=(3, 1))
    for _ in range(3):
        opt.update(0, w, g0, st)
    np.testing.assert_allclose(w.asnumpy().ravel(), [0.99 ** 3, 1, 1], rtol=1e-6)
    opt.update(0, w, g1, st)  # row 1 catches up 3 skipped steps, then takes step 4
    np.testing.assert_allclose(w.asnumpy().ravel(), [0.99 ** 3, 0.99 ** 4, 1], rtol=1e-6)
    opt.sync(w, st)
    np.testing.assert_allclose(w.asnumpy().ravel(), [0.99 ** 4] * 3, rtol=1e-6)


def test_updater_get_states_syncs_exact_weights():
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.5, lazy_update="exact")
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.ones((4, 1))
    upd(0, mx.nd.sparse.row_sparse_array(([[1.0]], [0]), shape=(4, 1)), w)
    upd(0, mx.nd.sparse.row_sparse_array(([[1.0]], [1]), shape=(4, 1)), w)
    stale = w.asnumpy().ravel().copy()
    upd.get_states()
    synced = w.asnumpy().ravel()
    # row 0 moved by lr*g at step 1, then by its momentum 0.5 * -0.1 at step 2
    assert stale[0] == pytest.approx(0.9) and synced[0] == pytest.approx(0.85)
    assert synced[1] == pytest.approx(0.9) and synced[2] == 1.0


def test_exact_with_multi_precision():
    shape = (10, 2)
    rng = np.random.default_rng(8)
    grads = [(g.astype(np.float16).astype(np.float32), r)
             for g, r in sparse_grads(shape, 8, rng)]
    res = {}
    for lazy in (False, "exact"):
        opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.1, multi_precision=True,
                               lazy_update=lazy)
        w = mx.nd.ones(shape, dtype="float16")
        st = opt.create_state_multi_precision(0, w)
        for g, rows in grads:
            opt.update_multi_precision(0, w, as_grad(g, rows).astype("float16"), st)
        opt.sync(w, st)
        res[lazy] = (w.asnumpy(), st[1].asnumpy())
    np.testing.assert_allclose(res["exact"][1], res[False][1], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(res["exact"][0], res["exact"][1].astype(np.float16))

"""lazy_update='exact': lazy cost, standard result. Training with 'exact' must equal training
with the standard rule (lazy_update=False) to float tolerance, schedules included."""
import numpy as np
import pytest
from optim_helpers import as_grad, as_weight, flatten_state, grad_sequence

import sparsenet as mx

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
    ("nag", dict(momentum=0.9, wd=0.1)),
    ("nag", dict(momentum=0.0, wd=0.1)),
    ("signum", dict(momentum=0.9, wd_lh=0.05)),
    ("signum", dict(momentum=0.0, wd=0.1)),
    ("dcasgd", dict(momentum=0.9, wd=0.1, lamda=0.5)),
    ("dcasgd", dict(wd=0.1, lamda=0.5)),
    ("adam", dict(clip_gradient=0.8, rescale_grad=1.5)),
    ("adamw", dict(wd=0.1)),
    ("adamax", dict()),
    ("nadam", dict()),
    ("adagrad", dict(wd=0.1)),
    ("groupadagrad", dict()),
    ("adadelta", dict(wd=0.1, rho=0.8)),
    ("rmsprop", dict(clip_weights=0.9)),
    ("rmsprop", dict(centered=True)),
    ("ftrl", dict(wd=0.1, lamda1=0.05)),
    ("ftml", dict()),
]

# settings without a closed form: 'exact' runs as lazy_update=False
FALLBACK_CASES = [
    ("adam", dict(wd=0.1)),
    ("adamax", dict(wd=0.1)),
    ("nadam", dict(wd=0.1)),
    ("rmsprop", dict(wd=0.1)),
    ("rmsprop", dict(centered=True, clip_weights=0.9)),
    ("ftml", dict(wd=0.1)),
    ("signum", dict(momentum=0.9, wd=0.1)),
    ("lamb", dict(wd=0.1)),
    ("lars", dict(momentum=0.9, wd=0.1)),
    ("sgld", dict(wd=0.1)),
]


def train(name, kwargs, lazy, grads, stype="default", sched=None, shape=None, seed=0):
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal(shape).astype(np.float32)
    mx.random.seed(seed)
    kwargs = dict(kwargs, learning_rate=0.05 if sched is None else sched.base_lr)
    opt = mx.optimizer.create(name, lazy_update=lazy, lr_scheduler=sched, **kwargs)
    weight = as_weight(w0, stype)
    state = opt.create_state_multi_precision(0, weight)
    for g, rows in grads:
        opt.update_multi_precision(0, weight, as_grad(g, rows), state)
    opt.sync(weight, state)
    return weight, state


def sparse_grads(shape, steps, rng, density=0.3, scale=1.0):
    """Row subsets with long gaps: some rows appear once, some never."""
    out = []
    for _ in range(steps):
        rows = np.sort(np.flatnonzero(rng.random(shape[0]) < density))
        g = np.zeros(shape, dtype=np.float32)
        g[rows] = rng.standard_normal((len(rows),) + shape[1:]) * scale
        out.append((g, rows))
    return out


def assert_same_training(a, b, rtol=1e-5, atol=1e-6):
    (w_a, s_a), (w_b, s_b) = a, b
    np.testing.assert_allclose(w_a.asnumpy(), w_b.asnumpy(), rtol=rtol, atol=atol)
    for x, y in zip(flatten_state(s_a), flatten_state(s_b)):
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
@pytest.mark.parametrize("name,kwargs", EXACT_CASES, ids=lambda v: str(v))
def test_exact_equals_standard_training(name, kwargs, schedule):
    shape = (12, 3)
    grads = sparse_grads(shape, 20, np.random.default_rng(1))
    grads[7] = (np.zeros(shape, np.float32), np.zeros(0, np.int64))  # an empty gradient
    std = train(name, kwargs, False, grads, sched=SCHEDULES[schedule](), shape=shape)
    ex = train(name, kwargs, "exact", grads, sched=SCHEDULES[schedule](), shape=shape)
    assert_same_training(ex, std)


@pytest.mark.parametrize("name,kwargs", FALLBACK_CASES, ids=lambda v: str(v))
def test_exact_without_closed_form_runs_standard(name, kwargs):
    shape = (10, 3)
    grads = sparse_grads(shape, 6, np.random.default_rng(2))
    std = train(name, kwargs, False, grads, shape=shape)
    ex = train(name, kwargs, "exact", grads, shape=shape)
    assert_same_training(ex, std, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("scale", [1e-4, 1e-7, 1e-9])
@pytest.mark.parametrize("name", ["adam", "nadam", "adamw"])
def test_exact_adam_family_with_tiny_moments(name, scale):
    """Gradients so small that epsilon dominates sqrt(v): the exact series path."""
    shape = (15, 4)
    rng = np.random.default_rng(5)
    grads = sparse_grads(shape, 25, rng, scale=scale)
    grads[3] = sparse_grads(shape, 1, rng, density=0.5)[0]  # and some ordinary rows
    kwargs = dict(wd=0.1) if name == "adamw" else {}
    std = train(name, kwargs, False, grads, shape=shape)
    ex = train(name, kwargs, "exact", grads, shape=shape)
    assert_same_training(ex, std, rtol=1e-5, atol=1e-9)


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


def test_moments_fast_catch_up_equals_encode_linear_decode():
    import torch

    from sparsenet.optimizer import moments
    from sparsenet.optimizer.exact import Window, apply_linear
    rng = np.random.default_rng(0)
    rows = [torch.tensor(rng.standard_normal((6, 5)), dtype=torch.float32),
            torch.tensor(rng.standard_normal((6, 5)), dtype=torch.float32),
            torch.tensor(rng.random((6, 5)) * 1e-2, dtype=torch.float32)]
    steps = [dict(L=0.01 * (j + 1), c=0.001, e=1e-8) for j in range(5)]
    maps = torch.eye(3 + moments.ORDER, dtype=torch.float64).expand(6, -1, -1).clone()
    for j in range(5):
        a = torch.as_tensor(moments.skip_map(0.9, 0.999, steps[j]["L"], 0.001, 1.0))
        maps = torch.matmul(a, maps)
    window = Window(steps, torch.zeros(6, dtype=torch.int64))
    slow = moments.decode(apply_linear(maps, moments.encode(rows, 1e-8)), rows, window, 0.9,
                          0.999)
    fast = moments.catch_up(maps, rows, window, 0.9, 0.999, 1e-8)
    for a, b in zip(fast, slow):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)
    # and both equal five explicit zero-gradient Adam steps
    w, m, v = (r.double().numpy() for r in rows)
    for j in range(5):
        m, v = 0.9 * m, 0.999 * v
        w = (1 - 0.001) * w - steps[j]["L"] * m / (np.sqrt(v) + 1e-8)
    np.testing.assert_allclose(fast[0].numpy(), w, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name,kwargs", [("sgd", dict(momentum=0.9, wd=0.01)),
                                         ("adam", dict()), ("ftml", dict())])
def test_exact_long_run_with_long_gaps(name, kwargs, monkeypatch):
    """150 steps, rows lagging up to ~100 steps; the window (100) fills once and restarts."""
    monkeypatch.setattr(mx.optimizer.Optimizer, "exact_window", 100)
    shape = (40, 2)
    grads = sparse_grads(shape, 150, np.random.default_rng(11), density=0.03)
    def sched():
        return mx.lr_scheduler.PolyScheduler(max_update=150, base_lr=0.05, pwr=1,
                                             final_lr=0.005)
    std = train(name, kwargs, False, grads, shape=shape, sched=sched())
    ex = train(name, kwargs, "exact", grads, shape=shape, sched=sched())
    assert_same_training(ex, std, rtol=2e-5, atol=2e-6)


def test_exact_catch_up_in_row_chunks(monkeypatch):
    from sparsenet.ops.update_rules import core
    monkeypatch.setattr(core, "chunk_bytes", lambda: 3 * 4)
    shape = (12, 3)
    grads = sparse_grads(shape, 12, np.random.default_rng(3))
    for name, kwargs in [("adam", {}), ("sgd", dict(momentum=0.9, wd=0.1))]:
        assert_same_training(train(name, kwargs, "exact", grads, shape=shape),
                             train(name, kwargs, False, grads, shape=shape))

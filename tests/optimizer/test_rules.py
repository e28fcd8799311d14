"""Every optimizer against an independent NumPy reference of its dense rule, applied lazily (the
gradient's rows only) for lazy_update=True and to every row for lazy_update=False, on dense and
row_sparse weights of several shapes, with gradients that touch some rows, no row, every row, or
are dense; weight decay, momentum, clipping and rescaling switched on."""
import math
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from optim_helpers import (
    assert_close,
    clip_rescale,
    flatten_state,
    grad_sequence,
    run_optimizer,
    run_reference,
)

import sparsenet as mx
from sparsenet.ops import row_kernels

LR, WD, RESCALE, CLIP = 0.1, 0.1, 1.5, 0.7


@pytest.fixture(autouse=True, params=["native", "torch"])
def kernels(request, monkeypatch):
    """Every rule runs on the native row kernels (where built) and on the torch index ops."""
    if request.param == "native" and not row_kernels.available():
        pytest.skip("native row kernels not built")
    monkeypatch.setattr(row_kernels, "ENABLED", request.param == "native")
    return request.param


def ref_sgd(momentum):
    def step(w, g, s, t):
        g = clip_rescale(g, RESCALE, CLIP)
        if momentum == 0:
            return (1 - LR * WD) * w - LR * g, s
        m = momentum * s[0] - LR * WD * w - LR * g
        return w + m, [m]
    return step


def ref_nag(momentum):
    def step(w, g, s, t):
        g = clip_rescale(g, RESCALE, CLIP) + WD * w
        if momentum == 0:
            return w - LR * g, s
        m = momentum * s[0] - LR * g
        return w + momentum * m - LR * g, [m]
    return step


def ref_signum(momentum, wd_lh):
    def step(w, g, s, t):
        g = clip_rescale(g, RESCALE, CLIP)
        if momentum == 0:
            return (1 - LR * WD) * w - LR * np.sign(g), s
        m = momentum * s[0] - (1 - momentum) * (WD * w + g)
        return (1 - LR * wd_lh) * w + LR * np.sign(m), [m]
    return step


def ref_dcasgd(momentum, lamda):
    def step(w, g, s, t):
        g = clip_rescale(g, RESCALE, CLIP)
        prev = s[-1]
        d = -LR * (g + WD * w + lamda * g * g * (w - prev))
        m = momentum * s[0] + d if momentum else d
        return w + m, ([m] if momentum else []) + [w]
    return step


def ref_adam(b1=0.9, b2=0.999, eps=1e-8):
    def step(w, g, s, t):
        g = np.clip(RESCALE * g + WD * w, -CLIP, CLIP)
        m = b1 * s[0] + (1 - b1) * g
        v = b2 * s[1] + (1 - b2) * g * g
        lr_t = LR * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        return w - lr_t * m / (np.sqrt(v) + eps), [m, v]
    return step


def ref_adamw(b1=0.9, b2=0.999, eps=1e-6):
    def step(w, g, s, t):
        g = clip_rescale(g, RESCALE, CLIP)
        m = b1 * s[0] + (1 - b1) * g
        v = b2 * s[1] + (1 - b2) * g * g
        lr_t = LR * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        return w - lr_t * m / (np.sqrt(v) + eps) - LR * WD * w, [m, v]
    return step


def ref_adagrad(eps=1e-7):
    def step(w, g, s, t):
        g = clip_rescale(g, RESCALE, CLIP)
        h = s[0] + g * g
        return w - LR * (g / np.sqrt(h + eps) + WD * w), [h]
    return step


def ref_group_adagrad(eps=1e-5):
    def step(w, g, s, t):
        g = clip_rescale(g, RESCALE, CLIP)
        h = s[0] + (g * g).mean(axis=1, keepdims=True)
        return w - LR * g / np.sqrt(h + eps), [h]
    return step


def ref_adadelta(rho=0.8, eps=1e-5):
    def step(w, g, s, t):
        g = clip_rescale(g, RESCALE, CLIP)
        acc_g = rho * s[0] + (1 - rho) * g * g
        delta = np.sqrt(s[1] + eps) / np.sqrt(acc_g + eps) * g
        acc_d = rho * s[1] + (1 - rho) * delta * delta
        return w - delta - WD * w, [acc_g, acc_d]
    return step


def ref_adamax(b1=0.9, b2=0.999):
    def step(w, g, s, t):
        g = np.clip(RESCALE * g + WD * w, -CLIP, CLIP)
        m = b1 * s[0] + (1 - b1) * g
        u = np.maximum(b2 * s[1], np.abs(g))
        ratio = np.divide(m, u, out=np.zeros_like(m), where=u > 0)
        return w - LR / (1 - b1 ** t) * ratio, [m, u]
    return step


def ref_nadam(b1=0.9, b2=0.999, eps=1e-8, sd=0.004):
    def mu(i):
        return b1 * (1 - 0.5 * 0.96 ** (i * sd))

    def step(w, g, s, t):
        g = np.clip(RESCALE * g + WD * w, -CLIP, CLIP)
        sched = np.prod([mu(i) for i in range(1, t + 1)])
        m = b1 * s[0] + (1 - b1) * g
        v = b2 * s[1] + (1 - b2) * g * g
        m_bar = (1 - mu(t)) * g / (1 - sched) + mu(t + 1) * m / (1 - sched * mu(t + 1))
        return w - LR * m_bar / (np.sqrt(v / (1 - b2 ** t)) + eps), [m, v]
    return step


def ref_rmsprop(g1=0.9, eps=1e-8, clip_w=1.2):
    def step(w, g, s, t):
        g = np.clip(RESCALE * g + WD * w, -CLIP, CLIP)
        n = (1 - g1) * g * g + g1 * s[0]
        return np.clip(w - LR * g / np.sqrt(n + eps), -clip_w, clip_w), [n]
    return step


def ref_rmspropalex(g1=0.9, g2=0.9, eps=1e-8):
    def step(w, g, s, t):
        g = np.clip(RESCALE * g + WD * w, -CLIP, CLIP)
        n = (1 - g1) * g * g + g1 * s[0]
        gb = (1 - g1) * g + g1 * s[1]
        delta = g2 * s[2] - LR * g / np.sqrt(n - gb * gb + eps)
        return w + delta, [n, gb, delta]
    return step


def ref_ftrl(lamda1=0.05, beta=1.0):
    def step(w, g, s, t):
        g = clip_rescale(g, RESCALE, CLIP)
        z = s[0] + g - (np.sqrt(s[1] + g * g) - np.sqrt(s[1])) * w / LR
        n = s[1] + g * g
        w = (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / LR + WD) * (np.abs(z) > lamda1)
        return w, [z, n]
    return step


def ref_ftml(b1=0.6, b2=0.999, eps=1e-8):
    def step(w, g, s, t):
        d, v, z = s
        g = np.clip(RESCALE * g + WD * w, -CLIP, CLIP)
        v = b2 * v + (1 - b2) * g * g
        d_t = (1 - b1 ** t) / LR * (np.sqrt(v / (1 - b2 ** t)) + eps)
        z = b1 * z + (1 - b1) * g - (d_t - b1 * d) * w
        return -z / d_t, [d_t, v, z]
    return step


def ref_lamb(b1=0.9, b2=0.999, eps=1e-6, lower=0.5, upper=3.0):
    def step(w, g, s, t):
        g = clip_rescale(g, RESCALE, CLIP)
        m = b1 * s[0] + (1 - b1) * g
        v = b2 * s[1] + (1 - b2) * g * g
        u = (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps) + WD * w
        r1 = min(max(np.linalg.norm(w), lower), upper)
        r2 = np.linalg.norm(u)
        ratio = r1 / r2 if r1 > 0 and r2 > 0 else 1.0
        return w - LR * ratio * u, [m, v]
    return step


COMMON = dict(learning_rate=LR, wd=WD, rescale_grad=RESCALE, clip_gradient=CLIP)
# id: (optimizer name, constructor arguments, NumPy step, number of zero states, tolerance)
CASES = {
    "sgd": ("sgd", dict(), ref_sgd(0.0), 0),
    "sgd-mom": ("sgd", dict(momentum=0.9), ref_sgd(0.9), 1),
    "nag": ("nag", dict(momentum=0.9), ref_nag(0.9), 1),
    "nag-nomom": ("nag", dict(momentum=0.0), ref_nag(0.0), 0),
    "signum": ("signum", dict(momentum=0.9, wd_lh=0.05), ref_signum(0.9, 0.05), 1),
    "signsgd": ("signum", dict(momentum=0.0), ref_signum(0.0, 0.0), 0),
    "dcasgd": ("dcasgd", dict(momentum=0.9, lamda=0.5), ref_dcasgd(0.9, 0.5), 1),
    "dcasgd-nomom": ("dcasgd", dict(lamda=0.5), ref_dcasgd(0.0, 0.5), 0),
    "adam": ("adam", {}, ref_adam(), 2),
    "adamw": ("adamw", {}, ref_adamw(), 2),
    "adagrad": ("adagrad", {}, ref_adagrad(), 1),
    "adadelta": ("adadelta", dict(rho=0.8), ref_adadelta(), 2),
    "adamax": ("adamax", {}, ref_adamax(), 2),
    "nadam": ("nadam", {}, ref_nadam(), 2),
    "rmsprop": ("rmsprop", dict(clip_weights=1.2), ref_rmsprop(), 1),
    "rmspropalex": ("rmsprop", dict(centered=True), ref_rmspropalex(), 3),
    "ftrl": ("ftrl", dict(lamda1=0.05), ref_ftrl(), 2),
    "ftml": ("ftml", {}, ref_ftml(), 3),
    "lamb": ("lamb", dict(lower_bound=0.5, upper_bound=3.0), ref_lamb(), 2),
}
SHAPES = [(9, 3), (7,), (5, 2, 3)]


def initial_states(case_id, n_zero, w0):
    shape = w0.shape
    states = [np.zeros(shape) for _ in range(n_zero)]
    if case_id.startswith("dcasgd"):
        states.append(w0.astype(np.float64))  # previous weight starts at the weight
    return states


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("lazy", [True, False], ids=["lazy", "standard"])
@pytest.mark.parametrize("stype", ["default", "row_sparse"])
@pytest.mark.parametrize("case_id", sorted(CASES))
def test_rule_matches_numpy(case_id, stype, lazy, shape):
    name, kwargs, ref, n_zero = CASES[case_id]
    rng = np.random.default_rng(zlib.crc32(f"{case_id}{shape}".encode()))
    w0 = rng.standard_normal(shape).astype(np.float32)
    grads = grad_sequence(shape, ["random", "empty", "all", "random"], rng)
    grads.insert(3, grad_sequence(shape, ["all"], rng, dense=True)[0])
    opt = mx.optimizer.create(name, lazy_update=lazy, **COMMON, **kwargs)
    weight, state = run_optimizer(opt, w0, grads, stype)
    w_ref, s_ref = run_reference(ref, w0, initial_states(case_id, n_zero, w0), grads, lazy)
    assert weight.stype == stype
    assert_close(weight, w_ref, rtol=1e-4, atol=1e-5)
    got = flatten_state(state)
    assert len(got) == len(s_ref)
    for i, (a, b) in enumerate(zip(got, s_ref)):
        assert_close(a, b, rtol=1e-4, atol=1e-5, what=f"state {i}")


def test_group_adagrad_matches_numpy():
    rng = np.random.default_rng(2)
    shape = (11, 4)
    w0 = rng.standard_normal(shape).astype(np.float32)
    grads = grad_sequence(shape, ["random", "empty", "all", "random"], rng)
    for lazy in (True, False):
        opt = mx.optimizer.GroupAdaGrad(learning_rate=LR, rescale_grad=RESCALE,
                                        clip_gradient=CLIP, lazy_update=lazy)
        for stype in ("default", "row_sparse"):
            weight, state = run_optimizer(opt, w0, grads, stype, index=stype)
            w_ref, s_ref = run_reference(ref_group_adagrad(), w0, [np.zeros((11, 1))], grads,
                                         lazy)
            assert_close(weight, w_ref, rtol=1e-5)
            assert_close(state, s_ref[0], rtol=1e-5, what="history")


def test_lars_layer_rate_uses_full_weight_norm():
    rng = np.random.default_rng(9)
    shape = (10, 3)
    w0 = rng.standard_normal(shape).astype(np.float32)
    grads = grad_sequence(shape, ["random", "random", "all"], rng)
    eta, mom = 0.5, 0.9
    for lazy in (True, False):
        opt = mx.optimizer.LARS(learning_rate=LR, momentum=mom, wd=WD, eta=eta,
                                rescale_grad=RESCALE, lazy_update=lazy,
                                param_idx2name={0: "fc_weight"})
        weight, state = run_optimizer(opt, w0, grads)
        w, m = w0.astype(np.float64), np.zeros(shape)
        for g, rows in grads:
            rows = np.arange(shape[0]) if not lazy else rows
            wn = np.linalg.norm(w)
            gn = np.linalg.norm(RESCALE * g[rows])
            lr = LR * eta * wn / (gn + WD * wn)
            m[rows] = mom * m[rows] - lr * WD * w[rows] - lr * RESCALE * g[rows]
            w[rows] = w[rows] + m[rows]
        assert_close(weight, w, rtol=1e-5)
        assert_close(state, m, rtol=1e-5, what="momentum")


def test_sgld_statistics_and_lazy_rows():
    mx.random.seed(3)
    shape, lr = (4000, 25), 0.01
    rows = np.arange(0, 4000, 2)
    g = np.zeros(shape, np.float32)
    g[rows] = 2.0
    opt = mx.optimizer.SGLD(learning_rate=lr, lazy_update=True)
    w = mx.nd.zeros(shape)
    opt.update(0, w, mx.nd.sparse.row_sparse_array((g[rows], rows), shape=shape), None)
    out = w.asnumpy()
    assert np.array_equal(out[1::2], np.zeros((2000, 25)))  # untouched rows: no noise
    moved = out[rows]
    assert abs(moved.mean() - (-lr / 2 * 2.0)) < 5e-3  # drift -lr/2 * g
    assert abs(moved.std() - math.sqrt(lr)) < 5e-3  # noise N(0, lr)
    opt = mx.optimizer.SGLD(learning_rate=lr)  # standard by default, as MXNet
    w = mx.nd.zeros(shape)
    opt.update(0, w, mx.nd.sparse.row_sparse_array((g[rows], rows), shape=shape), None)
    assert abs(w.asnumpy()[1::2].std() - math.sqrt(lr)) < 5e-3  # standard: every row


def test_adamax_untouched_elements_do_not_become_nan():
    opt = mx.optimizer.Adamax(lazy_update=False)
    w = mx.nd.ones((3, 2))
    st = opt.create_state(0, w)
    opt.update(0, w, mx.nd.sparse.row_sparse_array(([[1.0, 0.0]], [1]), shape=(3, 2)), st)
    out = w.asnumpy()
    assert not np.isnan(out).any()
    assert out[1, 0] < 1 and (out[[0, 2]] == 1).all() and out[1, 1] == 1


def test_group_adagrad_rejects_weight_decay_and_non_2d():
    opt = mx.optimizer.GroupAdaGrad(wd=0.1)
    w = mx.nd.ones((2, 2))
    st = opt.create_state(0, w)
    with pytest.raises(ValueError, match=r"does not support weight decay, got wd=0.1"):
        opt.update(0, w, mx.nd.ones((2, 2)), st)
    with pytest.raises(ValueError, match=r"needs a 2-D weight"):
        opt.create_state(0, mx.nd.ones((2,)))


def test_ftrl_learning_rate_default_and_scheduler():
    assert mx.optimizer.Ftrl().learning_rate == 0.1
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=0.4)
    opt = mx.optimizer.Ftrl(lr_scheduler=sched)
    assert opt.learning_rate == 0.4  # the scheduler wins, as in MXNet


@pytest.mark.parametrize("case_id", ["adam", "adagrad", "rmspropalex", "ftrl", "nag"])
def test_rules_with_row_chunks(case_id, monkeypatch):
    """Large gradients are processed in cache-sized row chunks: force 2-row chunks."""
    from sparsenet.ops.update_rules import core
    monkeypatch.setattr(core, "chunk_bytes", lambda: 2 * 3 * 4)
    test_rule_matches_numpy(case_id, "default", True, (9, 3))
    test_rule_matches_numpy(case_id, "row_sparse", True, (9, 3))
    test_rule_matches_numpy(case_id, "default", False, (9, 3))


def test_sgd_momentum_with_row_chunks(monkeypatch):
    from sparsenet.ops.update_rules import core
    monkeypatch.setattr(core, "chunk_bytes", lambda: 4)
    rng = np.random.default_rng(12)
    w0 = rng.standard_normal((8, 2)).astype(np.float32)
    grads = grad_sequence(w0.shape, ["random", "all", "random"], rng)
    opt = mx.optimizer.SGD(momentum=0.9, **COMMON)
    weight, state = run_optimizer(opt, w0, grads)

    def step(w, g, s, t):
        m = 0.9 * s[0] - LR * WD * w - LR * clip_rescale(g, RESCALE, CLIP)
        return w + m, [m]
    w_ref, s_ref = run_reference(step, w0, [np.zeros(w0.shape)], grads, True)
    assert_close(weight, w_ref)
    assert_close(state, s_ref[0], what="momentum")


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 12), cols=st.integers(1, 5), seed=st.integers(0, 2 ** 31),
       case_id=st.sampled_from(["adam", "adagrad", "ftrl", "rmsprop", "signum", "adamw"]))
def test_lazy_rule_property(rows, cols, seed, case_id):
    """Random shapes and row sets: the lazy step equals the NumPy rule on the touched rows and
    leaves every other row bit-identical."""
    name, kwargs, ref, n_zero = CASES[case_id]
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal((rows, cols)).astype(np.float32)
    grads = grad_sequence((rows, cols), ["random", "all", "empty", "random"], rng)
    opt = mx.optimizer.create(name, lazy_update=True, **COMMON, **kwargs)
    weight, _ = run_optimizer(opt, w0, grads)
    w_ref, _ = run_reference(ref, w0, initial_states(case_id, n_zero, w0), grads, True)
    assert_close(weight, w_ref, rtol=1e-4, atol=1e-5)
    never = np.setdiff1d(np.arange(rows), np.concatenate([r for _, r in grads]))
    assert np.array_equal(weight.asnumpy()[never], w0[never])

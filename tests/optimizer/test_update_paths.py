"""One path per rule: the optimizers, the Updater and the Trainer reach every update through the
update operator's plan (its rule row's implementation); the dense kernels (torch's fused Adam
and AdamW, SGD's list kernel) equal the definitions they replace."""
import numpy as np
import pytest
import torch

import sparsenet as mx
from sparsenet import torch_compat
from sparsenet.ops.update_rules import adam, core, sgd


def rsp(rows, shape, seed=0):
    data = np.random.default_rng(seed).standard_normal((len(rows),) + shape[1:])
    return mx.nd.sparse.row_sparse_array((data.astype(np.float32), rows), shape=shape)


# ---------------------------------------------------------------------- plans
@pytest.mark.parametrize("stypes,lazy,kernel", [
    (("default", "row_sparse", "default", "default"), True, "_adam_lazy"),
    (("default", "default", "default", "default"), True, "_adam_dense"),
    (("row_sparse", "row_sparse", "row_sparse", "row_sparse"), True, "_adam_lazy"),
    (("default", "row_sparse", "default", "default"), False, "<lambda>"),  # standard_rows
    (("csr", "csr", "default", "default"), True, "_adam_update_fallback"),
])
def test_plan_is_the_rule_rows_implementation(stypes, lazy, kernel):
    op = mx.nd.adam_update
    plan = op.plan(stypes, lazy_update=lazy)
    assert plan.__name__ == kernel
    assert op.plan(stypes, lazy_update=lazy) is plan  # cached
    r = op.find_rule(stypes, {"lazy_update": lazy})
    if r is not None:
        assert plan is r.fn  # the row's own implementation, not a copy of its condition
    else:
        assert stypes[0] == "csr"


def test_update_operator_rows_may_only_depend_on_lazy_update():
    op = core.UpdateOperator(lambda weight, grad, *, lr=0.1, lazy_update=True: weight,
                             name="_doc_test_update_rows")
    with pytest.raises(ValueError, match=r"rows may depend on lazy_update only"):
        op.add_rule(("default", "row_sparse"), "default", lambda p: p["lr"] > 0,
                    lambda w, g, **p: w)


@pytest.mark.parametrize("name,kwargs,stypes", [
    ("sgd", {}, ("default", "row_sparse")),
    ("sgd", {"momentum": 0.9}, ("default", "row_sparse", "default")),
    ("adam", {}, ("default", "row_sparse", "default", "default")),
    ("adagrad", {}, ("default", "row_sparse", "default")),
    ("adam", {}, ("default", "default", "default", "default")),
    ("rmsprop", {}, ("default", "row_sparse", "default")),
])
def test_optimizer_update_runs_the_planned_kernel(name, kwargs, stypes, monkeypatch):
    """Optimizer.update reaches the kernel only through the operator's plan: replace the
    planned kernel and the optimizer runs the replacement."""
    opt = mx.optimizer.create(name, learning_rate=0.1, **kwargs)
    op = {"sgd": mx.nd.sgd_update if not kwargs else mx.nd.sgd_mom_update,
          "adam": mx.nd.adam_update, "adagrad": mx.nd.sparse.adagrad_update,
          "rmsprop": mx.nd.rmsprop_update}[name]
    calls = []
    real = op.plan(stypes, lazy_update=opt.lazy_update)

    def spy(*args, **params):
        calls.append(params["lazy_update"])
        return real(*args, **params)
    monkeypatch.setitem(op._plans, (stypes, opt.lazy_update), spy)
    w = mx.nd.ones((6, 2))
    state = opt.create_state(0, w)
    g = rsp([1, 4], (6, 2)) if stypes[1] == "row_sparse" else mx.nd.ones((6, 2))
    opt.update(0, w, g, state)
    assert calls == [opt.lazy_update]


def test_updater_and_trainer_go_through_the_plan(monkeypatch):
    calls = []
    real = mx.nd.sgd_update.plan(("default", "row_sparse"), lazy_update=True)

    def spy(*args, **params):
        calls.append(args[1].stype)
        return real(*args, **params)
    monkeypatch.setitem(mx.nd.sgd_update._plans, (("default", "row_sparse"), True), spy)
    emb = mx.gluon.nn.Embedding(10, 2, sparse_grad=True)
    emb.initialize(init="ones")
    trainer = mx.gluon.Trainer(emb.collect_params(), "sgd", {"learning_rate": 1.0})
    with mx.autograd.record():
        out = emb(mx.nd.array([3, 5]))
    out.backward()
    trainer.step(1)
    assert calls == ["row_sparse"]
    np.testing.assert_array_equal(emb.weight.data().asnumpy()[[3, 5], 0], [0.0, 0.0])


def test_sgd_list_update_uses_the_list_kernel(monkeypatch):
    """The dense items of an aggregated SGD update run together, in one call of the dense
    row's list kernel; the row_sparse item takes the lazy row."""
    groups = []
    real = sgd._sgd_dense_many
    monkeypatch.setattr(sgd._sgd_dense, "many", lambda items: (groups.append(len(items)),
                                                                real(items)))
    opt = mx.optimizer.SGD(learning_rate=0.5)
    ws = [mx.nd.ones((2,)), mx.nd.ones((3, 2)), mx.nd.ones((4, 2))]
    gs = [mx.nd.ones((2,)), mx.nd.ones((3, 2)), rsp([1], (4, 2))]
    opt.update_multi_precision([0, 1, 2], ws, gs, [None, None, None])
    assert groups == [2]
    assert ws[0].asnumpy().tolist() == [0.5, 0.5]
    np.testing.assert_array_equal(ws[2].asnumpy()[[0, 2, 3]], np.ones((3, 2)))
    assert opt.num_update == 1


def test_trainer_asks_the_optimizer_whether_a_zero_gradient_is_the_identity():
    assert mx.optimizer.SGD()._zero_grad_is_identity(0)
    assert not mx.optimizer.SGD(momentum=0.9)._zero_grad_is_identity(0)
    assert not mx.optimizer.SGD(wd=0.1)._zero_grad_is_identity(0)
    assert not mx.optimizer.Adam()._zero_grad_is_identity(0)
    assert mx.optimizer.ccSGD()._zero_grad_is_identity(0)


# ---------------------------------------------------------------------- dense kernels
def _np_adam(w, g, m, v, lr, b1, b2, eps, wd, rescale, clip):
    g = rescale * g + wd * w
    if clip >= 0:
        g = np.clip(g, -clip, clip)
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    return w - lr * m / (np.sqrt(v) + eps), m, v


def _np_adamw(w, g, m, v, lr, eta, b1, b2, eps, wd, rescale, clip):
    g = rescale * g
    if clip >= 0:
        g = np.clip(g, -clip, clip)
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    return w - eta * (lr * m / (np.sqrt(v) + eps) + wd * w), m, v


SETTINGS = [dict(wd=0.0, rescale_grad=1.0, clip_gradient=-1.0),
            dict(wd=0.1, rescale_grad=1.0, clip_gradient=-1.0),
            dict(wd=0.1, rescale_grad=0.25, clip_gradient=-1.0),
            dict(wd=0.1, rescale_grad=1.5, clip_gradient=0.3)]


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "definition"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("setting", SETTINGS, ids=["plain", "wd", "rescale", "clip"])
@pytest.mark.parametrize("op_name", ["adam_update", "adamw_update"])
def test_dense_adam_kernels_equal_numpy(op_name, setting, dtype, fused, monkeypatch):
    if not fused:
        monkeypatch.setitem(torch_compat.PRIVATE, "fused_adam", None)
        monkeypatch.setitem(torch_compat.PRIVATE, "fused_adamw", None)
    monkeypatch.setattr(core, "chunk_bytes", lambda: 3 * 5 * 8)  # several row chunks
    rng = np.random.default_rng(4)
    shape = (11, 5)
    w0, g0 = rng.standard_normal(shape), rng.standard_normal(shape)
    m0, v0 = rng.standard_normal(shape), np.abs(rng.standard_normal(shape))
    w, g, m, v = (mx.nd.array(a, dtype=dtype) for a in (w0, g0, m0, v0))
    params = dict(lr=0.05, beta1=0.8, beta2=0.9, epsilon=1e-3, **setting)
    if op_name == "adam_update":
        expected = _np_adam(w0, g0, m0, v0, 0.05, 0.8, 0.9, 1e-3, setting["wd"],
                            setting["rescale_grad"], setting["clip_gradient"])
    else:
        params["eta"] = 0.7
        expected = _np_adamw(w0, g0, m0, v0, 0.05, 0.7, 0.8, 0.9, 1e-3, setting["wd"],
                             setting["rescale_grad"], setting["clip_gradient"])
    g_before = g.asnumpy().copy()
    getattr(mx.nd, op_name)(w, g, m, v, out=w, **params)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    for got, exp, what in zip((w, m, v), expected, ("weight", "mean", "var")):
        np.testing.assert_allclose(got.asnumpy(), exp, err_msg=what, **tol)
    np.testing.assert_array_equal(g.asnumpy(), g_before)  # the gradient is only read


def test_fused_adam_declines_what_it_cannot_take():
    w = torch.ones(3, dtype=torch.float16)
    m, v = torch.zeros(3, dtype=torch.float16), torch.zeros(3, dtype=torch.float16)
    assert not torch_compat.fused_adam(w, w.clone(), m, v, lr=0.1, beta1=0.9, beta2=0.99,
                                       eps=1e-8)
    w = torch.ones(3)
    assert not torch_compat.fused_adam(w, torch.ones(3), torch.zeros(3), torch.zeros(3),
                                       lr=0.1, beta1=1.0, beta2=0.99, eps=1e-8)
    assert not torch_compat.fused_adam(w, torch.ones(6)[::2], torch.zeros(3), torch.zeros(3),
                                       lr=0.1, beta1=0.9, beta2=0.99, eps=1e-8)
    assert w.tolist() == [1.0, 1.0, 1.0]


def test_adam_optimizer_dense_gradient_uses_torch_fused_kernel(monkeypatch):
    calls = []
    real, real_many = adam.fused_adam, adam.fused_adam_many
    monkeypatch.setattr(adam, "fused_adam", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(adam, "fused_adam_many",  # (the list form: one call for many weights)
                        lambda *a, **k: calls.append(1) or real_many(*a, **k))
    opt = mx.optimizer.Adam(learning_rate=0.1)
    w = mx.nd.ones((4, 3))
    opt.update(0, w, mx.nd.ones((4, 3)), opt.create_state(0, w))
    assert calls == [1]
    np.testing.assert_allclose(w.asnumpy(), np.full((4, 3), 0.9), rtol=1e-6)


# ---------------------------------------------------------------------- both kernel paths
@pytest.mark.parametrize("name,kwargs", [("sgd", {}), ("sgd", {"momentum": 0.9}),
                                         ("adam", {}), ("adagrad", {})])
def test_lazy_rules_give_the_same_result_on_both_kernel_paths(name, kwargs, row_kernel_path):
    """The native rows and the torch index ops: the same rule through the public entry."""
    rng = np.random.default_rng(8)
    w0 = rng.standard_normal((50, 4)).astype(np.float32)
    opt = mx.optimizer.create(name, learning_rate=0.1, wd=0.05, rescale_grad=0.5,
                              clip_gradient=0.8, **kwargs)
    w = mx.nd.array(w0)
    state = opt.create_state(0, w)
    for step in range(3):
        rows = np.sort(rng.choice(50, 7, replace=False))
        opt.update(0, w, rsp(rows, (50, 4), seed=step), state)
    rng = np.random.default_rng(8)
    rng.standard_normal((50, 4))
    w_np = w0.astype(np.float64)
    st = [np.zeros_like(w_np), np.zeros_like(w_np)]
    for step in range(3):
        rows = np.sort(rng.choice(50, 7, replace=False))
        g = rsp(rows, (50, 4), seed=step).data.asnumpy().astype(np.float64)
        g = np.clip(0.5 * g, -0.8, 0.8) if name != "adam" else g
        wr = w_np[rows]
        if name == "sgd" and not kwargs:
            w_np[rows] = wr * (1 - 0.1 * 0.05) - 0.1 * g
        elif name == "sgd":
            st[0][rows] = 0.9 * st[0][rows] - 0.1 * 0.05 * wr - 0.1 * g
            w_np[rows] = wr + st[0][rows]
        elif name == "adagrad":
            st[0][rows] += g * g
            w_np[rows] = wr - 0.1 * (g / np.sqrt(st[0][rows] + 1e-7) + 0.05 * wr)
        else:
            t = step + 1
            gg = np.clip(0.5 * g + 0.05 * wr, -0.8, 0.8)
            st[0][rows] = 0.9 * st[0][rows] + 0.1 * gg
            st[1][rows] = 0.999 * st[1][rows] + 0.001 * gg * gg
            lr = 0.1 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
            w_np[rows] = wr - lr * st[0][rows] / (np.sqrt(st[1][rows]) + 1e-8)
    np.testing.assert_allclose(w.asnumpy(), w_np, rtol=2e-5, atol=2e-6)

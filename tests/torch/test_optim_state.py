"""state_dict round trips, parameter groups, FTRL against a NumPy reference, argument errors."""
import copy
import io

import numpy as np
import pytest
import torch

import sparsenet as mx
from sparsenet.torch import optim

from .helpers import batches, groups, train, twins

STATEFUL = [
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.05), ("mom",)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True), ("mom",)),
    ("Adam", dict(lr=0.05), ("exp_avg", "exp_avg_sq")),
    ("AdamW", dict(lr=0.05, weight_decay=0.1), ("exp_avg", "exp_avg_sq")),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.1), ("sum",)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5), ("square_avg", "grad_avg",
                                                              "delta")),
    ("FTRL", dict(lr=0.1), ("z", "n")),
]


@pytest.mark.parametrize("lazy", ["exact", True])
@pytest.mark.parametrize("name,kw,keys", STATEFUL, ids=[f"{n}-{i}" for i, (n, _, _) in
                                                          enumerate(STATEFUL)])
def test_state_dict_round_trip(name, kw, keys, lazy):
    data = batches(8)
    model, _ = twins()
    opt = getattr(optim, name)(groups(model, kw["lr"]), lazy_update=lazy, **kw)
    opt.attach(model)
    train(model, opt, data[:5])
    buf = io.BytesIO()
    torch.save(opt.state_dict(), buf)  # tensors and numbers only
    saved_model = copy.deepcopy(model.state_dict())
    train(model, opt, data[5:])
    opt.sync()

    model2, _ = twins(seed=3)
    model2.load_state_dict(saved_model)
    opt2 = getattr(optim, name)(groups(model2, kw["lr"]), lazy_update=lazy, **kw)
    opt2.attach(model2)
    buf.seek(0)
    opt2.load_state_dict(torch.load(buf, weights_only=True))
    train(model2, opt2, data[5:])
    opt2.sync()
    for p, q in zip(model.parameters(), model2.parameters()):
        torch.testing.assert_close(p, q, rtol=0, atol=0)


def test_state_dict_format():
    model, _ = twins()
    opt = optim.Adam(groups(model, 0.1), lr=0.1, lazy_update="exact")
    opt.attach(model)
    train(model, opt, batches(3))
    sd = opt.state_dict()
    assert sorted(sd["state"]) == [0, 1, 2]
    assert set(sd["state"][0]) == {"exp_avg", "exp_avg_sq", "step"}
    assert float(sd["state"][0]["step"]) == 3.0
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1, 2]]
    assert [g["lr"] for g in sd["param_groups"]] == [0.1, 0.05]
    assert sd["param_groups"][0]["lazy_update"] == "exact"


def test_adam_state_matches_torch_adam_state():
    """exp_avg / exp_avg_sq / step mean what they mean in torch.optim.Adam."""
    sparse, dense = twins()
    opt = optim.Adam(sparse.parameters(), lr=0.05, lazy_update=False)
    ref = torch.optim.Adam(dense.parameters(), lr=0.05)
    data = batches(3)
    train(sparse, opt, data)
    train(dense, ref, data)
    ours, theirs = opt.state_dict()["state"], ref.state_dict()["state"]
    for key in ("exp_avg", "exp_avg_sq"):
        torch.testing.assert_close(ours[0][key], theirs[0][key], rtol=1e-5, atol=1e-7)
    assert float(ours[0]["step"]) == float(theirs[0]["step"])


def test_group_lr_is_read_each_step():
    p = torch.nn.Parameter(torch.zeros(2))
    q = torch.nn.Parameter(torch.zeros(2))
    opt = optim.SGD([{"params": [p]}, {"params": [q], "lr": 1.0}], lr=0.1)
    for lr in (0.1, 0.5):
        opt.param_groups[0]["lr"] = lr
        p.grad = torch.ones(2)
        q.grad = torch.ones(2)
        opt.step()
    assert p.tolist() == pytest.approx([-0.6, -0.6])
    assert q.tolist() == pytest.approx([-2.0, -2.0])


def _ftrl_reference(w, steps, lr, l1, beta, wd, lazy):
    """FTRL-proximal (McMahan et al. 2013) in NumPy float64."""
    w = w.astype(np.float64).copy()
    z = np.zeros_like(w)
    n = np.zeros_like(w)
    for rows, g in steps:
        full = np.zeros_like(w)
        np.add.at(full, rows, g)
        sel = np.unique(rows) if lazy else np.arange(w.shape[0])
        gs = full[sel]
        sigma = (np.sqrt(n[sel] + gs ** 2) - np.sqrt(n[sel])) / lr
        z[sel] += gs - sigma * w[sel]
        n[sel] += gs ** 2
        zs = z[sel]
        w[sel] = np.where(np.abs(zs) > l1,
                          (np.sign(zs) * l1 - zs) / ((beta + np.sqrt(n[sel])) / lr + wd), 0.0)
    return w


@pytest.mark.parametrize("lazy", [True, False, "exact"])
def test_ftrl_matches_numpy_reference(lazy):
    rng = np.random.default_rng(0)
    w0 = rng.normal(size=(6, 3)).astype(np.float32)
    steps = [(rng.integers(0, 6 if i % 2 else 3, size=4), rng.normal(size=(4, 3)))
             for i in range(6)]
    p = torch.nn.Parameter(torch.tensor(w0))
    opt = optim.FTRL([p], lr=0.2, lamda1=0.05, beta=1.5, weight_decay=0.01, lazy_update=lazy)
    for rows, g in steps:
        p.grad = torch.sparse_coo_tensor(torch.tensor(rows)[None], torch.tensor(g,
                                         dtype=torch.float32), (6, 3))
        opt.catch_up(p, torch.as_tensor(rows))  # exact mode: the rows a forward would read
        opt.step()
    opt.sync()
    expect = _ftrl_reference(w0, steps, 0.2, 0.05, 1.5, 0.01, lazy is True)
    np.testing.assert_allclose(p.detach().numpy(), expect, rtol=1e-5, atol=1e-6)


def test_ftrl_standard_mode_matches_mxnet():
    w = torch.nn.Parameter(torch.tensor([[1.0, -0.5], [0.2, 0.3], [0.7, 0.1]]))
    opt = optim.FTRL([w], lr=0.1, lamda1=0.01, beta=1.0, weight_decay=0.05, lazy_update=False)
    for rows, vals in (([0, 2], [[0.5, -1.0], [0.3, 0.2]]), ([2], [[-0.4, 0.6]])):
        w.grad = torch.sparse_coo_tensor([rows], torch.tensor(vals), (3, 2))
        opt.step()
    # measured with MXNet 1.9.1 (mx.optimizer.Ftrl on a dense weight, row_sparse gradients)
    expect = [[0.2983388602733612, -0.19900250434875488], [0.0, 0.0],
              [0.16374284029006958, -0.036031514406204224]]
    np.testing.assert_allclose(w.detach().numpy(), expect, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("make,match", [
    (lambda p: optim.SGD(p, lr=0.1, dampening=0.1), "dampening must be 0"),
    (lambda p: optim.SGD(p, lr=0.1, nesterov=True), "Nesterov momentum requires"),
    (lambda p: optim.SGD(p, lr=-1.0), "Invalid learning rate"),
    (lambda p: optim.Adam(p, amsgrad=True), "amsgrad=True is not supported"),
    (lambda p: optim.Adam(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0"),
    (lambda p: optim.RMSprop(p, momentum=0.9), "needs centered=True"),
    (lambda p: optim.Adagrad(p, lazy_update="yes"), "lazy_update must be True, False or"),
])
def test_argument_errors(make, match):
    with pytest.raises(mx.MXNetError, match=match) as info:
        make([torch.nn.Parameter(torch.zeros(2))])
    assert isinstance(info.value, ValueError)


def test_gradient_with_two_sparse_dims_is_rejected():
    p = torch.nn.Parameter(torch.zeros(3, 2))
    p.grad = torch.ones(3, 2).to_sparse()
    with pytest.raises(ValueError, match="sparse_dim=1.*got sparse_dim=2"):
        optim.SGD([p], lr=0.1).step()

"""load_state_dict checks every group key and state tensor against the parameters, and takes
torch.optim's own state_dicts where the state means the same."""
import copy

import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import sparsenet as mx
from sparsenet.torch import optim

from .helpers import batches, train, twins

TORCH_CASES = [("SGD", dict(lr=0.05, momentum=0.9)),
               ("SGD", dict(lr=0.05, momentum=0.9, weight_decay=0.01, nesterov=True)),
               ("Adam", dict(lr=0.05)),
               ("AdamW", dict(lr=0.05, weight_decay=0.1)),
               ("Adagrad", dict(lr=0.1)),
               ("RMSprop", dict(lr=0.01, eps=1e-12, centered=True, momentum=0.5))]


@pytest.mark.parametrize("lazy", [False, "exact"])
@pytest.mark.parametrize("name,kw", TORCH_CASES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(TORCH_CASES)])
def test_continues_from_a_torch_optim_state_dict(name, kw, lazy):
    """k steps with torch.optim, then ours from its state_dict == torch.optim continuing."""
    data = batches(10)
    _, dense = twins()
    ref = getattr(torch.optim, name)(dense.parameters(), **kw)
    train(dense, ref, data[:5])
    sparse, _ = twins()
    sparse.load_state_dict(copy.deepcopy(dense.state_dict()))
    opt = getattr(optim, name)(sparse.parameters(), lazy_update=lazy, **kw)
    opt.attach(sparse)
    opt.load_state_dict(copy.deepcopy(ref.state_dict()))
    train(dense, ref, data[5:])
    train(sparse, opt, data[5:])
    opt.sync()
    for p, q in zip(sparse.parameters(), dense.parameters()):
        torch.testing.assert_close(p.detach(), q.detach(), rtol=1e-5, atol=2e-6)


def test_state_of_a_smaller_parameter_is_refused_not_broadcast():
    small = torch.nn.Parameter(torch.zeros(1, 3))
    src = optim.SGD([small], lr=0.1, momentum=0.9)
    small.grad = torch.ones(1, 3)
    src.step()
    big = torch.nn.Parameter(torch.zeros(6, 3))
    opt = optim.SGD([big], lr=0.1, momentum=0.9)
    with pytest.raises(mx.base.FileFormatError, match=r"\['mom'\].*expected shape \(6, 3\)"):
        opt.load_state_dict(src.state_dict())
    big.grad = torch.ones(6, 3)
    opt.step()  # nothing was loaded: a fresh first step (torch.optim.SGD's numbers)
    assert torch.allclose(big.detach(), torch.full((6, 3), -0.1))


def _trained(name="Adam", **kw):
    model, _ = twins()
    opt = getattr(optim, name)(model.parameters(), lr=0.05, **kw)
    train(model, opt, batches(2))
    fresh, _ = twins()
    return opt.state_dict(), getattr(optim, name)(fresh.parameters(), lr=0.05, **kw)


@pytest.mark.parametrize("mutate,match", [
    (lambda sd: sd["state"][0].__setitem__("step", "3"), r"\['step'\]: expected a number"),
    (lambda sd: sd["state"][0].__setitem__("step", -1.0), r"whole number in \[0, 2\*\*53\]"),
    (lambda sd: sd["state"][0].pop("exp_avg"), r"\['exp_avg'\]: missing"),
    (lambda sd: sd["state"][0].__setitem__("exp_avg", torch.zeros(3)), r"expected shape"),
    (lambda sd: sd["state"][0].__setitem__("exp_avg", sd["state"][0]["exp_avg"].long()),
     r"floating-point"),
    (lambda sd: sd["state"][0].__setitem__("bogus", torch.zeros(1)), r"\['bogus'\]"),
    (lambda sd: sd["state"].__setitem__(9, {}), r"no parameter has id 9"),
    (lambda sd: sd["param_groups"][0].__setitem__("betas", "ab"), r"param_groups'\]\[0\]"),
    (lambda sd: sd["param_groups"][0].__setitem__("lr", "0.1"), r"param_groups"),
    (lambda sd: sd["param_groups"][0].__setitem__("maximize", True), r"\['maximize'\]"),
    (lambda sd: sd["param_groups"][0].__setitem__("amsgrad", True), r"amsgrad"),
    (lambda sd: sd["param_groups"][0].__setitem__("wat", 1), r"\['wat'\]: unknown key"),
    (lambda sd: sd["param_groups"][0]["params"].pop(), r"\['params'\]"),
    (lambda sd: sd.pop("param_groups"), r"\['param_groups'\]: missing"),
])
def test_bad_state_dicts_name_the_key(mutate, match):
    sd, opt = _trained()
    mutate(sd)
    with pytest.raises(mx.base.FileFormatError, match=match):
        opt.load_state_dict(sd)


def test_sgd_missing_momentum_state():
    sd, opt = _trained("SGD", momentum=0.9)
    del sd["state"][0]["mom"]
    with pytest.raises(mx.base.FileFormatError, match=r"\[0\]\['mom'\]: missing"):
        opt.load_state_dict(sd)


def test_torch_adam_state_dict_into_adamw_is_refused():
    p = torch.nn.Parameter(torch.zeros(2, 2))
    ref = torch.optim.Adam([p])
    p.grad = torch.ones(2, 2)
    ref.step()
    with pytest.raises(mx.base.FileFormatError, match="decoupled_weight_decay"):
        optim.AdamW([p]).load_state_dict(ref.state_dict())


# ------------------------------------------------------------------ mutation (hypothesis)
def _paths(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield path + (k,)
            yield from _paths(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield path + (i,)
            yield from _paths(v, path + (i,))


_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 10), st.floats(allow_nan=True), st.text(max_size=3),
    st.just([]), st.just({}), st.just((0.9,)),
    st.sampled_from([torch.zeros(1, 3), torch.zeros(30, 4, dtype=torch.float64),
                     torch.zeros(30, 4, dtype=torch.int32), torch.zeros(4, 30),
                     torch.zeros(()), torch.tensor(2.0), torch.zeros(30, 4).to_sparse()]))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), name=st.sampled_from(["SGD", "Adam", "Adagrad", "RMSprop", "FTRL"]))
def test_mutated_state_dicts_fail_only_with_mxnet_errors(data, name):
    kw = {"SGD": dict(momentum=0.9), "RMSprop": dict(centered=True, momentum=0.5)}.get(name, {})
    sd, opt = _trained(name, **kw)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = list(_paths(sd))  # again after each mutation
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = sd
        for key in path[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()):
            parent.pop(path[-1])
        else:
            parent[path[-1]] = data.draw(_VALUES)
    try:
        opt.load_state_dict(sd)
    except mx.MXNetError:
        return
    # accepted: then training goes on without a bare error either
    model = twins()[0]
    opt2 = opt
    del model
    for group in opt2.param_groups:
        for p in group["params"]:
            p.grad = torch.ones_like(p)
    try:
        opt2.step()
    except mx.MXNetError:
        pass


@pytest.mark.parametrize("name", ["Adagrad", "FTRL", "RMSprop", "SGD", "Adam"])
def test_a_bool_hyperparameter_is_refused_on_load(name):
    # found by the mutation test: weight_decay=True loaded, then the step raised torch's
    # "Boolean alpha only supported for Boolean results"
    sd, opt = _trained(name)
    sd["param_groups"][0]["weight_decay"] = True
    with pytest.raises(mx.base.FileFormatError, match="weight_decay"):
        opt.load_state_dict(sd)


@pytest.mark.parametrize("name", ["Adagrad", "SGD"])
def test_a_hyperparameter_past_float32_is_refused_on_load(name):
    # found by the mutation test: weight_decay=3.4028234663852886e+38 loaded, then the step
    # raised torch's "value cannot be converted to type float without overflow"
    sd, opt = _trained(name)
    sd["param_groups"][0]["weight_decay"] = 3.4028235677973366e+38
    with pytest.raises(mx.base.FileFormatError, match="weight_decay"):
        opt.load_state_dict(sd)


def test_a_step_past_2_to_53_is_refused_on_load():
    # found by the mutation test: a step of 3.4e38 became inf in its float32 tensor
    sd, opt = _trained("Adam")
    sd["state"][0]["step"] = 3.4028235677973366e+38
    with pytest.raises(mx.base.FileFormatError, match="step"):
        opt.load_state_dict(sd)

"""Checking (and translating) a state_dict before a bridged optimizer loads it.

:meth:`BridgedOptimizer.load_state_dict` hands its argument to :func:`clean_state_dict`,
which checks every parameter group and every state tensor against the optimizer's own
parameters and returns a state_dict in the optimizer's own format, or raises
:class:`~sparsenet.base.FileFormatError` naming the key at fault. Nothing reaches the
first ``step()`` unchecked: a state of the wrong shape would otherwise be broadcast into
every row, and a missing key or a string ``step`` would fail there with a bare error.

``torch.optim``'s own state_dicts are accepted where their state means the same thing:
``torch.optim.Adam``/``AdamW``'s ``exp_avg``, ``exp_avg_sq`` and ``step``;
``torch.optim.Adagrad``'s ``sum`` and ``step``; ``torch.optim.SGD``'s
``momentum_buffer`` (stored here as ``mom = -lr * momentum_buffer``) and
``torch.optim.RMSprop``'s ``square_avg``, ``grad_avg``, ``momentum_buffer`` (``delta``).
Their flags must have the value this optimizer implements (``maximize=False``, ...).

>>> import torch
>>> from sparsenet.torch.optim import Adam
>>> p = torch.nn.Parameter(torch.zeros(3, 2))
>>> ref = torch.optim.Adam([p]); p.grad = torch.ones(3, 2); ref.step()
>>> opt = Adam([p]); opt.load_state_dict(ref.state_dict())
>>> float(opt.state[p]['step']), opt.param_groups[0]['lazy_update']
(1.0, True)
"""
import math
from collections.abc import Mapping, Sequence

import torch

from ...base import FileFormatError, SparsenetError
from ...ndarray.ndarray import NDArray

__all__ = ["clean_state_dict"]

#: Keys of torch.optim's groups that change nothing in the update: ignored.
_TORCH_NEUTRAL = ("foreach", "fused", "differentiable", "capturable")
#: Keys a scheduler adds to a group: kept as they are (numbers).
_SCHEDULER_KEYS = ("initial_lr",)


def _where(*path):
    return "state_dict" + "".join(f"[{p!r}]" for p in path)


def _bad(problem, *path):
    return FileFormatError(f"{_where(*path)}: {problem}")


def _number(value, *path):
    """A real number (a Python number or a one-element real tensor) as a float."""
    if isinstance(value, torch.Tensor) and value.numel() == 1 and not value.is_complex() \
            and value.dtype != torch.bool:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(f"expected a number, got {type(value).__name__}", *path)
    return float(value)


def _clean_group(opt, i, saved, ours):
    """Our group ``i`` with the hyperparameters of ``saved`` (validated), no 'params'."""
    if not isinstance(saved, Mapping):
        raise _bad(f"expected a dict, got {type(saved).__name__}", "param_groups", i)
    hyper = {k: v for k, v in ours.items() if k != "params"}
    flags = dict(opt.torch_flags)
    for key, value in saved.items():
        if key == "params":
            continue
        if not isinstance(key, str):
            raise _bad(f"group keys must be strings, got {key!r}", "param_groups", i)
        if key in hyper:
            hyper[key] = value
        elif key in _SCHEDULER_KEYS:
            hyper[key] = _number(value, "param_groups", i, key)
        elif key in flags or key == "maximize":
            want = flags.get(key, False)
            if value is not want:
                raise _bad(f"expected {want!r} ({type(opt).__name__} implements only that), "
                           f"got {value!r}", "param_groups", i, key)
        elif key in _TORCH_NEUTRAL:
            if value is not None and not isinstance(value, bool):
                raise _bad(f"expected None or a bool, got {value!r}", "param_groups", i, key)
        else:
            raise _bad(f"unknown key for {type(opt).__name__} (its keys: "
                       f"{', '.join(sorted(hyper))})", "param_groups", i, key)
    kwargs = {k: v for k, v in hyper.items() if k in opt.defaults}
    try:  # the constructor's own checks, with the loaded values
        type(opt)([torch.nn.Parameter(torch.zeros(1))], **kwargs)
        opt.make_rule(hyper)
    except (SparsenetError, TypeError, ValueError) as exc:
        raise _bad(f"invalid hyperparameters: {exc}", "param_groups", i) from None
    if "betas" in hyper:
        hyper["betas"] = tuple(hyper["betas"])
    return hyper


def _group_ids(saved, i, size):
    ids = saved.get("params") if isinstance(saved, Mapping) else None
    if not isinstance(ids, Sequence) or isinstance(ids, (str, bytes)):
        raise _bad(f"expected a list of parameter ids, got {type(ids).__name__}",
                   "param_groups", i, "params")
    for pid in ids:
        if isinstance(pid, bool) or not isinstance(pid, int):
            raise _bad(f"parameter ids must be ints, got {pid!r}", "param_groups", i, "params")
    if len(ids) != size:
        raise _bad(f"the group holds {len(ids)} parameters, this optimizer's group {i} holds "
                   f"{size}", "param_groups", i, "params")
    return list(ids)


def _expected(opt, group, index, param):
    """``{key: (shape, dtype)}`` of the state the update rule keeps for ``param``."""
    rule = opt.make_rule(group)
    arrays = []

    def collect(s):
        if isinstance(s, NDArray):
            arrays.append(s)
        elif isinstance(s, (tuple, list)):
            for x in s:
                collect(x)
    collect(rule.create_state(index, NDArray(param.detach())))
    return {name: (tuple(a.shape), param.dtype)
            for name, a in zip(opt.state_keys(group), arrays)}


def _clean_tensor(value, shape, param, *path):
    if not isinstance(value, torch.Tensor):
        raise _bad(f"expected a tensor of shape {shape}, got {type(value).__name__}", *path)
    if value.layout != torch.strided:
        raise _bad(f"expected a dense tensor, got layout {value.layout}", *path)
    if not value.dtype.is_floating_point:
        raise _bad(f"expected a floating-point tensor (the parameter's dtype is "
                   f"{param.dtype}), got {value.dtype}", *path)
    if tuple(value.shape) != shape:
        raise _bad(f"expected shape {shape} (the parameter's state), got "
                   f"{tuple(value.shape)}", *path)
    return value.detach().to(device=param.device, dtype=param.dtype, copy=True)


def _clean_step(value, required, *path):
    if value is None:
        if required:
            raise _bad("missing (the number of steps taken)", *path)
        return torch.tensor(0.0)
    step = _number(value, *path)
    # at most 2**53: a whole float64 stays exact, and the float32 tensor that holds it finite
    if not (math.isfinite(step) and 0 <= step <= 2 ** 53 and step == int(step)):
        raise _bad(f"expected a whole number in [0, 2**53], got {step!r}", *path)
    return torch.tensor(step)


def _clean_state(opt, group, index, param, saved, pid):
    """Our state of one parameter from ``saved`` (ours or torch.optim's format)."""
    if not isinstance(saved, Mapping):
        raise _bad(f"expected a dict, got {type(saved).__name__}", "state", pid)
    expected = _expected(opt, group, index, param)
    renames = {t: o for t, (o, _) in opt.torch_state.items()}
    ours = set(expected) | {"step"}
    ours_only = set(renames.values()) - set(renames)  # e.g. SGD's 'mom'
    torch_format = any(k in renames and k not in ours for k in saved) and \
        not any(k in ours_only for k in saved)
    out = {}
    for key in saved:
        target = renames.get(key, key) if torch_format else key
        if key == "step":
            continue
        if target not in expected:
            if torch_format and saved[key] is None and key in renames:
                continue  # torch.optim.SGD keeps momentum_buffer=None without momentum
            raise _bad(f"unexpected key for {type(opt).__name__} with this group's settings "
                       f"(expected {', '.join(sorted(ours))})", "state", pid, key)
        shape, _ = expected[target]
        tensor = _clean_tensor(saved[key], shape, param, "state", pid, key)
        if torch_format and key in opt.torch_state:
            tensor = opt.torch_state[key][1](tensor, group)
        out[target] = tensor
    for key in expected:
        if key not in out:
            raise _bad(f"missing (a {type(opt).__name__} state of this parameter)",
                       "state", pid, key)
    required = not (torch_format and opt.torch_step_optional) and bool(expected)
    out["step"] = _clean_step(saved.get("step"), required, "state", pid, "step")
    return out


def clean_state_dict(opt, state_dict):
    """``state_dict`` checked against ``opt``'s parameters, in ``opt``'s own format.

    Raises
    ------
    FileFormatError
        Naming the key at fault: a missing or unknown key, a tensor of another shape or a
        non-floating dtype, a non-numeric ``step``, a group of another size, a flag whose
        value this optimizer does not implement.
    """
    if not isinstance(state_dict, Mapping):
        raise FileFormatError(f"state_dict: expected a dict with 'state' and 'param_groups', "
                              f"got {type(state_dict).__name__}")
    for key in ("state", "param_groups"):
        if key not in state_dict:
            raise _bad("missing", key)
    extra = sorted(map(repr, set(state_dict) - {"state", "param_groups"}))
    if extra:
        raise FileFormatError(f"state_dict: unexpected keys {', '.join(extra)} (expected "
                              f"'state' and 'param_groups')")
    groups, state = state_dict["param_groups"], state_dict["state"]
    if not isinstance(groups, Sequence) or isinstance(groups, (str, bytes)):
        raise _bad(f"expected a list, got {type(groups).__name__}", "param_groups")
    if len(groups) != len(opt.param_groups):
        raise _bad(f"{len(groups)} parameter groups, this optimizer has "
                   f"{len(opt.param_groups)}", "param_groups")
    if not isinstance(state, Mapping):
        raise _bad(f"expected a dict, got {type(state).__name__}", "state")
    clean_groups, owner, index = [], {}, 0
    for i, (saved, ours) in enumerate(zip(groups, opt.param_groups)):
        ids = _group_ids(saved, i, len(ours["params"]))
        hyper = _clean_group(opt, i, saved, ours)
        for pid, param in zip(ids, ours["params"]):
            if pid in owner:
                raise _bad(f"parameter id {pid} appears twice", "param_groups", i, "params")
            owner[pid] = (hyper, index, param)
            index += 1
        clean_groups.append(dict(hyper, params=ids))
    clean = {}
    for pid, saved in state.items():
        if pid not in owner:
            raise _bad(f"no parameter has id {pid!r} (the groups' ids: "
                       f"{sorted(owner)})", "state", pid)
        hyper, idx, param = owner[pid]
        clean[pid] = _clean_state(opt, hyper, idx, param, saved, pid)
    return {"state": clean, "param_groups": clean_groups}

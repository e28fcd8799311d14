"""Memory a ``sparsenet train`` model needs, checked before anything is allocated.

A model's size comes from its flags (``--features``, ``--classes``, ``--hidden``,
``--factor-size``) or from its ``model.json``. :func:`check_fits` counts its parameters
(the shapes of the block's parameters, nothing allocated) and refuses, with an
:class:`~sparsenet.base.InvalidArgumentError` naming those arguments, a model whose
float32 weights with their gradients, optimizer states and checkpoint copy
(:data:`COPIES`) would not fit in the memory available: ``MemAvailable`` (and the
address-space limit, ``ulimit -v``) on the CPU, the free memory of the GPU.
:func:`allocation_guard` turns an allocation failure that still happens (torch's
``RuntimeError``, ``MemoryError``) into the same error.

>>> parameter_count({"model": "softmax", "features": 10, "classes": 3, "arch": {}})
33
"""
import contextlib
import os
import resource

import torch

from ..base import InvalidArgumentError, SparsenetError

__all__ = ["COPIES", "parameter_count", "needed_bytes", "available_bytes", "size_arguments",
           "check_fits", "allocation_guard", "is_allocation_failure"]

#: Copies of the float32 weights training holds at once, per optimizer: the weights,
#: their gradients and the checkpoint's serialised copy (2), plus the optimizer's state
#: tensors, each with its serialised copy (measured: a 200 MB logistic weight takes
#: 0.4 GB with sgd and 1.4 GB with adam).
COPIES = {"sgd": 2, "adagrad": 4, "adam": 6, "ftrl": 6}

_BYTES = 4  # float32


def parameter_count(config):
    """Number of float32 values in the parameters of the model ``config`` describes."""
    model, features = config["model"], config["features"]
    arch = config["arch"]
    outputs = config["classes"] if config.get("task") == "multiclass" or model == "softmax" \
        else 1
    outputs = outputs or 1
    if model in ("linear", "logistic", "softmax"):
        return features * outputs + outputs
    if model == "fm":
        return features * arch["factor_size"] + features + 1
    hidden = list(arch["hidden"])
    sizes = [features] + hidden
    count = sum(a * b + b for a, b in zip(sizes, sizes[1:]))  # the embedding and dense layers
    count += hidden[-1] * outputs + outputs  # the output layer
    if model == "widedeep":
        count += features * outputs + outputs  # the wide part
    return count


def needed_bytes(config, optimizer=None):
    """Bytes training ``config``'s model takes (see :data:`COPIES`); with ``optimizer`` None,
    those of the weights alone (evaluation)."""
    return parameter_count(config) * _BYTES * (COPIES.get(optimizer, 2) if optimizer else 1)


def _meminfo_available():
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _address_space_left():
    try:
        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY:
        return None
    used = 0
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    used = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return max(0, soft - used)


def available_bytes(ctx):
    """Bytes that can still be allocated on ``ctx`` (a :class:`~sparsenet.Context`), or None
    where the system does not say."""
    device = ctx.torch_device if hasattr(ctx, "torch_device") else torch.device("cpu")
    if device.type == "cuda":
        try:
            return torch.cuda.mem_get_info(device)[0]
        except (RuntimeError, AssertionError):
            return None
    found = [v for v in (_meminfo_available(), _address_space_left()) if v is not None]
    return min(found) if found else None


def size_arguments(config, names):
    """``'--features 100 --classes 5'``: the size arguments of ``config``'s model, each
    named by ``names[key]`` (e.g. ``{'features': '--features'}``)."""
    arch = config["arch"]
    parts = [(names["features"], config["features"])]
    if config.get("classes") is not None:
        parts.append((names["classes"], config["classes"]))
    if "factor_size" in arch:
        parts.append((names["factor_size"], arch["factor_size"]))
    if "hidden" in arch:
        parts.append((names["hidden"], ",".join(str(h) for h in arch["hidden"])))
    return " ".join(f"{name} {value}" for name, value in parts)


def _gib(n):
    return f"{n / 2 ** 30:.3g} GiB"


def check_fits(config, ctx, names, optimizer=None):
    """Raise ``InvalidArgumentError`` naming the size arguments (:func:`size_arguments`)
    when ``config``'s model would not fit in the memory :func:`available_bytes` reports."""
    have = available_bytes(ctx)
    need = needed_bytes(config, optimizer)
    if have is not None and need > have:
        what = f"training with {optimizer}" if optimizer else "its weights"
        raise InvalidArgumentError(
            f"{size_arguments(config, names)}: the model has {parameter_count(config):,} "
            f"parameters and needs about {_gib(need)} ({what}), more than the {_gib(have)} of "
            f"memory available on {ctx}; give smaller sizes")


def is_allocation_failure(exc):
    """Whether ``exc`` is torch's (or Python's) report of a failed allocation."""
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, torch.cuda.OutOfMemoryError):
        return True
    text = str(exc)
    return isinstance(exc, RuntimeError) and (
        "can't allocate memory" in text or "out of memory" in text
        or "DefaultCPUAllocator" in text or "not enough memory" in text)


@contextlib.contextmanager
def allocation_guard(config, names, ctx):
    """Run the block, turning an allocation failure into ``InvalidArgumentError`` naming
    ``config``'s size arguments."""
    try:
        yield
    except (RuntimeError, MemoryError) as exc:
        if isinstance(exc, SparsenetError) or not is_allocation_failure(exc):
            raise
        raise InvalidArgumentError(
            f"{size_arguments(config, names)}: out of memory on {ctx} while building or "
            f"training the model ({' '.join(str(exc).split())[:200]}); give smaller "
            f"sizes") from None

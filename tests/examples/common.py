"""Helpers shared by the example programs; they take the library as ``mx``.

The two libraries draw different random initial weights, so every program
overwrites them after ``mod.init_params()`` with NumPy arrays from a fixed seed
(:func:`fixed_params`), and both runs start from the same point.
"""
import time

import numpy as np


def fixed_params(mx, mod, seed, sigma):
    """Set every parameter of the bound ``mod`` to ``N(0, sigma(name, shape)^2)`` draws.

    Parameters are drawn in sorted name order from ``RandomState(seed)``;
    ``sigma`` returning 0 gives zeros. Each array keeps its storage type.

    Returns the dict of NumPy arrays that was set.
    """
    arg_params, aux_params = mod.get_params()
    rng = np.random.RandomState(seed)
    values, new_args = {}, {}
    for name in sorted(arg_params):
        arr = arg_params[name]
        s = sigma(name, arr.shape)
        value = (rng.normal(0, s, size=arr.shape) if s else np.zeros(arr.shape)).astype(
            np.float32)
        values[name] = value
        nd = mx.nd.array(value)
        new_args[name] = nd.tostype(arr.stype) if arr.stype != "default" else nd
    mod.set_params(new_args, aux_params)
    return values


def fan_in_sigma(default):
    """``sigma`` rule: 1/sqrt(fan_in) for FullyConnected weights, 0 for biases, else ``default``."""
    def sigma(name, shape):
        if name.endswith("_bias") or name in ("bias", "w0"):
            return 0.0
        if name.startswith("fullyconnected") and len(shape) == 2:
            return 1.0 / np.sqrt(shape[1])
        return default
    return sigma


class Clock:
    """Seconds spent inside ``with clock:`` blocks, summed (the training loop's time).

    ``seconds`` is wall time; ``cpu_seconds`` the process's CPU time (every thread: a
    library's worker threads count) over the same blocks, which other work on a shared
    machine does not inflate. :attr:`Clock.process_cpu_seconds` sums ``cpu_seconds``
    over every clock of the process (what ``run_mxnet.py`` reports).
    """

    process_cpu_seconds = 0.0

    def __init__(self, sync):
        self.sync, self.seconds, self.cpu_seconds = sync, 0.0, 0.0
        self._t = self._c = 0.0

    def __enter__(self):
        self._c = time.process_time()
        self._t = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.sync()
        self.seconds += time.perf_counter() - self._t
        cpu = time.process_time() - self._c
        self.cpu_seconds += cpu
        Clock.process_cpu_seconds += cpu
        return False


def param_summary(mod, initial=None):
    """``{name: [sum, sum of squares, sum of squared change]}`` of the module's parameters
    (float64), to compare runs; the change is from ``initial`` (what :func:`fixed_params`
    returned), 0 without it."""
    arg_params, _ = mod.get_params()
    out = {}
    for name in sorted(arg_params):
        a = arg_params[name].asnumpy().astype(np.float64)
        d = a - initial[name] if initial is not None else np.zeros_like(a)
        out[name] = [float(a.sum()), float((a * a).sum()), float((d * d).sum())]
    return out

"""SGLD's noise is ``mx.random.normal``'s stream: a seeded update repeats the reference formula.

MXNet's test_sgld compares the optimizer with a Python SGLD that adds
``mx.random.normal(0, sqrt(lr), shape, dtype)`` after seeding both with one seed.
"""
import math

import numpy as np
import pytest

import sparsenet as mx


@pytest.mark.parametrize("dtype,mp", [("float32", False), ("float64", False), ("float16", True)])
@pytest.mark.parametrize("wd,clip", [(0.0, None), (0.05, 0.4)])
def test_sgld_update_matches_reference_with_same_seed(dtype, mp, wd, clip):
    rng = np.random.default_rng(3)
    w0 = rng.uniform(size=(3, 4, 5)).astype(dtype)
    g = rng.uniform(size=(3, 4, 5)).astype(dtype)
    lr = 0.01
    kwargs = {"learning_rate": lr, "wd": wd, "multi_precision": mp}
    if clip is not None:
        kwargs["clip_gradient"] = clip
    opt = mx.optimizer.SGLD(**kwargs)
    w = mx.nd.array(w0, dtype=dtype)
    state = opt.create_state_multi_precision(0, w)
    mx.random.seed(42)
    opt.update_multi_precision(0, w, mx.nd.array(g, dtype=dtype), state)

    work = "float32" if mp else dtype
    mx.random.seed(42)
    noise = mx.random.normal(0, math.sqrt(lr), shape=w0.shape, dtype=work).asnumpy()
    w64, g64 = w0.astype(np.float64), g.astype(np.float64)
    if clip is not None:
        g64 = np.clip(g64, -clip, clip)
    expected = w64 - lr / 2 * (g64 + wd * w64) + noise
    tol = 1e-2 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(w.asnumpy().astype(np.float64), expected, rtol=tol, atol=tol)

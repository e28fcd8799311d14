"""Shared helpers of the optimizer tests: random row_sparse gradients, a driver that runs an
optimizer over a sequence of gradients, and a NumPy driver applying a dense reference step
lazily (touched rows only) or densely (every row)."""
import numpy as np

import sparsenet as mx

ROW_KINDS = ("random", "empty", "all")


def pick_rows(n, kind, rng):
    """Sorted unique row ids: a random subset, none, or all rows."""
    if kind == "empty":
        return np.zeros(0, dtype=np.int64)
    if kind == "all":
        return np.arange(n)
    k = rng.integers(1, max(2, n))
    return np.sort(rng.choice(n, size=k, replace=False))


def grad_sequence(shape, kinds, rng, scale=1.0, dense=False):
    """One gradient per kind: ``(dense_numpy, rows)``; rows None marks a dense gradient."""
    out = []
    for kind in kinds:
        rows = np.arange(shape[0]) if dense else pick_rows(shape[0], kind, rng)
        g = np.zeros(shape, dtype=np.float32)
        g[rows] = (rng.standard_normal((len(rows),) + tuple(shape[1:])) * scale).astype(
            np.float32)
        out.append((g, None if dense else rows))
    return out


def as_grad(g, rows):
    """NDArray gradient: dense when ``rows`` is None, else row_sparse holding ``rows``."""
    if rows is None:
        return mx.nd.array(g)
    return mx.nd.sparse.row_sparse_array((g[rows], rows), shape=g.shape)


def as_weight(w, stype, dtype=None):
    """Dense weight, or row_sparse weight storing every row (as MXNet requires)."""
    if stype == "row_sparse":
        return mx.nd.sparse.row_sparse_array((w, np.arange(w.shape[0])), shape=w.shape,
                                             dtype=dtype)
    return mx.nd.array(w, dtype=dtype)


def flatten_state(state):
    """NumPy copies of every array in a state (nested tuples, None skipped)."""
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [a for s in state for a in flatten_state(s)]
    return [state.asnumpy()]


def run_optimizer(opt, w0, grads, stype="default", index=0, sync=True):
    """Apply ``opt`` to a weight built from ``w0`` for each gradient; return (weight, state)."""
    weight = as_weight(w0, stype)
    state = opt.create_state_multi_precision(index, weight)
    for g, rows in grads:
        opt.update_multi_precision(index, weight, as_grad(g, rows), state)
    if sync:
        opt.sync(weight, state)
    return weight, state


def run_reference(step, w0, states0, grads, lazy):
    """NumPy driver: ``step(w, g, states, t) -> (w, states)`` on all rows, or on the gradient's
    rows only when ``lazy`` and the gradient is row_sparse. Returns (w, states)."""
    w = w0.astype(np.float64)
    states = [s.astype(np.float64) for s in states0]
    for t, (g, rows) in enumerate(grads, start=1):
        g = g.astype(np.float64)
        if rows is None or not lazy:
            w, states = step(w, g, states, t)
            continue
        if len(rows) == 0:
            continue
        w_r, s_r = step(w[rows], g[rows], [s[rows] for s in states], t)
        w = w.copy()
        w[rows] = w_r
        states = [s.copy() for s in states]
        for s, new in zip(states, s_r):
            s[rows] = new
    return w, states


def clip_rescale(g, rescale, clip):
    g = g * rescale
    return np.clip(g, -clip, clip) if clip else g


def assert_close(got, expected, rtol=2e-5, atol=2e-6, what="weight"):
    got = got.asnumpy() if isinstance(got, mx.nd.NDArray) else np.asarray(got)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=what)

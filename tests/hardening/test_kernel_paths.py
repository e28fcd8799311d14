"""Issue 19, item 11: the native row kernels and the torch index-op kernels give one answer.

Through the public optimizer entry (``mx.optimizer.create(...).update``), random 5-step runs of
every optimizer with a native kernel give the same bits with the native kernels on and off;
and a hyperparameter neither path can compute (NaN, inf, beyond float32) is refused by both
with the same documented error, before anything is written.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsenet as mx
from sparsenet.ops import row_kernels

# the native kernels built (switched on and off here, whatever SPARSENET_NATIVE_ROWS says)
pytestmark = pytest.mark.skipif(row_kernels._native is None,
                                reason="native row kernels not built")

# optimizer -> its own hyperparameters (besides learning_rate, wd, rescale_grad,
# clip_gradient); each has a native lazy kernel (sgd, sgd_mom, adam, adagrad)
OPTIMIZERS = {
    "sgd": {},
    "sgd_momentum": {"momentum": st.floats(0.0, 0.99)},
    "adam": {"beta1": st.floats(0.5, 0.99), "beta2": st.floats(0.9, 0.9999),
             "epsilon": st.floats(1e-8, 1e-3)},
    "adagrad": {"eps": st.floats(1e-8, 1e-3)},
}


def make(name, params):
    if name == "sgd_momentum":
        return mx.optimizer.create("sgd", lazy_update=True, **params)
    return mx.optimizer.create(name, **params)


def train(name, params, w0, steps, native, monkeypatch):
    monkeypatch.setattr(row_kernels, "ENABLED", native)
    opt = make(name, params)
    w = mx.nd.array(w0, dtype=w0.dtype)
    state = opt.create_state(0, w)
    for rows, values in steps:
        g = mx.nd.sparse.row_sparse_array((values, rows), shape=w0.shape, dtype=w0.dtype)
        opt.update(0, w, g, state)
    states = state if isinstance(state, (tuple, list)) else [state]
    return w.asnumpy(), [s.asnumpy() for s in states if s is not None]


@settings(max_examples=100, deadline=None)
@given(name=st.sampled_from(sorted(OPTIMIZERS)), f64=st.booleans(), data=st.data(),
       lr=st.floats(1e-4, 1.0), wd=st.sampled_from([0.0, 1e-4, 0.1]),
       rescale=st.floats(0.01, 4.0), clip=st.sampled_from([-1.0, 0.5, 2.0]),
       seed=st.integers(0, 2**31 - 1))
def test_native_and_torch_paths_give_the_same_bits(name, f64, data, lr, wd, rescale, clip,
                                                   seed):
    dtype = np.float64 if f64 else np.float32
    extra = {k: data.draw(s, label=k) for k, s in OPTIMIZERS[name].items()}
    params = dict(learning_rate=lr, wd=wd, rescale_grad=rescale, clip_gradient=clip, **extra)
    rng = np.random.default_rng(seed)
    shape = (30, 4)
    w0 = rng.standard_normal(shape).astype(dtype)
    steps = []
    for _ in range(5):
        rows = np.sort(rng.choice(shape[0], size=rng.integers(1, shape[0]), replace=False))
        steps.append((rows.astype(np.int64),
                       rng.standard_normal((len(rows), shape[1])).astype(dtype)))
    with pytest.MonkeyPatch.context() as mp:
        native = train(name, params, w0, steps, True, mp)
        torch_path = train(name, params, w0, steps, False, mp)
    np.testing.assert_array_equal(native[0], torch_path[0], err_msg="weight")
    assert len(native[1]) == len(torch_path[1])
    for a, b in zip(native[1], torch_path[1]):
        np.testing.assert_array_equal(a, b, err_msg="state")
    touched = np.unique(np.concatenate([r for r, _ in steps]))
    untouched = np.setdiff1d(np.arange(shape[0]), touched)
    assert np.array_equal(native[0][untouched], w0[untouched])


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("key, value", [("learning_rate", float("nan")),
                                        ("wd", float("inf")), ("rescale_grad", 1e30),
                                        ("learning_rate", -1e20)])
def test_out_of_range_hyperparameter_same_error_both_paths(name, native, key, value,
                                                           monkeypatch):
    monkeypatch.setattr(row_kernels, "ENABLED", native)
    params = {"learning_rate": 0.1, key: value}
    opt = make(name, params)
    w = mx.nd.ones((4, 2))
    state = opt.create_state(0, w)
    g = mx.nd.sparse.row_sparse_array((np.ones((1, 2), np.float32), [1]), shape=(4, 2))
    with pytest.raises(mx.MXNetError, match=r"hyperparameter \w+=.* is out of range for a "
                                            r"float32 weight") as info:
        opt.update(0, w, g, state)
    assert isinstance(info.value, ValueError)
    np.testing.assert_array_equal(w.asnumpy(), np.ones((4, 2), np.float32))  # nothing written


def test_float64_weights_take_float64_range(monkeypatch):
    # 1e30 is beyond float32's limit (1.8e19) but fine for a float64 weight: sgd computes
    # w - lr*g with lr = 1e30 exactly as NumPy does in float64
    for native in (True, False):
        monkeypatch.setattr(row_kernels, "ENABLED", native)
        w = mx.nd.ones((3,), dtype="float64")
        g = mx.nd.sparse.row_sparse_array((np.array([2.0]), [1]), shape=(3,), dtype="float64")
        mx.nd.sgd_update(w, g, lr=1e30, out=w)
        np.testing.assert_array_equal(w.asnumpy(), [1.0, 1.0 - 2e30, 1.0])

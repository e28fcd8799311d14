"""Module with ``lazy_update='exact'``: a forward pass that read rows still behind on their
skipped steps makes ``update()`` raise StateError (no silent drift); with ``catch_up`` before
each forward, training equals dense SGD computed with NumPy."""
import numpy as np
import pytest

import sparsenet as mx

ROWS, COLS, LR, WD, MOM = 6, 2, 0.1, 0.3, 0.9
BATCHES = [[0, 2], [2], [5, 1], [0], [3, 2], [4]]


def _module(momentum):
    w = mx.sym.var("w_weight", stype="row_sparse", shape=(ROWS, COLS), init=mx.init.One())
    out = mx.sym.sparse.dot(mx.sym.var("data", stype="csr"), w)
    mod = mx.mod.Module(mx.sym.make_loss(mx.sym.sum(out * out)), label_names=None)
    mod.bind(data_shapes=[("data", (1, ROWS))])
    mod.init_params()
    mod.init_optimizer(optimizer="sgd", optimizer_params={
        "learning_rate": LR, "wd": WD, "momentum": momentum, "lazy_update": "exact",
        "rescale_grad": 1.0})
    return mod


def _batch(cols):
    vals = np.arange(1, len(cols) + 1, dtype=np.float32)
    x = mx.nd.sparse.csr_matrix((vals, cols, [0, len(cols)]), shape=(1, ROWS))
    return x, vals


def _numpy_dense(momentum):
    """Dense SGD (every row decays every step), MXNet's rule: mom = m*mom - lr*(g + wd*w)."""
    w = np.ones((ROWS, COLS), dtype=np.float64)
    mom = np.zeros_like(w)
    for cols in BATCHES:
        _, vals = _batch(cols)
        y = vals @ w[cols]                      # (COLS,): the forward pass of one row
        g = np.zeros_like(w)
        g[cols] = np.outer(vals, 2 * y)         # d sum(y^2) / dw
        mom = momentum * mom - LR * (g + WD * w)
        w = w + mom
    return w


@pytest.mark.parametrize("momentum", [0.0, MOM])
def test_catch_up_before_forward_gives_dense_sgd(momentum):
    mod = _module(momentum)
    for cols in BATCHES:
        x, _ = _batch(cols)
        mod.catch_up("w_weight", x.indices)
        mod.forward(mx.io.DataBatch([x]), is_train=True)
        mod.backward()
        mod.update()
    mod.sync()
    got = mod.get_params()[0]["w_weight"].asnumpy()
    np.testing.assert_allclose(got, _numpy_dense(momentum), rtol=1e-5, atol=1e-6)


def test_forward_on_stale_rows_raises_instead_of_drifting():
    mod = _module(0.0)
    x, _ = _batch([0])
    for _ in range(2):  # row 2 skips two steps (weight decay)
        mod.forward(mx.io.DataBatch([x]), is_train=True)
        mod.backward()
        mod.update()
    x, _ = _batch([2])
    mod.forward(mx.io.DataBatch([x]), is_train=True)  # reads row 2 stale
    mod.backward()
    weight = mod._exec_group.param_arrays[0][0]  # the bound array (get_params would sync)
    before = weight.asnumpy()
    with pytest.raises(mx.base.StateError, match=r"mod\.catch_up\(name, row_ids\)"):
        mod.update()
    np.testing.assert_array_equal(weight.asnumpy(), before)  # nothing was updated


def test_catch_up_names_unknown_parameter():
    mod = _module(0.0)
    with pytest.raises(mx.MXNetError, match="'nope' is not a parameter"):
        mod.catch_up("nope", mx.nd.array([0]))

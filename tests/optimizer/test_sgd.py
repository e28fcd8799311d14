"""SGD (with and without momentum) against a NumPy reference, MXNet 1.9.1's measured figures,
and the three lazy_update modes."""
import itertools

import numpy as np
import pytest
from optim_helpers import (
    ROW_KINDS,
    as_grad,
    assert_close,
    clip_rescale,
    grad_sequence,
    run_optimizer,
    run_reference,
)

import sparsenet as mx


def np_sgd(lr, wd, momentum, rescale, clip):
    def step(w, g, states, t):
        g = clip_rescale(g, rescale, clip)
        if momentum == 0:
            return (1 - lr * wd) * w - lr * g, states
        m = momentum * states[0] - lr * wd * w - lr * g
        return w + m, [m]
    return step


CASES = list(itertools.product([0.0, 0.9], [0.0, 0.1], [None, 0.5], [1.0, 2.0]))


@pytest.mark.parametrize("stype", ["default", "row_sparse"])
@pytest.mark.parametrize("lazy", [True, False])
@pytest.mark.parametrize("momentum,wd,clip,rescale", CASES)
def test_sgd_matches_numpy(momentum, wd, clip, rescale, lazy, stype):
    rng = np.random.default_rng(7)
    shape = (9, 3)
    w0 = rng.standard_normal(shape).astype(np.float32)
    grads = grad_sequence(shape, ROW_KINDS + ("random",), rng)
    grads.insert(2, grad_sequence(shape, ["all"], rng, dense=True)[0])
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=momentum, wd=wd, clip_gradient=clip,
                           rescale_grad=rescale, lazy_update=lazy)
    weight, state = run_optimizer(opt, w0, grads, stype)
    states0 = [np.zeros(shape)] if momentum else []
    w_ref, s_ref = run_reference(np_sgd(0.1, wd, momentum, rescale, clip), w0, states0, grads,
                                 lazy)
    assert weight.stype == stype
    assert_close(weight, w_ref)
    if momentum:
        assert state.stype == (stype if lazy else "default")
        assert_close(state, s_ref[0], what="momentum")


# MXNet 1.9.1, measured (reference/mxnet_semantics.md section 2): 5x2 weight of ones, lr 0.1,
# step 1 gradient rows {1, 3} = 1, step 2 gradient row {0} = 1; final w[:, 0].
TABLE = [
    (dict(momentum=0.9, wd=0.1), [0.89, 0.89, 1, 0.89, 1]),
    (dict(momentum=0.9, wd=0.1, lazy_update=False), [0.871, 0.782, 0.971, 0.782, 0.971]),
    (dict(momentum=0.0, wd=0.1), [0.89, 0.89, 1, 0.89, 1]),
    (dict(momentum=0.9, wd=0.0, lazy_update=False), [0.9, 0.81, 1, 0.81, 1]),
]


def table_grads():
    g1 = mx.nd.sparse.row_sparse_array((np.ones((2, 2), "f"), [1, 3]), shape=(5, 2))
    g2 = mx.nd.sparse.row_sparse_array((np.ones((1, 2), "f"), [0]), shape=(5, 2))
    return g1, g2


@pytest.mark.parametrize("stype", ["default", "row_sparse"])
@pytest.mark.parametrize("params,expected", TABLE)
def test_sgd_mxnet_table(params, expected, stype):
    opt = mx.optimizer.SGD(learning_rate=0.1, **params)
    w = mx.nd.ones((5, 2)) if stype == "default" else mx.nd.ones((5, 2)).tostype("row_sparse")
    state = opt.create_state(0, w)
    for g in table_grads():
        opt.update(0, w, g, state)
    np.testing.assert_allclose(w.asnumpy()[:, 0], expected, atol=1e-3)


def test_untouched_rows_bit_identical():
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((50, 4)).astype(np.float32)
    opt = mx.optimizer.SGD(learning_rate=0.3, momentum=0.9, wd=0.2, clip_gradient=1.0)
    w = mx.nd.array(w0)
    state = opt.create_state(0, w)
    for g, rows in grad_sequence(w0.shape, ["random"] * 4, rng):
        before_w, before_m = w.asnumpy(), state.asnumpy()
        opt.update(0, w, as_grad(g, rows), state)
        untouched = np.setdiff1d(np.arange(50), rows)
        assert np.array_equal(w.asnumpy()[untouched], before_w[untouched])
        assert np.array_equal(state.asnumpy()[untouched], before_m[untouched])
        assert not np.array_equal(w.asnumpy()[rows], before_w[rows])


def test_weight_updated_in_place():
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    w = mx.nd.ones((4, 2))
    tensor = w.to_torch()
    state = opt.create_state(0, w)
    opt.update(0, w, mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [2]), shape=(4, 2)), state)
    assert w.to_torch() is tensor
    assert tensor[2, 0].item() == pytest.approx(0.9)


@pytest.mark.parametrize("momentum", [0.0, 0.9])
@pytest.mark.parametrize("lazy", [True, False])
def test_multi_precision_float16(momentum, lazy):
    rng = np.random.default_rng(5)
    shape = (8, 3)
    w0 = rng.standard_normal(shape).astype(np.float16).astype(np.float32)
    grads = [(g.astype(np.float16).astype(np.float32), r)
             for g, r in grad_sequence(shape, ["random", "random", "all"], rng)]
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=momentum, wd=0.05, multi_precision=True,
                           lazy_update=lazy)
    w = mx.nd.array(w0, dtype="float16")
    state = opt.create_state_multi_precision(0, w)
    master = state[1]
    assert master.dtype == np.float32
    for g, rows in grads:
        gr = as_grad(g, rows).astype("float16")
        opt.update_multi_precision(0, w, gr, state)
    states0 = [np.zeros(shape)] if momentum else []
    w_ref, _ = run_reference(np_sgd(0.1, 0.05, momentum, 1.0, None), w0, states0, grads, lazy)
    assert w.dtype == np.float16
    assert_close(master, w_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(w.asnumpy(), master.asnumpy().astype(np.float16))


def test_float16_without_multi_precision_warns():
    opt = mx.optimizer.SGD(momentum=0.9)
    with pytest.warns(UserWarning, match="multi_precision=True"):
        opt.create_state_multi_precision(0, mx.nd.ones((2,), dtype="float16"))


def test_list_update_like_mxnet_aggregation():
    opt = mx.optimizer.SGD(learning_rate=0.5)
    ws = [mx.nd.ones((2,)), mx.nd.ones((3,))]
    opt.update([0, 1], ws, [mx.nd.ones((2,)), mx.nd.ones((3,))], [None, None])
    assert [w.asnumpy().tolist() for w in ws] == [[0.5, 0.5], [0.5, 0.5, 0.5]]
    assert opt._index_update_count == {0: 1, 1: 1}

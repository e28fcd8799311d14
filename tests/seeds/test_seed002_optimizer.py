"""Seed 002, "Sparse Optimizers": the tutorial block run as written (with ``import sparsenet as
mx``), checked against the values MXNet 1.9.1 produces. The tutorial's comment says rows 0 and 2
are updated; the gradient's rows are 1 and 2, and those are the rows that change (in MXNet too)."""
import numpy as np

import sparsenet as mx


def test_seed002_sparse_optimizers_block():
    # Create weight
    shape = (4, 2)
    weight = mx.nd.ones(shape).tostype('row_sparse')
    # Create gradient
    data = [[1, 2], [4, 5]]
    indices = [1, 2]
    grad = mx.nd.sparse.row_sparse_array((data, indices), shape=shape)
    sgd = mx.optimizer.SGD(learning_rate=0.01, momentum=0.01)
    # Create momentum
    momentum = sgd.create_state(0, weight)
    # Before the update
    before = {"grad.asnumpy()": grad.asnumpy(), "weight.asnumpy()": weight.asnumpy(),
              "momentum.asnumpy()": momentum.asnumpy()}
    sgd.update(0, weight, grad, momentum)
    # Only row 0 and row 2 are updated for both weight and momentum
    after = {"weight.asnumpy()": weight.asnumpy(), "momentum.asnumpy()": momentum.asnumpy()}

    np.testing.assert_array_equal(before["momentum.asnumpy()"], np.zeros(shape))
    np.testing.assert_array_equal(before["grad.asnumpy()"], [[0, 0], [1, 2], [4, 5], [0, 0]])
    assert weight.stype == "row_sparse" and momentum.stype == "row_sparse"
    np.testing.assert_allclose(after["weight.asnumpy()"],
                               [[1, 1], [0.99, 0.98], [0.96, 0.95], [1, 1]], rtol=1e-6)
    np.testing.assert_allclose(after["momentum.asnumpy()"],
                               [[0, 0], [-0.01, -0.02], [-0.04, -0.05], [0, 0]], rtol=1e-6)


def test_seed002_update_rules_in_the_text():
    """The tutorial's dense rule and per-row sparse rule, spelled out in NumPy."""
    lr, wd, mom, rescale, clip = 0.1, 0.01, 0.9, 0.5, 1.0
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((6, 3)).astype(np.float32)
    g0 = rng.standard_normal((6, 3)).astype(np.float32) * 4
    rows = [1, 4]
    sgd = mx.optimizer.SGD(learning_rate=lr, momentum=mom, wd=wd, rescale_grad=rescale,
                           clip_gradient=clip)
    w = mx.nd.array(w0)
    state = sgd.create_state(0, w)
    sgd.update(0, w, mx.nd.sparse.row_sparse_array((g0[rows], rows), shape=g0.shape), state)
    expected, m = w0.copy(), np.zeros_like(w0)
    for row in rows:
        # clip applies to the rescaled gradient (MXNet's behaviour; the text's order differs)
        rescaled = lr * np.clip(rescale * g0[row], -clip, clip) + lr * wd * w0[row]
        m[row] = mom * m[row] + rescaled
        expected[row] = w0[row] - m[row]
    np.testing.assert_allclose(w.asnumpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(state.asnumpy(), -m, rtol=1e-5)

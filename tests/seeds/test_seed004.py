"""Seed 004 (forum question): do sparse gradient updates need a row_sparse weight? No: an
embedding model with a dense weight gets a row_sparse gradient, and every optimizer updates
only the rows that gradient touches. Figures: MXNet 1.9.1, reference/mxnet_semantics.md
section 2 (5x2 weight of ones, lr 0.1; step 1 rows {1, 3} = 1, step 2 row {0} = 1)."""
import numpy as np
import pytest

import sparsenet as mx


def embedding_step(W, ids, n_items, opt, state):
    """One step of the forum's model: one-hot CSR batch X, mb_embed = X.dot(W), loss = sum."""
    batch = len(ids)
    X = mx.nd.sparse.csr_matrix((np.ones(batch, np.float32), ids, np.arange(batch + 1)),
                                shape=(batch, n_items))
    with mx.autograd.record():
        mb_embed = mx.nd.sparse.dot(X, W)
        loss = mb_embed.sum()
    loss.backward()
    assert W.grad.stype == "row_sparse"
    opt.update(0, W, W.grad, state)


TABLE = [
    ("sgd", dict(momentum=0.9, wd=0.1), [0.89, 0.89, 1, 0.89, 1], "default"),
    ("sgd", dict(momentum=0.9, wd=0.1, lazy_update=False), [0.871, 0.782, 0.971, 0.782, 0.971],
     "default"),
    ("sgd", dict(momentum=0.0, wd=0.1), [0.89, 0.89, 1, 0.89, 1], "default"),
    ("sgd", dict(momentum=0.9), [0.9, 0.9, 1, 0.9, 1], "default"),
]


@pytest.mark.parametrize("name,kwargs,expected,stype", TABLE)
def test_dense_weight_row_sparse_gradient(name, kwargs, expected, stype):
    W = mx.nd.ones((5, 2))
    if stype == "row_sparse":
        W = W.tostype("row_sparse")
    W.attach_grad(stype="row_sparse")
    opt = mx.optimizer.create(name, learning_rate=0.1, **kwargs)
    state = opt.create_state(0, W)
    steps = [[1, 3], [0]]
    changed = []
    for ids in steps:
        before = W.asnumpy()
        embedding_step(W, ids, 5, opt, state)
        changed.append(sorted(np.flatnonzero((W.asnumpy() != before).any(axis=1)).tolist()))
    lazy = kwargs.get("lazy_update", True) is True
    if lazy:
        assert changed == steps  # only the rows the gradient touches
    np.testing.assert_allclose(W.asnumpy()[:, 0], expected, atol=1e-3)

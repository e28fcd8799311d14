"""SGD's aggregated list update equals one update per weight, bit for bit."""
import numpy as np
import pytest

import sparsenet as mx


def _case():
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal(s).astype(np.float32) for s in ((6, 3), (4,), (5, 2), (6, 3))]
    grads = [mx.nd.array(rng.standard_normal((6, 3)).astype(np.float32)),
             mx.nd.array(rng.standard_normal(4).astype(np.float32)),
             mx.nd.sparse.row_sparse_array((rng.standard_normal((2, 2)).astype(np.float32),
                                            [1, 3]), shape=(5, 2)),
             mx.nd.sparse.row_sparse_array(((np.zeros((0, 3), np.float32)), []), shape=(6, 3))]
    return weights, grads


@pytest.mark.parametrize("kwargs", [dict(), dict(wd=0.1), dict(momentum=0.9),
                                    dict(clip_gradient=0.5), dict(lazy_update=False)])
def test_list_update_equals_per_weight_updates(kwargs):
    weights, grads = _case()
    results = []
    for aggregate in (True, False):
        opt = mx.optimizer.SGD(learning_rate=0.3, rescale_grad=0.5, **kwargs)
        opt.set_lr_mult({1: 2.0})
        upd = mx.optimizer.get_updater(opt)
        ws = [mx.nd.array(w) for w in weights]
        for _ in range(3):
            if aggregate:
                upd(list(range(4)), grads, ws)
            else:
                for i in range(4):
                    upd(i, grads[i], ws[i])
        results.append([w.asnumpy() for w in ws])
        assert opt.num_update == 3
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    if not kwargs:  # and both equal plain SGD by hand: w - steps * lr * rescale * g
        g = grads[0].asnumpy()
        np.testing.assert_allclose(results[0][0], weights[0] - 3 * 0.3 * 0.5 * g, rtol=1e-5)
        np.testing.assert_array_equal(results[0][3], weights[3])  # no rows: untouched

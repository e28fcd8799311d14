"""gluon.utils: split_and_load, clip_global_norm (row_sparse gradients), memory report."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.gluon import nn, utils


def test_split_data_even_and_uneven():
    x = mx.nd.arange(10).reshape((5, 2))
    parts = utils.split_data(x, 2, even_split=False)
    assert [p.shape for p in parts] == [(3, 2), (2, 2)]
    with pytest.raises(ValueError, match="cannot be evenly split into 2 slices"):
        utils.split_data(x, 2)
    cols = utils.split_data(mx.nd.zeros((2, 4)), 2, batch_axis=1)
    assert [p.shape for p in cols] == [(2, 2), (2, 2)]


def test_split_and_load_keeps_csr_rows():
    x = mx.nd.sparse.csr_matrix(([1.0, 2.0, 3.0, 4.0], [0, 3, 1, 2], [0, 1, 2, 3, 4]),
                                shape=(4, 5))
    parts = utils.split_and_load(x, [mx.cpu(0), mx.cpu(1)])
    assert [p.stype for p in parts] == ["csr", "csr"]
    np.testing.assert_array_equal(np.vstack([p.asnumpy() for p in parts]), x.asnumpy())
    one = utils.split_and_load(np.ones((2, 2)), [mx.cpu()])
    assert isinstance(one[0], mx.nd.NDArray) and one[0].shape == (2, 2)


@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_global_norm_dense_and_row_sparse(max_norm):
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((3, 2)).astype(np.float32)
    rows = rng.standard_normal((2, 2)).astype(np.float32)
    a = mx.nd.array(dense)
    r = mx.nd.sparse.row_sparse_array((rows, [1, 4]), shape=(6, 2))
    total = float(np.sqrt((dense ** 2).sum() + (rows ** 2).sum()))
    norm = utils.clip_global_norm([a, r], max_norm)
    assert norm == pytest.approx(total, rel=1e-6)
    scale = min(max_norm / (total + 1e-8), 1.0)
    np.testing.assert_allclose(a.asnumpy(), dense * scale, rtol=1e-6)
    assert r.stype == "row_sparse" and r.indices.asnumpy().tolist() == [1, 4]
    np.testing.assert_allclose(r.data.asnumpy(), rows * scale, rtol=1e-6)


def test_clip_global_norm_keeps_sparse_bookkeeping_and_warns_on_nan():
    w = mx.nd.ones((50, 2))
    w.attach_grad()
    x = mx.nd.sparse.csr_matrix(([3.0], [7], [0, 1]), shape=(1, 50))
    with mx.autograd.record():
        y = mx.nd.dot(x, w)
    y.backward()
    utils.clip_global_norm([w.grad], 1.0)
    kind, idx = mx.autograd.nonzero_entries(w.grad)
    assert kind == "rows" and idx.tolist() == [7]
    np.testing.assert_allclose(w.grad.asnumpy()[7], [2 ** -0.5] * 2, rtol=1e-6)
    with pytest.warns(UserWarning, match="nan or inf is detected"):
        utils.clip_global_norm([mx.nd.array([np.nan])], 1.0)
    out = utils.clip_global_norm([mx.nd.array([3.0, 4.0])], 1.0, check_isfinite=False)
    assert isinstance(out, mx.nd.NDArray) and out.asnumpy().tolist() == [5.0]
    with pytest.raises(ValueError, match="non-empty list"):
        utils.clip_global_norm([], 1.0)


def test_print_memory_allocation_matches_seed_format():
    net = nn.Sequential()
    with net.name_scope():
        net.add(nn.Dense(3, in_units=1000), nn.Activation("relu"), nn.Dense(1, in_units=3))
    net.initialize()
    lines = []
    utils.print_memory_allocation(net, [0, 2], print_fn=lines.append)
    name0, name2 = net[0].name, net[2].name
    assert lines == [
        "Memory Allocation for Weight:",
        "{:7.3f} MBs ({:7.3f}%) for {:<40}".format(0.012, 12000 / 12012 * 100, name0),
        "{:7.3f} MBs ({:7.3f}%) for {:<40}".format(0.000012, 12 / 12012 * 100, name2),
        "Memory Allocation for Weight Gradient:",
        "{:7.3f} MBs ({:7.3f}%) for {:<40}".format(0.012, 12000 / 12012 * 100, name0),
        "{:7.3f} MBs ({:7.3f}%) for {:<40}".format(0.000012, 12 / 12012 * 100, name2),
    ]

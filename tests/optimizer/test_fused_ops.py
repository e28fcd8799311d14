"""The fused update operators as registry operators: calling convention (out=), storage-type
rows, and the errors for unsupported inputs."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import SparsenetError, StorageFallbackError, StorageTypeError
from sparsenet.ops.registry import get_op


def rsp(rows, shape, value=1.0):
    data = np.full((len(rows),) + shape[1:], value, dtype=np.float32)
    return mx.nd.sparse.row_sparse_array((data, rows), shape=shape)


def test_out_weight_updates_in_place_and_returns_it():
    w = mx.nd.ones((3, 2))
    out = mx.nd.sgd_update(w, rsp([1], (3, 2)), lr=0.5, out=w)
    assert out is w
    np.testing.assert_allclose(w.asnumpy()[:, 0], [1, 0.5, 1])


def test_no_out_leaves_weight_alone_but_updates_states():
    w, m = mx.nd.ones((3, 2)), mx.nd.zeros((3, 2))
    new = mx.nd.sgd_mom_update(w, rsp([0], (3, 2)), m, lr=0.5, momentum=0.9)
    assert new is not w
    np.testing.assert_array_equal(w.asnumpy(), np.ones((3, 2)))
    np.testing.assert_allclose(new.asnumpy()[:, 0], [0.5, 1, 1])
    np.testing.assert_allclose(m.asnumpy()[:, 0], [-0.5, 0, 0])


def test_out_other_array_receives_result():
    w, dst = mx.nd.ones((2, 1)), mx.nd.zeros((2, 1))
    res = mx.nd.sgd_update(w, mx.nd.ones((2, 1)), lr=0.25, out=dst)
    assert res is dst
    np.testing.assert_allclose(dst.asnumpy().ravel(), [0.75, 0.75])
    np.testing.assert_array_equal(w.asnumpy().ravel(), [1, 1])


def test_sparse_namespace_exposes_update_ops():
    assert mx.nd.sparse.sgd_update is mx.nd.sgd_update
    assert mx.nd.sparse.sgd_mom_update is get_op("sgd_mom_update")


@pytest.mark.parametrize("stypes,lazy,expected", [
    (("default", "row_sparse", "default"), True, "default"),
    (("default", "row_sparse", "default"), False, "default"),
    (("row_sparse", "row_sparse", "row_sparse"), True, "row_sparse"),
    (("row_sparse", "row_sparse", "default"), False, "row_sparse"),
    (("row_sparse", "default", "row_sparse"), True, "row_sparse"),
])
def test_storage_rows_are_registered(stypes, lazy, expected):
    out, dispatched = get_op("sgd_mom_update").infer_storage(stypes, {"lazy_update": lazy})
    assert (out, dispatched) == (expected, True)


def test_rule_table_documents_lazy_and_standard_rows():
    doc = mx.nd.sgd_mom_update.__doc__
    assert doc.startswith("SGD with momentum")
    assert "| dns, rsp, dns | dns | lazy_update=True |" in doc
    assert "| dns, rsp, dns | dns | lazy_update=False |" in doc
    assert "| rsp, dns, dns | rsp | always |" in doc


def test_row_sparse_weight_missing_rows_is_an_error():
    w = mx.nd.sparse.row_sparse_array(([[1.0]], [1]), shape=(3, 1))
    with pytest.raises(SparsenetError, match=r"must store all its rows, this one stores 1 of 3"):
        mx.nd.sgd_update(w, rsp([1], (3, 1)), lr=0.1, out=w)


def test_row_sparse_state_gets_zero_rows_on_first_use():
    w = mx.nd.ones((3, 1)).tostype("row_sparse")
    m = mx.nd.sparse.zeros("row_sparse", (3, 1))
    mx.nd.sgd_mom_update(w, rsp([2], (3, 1)), m, lr=0.1, momentum=0.9, out=w)
    assert m.stype == "row_sparse" and m.indices.asnumpy().tolist() == [0, 1, 2]
    np.testing.assert_allclose(m.asnumpy().ravel(), [0, 0, -0.1])


def test_mixed_state_storage_is_rejected_not_silently_wrong():
    w, m = mx.nd.ones((3, 1)), mx.nd.sparse.zeros("row_sparse", (3, 1))
    with pytest.raises(StorageTypeError, match=r"states must be dense or have the weight's"):
        mx.nd.sgd_mom_update(w, rsp([2], (3, 1)), m, lr=0.1, momentum=0.9, out=w)


def test_csr_gradient_falls_back_under_the_policy():
    w = mx.nd.ones((2, 2))
    g = mx.nd.sparse.csr_matrix(([1.0], [1], [0, 1, 1]), shape=(2, 2))
    with pytest.raises(StorageFallbackError):
        mx.nd.sgd_update(w, g, lr=0.5, out=w)
    with mx.config.storage_fallback("silent"):
        mx.nd.sgd_update(w, g, lr=0.5, out=w)
    np.testing.assert_allclose(w.asnumpy(), [[1, 0.5], [1, 1]])


def test_shape_dtype_and_lr_errors():
    w = mx.nd.ones((3, 2))
    with pytest.raises(ValueError, match=r"gradient shape \(3, 1\) does not match weight shape"):
        mx.nd.sgd_update(w, rsp([0], (3, 1)), lr=0.1, out=w)
    g64 = mx.nd.sparse.row_sparse_array((np.ones((1, 2)), [0]), shape=(3, 2), dtype="float64")
    with pytest.raises(TypeError, match=r"gradient dtype torch.float64 differs"):
        mx.nd.sgd_update(w, g64, lr=0.1, out=w)
    with pytest.raises(TypeError, match=r"needs the learning rate: pass lr="):
        mx.nd.sgd_update(w, mx.nd.ones((3, 2)), out=w)
    with pytest.raises(TypeError, match=r"unexpected parameter\(s\) \['learning_rate'\]"):
        mx.nd.sgd_update(w, mx.nd.ones((3, 2)), learning_rate=0.1, out=w)


def test_empty_gradient_changes_nothing_even_with_standard_sgd_without_wd():
    w = mx.nd.array(np.arange(6, dtype=np.float32).reshape(3, 2))
    before = w.asnumpy()
    for lazy in (True, False):
        mx.nd.sgd_update(w, mx.nd.sparse.zeros("row_sparse", (3, 2)), lr=0.1,
                         lazy_update=lazy, out=w)
    np.testing.assert_array_equal(w.asnumpy(), before)
    mx.nd.sgd_update(w, mx.nd.sparse.zeros("row_sparse", (3, 2)), lr=0.1, wd=0.5,
                     lazy_update=False, out=w)
    np.testing.assert_allclose(w.asnumpy(), before * 0.95)


def test_clip_after_rescale():
    w = mx.nd.zeros((1,))
    mx.nd.sgd_update(w, mx.nd.array([1.0]), lr=1.0, rescale_grad=4.0, clip_gradient=2.0, out=w)
    assert w.asnumpy()[0] == -2.0  # clip(4 * 1, 2); rescale after clip would give -4


def test_nag_uses_weight_before_the_step():
    w0 = np.array([1.0, -2.0], dtype=np.float32)
    g0 = np.array([0.5, 0.25], dtype=np.float32)
    w, m = mx.nd.array(w0), mx.nd.array([0.3, 0.3])
    mx.nd.nag_mom_update(w, mx.nd.array(g0), m, lr=0.1, momentum=0.9, wd=0.2, out=w)
    g = g0 + 0.2 * w0
    m_ref = 0.9 * 0.3 - 0.1 * g
    np.testing.assert_allclose(m.asnumpy(), m_ref, rtol=1e-6)
    np.testing.assert_allclose(w.asnumpy(), w0 + 0.9 * m_ref - 0.1 * g, rtol=1e-6)


@pytest.mark.parametrize("op,states", [("ftrl_update", 2), ("ftml_update", 3)])
def test_rules_dividing_by_lr_reject_zero_lr(op, states):
    w = mx.nd.ones((2,))
    args = [mx.nd.zeros((2,)) for _ in range(states)]
    with pytest.raises(ValueError, match=r"learning rate must be > 0 .* got lr=0.0"):
        getattr(mx.nd, op)(w, mx.nd.ones((2,)), *args, lr=0.0, out=w)

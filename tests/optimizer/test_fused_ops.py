"""The fused update operators as registry operators: calling convention (out=), storage-type
rows, and the errors for unsupported inputs."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import SparsenetError, StorageFallbackError
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


def test_mixed_state_storage_falls_back_and_keeps_the_state_update():
    """No row takes a dense weight with a row_sparse state: the fallback policy applies, and
    a fallback writes the state back (measured with MXNet 1.9.1, which falls back too)."""
    w = mx.nd.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
    m = mx.nd.sparse.zeros("row_sparse", (2, 3))
    g = mx.nd.sparse.row_sparse_array(([[0.5, 0.0, 0.0]], [0]), shape=(2, 3))
    with pytest.raises(StorageFallbackError, match=r"'sgd_mom_update' has no kernel for input "
                                                   r"storage types \(default, row_sparse, "
                                                   r"row_sparse\)"):
        mx.nd.sgd_mom_update(w, g, m, lr=0.1, momentum=0.9, wd=0.1, out=w)
    assert w.asnumpy().tolist() == [[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]  # nothing written
    with mx.config.storage_fallback("silent"):
        mx.nd.sgd_mom_update(w, g, m, lr=0.1, momentum=0.9, wd=0.1, out=w)
    # measured with MXNet 1.9.1 (the densified, standard rule: row 1 decays too)
    np.testing.assert_allclose(w.asnumpy(), [[0.94, 0.0, 1.98], [0.0, 0.0, 2.97]], rtol=1e-6)
    assert m.stype == "row_sparse"
    np.testing.assert_allclose(m.asnumpy(), [[-0.06, 0.0, -0.02], [0.0, 0.0, -0.03]],
                               rtol=1e-6)


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


# CSR weights and gradients: MXNet 1.9.1 falls back to the dense kernel (measured values)
W_CSR = [[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]
G_CSR = [[0.5, 0.0, 0.0], [0.0, 1.0, 0.0]]
SGD_CSR = [[0.94, 0.0, 1.98], [0.0, -0.1, 2.97]]  # sgd_update lr=0.1 wd=0.1, MXNet 1.9.1


def test_sgd_update_csr_weight_and_gradient_follows_the_fallback_policy():
    w = mx.nd.array(W_CSR).tostype("csr")
    g = mx.nd.array(G_CSR).tostype("csr")
    with pytest.raises(StorageFallbackError, match=r"'sgd_update' has no kernel for input "
                                                   r"storage types \(csr, csr\)"):
        mx.nd.sgd_update(w, g, lr=0.1, wd=0.1, out=w)
    assert w.asnumpy().tolist() == W_CSR
    with mx.config.storage_fallback("warn"):
        with pytest.warns(mx.base.StorageFallbackWarning, match=r"'sgd_update'.*\(csr, csr\)"):
            new = mx.nd.sgd_update(w, g, lr=0.1, wd=0.1)
    assert new.stype == "csr" and w.asnumpy().tolist() == W_CSR  # no out: w left alone
    np.testing.assert_allclose(new.asnumpy(), SGD_CSR, rtol=1e-6)
    with mx.config.storage_fallback("silent"):
        out = mx.nd.sgd_update(w, g, lr=0.1, wd=0.1, out=w)
    assert out is w and w.stype == "csr"
    np.testing.assert_allclose(w.asnumpy(), SGD_CSR, rtol=1e-6)
    assert w.indices.asnumpy().tolist() == [0, 2, 1, 2]  # the new CSR structure


def test_sgd_optimizer_on_csr_weight_updates_weight_and_momentum():
    for momentum, mom_expected in [(0.0, None),
                                   (0.9, [[-0.06, 0.0, -0.02], [0.0, -0.1, -0.03]])]:
        opt = mx.optimizer.SGD(learning_rate=0.1, wd=0.1, momentum=momentum)
        w = mx.nd.array(W_CSR).tostype("csr")
        state = opt.create_state(0, w)
        with mx.config.storage_fallback("silent"):
            opt.update(0, w, mx.nd.array(G_CSR).tostype("csr"), state)
        assert w.stype == "csr"
        np.testing.assert_allclose(w.asnumpy(), SGD_CSR, rtol=1e-6)  # MXNet 1.9.1
        if mom_expected is not None:
            assert state.stype == "csr"
            np.testing.assert_allclose(state.asnumpy(), mom_expected, rtol=1e-6)


def test_adam_update_csr_weight_falls_back():
    w = mx.nd.array(W_CSR).tostype("csr")
    m, v = mx.nd.zeros((2, 3)), mx.nd.zeros((2, 3))
    with mx.config.storage_fallback("silent"):
        mx.nd.adam_update(w, mx.nd.array(G_CSR).tostype("csr"), m, v, lr=0.1, out=w)
    assert w.stype == "csr"
    np.testing.assert_allclose(w.asnumpy(), [[0.6837703, 0.0, 2.0], [0.0, -0.31622976, 3.0]],
                               rtol=1e-5)  # measured with MXNet 1.9.1
    np.testing.assert_allclose(m.asnumpy(), [[0.05, 0, 0], [0, 0.1, 0]], rtol=1e-6)


def test_row_sparse_weight_dense_gradient_row_sparse_state():
    """A rule row (MXNet 1.9.1 falls back here; same values, measured)."""
    w = mx.nd.array(W_CSR).tostype("row_sparse")
    m = mx.nd.zeros((2, 3)).tostype("row_sparse")
    mx.nd.sgd_mom_update(w, mx.nd.array(G_CSR), m, lr=0.1, momentum=0.9, out=w)
    assert w.stype == "row_sparse" and m.stype == "row_sparse"
    np.testing.assert_allclose(w.asnumpy(), [[0.95, 0.0, 2.0], [0.0, -0.1, 3.0]], rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), [[-0.05, 0.0, 0.0], [0.0, -0.1, 0.0]], rtol=1e-6)


def test_lamb_phase1_fallback_writes_back_its_states_and_returns_the_direction():
    w = mx.nd.array([[1.0, 2.0]])
    m, v = mx.nd.zeros((1, 2)).tostype("row_sparse"), mx.nd.zeros((1, 2))
    with mx.config.storage_fallback("silent"):
        g = mx.nd.lamb_update_phase1(w, mx.nd.array([[2.0, 0.0]]), m, v, t=1, wd=0.0)
    assert g.stype == "default" and m.stype == "row_sparse"
    # m_hat / (sqrt(v_hat) + epsilon) = 2 / (2 + 1e-6) where the gradient is 2, else 0
    np.testing.assert_allclose(g.asnumpy(), [[2.0 / (2.0 + 1e-6), 0.0]], rtol=1e-6)
    np.testing.assert_allclose(m.asnumpy(), [[0.2, 0.0]], rtol=1e-6)
    np.testing.assert_allclose(v.asnumpy(), [[0.004, 0.0]], rtol=1e-5)

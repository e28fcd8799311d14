"""gluon.Parameter / Constant / ParameterDict."""
import warnings

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.gluon import Constant, DeferredInitializationError, Parameter, ParameterDict


def test_shape_int_and_repr():
    p = Parameter("fc_bias", shape=5)
    assert p.shape == (5,)
    assert repr(p) == "Parameter fc_bias (shape=(5,), dtype=<class 'numpy.float32'>)"
    assert repr(Parameter("w", shape=(2, 3), dtype="float32")) == \
        "Parameter w (shape=(2, 3), dtype=float32)"


def test_initialize_data_grad_and_stypes():
    p = Parameter("w", shape=(4, 3), init=mx.init.Constant(2.0), grad_stype="row_sparse")
    p.initialize()
    np.testing.assert_allclose(p.data().asnumpy(), np.full((4, 3), 2.0))
    assert p.stype == "default" and p.grad_stype == "row_sparse"
    assert p.grad().stype == "row_sparse" and p.grad().indices.asnumpy().size == 0
    assert p.list_ctx() == [mx.cpu()]


def test_invalid_stype_and_grad_req():
    with pytest.raises(ValueError, match="grad_stype for Parameter 'w' must be one of"):
        Parameter("w", shape=(1,), grad_stype="coo")
    with pytest.raises(ValueError, match="grad_req must be one of"):
        Parameter("w", shape=(1,), grad_req="sometimes")


def test_uninitialized_and_deferred_errors():
    p = Parameter("w", shape=(2, 0), allow_deferred_init=True)
    with pytest.raises(RuntimeError, match="has not been initialized"):
        p.data()
    p.initialize()
    with pytest.raises(DeferredInitializationError, match="initialization was deferred"):
        p.data()
    p.shape = (2, 7)
    p._finish_deferred_init()
    assert p.data().shape == (2, 7)
    with pytest.raises(ValueError, match="invalid shape"):
        Parameter("v", shape=(0, 3)).initialize()


def test_shape_setter_checks_compatibility():
    p = Parameter("w", shape=(3, 0))
    p.shape = (3, 4)
    with pytest.raises(ValueError, match="incompatible"):
        p.shape = (2, 4)


def test_already_initialized_warns_and_force_reinit():
    p = Parameter("w", shape=(2,), init="zeros")
    p.initialize()
    with pytest.warns(UserWarning, match="already initialized"):
        p.initialize()
    p.initialize(init="ones", force_reinit=True)
    np.testing.assert_allclose(p.data().asnumpy(), [1.0, 1.0])


def test_multiple_contexts_hold_independent_copies():
    p = Parameter("w", shape=(2, 2), init="ones")
    ctxs = [mx.cpu(0), mx.cpu(1)]
    p.initialize(ctx=ctxs)
    d0, d1 = p.list_data()
    assert d0 is not d1 and p.list_ctx() == ctxs
    assert p.data(mx.cpu(1)) is d1
    assert len(p.list_grad()) == 2
    with pytest.raises(RuntimeError, match=r"not initialized on context cpu\(2\)"):
        p.data(mx.cpu(2))
    p.set_data(mx.nd.full((2, 2), 3.0))
    for d in p.list_data():
        np.testing.assert_allclose(d.asnumpy(), 3.0)
    d1[:] = 5.0
    np.testing.assert_allclose(p._reduce().asnumpy(), 4.0)  # the mean over contexts


def test_set_data_before_deferred_init_is_used():
    p = Parameter("w", shape=(0, 2), allow_deferred_init=True)
    p.initialize()
    p.set_data(mx.nd.array([[1.0, 2.0]]))
    p._finish_deferred_init()
    np.testing.assert_allclose(p.data().asnumpy(), [[1.0, 2.0]])


def test_grad_req_null_and_back():
    p = Parameter("w", shape=(2,), init="ones")
    p.initialize()
    p.grad_req = "null"
    with pytest.raises(RuntimeError, match="grad_req='null'"):
        p.grad()
    p.grad_req = "add"
    x = p.data()
    for _ in range(2):
        with mx.autograd.record():
            y = (x * 3).sum()
        y.backward()
    np.testing.assert_allclose(p.grad().asnumpy(), [6.0, 6.0])
    p.zero_grad()
    np.testing.assert_allclose(p.grad().asnumpy(), [0.0, 0.0])


def test_not_differentiable_forces_null():
    p = Parameter("w", shape=(1,), differentiable=False)
    assert p.grad_req == "null"


def test_row_sparse_parameter_data_raises_and_row_sparse_data():
    p = Parameter("emb", shape=(6, 2), init="ones", stype="row_sparse",
                  grad_stype="row_sparse")
    p.initialize()
    with pytest.raises(RuntimeError, match="use row_sparse_data"):
        p.data()
    with pytest.raises(RuntimeError, match="Please use row_sparse_data"):
        p.list_data()
    rows = p.row_sparse_data(mx.nd.array([4, 1, 4]))
    assert rows.stype == "row_sparse" and rows.shape == (6, 2)
    assert rows.indices.asnumpy().tolist() == [1, 4]
    with pytest.raises(IndexError, match="row id 6 is out of range"):
        p.row_sparse_data(mx.nd.array([6]))
    with pytest.raises(TypeError, match="row_id must be a dense NDArray"):
        p.row_sparse_data([1, 2])
    dense = Parameter("d", shape=(2,))
    dense.initialize()
    with pytest.raises(RuntimeError, match="Please use data"):
        dense.row_sparse_data(mx.nd.array([0]))


def test_row_sparse_views_in_one_graph_add_up():
    p = Parameter("emb", shape=(5, 2), init="ones", stype="row_sparse",
                  grad_stype="row_sparse")
    p.initialize()
    ids_a, ids_b = mx.nd.array([1, 3]), mx.nd.array([3, 4])
    with mx.autograd.record():
        a = mx.nd.Embedding(ids_a, p.row_sparse_data(ids_a), input_dim=5, output_dim=2)
        b = mx.nd.Embedding(ids_b, p.row_sparse_data(ids_b), input_dim=5, output_dim=2)
        y = a.sum() + 2 * b.sum()
    y.backward()
    g = p.grad()
    assert g.indices.asnumpy().tolist() == [1, 3, 4]
    np.testing.assert_allclose(g.data.asnumpy(), [[1, 1], [3, 3], [2, 2]])


def test_cast_changes_dtype_of_data_and_grad():
    p = Parameter("w", shape=(2,), init="ones")
    p.initialize()
    p.cast("float64")
    assert p.data().dtype == np.float64 and p.grad().dtype == np.float64
    with mx.autograd.record():
        y = (p.data() * 2).sum()
    y.backward()
    np.testing.assert_allclose(p.grad().asnumpy(), [2.0, 2.0])


def test_constant():
    c = Constant("c", [[1, 2], [3, 4]])
    assert c.grad_req == "null" and repr(c).startswith("Constant c (shape=(2, 2)")
    with pytest.warns(UserWarning, match='does not support grad_req other than "null"'):
        c.grad_req = "write"
    c.initialize()
    np.testing.assert_allclose(c.data().asnumpy(), [[1, 2], [3, 4]])


def test_parameter_dict_get_shares_and_checks():
    d = ParameterDict("net_")
    w = d.get("weight", shape=(3, 0))
    assert d.get("weight", shape=(3, 4)) is w and w.shape == (3, 4)
    with pytest.raises(ValueError, match="does not match with stored for attribute 'shape'"):
        d.get("weight", shape=(5, 4))
    shared = ParameterDict("other_", shared=d)
    assert shared.get("weight") is not w  # other prefix: a new parameter
    child = ParameterDict("net_", shared=d)
    assert child.get("weight") is w
    assert "net_weight" in d and len(d) == 1
    assert "net_weight" in repr(d)


def test_parameter_dict_update_conflict_and_setattr_and_zero_grad():
    a, b = ParameterDict("x_"), ParameterDict("x_")
    a.get("w", shape=(1,))
    b.get("w", shape=(1,))
    with pytest.raises(ValueError, match="different Parameters with the same name 'x_w'"):
        a.update(b)
    a.setattr("lr_mult", 0.5)
    assert a["x_w"].lr_mult == 0.5
    a.initialize(init=mx.init.One())
    a["x_w"].grad()[:] = 3.0
    a.zero_grad()
    assert not a["x_w"].grad().asnumpy().any()
    assert a.list_ctx() == [mx.cpu()]


def test_get_constant():
    d = ParameterDict("p_")
    c = d.get_constant("c", [1.0, 2.0])
    assert d.get_constant("c") is c
    with pytest.raises(KeyError, match="No constant named 'p_missing'"):
        d.get_constant("missing")


def test_parameter_dict_save_load_roundtrip(tmp_path):
    d = ParameterDict("m_")
    d.get("w", shape=(3, 2))
    d.get("emb", shape=(4, 2), stype="row_sparse", grad_stype="row_sparse")
    d.initialize()
    path = tmp_path / "pd.params"
    d.save(str(path), strip_prefix="m_")
    assert sorted(mx.nd.load(str(path))) == ["emb", "w"]
    e = ParameterDict("m_")
    e.get("w", shape=(3, 2))
    e.get("emb", shape=(4, 2), stype="row_sparse", grad_stype="row_sparse")
    e.load(str(path), restore_prefix="m_")
    np.testing.assert_array_equal(e["m_w"].data().asnumpy(), d["m_w"].data().asnumpy())
    full = e["m_emb"]._data[0]
    assert full.stype == "row_sparse"
    np.testing.assert_array_equal(full.asnumpy(), d["m_emb"]._data[0].asnumpy())
    with pytest.raises(ValueError, match="does not start with 'zz_'"):
        d.save(str(path), strip_prefix="zz_")
    f = ParameterDict("m_")
    f.get("w", shape=(3, 2))
    f.get("other", shape=(1,))
    with pytest.raises(ValueError, match="Parameter 'other' is missing"):
        f.load(str(path), restore_prefix="m_", ignore_extra=True)
    with pytest.raises(ValueError, match="'emb' loaded from .* is not present"):
        f.load(str(path), restore_prefix="m_", allow_missing=True)


def test_load_shape_and_dtype_mismatch(tmp_path):
    path = str(tmp_path / "x.params")
    mx.nd.save(path, {"w": mx.nd.ones((2, 3))})
    d = ParameterDict()
    d.get("w", shape=(3, 3))
    with pytest.raises(ValueError, match="shape incompatible expected"):
        d.load(path)
    d = ParameterDict()
    d.get("w", shape=(2, 3), dtype="float64")
    with pytest.raises(ValueError, match="dtype incompatible"):
        d.load(path)
    d.load(path, cast_dtype=True)
    assert d["w"].data().dtype == np.float64


def test_no_warning_when_initializing_fresh_parameters():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = Parameter("w", shape=(2,))
        p.initialize()

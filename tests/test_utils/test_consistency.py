"""mx.test_utils: consistency across dtypes, timing, Gluon hybridization, optimizers, identity."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet import test_utils as tu
from sparsenet.base import InvalidArgumentError

X = mx.sym.var("x")
F64_F32 = [{"ctx": mx.cpu(0), "x": (2, 3), "type_dict": {"x": np.float64}},
           {"ctx": mx.cpu(0), "x": (2, 3), "type_dict": {"x": np.float32}}]


def test_check_consistency_ground_truth_is_the_most_precise():
    sym = mx.sym.elemwise_add(X * 2, mx.sym.var("y"), name="xy")
    ctx_list = [{"ctx": mx.cpu(0), "x": (2, 3), "y": (2, 3),
                 "type_dict": {"x": np.float64, "y": np.float64}},
                {"ctx": mx.cpu(0), "x": (2, 3), "y": (2, 3),
                 "type_dict": {"x": np.float32, "y": np.float32}}]
    gt = tu.check_consistency(sym, ctx_list)
    # measured with MXNet 1.9.1: outputs and gradients of the float64 executor
    assert sorted(gt) == sorted([sym.list_outputs()[0], "x", "y"])
    assert all(v.dtype == np.float64 and v.shape == (2, 3) for v in gt.values())
    np.testing.assert_allclose(gt["x"].asnumpy(), 2 * gt[sym.list_outputs()[0]].asnumpy())


def test_check_consistency_reports_or_raises(capsys):
    s1 = mx.sym.identity(X * 2, name="out")
    s2 = mx.sym.identity(X * 2.01, name="out")
    gt = tu.check_consistency([s1, s2], F64_F32, raise_on_err=False)
    assert sorted(gt) == ["out_output", "x"]
    out = capsys.readouterr().out
    assert "Predict Err: ctx 1 vs ctx 0 at out_output" in out
    assert "Train Err: float32 cpu(0) ctx 1 vs float64 cpu(0) ctx 0 at out_output" in out
    assert "Train Err: float32 cpu(0) ctx 1 vs float64 cpu(0) ctx 0 at x" in out
    with pytest.raises(AssertionError, match=r"mismatch 100.000000%"):
        tu.check_consistency([s1, s2], F64_F32)
    with pytest.raises(InvalidArgumentError, match="at least two entries"):
        tu.check_consistency(s1, F64_F32[:1])
    with pytest.raises(InvalidArgumentError, match="the symbols differ"):
        tu.check_consistency([s1, X * 2], F64_F32)


def test_check_consistency_fixed_inputs_null_and_add():
    entries = [{"ctx": mx.cpu(0), "x": (2, 3)}] * 2
    gt = tu.check_consistency(mx.sym.sin(X), entries, arg_params={"x": np.ones((2, 3))},
                              grad_req="null")
    (name,) = gt
    np.testing.assert_allclose(gt[name].asnumpy(), np.full((2, 3), np.sin(1.0)), rtol=1e-6)
    gt = tu.check_consistency(mx.sym.sin(X), entries, arg_params={"x": np.ones((2, 3))},
                              grad_req="add")
    # head gradient = output, so d/dx = sin(1) cos(1)
    np.testing.assert_allclose(gt["x"].asnumpy(), np.full((2, 3), np.sin(1.) * np.cos(1.)),
                               rtol=1e-6)
    sin = mx.sym.sin(X)
    truth = {sin.list_outputs()[0]: np.full((2, 3), 5.0)}
    with pytest.raises(AssertionError, match="mismatch 100.000000%"):
        tu.check_consistency(sin, entries, ground_truth=truth, grad_req="null")


def test_check_speed():
    assert tu.check_speed(X * 2, N=2, x=(3, 3)) > 0
    assert tu.check_speed(X * 2, location={"x": np.ones((3, 3))}, typ="forward", N=2) > 0
    with pytest.raises(InvalidArgumentError, match='typ can only be "whole" or "forward"'):
        tu.check_speed(X * 2, typ="x", x=(3, 3))


class _Cube(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return x * x * x


class _Noisy(mx.gluon.HybridBlock):
    """Differs between the imperative and the hybridized run (a bug the check must catch)."""

    def hybrid_forward(self, F, x):
        return x * 2 if F is mx.nd else x * 3


def test_check_gluon_hybridize_consistency():
    data = [mx.nd.array([[1.0, -2.0], [0.5, 3.0]])]
    tu.check_gluon_hybridize_consistency(lambda prefix: _Cube(prefix=prefix), data,
                                         numpy_func=lambda x: x ** 3)
    tu.check_gluon_hybridize_consistency(
        lambda prefix: mx.gluon.nn.Dense(3, in_units=2, prefix=prefix), data)
    with pytest.raises(AssertionError):
        tu.check_gluon_hybridize_consistency(lambda prefix: _Cube(prefix=prefix), data,
                                             numpy_func=lambda x: x ** 2)


def test_compare_optimizer_and_tuples():
    sgd = lambda lr, **kw: mx.optimizer.SGD(learning_rate=lr, momentum=0.9, **kw)  # noqa: E731
    tu.compare_optimizer(sgd(0.1), sgd(0.1), (3, 4), np.float32)
    with pytest.raises(AssertionError, match="rtol=1.000000e-04, atol=1.000000e-05"):
        tu.compare_optimizer(sgd(0.1), sgd(0.2), (3, 4), np.float32)
    tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1),
                         mx.optimizer.SGD(learning_rate=0.1, lazy_update=False), (3, 4),
                         np.float32, w_stype="row_sparse", g_stype="row_sparse")
    with pytest.raises(InvalidArgumentError, match="storage type must be"):
        tu.compare_optimizer(sgd(0.1), sgd(0.1), (3, 4), np.float32, w_stype="foo")
    tu.compare_ndarray_tuple((mx.nd.ones(2), None), (mx.nd.ones(2), mx.nd.ones(3)))
    tu.compare_ndarray_tuple(None, 5)
    with pytest.raises(AssertionError, match="mismatch 100.000000%"):
        tu.compare_ndarray_tuple((mx.nd.ones(2),), (mx.nd.zeros(2),))


def test_dummy_iter_repeats_the_first_batch():
    real = mx.io.NDArrayIter(np.arange(12.).reshape(6, 2), np.arange(6.), batch_size=2)
    it = tu.DummyIter(real)
    first = next(it)
    assert it.next() is first and iter(it) is it and it.batch_size == 2
    assert first.data[0].asnumpy().tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert it.provide_data == real.provide_data and it.provide_label == real.provide_label
    assert all(b is first for _, b in zip(range(10), it))
    it.reset()
    assert next(it) is first


def test_same_array_and_symbol_structure():
    x = mx.nd.ones((2, 3))
    assert tu.same_array(x, x) and tu.same_array(x, x[:])
    assert not tu.same_array(x, x.copy()) and not tu.same_array(x, x.reshape((3, 2)))
    tiny = mx.nd.array([1e-20, 2.0])
    assert not tu.same_array(tiny, tiny.copy())
    assert tiny.asnumpy()[0] == np.float32(1e-20)  # restored exactly
    rsp = mx.nd.array([[1., 2.], [0., 0.]]).tostype("row_sparse")
    assert tu.same_array(rsp, rsp) and not tu.same_array(rsp, rsp.copy())
    assert tu.same_symbol_structure(X + 1, mx.sym.var("b") + 2)
    assert not tu.same_symbol_structure(X + 1, mx.sym.var("b") * 2)

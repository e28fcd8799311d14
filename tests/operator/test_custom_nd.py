"""``mx.nd.Custom``: values and gradients against the same computation with built-in
operators, dense and sparse, under ``autograd.record()``; what the user's code receives
(keywords as strings, ``req``, ``is_train``, storage types); errors.

Values marked "measured with MXNet 1.9.1" come from running ``tests/operator/custom_ops.py``
(the same operator code) under MXNet 1.9.1.
"""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import UnknownOperatorError
from tests.helpers import check_against_dense, make_array
from tests.operator.custom_ops import LOG


@pytest.fixture(autouse=True)
def _clear_log():
    LOG.clear()
    yield
    LOG.clear()


def test_values_and_gradient_equal_the_builtin_computation():
    x = mx.nd.array(np.random.uniform(-2, 2, (3, 4)))
    head = mx.nd.array(np.random.uniform(-1, 1, (3, 4)))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="test_square", scale=1.5)
    y.backward(head)
    got_y, got_g = y.asnumpy(), x.grad.asnumpy()
    with mx.autograd.record():
        ref = 1.5 * x * x
    ref.backward(head)
    np.testing.assert_allclose(got_y, ref.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(got_g, x.grad.asnumpy(), rtol=1e-6)


def test_keywords_reach_the_property_as_strings_and_the_user_code_sees_mxnet_arguments():
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="test_square", scale=2, flag=True, shape=(1, 2), none=None,
                         name="ignored")
    y.backward(mx.nd.array([1.0, 0.5, 2.0]))
    # measured with MXNet 1.9.1: y [2, 8, 18], x.grad [4, 4, 24], and this log (MXNet passes
    # is_train as the int 1; the in_grad buffer of backward is zeros)
    np.testing.assert_allclose(y.asnumpy(), [2.0, 8.0, 18.0])
    np.testing.assert_allclose(x.grad.asnumpy(), [4.0, 4.0, 24.0])
    assert LOG[0] == ("prop", {"scale": "2", "flag": "True", "shape": "(1, 2)", "none": "None"})
    assert LOG[1] == ("create", mx.cpu(0), [[3]], [0])
    assert LOG[2] == ("forward", True, ["write"], False, True)
    assert LOG[3] == ("backward", ["write"], False, True, [0.0, 0.0, 0.0])


@pytest.mark.parametrize("scope,is_train", [
    (lambda: mx.autograd.record(), True),
    (lambda: mx.autograd.record(train_mode=False), False),
    (lambda: mx.autograd.train_mode(), False),   # measured with MXNet 1.9.1: 0 outside record
    (lambda: mx.autograd.pause(), False),
])
def test_is_train_is_recording_and_training(scope, is_train):
    with scope():
        mx.nd.Custom(mx.nd.ones((2,)), op_type="test_square")
    # inside forward, recording is off and training follows is_train (MXNet 1.9.1)
    assert LOG[-1] == ("forward", is_train, ["write"], False, is_train)


def test_several_outputs_and_an_auxiliary_state():
    a = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    b = mx.nd.array([[5.0, 6.0], [7.0, 8.0]])
    count = mx.nd.zeros((1,))
    a.attach_grad()
    with mx.autograd.record():
        s, p = mx.nd.Custom(a, b, count, op_type="test_sumprod")
    mx.autograd.backward([s, p], [mx.nd.ones((2, 2)), mx.nd.ones((2, 2)) * 2])
    # measured with MXNet 1.9.1
    np.testing.assert_allclose(s.asnumpy(), [[6, 8], [10, 12]])
    np.testing.assert_allclose(p.asnumpy(), [[5, 12], [21, 32]])
    np.testing.assert_allclose(a.grad.asnumpy(), [[11, 13], [15, 17]])
    np.testing.assert_allclose(count.asnumpy(), [1.0])  # updated in place
    assert LOG == [("backward", ["write", "null"])]  # b takes no gradient: req 'null'


def test_an_unused_output_sends_a_zero_gradient():
    a, b, count = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0]), mx.nd.zeros((1,))
    a.attach_grad()
    with mx.autograd.record():
        s, _ = mx.nd.Custom(a, b, count, op_type="test_sumprod")
    s.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), [1.0, 1.0])


def test_a_loss_operator_without_top_gradient_ignores_the_head_gradient():
    data = mx.nd.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    label = mx.nd.array([0, 2])
    data.attach_grad()
    for head in (None, mx.nd.ones((2, 3)) * 5):
        with mx.autograd.record():
            prob = mx.nd.Custom(data, label, op_type="test_softmax_loss")
        prob.backward(head)
        # the same as the built-in SoftmaxOutput (and, measured with MXNet 1.9.1,
        # [[-0.90996945, 0.24472848, 0.6652409], [0.33333334, 0.33333334, -0.6666666]])
        ref_data = data.copy()
        ref_data.attach_grad()
        with mx.autograd.record():
            ref = mx.nd.SoftmaxOutput(ref_data, label)
        ref.backward()
        np.testing.assert_allclose(prob.asnumpy(), ref.asnumpy(), rtol=1e-6)
        np.testing.assert_allclose(data.grad.asnumpy(), ref_data.grad.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(data.grad.asnumpy(), [[-0.90996945, 0.24472848, 0.6652409],
                                                     [0.33333334, 0.33333334, -0.6666666]],
                               rtol=1e-6)
    assert LOG == [("loss backward", ["write", "null"])] * 2


def test_weighted_loss_gradient_equals_autograd_of_the_weighted_cross_entropy():
    pred = mx.nd.array(np.random.uniform(-1, 1, (6, 2)))
    label = mx.nd.array([0, 1, 1, 0, 1, 0])
    pred.attach_grad()
    with mx.autograd.record():
        out = mx.nd.Custom(pred, label, op_type="test_weighted_softmax_ce",
                           positive_cls_weight=2)
    out.backward()
    got = pred.grad.asnumpy()
    ref_pred = pred.copy()
    ref_pred.attach_grad()
    scale = (1 + label * 2) / 2
    with mx.autograd.record():
        ce = -mx.nd.pick(mx.nd.log_softmax(ref_pred), label)
        loss = mx.nd.sum(scale * ce)
    loss.backward()
    np.testing.assert_allclose(got, ref_pred.grad.asnumpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(out.asnumpy(), mx.nd.softmax(pred).asnumpy(), rtol=1e-6)


def test_a_chain_of_custom_and_builtin_operators():
    x = mx.nd.array(np.random.uniform(-1, 1, (2, 3)))
    w = mx.nd.array(np.random.uniform(-1, 1, (3, 3)))
    x.attach_grad()
    w.attach_grad()
    with mx.autograd.record():
        y = mx.nd.sum(mx.nd.Custom(mx.nd.dot(x, w), op_type="test_square") * 2)
    y.backward()
    gx, gw = x.grad.asnumpy(), w.grad.asnumpy()
    with mx.autograd.record():
        ref = mx.nd.sum(mx.nd.square(mx.nd.dot(x, w)) * 2)
    ref.backward()
    np.testing.assert_allclose(y.asnumpy(), ref.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(gx, x.grad.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(gw, w.grad.asnumpy(), rtol=1e-5)


def test_grad_req_add_accumulates():
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with mx.autograd.record():
            y = mx.nd.Custom(x, op_type="test_square")
        y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [4.0, 8.0, 12.0])
    # measured with MXNet 1.9.1: an eager call writes (req 'write'), autograd accumulates
    assert [e[1] for e in LOG if e[0] == "backward"] == [["write"], ["write"]]


def test_not_recorded_outside_record():
    x = mx.nd.array([2.0])
    x.attach_grad()
    y = mx.nd.Custom(x, op_type="test_square")
    np.testing.assert_allclose(y.asnumpy(), [4.0])
    with pytest.raises(mx.MXNetError, match="cannot differentiate"):
        y.backward()


# ---------------------------------------------------------------------- sparse
def test_csr_input_row_sparse_weight_gradient_equals_builtin_dot():
    x, x_np = make_array((5, 4), "csr", density=0.4)
    w = mx.nd.array(np.random.uniform(-1, 1, (4, 3)))
    w.attach_grad(stype="row_sparse")
    head = mx.nd.array(np.random.uniform(-1, 1, (5, 3)))
    with mx.autograd.record():
        y = mx.nd.Custom(x, w, op_type="test_csr_dot")
    y.backward(head)
    got_y, got_g = y, w.grad.copy()
    with mx.autograd.record():
        ref = mx.nd.dot(x, w)
    ref.backward(head)
    check_against_dense(got_y, ref, stype="default", rtol=1e-5)
    check_against_dense(got_g, w.grad, stype="row_sparse", rtol=1e-5)
    check_against_dense(got_g, x_np.T @ head.asnumpy(), rtol=1e-5, atol=1e-6)
    # the operator got the CSR array itself, and a row_sparse in_grad buffer for w
    assert LOG[0] == ("csr forward", ["csr", "default"], ["default"])
    assert LOG[1] == ("csr backward", ["null", "write"], ["default"], ["default", "row_sparse"])


def test_row_sparse_in_and_out():
    w, w_np = make_array((6, 2), "row_sparse", density=0.5)
    w.attach_grad()
    head = mx.nd.array(np.random.uniform(-1, 1, (6, 2)))
    with mx.autograd.record():
        y = mx.nd.Custom(w, op_type="test_row_scale")
    y.backward(head)
    check_against_dense(y, w_np * 3, stype="row_sparse")
    # the full mathematical gradient, as every sparse variable in sparsenet (and MXNet) gets
    check_against_dense(w.grad, head.asnumpy() * 3, stype="row_sparse", rtol=1e-6)
    assert LOG == [("rsp backward", ["row_sparse"], ["row_sparse"])]


def test_the_default_property_refuses_sparse_inputs():
    x, _ = make_array((2, 3), "csr")
    # MXNet 1.9.1 fails the same way (an assertion in the default infer_storage_type)
    with pytest.raises(mx.MXNetError, match=r"test_square.*infer_storage_type.*'csr'"):
        mx.nd.Custom(x, op_type="test_square")


# ---------------------------------------------------------------------- assign
@pytest.mark.parametrize("stype", ["default", "row_sparse"])
@pytest.mark.parametrize("req,expected", [("null", [[1, 1], [0, 0]]), ("write", [[2, 3], [0, 4]]),
                                          ("inplace", [[2, 3], [0, 4]]),
                                          ("add", [[3, 4], [0, 4]])])
def test_assign_honours_req(stype, req, expected):
    dst = mx.nd.array([[1, 1], [0, 0]]).tostype(stype)
    mx.operator.CustomOp().assign(dst, req, mx.nd.array([[2, 3], [0, 4]]))
    check_against_dense(dst, np.array(expected, dtype=np.float32), stype=stype)


def test_assign_rejects_an_unknown_req():
    with pytest.raises(ValueError, match="req must be one of"):
        mx.operator.CustomOp().assign(mx.nd.zeros((1,)), "overwrite", mx.nd.ones((1,)))


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize("exc,builtin", [("ValueError", ValueError), ("KeyError", KeyError),
                                         ("ZeroDivisionError", ArithmeticError),
                                         ("AssertionError", AssertionError),
                                         ("OSError", RuntimeError)])
@pytest.mark.parametrize("where", ["forward", "backward"])
def test_an_exception_in_user_code_names_the_operator(where, exc, builtin):
    x = mx.nd.ones((2,))
    x.attach_grad()
    with pytest.raises(mx.MXNetError, match=rf"custom operator 'test_raising': Raising\.{where} "
                                            rf"raised {exc}: .*raised in {where}") as info:
        with mx.autograd.record():
            y = mx.nd.Custom(x, op_type="test_raising", where=where, exc=exc)
        y.backward()
    assert isinstance(info.value, builtin)
    assert type(info.value.__cause__).__name__ == exc


def test_an_exception_in_the_property_constructor_names_the_operator():
    # MXNet 1.9.1 crashes the process here (segmentation fault)
    with pytest.raises(mx.MXNetError, match=r"'test_raising': RaisingProp.__init__ raised "
                                            r"KeyError") as info:
        mx.nd.Custom(mx.nd.ones((2,)), op_type="test_raising", where="forward", exc="Nope")
    assert isinstance(info.value, KeyError)


def test_unknown_op_type_lists_the_registered_ones():
    with pytest.raises(UnknownOperatorError, match=r"Cannot find custom operator 'nope'; "
                                                   r"registered custom operators: \[.*"
                                                   r"'test_square'"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type="nope")


def test_missing_op_type():
    with pytest.raises(mx.MXNetError, match="required argument 'op_type' is missing"):
        mx.nd.Custom(mx.nd.ones((2,)))


def test_wrong_number_of_inputs():
    # measured with MXNet 1.9.1: "Operator Custom expects 3 inputs, but got 2 instead."
    with pytest.raises(mx.MXNetError, match=r"'test_sumprod' takes 3 inputs \(arguments "
                                            r"\['a', 'b'\], auxiliary states \['count'\]\), "
                                            r"got 2"):
        mx.nd.Custom(mx.nd.ones((2,)), mx.nd.ones((2,)), op_type="test_sumprod")


def test_infer_shape_returning_the_wrong_count():
    @mx.operator.register("test_bad_infer_shape")
    class BadInferShape(mx.operator.CustomOpProp):
        def infer_shape(self, in_shape):
            return in_shape, [in_shape[0], in_shape[0]], []

    with pytest.raises(ValueError, match=r"infer_shape returned 2 output shapes, expected 1"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type="test_bad_infer_shape")


def test_register_checks_its_arguments():
    with pytest.raises(ValueError, match="expected a subclass of mx.operator.CustomOpProp"):
        mx.operator.register("test_not_a_prop")(object)
    with pytest.raises(ValueError, match="non-empty str"):
        mx.operator.register("")

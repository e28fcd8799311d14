"""``mx.nd._internal`` / ``mx.sym._internal``, ``contrib.quadratic``, ``reset_arrays``,
``NDArray._fresh_grad`` and the slice-assign operators, against MXNet 1.9.1.

Expected values and storage types were measured with MXNet 1.9.1 unless a comment
says otherwise.
"""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import InvalidArgumentError, InvalidArgumentTypeError, MXNetError
from sparsenet.ops.registry import Operator

nd = mx.nd
I = nd._internal
D, C, R = "default", "csr", "row_sparse"
A = np.array([[0, -1, 0], [2, 0, 0], [0, 0, 0], [3, 0, -4]], dtype=np.float32)
B = np.array([[0, 2, 0], [1, 0, 0], [0, 0, 0], [-1, 5, 0]], dtype=np.float32)
NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("name", [
    "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
    "_rdiv_scalar", "_power_scalar", "_rpower_scalar", "_maximum_scalar", "_minimum_scalar",
    "_mod_scalar", "_rmod_scalar", "_hypot_scalar", "_equal_scalar", "_not_equal_scalar",
    "_greater_scalar", "_greater_equal_scalar", "_lesser_scalar", "_lesser_equal_scalar",
    "_logical_and_scalar", "_logical_or_scalar", "_logical_xor_scalar", "_square_sum",
    "_maximum", "_minimum", "_hypot", "_scatter_elemwise_div", "_scatter_plus_scalar",
    "_scatter_minus_scalar", "_plus", "_add", "_minus", "_sub", "_mul", "_div", "_mod",
    "_power", "_grad_add", "_equal", "_not_equal", "_greater", "_greater_equal", "_lesser",
    "_lesser_equal", "_logical_and", "_logical_or", "_logical_xor", "_copy", "_slice_assign",
    "_slice_assign_scalar", "_crop_assign", "_crop_assign_scalar", "_split_v2", "_shuffle",
    "_contrib_quadratic", "_PlusScalar", "_MinusScalar", "_RMinusScalar", "_MulScalar",
    "_DivScalar", "_RDivScalar", "_PowerScalar", "_RPowerScalar", "_MaximumScalar",
    "_MinimumScalar", "_ModScalar", "_RModScalar", "_HypotScalar", "_EqualScalar",
    "_NotEqualScalar", "_GreaterScalar", "_GreaterEqualScalar", "_LesserScalar",
    "_LesserEqualScalar", "_LogicalAndScalar", "_LogicalOrScalar", "_LogicalXorScalar",
    "_Plus", "_Minus", "_Mul", "_Div", "_Mod", "_Power", "_Maximum", "_Minimum", "_Hypot",
    "_Equal", "_Not_Equal", "_Greater", "_Greater_Equal", "_Lesser", "_Lesser_Equal",
    "_Logical_And", "_Logical_Or", "_Logical_Xor",
])
def test_operator_names_in_both_namespaces(name):
    # the names MXNet 1.9.1 lists in mx.nd._internal (and mx.sym._internal)
    op = getattr(I, name)
    assert isinstance(op, Operator)
    assert getattr(mx.sym._internal, name).operator is op


@pytest.mark.parametrize("name", [
    "_random_uniform", "_random_normal", "_random_gamma", "_random_exponential",
    "_random_poisson", "_random_negative_binomial", "_random_generalized_negative_binomial",
    "_random_randint", "_sample_uniform", "_sample_normal", "_sample_gamma",
    "_sample_exponential", "_sample_poisson", "_sample_negative_binomial",
    "_sample_generalized_negative_binomial", "_sample_multinomial", "_zeros", "_ones", "_full",
    "_arange", "_eye", "_linspace"])
def test_function_names(name):
    assert callable(getattr(I, name))


def test_camel_case_aliases_are_the_same_operators():
    assert I._PlusScalar is I._plus_scalar and I._Maximum is I._maximum
    assert I._grad_add is nd.elemwise_add and I._crop_assign is I._slice_assign


def test_creation_functions():
    np.testing.assert_array_equal(I._full((2,), value=3.0).asnumpy(), [3.0, 3.0])
    np.testing.assert_array_equal(I._zeros((2,)).asnumpy(), [0.0, 0.0])


# measured with MXNet 1.9.1: (output stype for default, csr, row_sparse input, values) at
# scalar 2 on A
SCALAR_CASES = {
    "_plus_scalar": ((D, D, D), A + 2),
    "_minus_scalar": ((D, D, D), A - 2),
    "_rminus_scalar": ((D, D, D), 2 - A),
    "_mul_scalar": ((D, C, R), A * 2),
    "_div_scalar": ((D, C, R), A / 2),
    "_maximum_scalar": ((D, D, D), np.maximum(A, 2)),
    "_minimum_scalar": ((D, D, D), np.minimum(A, 2)),
    "_hypot_scalar": ((D, D, D), [[2.0, 2.2360680103302, 2.0], [2.8284270763397217, 2.0, 2.0],
                                  [2.0, 2.0, 2.0], [3.605551242828369, 2.0, 4.4721360206604]]),
    "_equal_scalar": ((D, C, R), (A == 2).astype(np.float32)),
    "_greater_scalar": ((D, C, R), (A > 2).astype(np.float32)),
    "_scatter_plus_scalar": ((D, C, R), None),
    "_scatter_minus_scalar": ((D, C, R), None),
}
SCATTER = {  # measured with MXNet 1.9.1: csr and row_sparse values of _scatter_*_scalar(A, 2)
    ("_scatter_plus_scalar", C): [[0, 1, 0], [4, 0, 0], [0, 0, 0], [5, 0, -2]],
    ("_scatter_plus_scalar", R): [[2, 1, 2], [4, 2, 2], [0, 0, 0], [5, 2, -2]],
    ("_scatter_minus_scalar", C): [[0, -3, 0], [0, 0, 0], [0, 0, 0], [1, 0, -6]],
    ("_scatter_minus_scalar", R): [[-2, -3, -2], [0, -2, -2], [0, 0, 0], [1, -2, -6]],
    ("_scatter_plus_scalar", D): A + 2, ("_scatter_minus_scalar", D): A - 2,
}


# sparsenet keeps the storage type where the operator maps 0 to 0 for the scalar
# (min(0, 2) == 0); MXNet 1.9.1 densifies (docs/differences.md)
SPARSENET_STYPES = {"_minimum_scalar": (D, C, R)}


@pytest.mark.parametrize("name", sorted(SCALAR_CASES))
@pytest.mark.parametrize("i,stype", list(enumerate([D, C, R])))
def test_scalar_operators(name, i, stype):
    stypes, values = SCALAR_CASES[name]
    with mx.config.storage_fallback("silent"):  # MXNet falls back where the result is dense
        out = getattr(I, name)(nd.array(A).tostype(stype), scalar=2.0)
    want = SCATTER[(name, stype)] if values is None else values
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)
    assert out.stype == SPARSENET_STYPES.get(name, stypes)[i]


@pytest.mark.parametrize("stype", [C, R])
def test_scatter_plus_zero_keeps_structure(stype):
    x = nd.array(A).tostype(stype)
    out = I._scatter_plus_scalar(x, scalar=0.0)
    # measured with MXNet 1.9.1: stype kept, values unchanged
    assert out.stype == stype
    np.testing.assert_array_equal(out.asnumpy(), A)


@pytest.mark.parametrize("rhs", [D, C, R])
def test_scatter_elemwise_div_of_row_sparse(rhs):
    out = I._scatter_elemwise_div(nd.array(A).tostype(R), nd.array(B).tostype(rhs))
    # measured with MXNet 1.9.1: row_sparse; row 2 (not stored) stays 0 instead of NaN
    assert out.stype == R
    np.testing.assert_array_equal(out.asnumpy(), [[NAN, -0.5, NAN], [2.0, NAN, NAN],
                                                  [0.0, 0.0, 0.0], [-3.0, 0.0, -INF]])


@pytest.mark.parametrize("lhs,rhs", [(D, D), (D, C), (D, R), (C, D), (C, C), (C, R)])
def test_scatter_elemwise_div_otherwise_divides_everywhere(lhs, rhs):
    with mx.config.storage_fallback("silent"):
        out = I._scatter_elemwise_div(nd.array(A).tostype(lhs), nd.array(B).tostype(rhs))
    # measured with MXNet 1.9.1: dense (a fallback for sparse operands)
    assert out.stype == D
    np.testing.assert_array_equal(out.asnumpy(), [[NAN, -0.5, NAN], [2.0, NAN, NAN],
                                                  [NAN, NAN, NAN], [-3.0, 0.0, -INF]])


def test_scatter_elemwise_div_shape_check():
    with pytest.raises(InvalidArgumentError, match="one shape"):
        I._scatter_elemwise_div(nd.ones((2, 2)).tostype(R), nd.ones((3, 2)))


@pytest.mark.parametrize("kwargs,stype,values", [
    # measured with MXNet 1.9.1 on a row_sparse A
    ({"axis": 0}, D, [13.0, 1.0, 16.0]),
    ({"axis": 1}, D, [1.0, 4.0, 0.0, 25.0]),
    ({"axis": 1, "keepdims": True}, R, [[1.0], [4.0], [0.0], [25.0]]),
    ({"axis": 0, "keepdims": True}, D, [[13.0, 1.0, 16.0]]),
])
def test_square_sum_of_row_sparse(kwargs, stype, values):
    out = I._square_sum(nd.array(A).tostype(R), **kwargs)
    assert out.stype == stype
    np.testing.assert_array_equal(out.asnumpy(), values)


def test_symbolic_square_sum_of_row_sparse_weight():
    """The factorization-machine example's ``_square_sum(v, axis=1, keepdims=True)``."""
    v = mx.sym.var("v", stype=R)
    s = mx.sym._internal._square_sum(data=v, axis=1, keepdims=True)
    assert s.infer_storage_type(v=R)[1] == [R]
    assert s.infer_shape(v=(4, 3))[1] == [(4, 1)]
    out = s.eval(v=nd.array(A).tostype(R))[0]
    # by NumPy: row sums of squares
    np.testing.assert_array_equal(out.asnumpy(), (A * A).sum(axis=1, keepdims=True))


def test_symbolic_scalar_operator():
    x = mx.sym.var("x")
    out = mx.sym._internal._plus_scalar(x, scalar=2.0).eval(x=nd.array([1.0, 2.0]))[0]
    np.testing.assert_array_equal(out.asnumpy(), [3.0, 4.0])


# ---------------------------------------------------------------------- contrib.quadratic
QUAD = {  # measured with MXNet 1.9.1 on A
    (1, 2, 3): [[3.0, 2.0, 3.0], [11.0, 3.0, 3.0], [3.0, 3.0, 3.0], [18.0, 3.0, 11.0]],
    (1, 2, 0): [[0.0, -1.0, 0.0], [8.0, 0.0, 0.0], [0.0, 0.0, 0.0], [15.0, 0.0, 8.0]],
    (0.5, 0, 0): [[0.0, 0.5, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0], [4.5, 0.0, 8.0]],
}


@pytest.mark.parametrize("abc", sorted(QUAD))
@pytest.mark.parametrize("stype", [D, C, R])
def test_quadratic(abc, stype):
    a, b, c = abc
    with mx.config.storage_fallback("silent"):
        out = nd.contrib.quadratic(nd.array(A).tostype(stype), a=a, b=b, c=c)
    np.testing.assert_array_equal(out.asnumpy(), QUAD[abc])
    # MXNet 1.9.1: csr with c == 0 stays csr, else dense; row_sparse with c == 0 stays
    # row_sparse in sparsenet (MXNet densifies, docs/differences.md)
    assert out.stype == (stype if c == 0 else D)


def test_quadratic_defaults_and_gradient():
    np.testing.assert_array_equal(nd.contrib.quadratic(nd.array(A)).asnumpy(), np.zeros((4, 3)))
    x = nd.array(A)
    x.attach_grad()
    with mx.autograd.record():
        y = nd.contrib.quadratic(x, a=2, b=3, c=1)
    y.backward()
    # measured with MXNet 1.9.1
    np.testing.assert_array_equal(x.grad.asnumpy(), [[3.0, -1.0, 3.0], [11.0, 3.0, 3.0],
                                                     [3.0, 3.0, 3.0], [15.0, 3.0, -13.0]])


def test_symbolic_quadratic():
    q = mx.sym.contrib.quadratic(mx.sym.var("x"), a=1)
    # measured with MXNet 1.9.1
    assert q.list_arguments() == ["x"]
    np.testing.assert_array_equal(q.eval(x=nd.array([2.0]))[0].asnumpy(), [4.0])


# ---------------------------------------------------------------------- reset_arrays
def test_reset_arrays():
    a, b = nd.ones((2, 2)), nd.ones((3,), dtype="float64")
    r = nd.ones((2, 2)).tostype(R)
    c = nd.ones((2, 2)).tostype(C)
    # measured with MXNet 1.9.1: returns [], zeros in place, sparse arrays lose their values
    assert nd.reset_arrays(a, b, r, c, num_arrays=4) == []
    np.testing.assert_array_equal(a.asnumpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(b.asnumpy(), np.zeros(3))
    assert r.stype == R and r.indices.asnumpy().tolist() == []
    assert c.stype == C and c.data.asnumpy().tolist() == [] and c.indptr.asnumpy().tolist() == [
        0, 0, 0]
    np.testing.assert_array_equal(c.asnumpy(), np.zeros((2, 2)))


def test_reset_arrays_of_ints_and_gradient_buffers():
    i = nd.ones((2,), dtype="int32")
    nd.reset_arrays(i, num_arrays=1)  # MXNet 1.9.1 raises for ints (docs/differences.md)
    np.testing.assert_array_equal(i.asnumpy(), [0, 0])
    w = nd.ones((3, 2))
    w.attach_grad()
    with mx.autograd.record():
        y = (w * 2).sum()
    y.backward()
    nd.reset_arrays(w.grad, num_arrays=1)
    np.testing.assert_array_equal(w.grad.asnumpy(), np.zeros((3, 2)))


def test_reset_arrays_errors():
    # measured with MXNet 1.9.1: a num_arrays mismatch is an error
    with pytest.raises(InvalidArgumentError, match="num_arrays=1 but 2 arrays"):
        nd.reset_arrays(nd.ones((1,)), nd.ones((1,)), num_arrays=1)
    with pytest.raises(InvalidArgumentTypeError, match="argument 0 must be an NDArray"):
        nd.reset_arrays(np.ones(2), num_arrays=1)


# ---------------------------------------------------------------------- _fresh_grad
def test_fresh_grad_sequence():
    x = nd.ones((2,))
    assert x._fresh_grad == 0  # measured with MXNet 1.9.1: 0 without a gradient
    x.attach_grad()
    assert x._fresh_grad == 0 and isinstance(x._fresh_grad, int)
    with mx.autograd.record():
        y = x * 2
    y.backward()
    # measured with MXNet 1.9.1: 1 on the variable, 0 on its gradient array
    assert (x._fresh_grad, x.grad._fresh_grad) == (1, 0)
    x._fresh_grad = False
    assert x._fresh_grad == 0
    x._fresh_grad = True
    assert x._fresh_grad == 1
    x._fresh_grad = 0
    assert x._fresh_grad == 0
    x._fresh_grad = 5
    assert x._fresh_grad == 1


def test_fresh_grad_needs_a_variable():
    # measured with MXNet 1.9.1: "NDArray has not been marked as a variable"
    with pytest.raises(MXNetError, match="not an autograd variable"):
        nd.ones((2,))._fresh_grad = True


def test_fresh_grad_of_row_sparse_gradient_and_trainer():
    w = nd.ones((2, 2))
    w.attach_grad(stype=R)
    with mx.autograd.record():
        y = nd.dot(nd.ones((1, 2)).tostype(C), w)
    y.backward()
    assert w._fresh_grad == 1  # measured with MXNet 1.9.1
    net = mx.gluon.nn.Dense(1, in_units=2)
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd")
    with mx.autograd.record():
        loss = net(nd.ones((1, 2)))
    loss.backward()
    # measured with MXNet 1.9.1: 1 after backward, 0 after the step
    assert (net.weight.data()._fresh_grad, net.weight.grad()._fresh_grad) == (1, 0)
    trainer.step(1)
    assert net.weight.data()._fresh_grad == 0


def test_fresh_grad_false_makes_the_trainer_skip():
    net = mx.gluon.nn.Dense(1, in_units=2)
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    with mx.autograd.record():
        loss = net(nd.ones((1, 2)))
    loss.backward()
    before = net.weight.data().asnumpy()
    for p in (net.weight, net.bias):
        p.data()._fresh_grad = False
    with pytest.raises(UserWarning, match="has not been updated by backward"):
        trainer.step(1)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), before)


# ---------------------------------------------------------------------- slice assign
def test_slice_assign_operators():
    x = nd.zeros((3, 4))
    # measured with MXNet 1.9.1 (x itself is unchanged)
    np.testing.assert_array_equal(
        I._slice_assign(x, nd.ones((2, 2)), begin=(0, 1), end=(2, 3)).asnumpy(),
        [[0, 1, 1, 0], [0, 1, 1, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(
        I._slice_assign_scalar(x, scalar=3, begin=(1,), end=(3,)).asnumpy(),
        [[0, 0, 0, 0], [3, 3, 3, 3], [3, 3, 3, 3]])
    np.testing.assert_array_equal(
        I._crop_assign_scalar(x, scalar=3, begin=(1, 0), end=(3, 2), step=(1, 1)).asnumpy(),
        [[0, 0, 0, 0], [3, 3, 0, 0], [3, 3, 0, 0]])
    np.testing.assert_array_equal(
        I._slice_assign_scalar(x, scalar=3, begin=(0,), end=(3,), step=(2,)).asnumpy(),
        [[3, 3, 3, 3], [0, 0, 0, 0], [3, 3, 3, 3]])
    assert float(x.asnumpy().sum()) == 0.0
    with pytest.raises(InvalidArgumentError, match="does not fit"):
        I._slice_assign(x, nd.ones((3, 3)), begin=(0, 1), end=(2, 3))

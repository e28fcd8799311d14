"""Operator fidelity against MXNet 1.9.1: broadcast_to/like, FullyConnected's (n, 1) bias,
maximum/minimum/hypot storage types, unsorted CSR products, gradients at poles, plain
numbers, int slice bounds and float row ids.

Every expected value below was measured with MXNet 1.9.1 (``/tmp/mx``) unless the
comment says it is computed by hand or with NumPy.
"""
import math

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import InvalidArgumentError, MXNetError, StorageFallbackError

nd = mx.nd
D, C, R = "default", "csr", "row_sparse"


def _grad(op, values, **kwargs):
    x = nd.array(values)
    x.attach_grad()
    with mx.autograd.record():
        y = op(x, **kwargs)
    y.backward()
    return y.asnumpy(), x.grad.asnumpy()


# ---------------------------------------------------------------------- broadcast_to / like
def test_broadcast_to_and_like_methods():
    a = nd.ones((1, 3))
    # measured with MXNet 1.9.1: all three give a (2, 3) array of ones
    for out in (a.broadcast_to((2, 3)), a.broadcast_like(nd.zeros((2, 3))),
                nd.broadcast_like(a, nd.zeros((2, 3)))):
        np.testing.assert_array_equal(out.asnumpy(), np.ones((2, 3), np.float32))
    assert nd.broadcast_to(nd.ones((1, 3)), shape=(2, 0)).shape == (2, 3)


@pytest.mark.parametrize("lhs,rhs,kwargs,shape", [
    ((1, 3, 1), (4, 5), {"lhs_axes": (0,), "rhs_axes": (0,)}, (4, 3, 1)),
    ((1, 3, 1), (4, 5), {"lhs_axes": (0, 2), "rhs_axes": (0, 1)}, (4, 3, 5)),
    ((1, 3, 1), (4, 5), {"lhs_axes": 0, "rhs_axes": 1}, (5, 3, 1)),
    ((1, 1), (5, 2), {"lhs_axes": (0, 1), "rhs_axes": (1, 0)}, (2, 5)),
    ((1, 3), (5, 2), {"lhs_axes": (0,), "rhs_axes": (-2,)}, (5, 3)),
    ((1, 3), (5, 2), {"lhs_axes": (-2,), "rhs_axes": (0,)}, (5, 3)),
])
def test_broadcast_like_axes(lhs, rhs, kwargs, shape):
    # shapes measured with MXNet 1.9.1
    assert nd.broadcast_like(nd.ones(lhs), nd.zeros(rhs), **kwargs).shape == shape


@pytest.mark.parametrize("lhs,rhs,kwargs,match", [
    ((3,), (2, 3), {}, "different numbers of dimensions"),
    ((2, 3), (5, 3), {}, "dimension 0 of lhs has size 2"),
    ((1, 3), (5, 2), {"lhs_axes": (0, 1), "rhs_axes": (0,)}, "one length"),
    ((1, 3), (5, 2), {"lhs_axes": (0,)}, "both lhs_axes and rhs_axes"),
    ((1, 3), (5, 2), {"lhs_axes": (2,), "rhs_axes": (0,)}, "out of range"),
])
def test_broadcast_like_errors(lhs, rhs, kwargs, match):
    # MXNet 1.9.1 raises for the first three (it ignores a lone lhs_axes)
    with pytest.raises(InvalidArgumentError, match=match):
        nd.broadcast_like(nd.ones(lhs), nd.zeros(rhs), **kwargs)


@pytest.mark.parametrize("src,shape,match", [((1, 3), (2, 3, 3), "dimensions"),
                                             ((3,), (2, 3), "dimensions"),
                                             ((2, 3), (4, 3), "dimension 0 has size 2"),
                                             ((1, 3), (2, -1), "dimension 1 has size 3")])
def test_broadcast_to_errors(src, shape, match):
    # MXNet 1.9.1 raises for each of these
    with pytest.raises(MXNetError, match=match):
        nd.broadcast_to(nd.ones(src), shape=shape)


def test_broadcast_like_gradient():
    x = nd.array([[1.0, 2.0, 3.0]])
    y = nd.zeros((2, 3))
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        z = nd.broadcast_like(x, y) * nd.array([[1, 2, 3], [4, 5, 6]])
    z.backward()
    # measured with MXNet 1.9.1
    np.testing.assert_array_equal(x.grad.asnumpy(), [[5.0, 7.0, 9.0]])
    np.testing.assert_array_equal(y.grad.asnumpy(), np.zeros((2, 3)))


@pytest.mark.parametrize("stype", [C, R])
@pytest.mark.parametrize("call", ["broadcast_to", "broadcast_like"])
def test_broadcast_of_sparse_falls_back_like_mxnet(stype, call):
    s = nd.ones((1, 3)).tostype(stype)
    run = {"broadcast_to": lambda: s.broadcast_to((2, 3)),
           "broadcast_like": lambda: s.broadcast_like(nd.zeros((2, 3)))}[call]
    with pytest.raises(StorageFallbackError, match=call):
        run()
    with mx.config.storage_fallback("silent"):
        out = run()
    # measured with MXNet 1.9.1: storage fallback, dense ones
    assert out.stype == D
    np.testing.assert_array_equal(out.asnumpy(), np.ones((2, 3), np.float32))


# ---------------------------------------------------------------------- FullyConnected bias
@pytest.mark.parametrize("data_stype", [D, C])
@pytest.mark.parametrize("bias_stype", [D, R])
@pytest.mark.parametrize("batch", [4, 2])
def test_fully_connected_column_bias(data_stype, bias_stype, batch):
    bias = nd.array([[1.0], [2.0], [3.0], [4.0]]).tostype(bias_stype)
    with mx.config.storage_fallback("silent"):  # a row_sparse bias falls back, as in MXNet
        out = nd.FullyConnected(nd.ones((batch, 3)).tostype(data_stype), nd.ones((4, 3)), bias,
                                num_hidden=4)
    # measured with MXNet 1.9.1 (MKLDNN off; with MKLDNN a dense (4, 1) bias crashes)
    assert out.stype == D
    np.testing.assert_array_equal(out.asnumpy(), [[4.0, 5.0, 6.0, 7.0]] * batch)


def test_fully_connected_column_bias_no_flatten():
    out = nd.FullyConnected(nd.ones((2, 2, 3)), nd.ones((4, 3)),
                            nd.array([[1.0], [2.0], [3.0], [4.0]]), num_hidden=4, flatten=False)
    # measured with MXNet 1.9.1
    np.testing.assert_array_equal(out.asnumpy(), [[[4.0, 5.0, 6.0, 7.0]] * 2] * 2)


def test_fully_connected_column_bias_gradient():
    b = nd.array([[1.0], [2.0], [3.0], [4.0]])
    b.attach_grad()
    with mx.autograd.record():
        y = nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 3)), b, num_hidden=4)
    y.backward()
    # by hand: d(sum y)/d bias_j = batch size; MXNet 1.9.1 crashes here (shape check)
    assert b.grad.shape == (4, 1)
    np.testing.assert_array_equal(b.grad.asnumpy(), [[2.0]] * 4)


@pytest.mark.parametrize("shape", [(1, 4), (2, 2), (4, 1, 1)])
def test_fully_connected_bad_bias_shape(shape):
    # MXNet 1.9.1: "Unexpected shape for bias" for each of these
    with pytest.raises(InvalidArgumentError, match=r"bias must have shape \(4,\) or \(4, 1\)"):
        nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 3)),
                          nd.array(np.arange(4.0).reshape(shape)), num_hidden=4)


# ---------------------------------------------------------------------- maximum / minimum / hypot
A = np.array([[0, -1, 0], [2, 0, 0], [0, 0, 0], [3, 0, -4]], dtype=np.float32)
B = np.array([[0, 2, 0], [0, 0, 0], [0, 0, 0], [-1, 5, 0]], dtype=np.float32)
# measured with MXNet 1.9.1 (_maximum, _minimum, _hypot of two CSR or two row_sparse arrays)
MEASURED = {
    "maximum": [[0.0, 2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0], [3.0, 5.0, 0.0]],
    "minimum": [[0.0, -1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [-1.0, 0.0, -4.0]],
    "hypot": [[0.0, 2.2360680103302, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0],
              [3.1622776985168457, 5.0, 4.0]],
}
FUNCTIONS = {
    "maximum": (nd._internal._maximum, nd._internal._Maximum, nd.maximum, nd.broadcast_maximum),
    "minimum": (nd._internal._minimum, nd._internal._Minimum, nd.minimum, nd.broadcast_minimum),
    "hypot": (nd._internal._hypot, nd._internal._Hypot, nd.hypot, nd.broadcast_hypot),
}


@pytest.mark.parametrize("stype", [C, R])
@pytest.mark.parametrize("which", sorted(MEASURED))
@pytest.mark.parametrize("form", range(4))
def test_maximum_minimum_hypot_keep_sparse(stype, which, form):
    fn = FUNCTIONS[which][form]
    out = fn(nd.array(A).tostype(stype), nd.array(B).tostype(stype))
    # MXNet 1.9.1: _maximum/_minimum/_hypot keep the storage type; nd.maximum and
    # broadcast_* densify there (docs/differences.md), the values agree
    assert out.stype == stype
    out.check_format()
    np.testing.assert_allclose(out.asnumpy(), MEASURED[which], rtol=1e-6)


@pytest.mark.parametrize("lhs,rhs", [(C, D), (R, D), (C, R), (D, R)])
def test_maximum_of_mixed_stypes_falls_back(lhs, rhs):
    a, b = nd.array(A).tostype(lhs), nd.array(B).tostype(rhs)
    with pytest.raises(StorageFallbackError):
        nd._internal._maximum(a, b)
    with mx.config.storage_fallback("silent"):
        out = nd._internal._maximum(a, b)
    # measured with MXNet 1.9.1: fallback, dense result
    assert out.stype == D
    np.testing.assert_array_equal(out.asnumpy(), MEASURED["maximum"])


def test_maximum_shapes_must_match():
    with pytest.raises(InvalidArgumentError, match="one shape"):
        nd._internal._maximum(nd.ones((2, 3)), nd.ones((1, 3)))


# ---------------------------------------------------------------------- unsorted CSR products
def test_elemwise_mul_of_unsorted_csr():
    a = nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [2, 0, 1], [0, 2, 3]), shape=(2, 3),
                             validate=False)
    b = nd.sparse.csr_matrix(([4.0, 5.0, 6.0], [0, 2, 1], [0, 2, 3]), shape=(2, 3),
                             validate=False)
    # measured with MXNet 1.9.1
    np.testing.assert_array_equal(nd.elemwise_mul(a, a).asnumpy(), [[4, 0, 1], [0, 9, 0]])
    np.testing.assert_array_equal(nd.elemwise_mul(a, b).asnumpy(), [[8, 0, 5], [0, 18, 0]])
    np.testing.assert_array_equal((a * b).asnumpy(), [[8, 0, 5], [0, 18, 0]])


def test_elemwise_mul_of_unsorted_row_sparse():
    r = nd.sparse.row_sparse_array((np.array([[1.0, 1.0], [2.0, 2.0]]), np.array([1, 0])),
                                   shape=(3, 2), validate=False)
    out = nd.elemwise_mul(r, r)
    # by hand: row 0 holds 2s, row 1 holds 1s
    assert out.stype == R
    out.check_format()
    np.testing.assert_array_equal(out.asnumpy(), [[4, 4], [1, 1], [0, 0]])


# ---------------------------------------------------------------------- poles and zeros
X = [0.0, -0.0, 1.0, -1.0, -2.0, 8.0]
# measured with MXNet 1.9.1: (values, gradients) at X
POLES = {
    "cbrt": ([0.0, -0.0, 1.0, -1.0, -1.2599210739135742, 2.0],
             [math.inf, math.inf, 0.3333333432674408, 0.3333333432674408, 0.2099868357181549,
              0.0833333358168602]),
    "rcbrt": ([math.inf, -math.inf, 1.0, -1.0, -0.7937005162239075, 0.5],
              [-math.inf, -math.inf, -0.3333333432674408, -0.3333333432674408,
               -0.13228341937065125, -0.02083333395421505]),
    "gamma": ([math.inf, -math.inf, 1.0, math.nan, math.nan, 5040.0],
              [math.inf, -math.inf, -0.5772156715393066, math.nan, math.nan, 10158.833984375]),
    "gammaln": ([math.inf, math.inf, 0.0, math.inf, math.inf, 8.525161743164062],
                [math.inf, math.inf, -0.5772156715393066, math.inf, math.inf,
                 2.015641689300537]),
}


@pytest.mark.parametrize("name", sorted(POLES))
def test_values_and_gradients_at_poles(name):
    values, grads = _grad(getattr(nd, name), X)
    want_v, want_g = POLES[name]
    np.testing.assert_allclose(values, want_v, rtol=1e-6, equal_nan=True)
    np.testing.assert_array_equal(np.signbit(values[:2]), np.signbit(want_v[:2]))
    np.testing.assert_allclose(grads, want_g, rtol=1e-6, equal_nan=True)


def test_gamma_of_negative_non_integers():
    values, grads = _grad(nd.gamma, [-0.5, -1.5, -2.5, 0.5, 3.3])
    # measured with MXNet 1.9.1
    np.testing.assert_allclose(values, [-3.544908, 2.3632717, -0.9453086, 1.7724538, 2.6834376],
                               rtol=1e-6)
    np.testing.assert_allclose(grads, [-0.1293533891439438, 1.6617505550384521,
                                       -1.0428236722946167, -3.480232000350952,
                                       2.7768819332122803], rtol=1e-5)
    _, grads = _grad(nd.gammaln, [-0.5, -1.5, -2.5, 0.5, 3.3])
    np.testing.assert_allclose(grads, [0.03648991510272026, 0.7031567692756653,
                                       1.1031568050384521, -1.9635107517242432,
                                       1.0348225831985474], rtol=1e-5)


@pytest.mark.parametrize("stype", [C, R])
def test_cbrt_gradient_of_sparse_input_at_zero(stype):
    # the stored values of a sparse input follow the same rule (explicit zeros included)
    x = nd.array([[0.0, 8.0], [0.0, 0.0]]).tostype(stype)
    y = nd.cbrt(x)
    assert y.stype == stype
    np.testing.assert_allclose(y.asnumpy(), [[0.0, 2.0], [0.0, 0.0]])


# ---------------------------------------------------------------------- plain numbers
@pytest.mark.parametrize("fn,args,expected", [
    # measured with MXNet 1.9.1: a Python number of this type and value
    (nd.power, (0.9, 3), 0.7290000000000001), (nd.power, (2, 3), 8), (nd.power, (2.0, 3), 8.0),
    (nd.maximum, (0.9, 3), 3), (nd.maximum, (2.0, 3), 3), (nd.maximum, (2, 3), 3),
    (nd.minimum, (0.9, 3), 0.9), (nd.minimum, (2.0, 3), 2.0), (nd.minimum, (2, 3), 2),
    (nd.add, (0.9, 3), 3.9), (nd.subtract, (2, 3), -1), (nd.multiply, (2.0, 3), 6.0),
    (nd.divide, (2, 3), 0.6666666666666666), (nd.modulo, (2, 3), 2), (nd.modulo, (0.9, 3), 0.9),
    (nd.equal, (2.0, 3), 0), (nd.not_equal, (2, 3), 1), (nd.greater, (0.9, 3), 0),
    (nd.greater_equal, (2, 3), 0), (nd.lesser, (2, 3), 1), (nd.lesser_equal, (2.0, 3), 1),
    (nd.logical_and, (0.9, 3), 1), (nd.logical_or, (2, 3), 1), (nd.logical_xor, (2, 3), 0),
    (nd.hypot, (3, 4), 5.0),  # not in MXNet's nd; math.hypot
])
def test_numbers_give_python_numbers(fn, args, expected):
    got = fn(*args)
    assert type(got) is type(expected)
    assert got == expected


def test_number_with_array_still_gives_array():
    np.testing.assert_array_equal(nd.hypot(nd.array([3.0, 0.0]), 4).asnumpy(), [5.0, 4.0])
    np.testing.assert_array_equal(nd.logical_and(nd.array([0.0, 2.0]), 3).asnumpy(), [0, 1])


# ---------------------------------------------------------------------- int slice bounds
X12 = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("call,expected", [
    # measured with MXNet 1.9.1
    (lambda x: nd.crop(x, begin=1, end=3), X12[1:3]),
    (lambda x: nd.slice(x, begin=1, end=3), X12[1:3]),
    (lambda x: nd.slice(x, begin=0, end=3, step=2), X12[0:3:2]),
    (lambda x: x.slice(begin=1, end=3), X12[1:3]),
    (lambda x: nd.slice(x, begin=(None, 1), end=(None, 3)), X12[:, 1:3]),
])
def test_slice_takes_ints(call, expected):
    np.testing.assert_array_equal(call(nd.array(X12)).asnumpy(), expected)


def test_slice_of_csr_takes_ints():
    out = nd.slice(nd.array(X12).tostype(C), begin=1, end=3)
    # measured with MXNet 1.9.1: CSR
    assert out.stype == C
    np.testing.assert_array_equal(out.asnumpy(), X12[1:3])


def test_slice_bounds_must_pair():
    with pytest.raises(InvalidArgumentError, match="one length"):
        nd.slice(nd.array(X12), begin=(0, 1), end=(2,))


# ---------------------------------------------------------------------- float ids
RSP = np.arange(12, dtype=np.float32).reshape(4, 3)


@pytest.mark.parametrize("ids,rows", [
    ([0.7, 2.9], [0, 2]),    # measured with MXNet 1.9.1: truncation towards zero
    ([-0.5, 1.2], [0, 1]),   # measured with MXNet 1.9.1
    ([2.9, 0.2], [0, 2]),    # MXNet keeps [2, 0] (unsorted); sparsenet sorts (differences.md)
    ([1.9, 1.2], [1]),       # MXNet keeps [1, 1]; sparsenet de-duplicates
])
def test_retain_truncates_float_ids(ids, rows):
    out = nd.sparse.retain(nd.array(RSP).tostype(R), nd.array(ids))
    np.testing.assert_array_equal(out.indices.asnumpy(), rows)
    keep = np.zeros(4, bool)
    keep[rows] = True
    np.testing.assert_array_equal(out.asnumpy(), np.where(keep[:, None], RSP, 0))


@pytest.mark.parametrize("ids", [[-1.5], [4.0], [float("nan")]])
def test_retain_rejects_ids_out_of_range(ids):
    with pytest.raises(IndexError, match="out of range"):
        nd.sparse.retain(nd.array(RSP).tostype(R), nd.array(ids))


@pytest.mark.parametrize("stype,ids,mode,rows", [
    # measured with MXNet 1.9.1
    (D, [0.7, 2.9, 1.2], "clip", [0, 2, 1]),
    (C, [0.7, 2.9, 1.2], "clip", [0, 2, 1]),
    (D, [-0.5, -1.5, 3.9], "clip", [0, 0, 3]),
    (D, [-0.5, -1.5, 4.5, -4.7], "wrap", [0, 3, 0, 0]),
])
def test_take_truncates_float_ids(stype, ids, mode, rows):
    out = nd.take(nd.array(RSP).tostype(stype), nd.array(ids), mode=mode)
    assert out.stype == stype
    np.testing.assert_array_equal(out.asnumpy(), RSP[rows])

"""NDArray's fluent methods: MXNet 1.9.1's list, and each new method's values.

Expected values were measured with MXNet 1.9.1 unless a comment says otherwise.
"""
import math

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import InvalidArgumentError

nd = mx.nd
D, C, R = "default", "csr", "row_sparse"

# measured with MXNet 1.9.1: [m for m in dir(mx.nd.NDArray) if not m.startswith('_')]
# (CSRNDArray and RowSparseNDArray have all of them too)
MXNET_METHODS = [
    'T', 'abs', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctanh', 'argmax',
    'argmax_channel', 'argmin', 'argsort', 'as_in_context', 'as_nd_ndarray', 'as_np_ndarray',
    'asnumpy', 'asscalar', 'astype', 'attach_grad', 'backward', 'broadcast_axes',
    'broadcast_like', 'broadcast_to', 'cbrt', 'ceil', 'clip', 'context', 'copy', 'copyto',
    'cos', 'cosh', 'ctx', 'degrees', 'depth_to_space', 'detach', 'diag', 'dtype', 'exp',
    'expand_dims', 'expm1', 'fix', 'flatten', 'flip', 'floor', 'grad', 'handle', 'log', 'log10',
    'log1p', 'log2', 'log_softmax', 'max', 'mean', 'min', 'nanprod', 'nansum', 'ndim', 'norm',
    'one_hot', 'ones_like', 'pad', 'pick', 'prod', 'radians', 'rcbrt', 'reciprocal', 'relu',
    'repeat', 'reshape', 'reshape_like', 'rint', 'round', 'rsqrt', 'shape', 'shape_array',
    'sigmoid', 'sign', 'sin', 'sinh', 'size', 'size_array', 'slice', 'slice_assign',
    'slice_assign_scalar', 'slice_axis', 'slice_like', 'softmax', 'softmin', 'sort',
    'space_to_depth', 'split', 'split_v2', 'sqrt', 'square', 'squeeze', 'stype', 'sum',
    'swapaxes', 'take', 'tan', 'tanh', 'tile', 'to_dlpack_for_read', 'to_dlpack_for_write',
    'topk', 'tostype', 'transpose', 'trunc', 'wait_to_read', 'writable', 'zeros_like']
# MXNet's NumPy-interface conversions: sparsenet has no mx.np arrays
NOT_PROVIDED = {"as_nd_ndarray", "as_np_ndarray"}


@pytest.mark.parametrize("cls", [nd.NDArray, nd.sparse.CSRNDArray, nd.sparse.RowSparseNDArray])
def test_every_mxnet_method_exists(cls):
    missing = [m for m in MXNET_METHODS if m not in NOT_PROVIDED and not hasattr(cls, m)]
    assert not missing
    assert hasattr(cls, "_fresh_grad")


X = [0.1, 0.5, -0.7, 1.5, -2.5]
ELEMENTWISE = {  # measured with MXNet 1.9.1 at X (log10 and log2 at |X|)
    "rint": [0.0, 0.0, -1.0, 1.0, -3.0],
    "fix": [0.0, 0.0, -0.0, 1.0, -2.0],
    "cbrt": [0.46415889263153076, 0.7937005162239075, -0.8879039883613586, 1.1447142362594604,
             -1.3572088479995728],
    "rcbrt": [2.1544346809387207, 1.2599210739135742, -1.1262478828430176, 0.8735804557800293,
              -0.7368062734603882],
    "log10": [-1.0, -0.3010300099849701, -0.15490198135375977, 0.1760912537574768,
              0.3979400098323822],
    "log2": [-3.321928024291992, -1.0, -0.5145732164382935, 0.5849624872207642,
             1.3219281435012817],
    "degrees": [5.729577541351318, 28.64788818359375, -40.1070442199707, 85.94366455078125,
                -143.23944091796875],
    "radians": [0.001745329238474369, 0.008726646192371845, -0.012217304669320583,
                0.02617993950843811, -0.04363323003053665],
    "tan": [0.10033467411994934, 0.5463024973869324, -0.8422883749008179, 14.101420402526855,
            0.7470223307609558],
    "arcsin": [0.1001674234867096, 0.5235987901687622, -0.7753974795341492, math.nan, math.nan],
    "arccos": [1.4706288576126099, 1.0471975803375244, 2.346193790435791, math.nan, math.nan],
    "arctan": [0.09966865181922913, 0.46364760398864746, -0.6107259392738342,
               0.9827937483787537, -1.1902899742126465],
    "sinh": [0.10016675293445587, 0.5210952758789062, -0.758583664894104, 2.129279375076294,
             -6.050204753875732],
    "cosh": [1.0050041675567627, 1.1276259422302246, 1.2551690340042114, 2.352409601211548,
             6.132289409637451],
    "arcsinh": [0.09983407706022263, 0.4812118411064148, -0.6526665687561035, 1.19476318359375,
                -1.6472312211990356],
    "arctanh": [0.10033534467220306, 0.5493061542510986, -0.8673005104064941, math.nan,
                math.nan],
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_methods(name):
    x = nd.array(np.abs(X) if name in ("log10", "log2") else X)
    got = getattr(x, name)().asnumpy()
    np.testing.assert_allclose(got, ELEMENTWISE[name], rtol=1e-6, atol=1e-7, equal_nan=True)
    want = np.asarray(ELEMENTWISE[name])
    finite = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[finite]), np.signbit(want[finite]))  # fix: -0.0


def test_rint_halves_go_down():
    # measured with MXNet 1.9.1 (float32 and float64 alike): n.5 -> n, -n.5 -> -n-1
    for dtype in ("float32", "float64"):
        x = nd.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4, -2.6, 3.5], dtype=dtype)
        np.testing.assert_array_equal(x.rint().asnumpy(),
                                      [-3, -2, -1, 0, 1, 2, 2, -3, 3])


def test_arccosh_method():
    np.testing.assert_allclose(nd.array([1.5, 2.0]).arccosh().asnumpy(),
                               [0.9624236822128296, 1.316957950592041], rtol=1e-6)


@pytest.mark.parametrize("stype", [C, R])
def test_zero_preserving_methods_keep_sparse(stype):
    x = nd.array([[0.0, 0.5], [0.0, 0.0]]).tostype(stype)
    # measured with MXNet 1.9.1 (csr): tan and rint keep the storage type
    for m in ("tan", "rint", "fix", "sinh", "arcsin", "degrees"):
        assert getattr(x, m)().stype == stype


def test_reductions_and_softmin():
    y = nd.array([[1.0, math.nan, 3.0], [2.0, 4.0, math.nan]])
    # measured with MXNet 1.9.1
    np.testing.assert_array_equal(y.nansum(axis=1).asnumpy(), [4.0, 6.0])
    np.testing.assert_array_equal(y.nanprod().asnumpy(), [24.0])
    np.testing.assert_array_equal(nd.array([[1, 5, 2], [7, 0, 1]]).argmax_channel().asnumpy(),
                                  [1.0, 0.0])
    x = nd.arange(6).reshape((2, 3))
    np.testing.assert_allclose(x.softmin(axis=1).asnumpy(),
                               [[0.6652409434318542, 0.2447284758090973, 0.09003057330846786]] * 2,
                               rtol=1e-6)
    np.testing.assert_allclose(nd.array([[1.0, 2.0, 4.0]]).softmin(temperature=2).asnumpy(),
                               [[0.546549379825592, 0.3314989507198334, 0.12195165455341339]],
                               rtol=1e-6)
    assert nd.softmin(x, dtype="float64").dtype == np.float64


def test_shape_methods():
    x = nd.arange(6).reshape((2, 3))
    # measured with MXNet 1.9.1
    np.testing.assert_array_equal(x.flip(axis=1).asnumpy(), [[2, 1, 0], [5, 4, 3]])
    assert nd.ones((1, 3)).broadcast_axes(axis=0, size=2).shape == (2, 3)
    np.testing.assert_array_equal(
        nd.arange(12).reshape((3, 4)).slice_like(nd.zeros((2, 2)), axes=(1,)).asnumpy(),
        [[0, 1], [4, 5], [8, 9]])
    np.testing.assert_array_equal(x.slice(begin=(0, 1), end=(2, 3)).asnumpy(), [[1, 2], [4, 5]])


@pytest.mark.parametrize("method,args,shape", [
    ("squeeze", (), (3,)), ("flatten", (), (2, 3)), ("expand_dims", (0,), (1, 2, 1, 3))])
def test_inplace_views_and_copies(method, args, shape):
    # measured with MXNet 1.9.1: inplace=True shares the storage, the default copies
    src = (1, 3, 1) if method == "squeeze" else (2, 1, 3)
    x = nd.zeros(src)
    view = getattr(x, method)(*args, inplace=True)
    assert view.shape == shape
    view[:] = 5
    assert float(x.asnumpy().min()) == 5.0
    copy = getattr(x, method)(*args)
    copy[:] = 7
    assert float(x.asnumpy().max()) == 5.0
    assert getattr(nd, method)(x, *args).shape == shape


def test_squeeze_axis_checks_size():
    assert nd.zeros((1, 3, 1)).squeeze(axis=0, inplace=True).shape == (3, 1)
    with pytest.raises(InvalidArgumentError, match="axis 1 has size 3"):
        nd.zeros((1, 3, 1)).squeeze(axis=1)


def test_inplace_view_records_gradients():
    x = nd.ones((1, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = (x.squeeze(inplace=True) * nd.array([1.0, 2.0, 3.0])).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[1.0, 2.0, 3.0]])


def test_slice_assign_scalar_in_place():
    q = nd.zeros((2, 3))
    r = q.slice_assign_scalar(4, (0, 1), (2, 3), ())
    # measured with MXNet 1.9.1: returns self, region set
    assert r is q
    np.testing.assert_array_equal(q.asnumpy(), [[0, 4, 4], [0, 4, 4]])
    q.slice_assign_scalar(1, (0,), (2,), (2,))
    np.testing.assert_array_equal(q.asnumpy(), [[1, 1, 1], [0, 4, 4]])


def test_shape_and_size_arrays():
    x = nd.arange(6).reshape((2, 3))
    # measured with MXNet 1.9.1: int64
    for a in (x, x.tostype(C), x.tostype(R)):  # sparse: MXNet falls back, sparsenet reads shape
        s, n = a.shape_array(), a.size_array()
        assert s.dtype == np.int64 and n.dtype == np.int64
        np.testing.assert_array_equal(s.asnumpy(), [2, 3])
        np.testing.assert_array_equal(n.asnumpy(), [6])


def test_diag():
    x = nd.arange(6).reshape((2, 3))
    # measured with MXNet 1.9.1
    np.testing.assert_array_equal(x.diag().asnumpy(), [0, 4])
    np.testing.assert_array_equal(x.diag(k=1).asnumpy(), [1, 5])
    np.testing.assert_array_equal(nd.diag(x, k=-1).asnumpy(), [3])
    np.testing.assert_array_equal(nd.array([1, 2]).diag(k=1).asnumpy(),
                                  [[0, 1, 0], [0, 0, 2], [0, 0, 0]])
    np.testing.assert_array_equal(nd.arange(3).diag(k=-1).asnumpy(),
                                  [[0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 2, 0]])
    y = nd.arange(24).reshape((2, 3, 4))
    np.testing.assert_array_equal(y.diag().asnumpy(), [[0, 16], [1, 17], [2, 18], [3, 19]])
    np.testing.assert_array_equal(y.diag(k=1, axis1=0, axis2=2).asnumpy(),
                                  [[1, 14], [5, 18], [9, 22]])
    np.testing.assert_array_equal(y.diag(axis1=1, axis2=2).asnumpy(),
                                  [[0, 5, 10], [12, 17, 22]])
    np.testing.assert_array_equal(y.diag(axis1=-1, axis2=-2).asnumpy(),
                                  [[0, 5, 10], [12, 17, 22]])
    with pytest.raises(InvalidArgumentError, match="does not exist"):
        x.diag(k=5)  # measured: MXNet raises "Diagonal does not exist"


def test_depth_and_space():
    y = nd.arange(16).reshape((1, 4, 2, 2))
    # measured with MXNet 1.9.1
    d = y.depth_to_space(2)
    assert d.shape == (1, 1, 4, 4)
    np.testing.assert_array_equal(d.asnumpy().ravel(),
                                  [0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15])
    z = nd.arange(16).reshape((1, 1, 4, 4))
    s = z.space_to_depth(2)
    assert s.shape == (1, 4, 2, 2)
    np.testing.assert_array_equal(s.asnumpy().ravel(),
                                  [0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15])
    np.testing.assert_array_equal(s.depth_to_space(2).asnumpy(), z.asnumpy())
    with pytest.raises(InvalidArgumentError, match="multiple of block_size"):
        nd.depth_to_space(nd.ones((1, 3, 2, 2)), 2)
    with pytest.raises(InvalidArgumentError, match="4-D"):
        nd.depth_to_space(nd.ones((4, 2, 2)), 2)
    with pytest.raises(InvalidArgumentError, match="multiples of block_size"):
        nd.space_to_depth(nd.ones((1, 1, 3, 2)), 2)


def test_split_v2():
    # measured with MXNet 1.9.1
    parts = nd.arange(10).split_v2((2, 5), axis=0)
    assert [p.asnumpy().tolist() for p in parts] == [[0, 1], [2, 3, 4], [5, 6, 7, 8, 9]]
    assert [p.shape for p in nd.split_v2(nd.arange(10), (3,))] == [(3,), (7,)]
    assert [p.shape for p in nd.split_v2(nd.arange(10), (0, 3))] == [(0,), (3,), (7,)]
    assert nd.split_v2(nd.arange(4), 1).shape == (4,)
    assert [p.shape for p in nd.arange(12).reshape((2, 6)).split_v2(3, axis=1)] == [(2, 2)] * 3
    assert [p.shape for p in nd.arange(8).reshape((2, 4)).split_v2(2, axis=-1)] == [(2, 2)] * 2
    assert [p.shape for p in nd.arange(8).reshape((2, 4)).split_v2(2, axis=0,
                                                                    squeeze_axis=True)] == [(4,)] * 2
    with pytest.raises(InvalidArgumentError, match="equal parts"):
        nd.split_v2(nd.arange(10), 3)  # measured: MXNet raises too


def test_split_v2_symbol_outputs():
    s = mx.sym.split_v2(mx.sym.var("x"), indices_or_sections=(1, 3))
    assert len(s.list_outputs()) == 3


def test_pad():
    p = nd.arange(8).reshape((1, 1, 2, 4))
    # measured with MXNet 1.9.1
    np.testing.assert_array_equal(
        p.pad(mode="constant", pad_width=(0, 0, 0, 0, 1, 1, 2, 0), constant_value=9).asnumpy(),
        [[[[9, 9, 9, 9, 9, 9], [9, 9, 0, 1, 2, 3], [9, 9, 4, 5, 6, 7], [9, 9, 9, 9, 9, 9]]]])
    np.testing.assert_array_equal(
        p.pad(mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 2, 0)).asnumpy(),
        [[[[0, 0, 0, 1, 2, 3], [0, 0, 0, 1, 2, 3], [4, 4, 4, 5, 6, 7], [4, 4, 4, 5, 6, 7]]]])
    np.testing.assert_array_equal(
        p.pad(mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 2, 0)).asnumpy(),
        [[[[6, 5, 4, 5, 6, 7], [2, 1, 0, 1, 2, 3], [6, 5, 4, 5, 6, 7], [2, 1, 0, 1, 2, 3]]]])

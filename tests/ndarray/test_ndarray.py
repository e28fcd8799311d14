"""The dense NDArray: creation, properties, conversion, indexing, operators, reductions."""
import numpy as np
import pytest
import torch

import sparsenet as mx


def test_creation_functions_match_numpy():
    assert mx.nd.zeros((2, 3)).asnumpy().tolist() == np.zeros((2, 3)).tolist()
    assert mx.nd.ones(4).shape == (4,)
    np.testing.assert_array_equal(mx.nd.full((2, 2), 7).asnumpy(), np.full((2, 2), 7.0))
    np.testing.assert_array_equal(mx.nd.arange(2, 11, 3).asnumpy(), np.arange(2, 11, 3))
    np.testing.assert_array_equal(mx.nd.arange(3, repeat=2).asnumpy(), [0, 0, 1, 1, 2, 2])
    np.testing.assert_allclose(mx.nd.linspace(0, 1, 5).asnumpy(), np.linspace(0, 1, 5))
    np.testing.assert_array_equal(mx.nd.eye(3, 4, 1).asnumpy(), np.eye(3, 4, 1))
    assert mx.nd.empty((2, 5)).shape == (2, 5)
    x = mx.nd.array([[1, 2], [3, 4]])
    np.testing.assert_array_equal(mx.nd.zeros_like(x).asnumpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(mx.nd.ones_like(x).asnumpy(), np.ones((2, 2)))


@pytest.mark.parametrize("source,dtype", [
    ([1, 2], np.float32), (np.array([1, 2], dtype=np.int64), np.float32),
    (np.array([1.5], dtype=np.float64), np.float32)])
def test_array_default_dtype_is_float32_like_mxnet(source, dtype):
    assert mx.nd.array(source).dtype == dtype


def test_array_dtype_and_copy_semantics():
    src = np.arange(4.0)
    a = mx.nd.array(src, dtype="float64")
    assert a.dtype == np.float64
    src[0] = 100
    assert a.asnumpy()[0] == 0  # a copy, not a view
    b = mx.nd.array(a)
    assert b.dtype == np.float64
    b[0] = 5
    assert a.asnumpy()[0] == 0
    for dt in ("float16", "float32", "float64", "uint8", "int8", "int32", "int64"):
        assert mx.nd.zeros((2,), dtype=dt).dtype == np.dtype(dt).type


def test_properties():
    a = mx.nd.zeros((2, 3, 4))
    assert (a.shape, a.size, a.ndim, a.stype) == ((2, 3, 4), 24, 3, "default")
    assert a.context == mx.cpu() and a.ctx == mx.cpu(0)
    assert a.T.shape == (4, 3, 2)
    assert len(a) == 2
    assert a.nbytes == 96
    assert repr(mx.nd.array([1, 2])) == "\n[1. 2.]\n<NDArray 2 @cpu(0)>"


def test_asscalar_and_bool():
    assert mx.nd.array([2.5]).asscalar() == 2.5
    with pytest.raises(ValueError, match="size 1"):
        mx.nd.ones((2,)).asscalar()
    assert bool(mx.nd.array([1.0])) is True
    with pytest.raises(ValueError, match="ambiguous"):
        bool(mx.nd.ones((2,)))


def test_astype_copy_copyto_context():
    a = mx.nd.array([1.7, -2.2])
    np.testing.assert_array_equal(a.astype("int32").asnumpy(), np.array([1, -2], dtype=np.int32))
    assert a.astype("float32", copy=False) is a
    b = a.copy()
    b[:] = 0
    assert a.asnumpy()[0] == np.float32(1.7)
    dst = mx.nd.zeros((2,), dtype="float64")
    assert a.copyto(dst) is dst
    np.testing.assert_allclose(dst.asnumpy(), [1.7, -2.2], rtol=1e-6)
    c = a.copyto(mx.cpu())
    assert c is not a and c.context == mx.cpu()
    assert a.as_in_context(mx.cpu()) is a
    a.wait_to_read()


def test_indexing_views_and_assignment():
    a = mx.nd.arange(12).reshape((3, 4))
    ref = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(a[1].asnumpy(), ref[1])
    np.testing.assert_array_equal(a[1:3].asnumpy(), ref[1:3])
    np.testing.assert_array_equal(a[:, 2].asnumpy(), ref[:, 2])
    assert a[1, 2].shape == (1,)
    np.testing.assert_array_equal(a[mx.nd.array([2, 0])].asnumpy(), ref[[2, 0]])
    np.testing.assert_array_equal(a[np.array([0, 2])].asnumpy(), ref[[0, 2]])
    view = a[0:1]
    view[:] = 9  # basic slicing is a view, as in MXNet
    ref[0:1] = 9
    np.testing.assert_array_equal(a.asnumpy(), ref)
    a[1, 1] = -1
    a[2] = mx.nd.array([1, 2, 3, 4])
    a[:, 0] = np.array([7, 7, 7])
    ref[1, 1] = -1
    ref[2] = [1, 2, 3, 4]
    ref[:, 0] = 7
    np.testing.assert_array_equal(a.asnumpy(), ref)


def test_dense_assignment_from_sparse_is_allowed():
    d = mx.nd.zeros((2, 3))
    d[:] = mx.nd.sparse.csr_matrix(([1.0], [2], [0, 0, 1]), shape=(2, 3))
    np.testing.assert_array_equal(d.asnumpy(), [[0, 0, 0], [0, 0, 1]])


def test_reshape_codes_and_view():
    a = mx.nd.zeros((2, 3, 4))
    assert a.reshape((0, -1)).shape == (2, 12)
    assert a.reshape(6, 4).shape == (6, 4)
    assert a.reshape((-2,)).shape == (2, 3, 4)
    assert a.reshape((-3, 4)).shape == (6, 4)
    assert a.reshape((-4, 1, 2, -2)).shape == (1, 2, 3, 4)
    assert a.reshape(shape=(-1, 0), reverse=True).shape == (6, 4)
    r = a.reshape((24,))
    r[0] = 5
    assert a.asnumpy()[0, 0, 0] == 5
    with pytest.raises(ValueError, match="cannot reshape"):
        a.reshape((5, 5))


def test_python_operators_against_numpy():
    x = np.random.uniform(0.5, 2, size=(3, 4)).astype(np.float32)
    y = np.random.uniform(0.5, 2, size=(3, 4)).astype(np.float32)
    v = np.random.uniform(0.5, 2, size=(4,)).astype(np.float32)
    a, b, c = mx.nd.array(x), mx.nd.array(y), mx.nd.array(v)
    cases = [(a + b, x + y), (a - b, x - y), (a * b, x * y), (a / b, x / y), (a ** b, x ** y),
             (a % b, np.mod(x, y)), (a + c, x + v), (a * 2, x * 2), (2 * a, 2 * x),
             (a - 1, x - 1), (1 - a, 1 - x), (a / 4, x / 4), (4 / a, 4 / x), (a ** 2, x ** 2),
             (2 ** a, 2 ** x), (-a, -x), (abs(-a), x), (a > b, x > y), (a >= 1, x >= 1),
             (a < c, x < v), (a <= b, x <= y), (a == a, x == x), (a != b, x != y),
             (a % 0.7, np.mod(x, 0.7))]
    for got, exp in cases:
        assert got.stype == "default"
        np.testing.assert_allclose(got.asnumpy(), exp.astype(np.float32), rtol=1e-5)
        assert got.dtype == np.float32


def test_inplace_operators():
    a = mx.nd.ones((2, 2))
    orig = a
    a += 1
    a *= mx.nd.array([[2, 3], [4, 5]])
    a -= 1
    a /= 2
    assert a is orig
    np.testing.assert_allclose(a.asnumpy(), [[1.5, 2.5], [3.5, 4.5]])


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), ((0, 2), False),
                                           (-1, True)])
def test_reductions_against_numpy(name, axis, keepdims):
    x = np.random.uniform(-1, 1, size=(2, 3, 4)).astype(np.float32)
    got = getattr(mx.nd.array(x), name)(axis=axis, keepdims=keepdims)
    exp = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    exp = np.asarray(exp).reshape(1) if np.ndim(exp) == 0 else exp
    np.testing.assert_allclose(got.asnumpy(), exp, rtol=1e-5, atol=1e-6)


def test_reduction_exclude_and_norm():
    x = np.random.uniform(-1, 1, size=(2, 3, 4)).astype(np.float32)
    a = mx.nd.array(x)
    np.testing.assert_allclose(a.sum(axis=1, exclude=True).asnumpy(), x.sum(axis=(0, 2)),
                               rtol=1e-5)
    np.testing.assert_allclose(a.norm().asnumpy(), [np.linalg.norm(x)], rtol=1e-5)
    np.testing.assert_allclose(mx.nd.norm(a, ord=1, axis=2).asnumpy(),
                               np.abs(x).sum(axis=2), rtol=1e-5)
    with pytest.raises(ValueError, match="ord must be 1 or 2"):
        mx.nd.norm(a, ord=3)


def test_dot_dense_against_numpy():
    x = np.random.randn(3, 4).astype(np.float32)
    y = np.random.randn(4, 5).astype(np.float32)
    a, b = mx.nd.array(x), mx.nd.array(y)
    np.testing.assert_allclose(mx.nd.dot(a, b).asnumpy(), x @ y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mx.nd.dot(b, a, transpose_a=True, transpose_b=True).asnumpy(),
                               (x @ y).T, rtol=1e-5, atol=1e-5)
    z = np.random.randn(2, 3, 4).astype(np.float32)
    np.testing.assert_allclose(mx.nd.dot(mx.nd.array(z), b).asnumpy(),
                               np.tensordot(z, y, axes=([2], [0])), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="shape mismatch"):
        mx.nd.dot(a, a)


def test_elementwise_math_against_numpy():
    x = np.random.uniform(0.1, 0.9, size=(3, 4)).astype(np.float32)
    a = mx.nd.array(x)
    pairs = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "square": np.square,
             "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "tanh": np.tanh, "relu": lambda v: v,
             "abs": np.abs, "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
             "arcsin": np.arcsin, "log1p": np.log1p, "expm1": np.expm1, "cos": np.cos,
             "reciprocal": np.reciprocal, "rsqrt": lambda v: 1 / np.sqrt(v)}
    for name, ref in pairs.items():
        np.testing.assert_allclose(getattr(mx.nd, name)(a).asnumpy(), ref(x), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
    np.testing.assert_allclose(mx.nd.softmax(a).asnumpy(),
                               np.exp(x) / np.exp(x).sum(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(mx.nd.clip(a, 0.3, 0.6).asnumpy(), np.clip(x, 0.3, 0.6))
    np.testing.assert_allclose(mx.nd.maximum(a, 0.5).asnumpy(), np.maximum(x, 0.5))
    np.testing.assert_allclose(mx.nd.round(mx.nd.array([-2.5, 2.5, 0.4])).asnumpy(),
                               [-3, 3, 0])


def test_shape_and_indexing_ops_against_numpy():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    a = mx.nd.array(x)
    np.testing.assert_array_equal(mx.nd.transpose(a, axes=(2, 0, 1)).asnumpy(),
                                  x.transpose(2, 0, 1))
    np.testing.assert_array_equal(a.expand_dims(1).asnumpy(), x[:, None])
    np.testing.assert_array_equal(mx.nd.flatten(a).asnumpy(), x.reshape(2, -1))
    np.testing.assert_array_equal(mx.nd.tile(a, reps=(2, 1, 1)).asnumpy(), np.tile(x, (2, 1, 1)))
    np.testing.assert_array_equal(mx.nd.repeat(a, repeats=2, axis=1).asnumpy(),
                                  np.repeat(x, 2, axis=1))
    np.testing.assert_array_equal(mx.nd.slice_axis(a, axis=2, begin=1, end=3).asnumpy(),
                                  x[:, :, 1:3])
    np.testing.assert_array_equal(mx.nd.slice(a, begin=(0, 1), end=(2, 3)).asnumpy(), x[:, 1:3])
    np.testing.assert_array_equal(mx.nd.take(a, mx.nd.array([1, 0, 1]), axis=1).asnumpy(),
                                  np.take(x, [1, 0, 1], axis=1))
    np.testing.assert_array_equal(mx.nd.take(a, mx.nd.array([5]), mode="clip").asnumpy(),
                                  x[[1]])
    np.testing.assert_array_equal(mx.nd.take(a, mx.nd.array([3]), mode="wrap").asnumpy(),
                                  x[[1]])
    with pytest.raises(IndexError, match="out of range"):
        mx.nd.take(a, mx.nd.array([3]), mode="raise")
    np.testing.assert_array_equal(mx.nd.concat(a, a, dim=2).asnumpy(),
                                  np.concatenate([x, x], axis=2))
    np.testing.assert_array_equal(mx.nd.stack(a, a, axis=1).asnumpy(), np.stack([x, x], axis=1))
    parts = mx.nd.split(a, num_outputs=3, axis=1, squeeze_axis=True)
    for i, p in enumerate(parts):
        np.testing.assert_array_equal(p.asnumpy(), x[:, i])
    np.testing.assert_array_equal(mx.nd.one_hot(mx.nd.array([2, 0]), depth=3).asnumpy(),
                                  np.eye(3)[[2, 0]])
    np.testing.assert_array_equal(
        mx.nd.pick(mx.nd.array(x[0]), mx.nd.array([0, 3, 1])).asnumpy(), x[0, [0, 1, 2], [0, 3, 1]])
    np.testing.assert_array_equal(mx.nd.where(mx.nd.array([1, 0]), mx.nd.array(x[0, :2]),
                                              mx.nd.array(x[1, :2])).asnumpy(),
                                  np.where([[1], [0]], x[0, :2], x[1, :2]))
    np.testing.assert_array_equal(mx.nd.topk(mx.nd.array([3, 1, 2]), k=2).asnumpy(), [0, 2])
    np.testing.assert_array_equal(mx.nd.argmax(a, axis=2).asnumpy(), x.argmax(axis=2))


def test_operator_errors_are_clear():
    a = mx.nd.ones((2, 3))
    with pytest.raises(ValueError, match=r"shapes must be equal, got \(2, 3\) and \(3,\)"):
        mx.nd.elemwise_add(a, mx.nd.ones((3,)))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        mx.nd.broadcast_add(a, mx.nd.ones((4,)))
    with pytest.raises(TypeError, match="unexpected parameter"):
        mx.nd.sum(a, axes=1)
    with pytest.raises(TypeError, match="must be NDArrays"):
        mx.nd.elemwise_add(a, 3)


def test_interop_torch_numpy_dlpack():
    t = torch.arange(4.0)
    a = mx.nd.from_torch(t)
    t[0] = 10
    assert a.asnumpy()[0] == 10  # zero-copy
    assert a.to_torch() is t
    b = mx.nd.from_dlpack(a)
    assert b.asnumpy()[0] == 10
    n = np.arange(3.0)
    c = mx.nd.from_numpy(n)
    n[1] = 7
    assert c.asnumpy()[1] == 7
    assert np.asarray(c).tolist() == [0.0, 7.0, 2.0]
    assert np.dtype(c) == np.float64  # seed 000's get_nbytes relies on np.dtype(array)


def test_random_seed_reproducible():
    mx.random.seed(7)
    a = mx.random.normal(0, 1, shape=(3,)).asnumpy()
    mx.random.seed(7)
    b = mx.nd.random.normal(0, 1, shape=(3,)).asnumpy()
    np.testing.assert_array_equal(a, b)
    u = mx.nd.random_uniform(2, 3, shape=(1000,)).asnumpy()
    assert u.min() >= 2 and u.max() < 3


def test_context_default_stack():
    assert mx.current_context() == mx.cpu()
    with mx.Context("cpu", 0):
        assert mx.nd.zeros((1,)).context == mx.cpu()
    assert mx.gpu(1).torch_device == torch.device("cuda", 1)
    assert str(mx.gpu(2)) == "gpu(2)"
    with pytest.raises(ValueError, match="unknown device type"):
        mx.Context("tpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_gpu_dense_roundtrip():
    a = mx.nd.array([[1, 2], [3, 4]], ctx=mx.gpu())
    assert a.context == mx.gpu(0)
    b = (a * 2 + 1).sum(axis=1)
    np.testing.assert_array_equal(b.asnumpy(), [7, 15])
    np.testing.assert_array_equal(a.as_in_context(mx.cpu()).asnumpy(), [[1, 2], [3, 4]])


def test_dtype_supports_mxnet_idioms():
    # MXNet 1.9.1 documents NDArray.dtype as "the data type of this array" and its
    # tutorials compare it with NumPy types, pass it on as a dtype argument and read
    # its item size. All of those work on our numpy.dtype value, and so does
    # seed 000's np.dtype(array), which NumPy 2.4 refuses when .dtype is a scalar type
    # (the one documented difference: .dtype.__name__ is .dtype.type.__name__ here).
    a = mx.nd.array([[1, 2], [3, 4]])
    assert a.dtype == np.float32 and a.dtype != np.float64
    assert a.dtype in (np.float16, np.float32)
    assert a.dtype.type is np.float32 and a.dtype.type.__name__ == "float32"
    assert np.dtype(a.dtype).itemsize == 4 and np.dtype(a) == np.float32
    assert np.zeros(2, dtype=a.dtype).dtype == np.float32
    assert mx.nd.zeros((2,), dtype=a.dtype).dtype == np.float32
    assert a.astype(a.dtype).dtype == np.float32
    csr = a.tostype("csr")
    assert csr.indices.dtype == np.int64 and csr.data.dtype == np.float32
    assert csr.indices.dtype.type is np.int64

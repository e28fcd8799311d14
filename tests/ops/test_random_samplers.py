"""Random samplers: MXNet 1.9.1's names, signatures, shapes and dtypes (measured), and the
moments of each distribution (analytic values) with a fixed seed.
"""
import inspect
import math

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import InvalidArgumentError, InvalidArgumentTypeError

nd = mx.nd
R = nd.random
N = 40000


@pytest.fixture(autouse=True)
def _seed():
    mx.random.seed(1234)


# (sampler, parameters as numbers, mean, variance): analytic moments
MOMENTS = [
    (R.uniform, (2.0, 5.0), 3.5, 9.0 / 12),
    (R.normal, (1.0, 2.0), 1.0, 4.0),
    (R.gamma, (2.0, 3.0), 6.0, 18.0),                 # shape alpha, scale beta
    (R.exponential, (2.0,), 2.0, 4.0),               # scale (mean)
    (R.poisson, (3.5,), 3.5, 3.5),
    (R.negative_binomial, (3, 0.4), 4.5, 11.25),     # k (1-p)/p, k (1-p)/p^2
    (R.generalized_negative_binomial, (2.0, 0.5), 2.0, 4.0),  # mu, mu + alpha mu^2
    (R.generalized_negative_binomial, (2.0, 0.0), 2.0, 2.0),  # alpha = 0: Poisson
    (R.randint, (0, 10), 4.5, 99.0 / 12),
]


@pytest.mark.parametrize("sampler,params,mean,var", MOMENTS,
                         ids=[f"{m[0].__name__}{m[1]}" for m in MOMENTS])
def test_moments_of_number_parameters(sampler, params, mean, var):
    x = sampler(*params, shape=(N,)).asnumpy().astype(np.float64)
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / N)
    assert abs(x.var() - var) < 0.06 * var


@pytest.mark.parametrize("sampler,params,mean,var", [
    (R.uniform, ([0.0, 10.0], [1.0, 14.0]), [0.5, 12.0], [1 / 12, 16 / 12]),
    (R.normal, ([0.0, 10.0], [1.0, 3.0]), [0.0, 10.0], [1.0, 9.0]),
    (R.gamma, ([1.0, 4.0], [2.0, 0.5]), [2.0, 2.0], [4.0, 1.0]),
    (R.poisson, ([1.0, 6.0],), [1.0, 6.0], [1.0, 6.0]),
    (R.negative_binomial, ([2.0, 5.0], [0.5, 0.8]), [2.0, 1.25], [4.0, 1.5625]),
    (R.generalized_negative_binomial, ([1.0, 3.0], [1.0, 0.0]), [1.0, 3.0], [2.0, 3.0]),
])
def test_moments_of_array_parameters(sampler, params, mean, var):
    x = sampler(*[nd.array(p) for p in params], shape=(N,)).asnumpy().astype(np.float64)
    assert x.shape == (2, N)
    for row, m, v in zip(x, mean, var):
        assert abs(row.mean() - m) < 5 * math.sqrt(v / N)
        assert abs(row.var() - v) < 0.06 * v


def test_exponential_rate_forms():
    # nd.random.exponential takes the scale (mean); random_exponential/sample_exponential the rate
    assert abs(R.exponential(4.0, shape=(N,)).asnumpy().mean() - 4.0) < 0.15
    assert abs(nd.random_exponential(lam=4.0, shape=(N,)).asnumpy().mean() - 0.25) < 0.01
    x = nd.sample_exponential(nd.array([1.0, 4.0]), shape=(N,)).asnumpy()
    np.testing.assert_allclose(x.mean(axis=1), [1.0, 0.25], rtol=0.04)
    assert abs(R.exponential_like(nd.zeros((N,)), lam=2.0).asnumpy().mean() - 0.5) < 0.02


@pytest.mark.parametrize("call,shape,dtype", [
    # measured with MXNet 1.9.1
    (lambda: R.uniform(), (1,), np.float32),
    (lambda: R.uniform(shape=3, dtype="float64"), (3,), np.float64),
    (lambda: R.uniform(shape=3, dtype="float16"), (3,), np.float16),
    (lambda: R.uniform(nd.array([0, 10]), nd.array([1, 11])), (2,), np.float32),
    (lambda: R.uniform(nd.array([0, 10]), nd.array([1, 11]), shape=3), (2, 3), np.float32),
    (lambda: R.uniform(nd.array([0, 10]), nd.array([1, 11]), shape=(2, 3)), (2, 2, 3),
     np.float32),
    (lambda: R.uniform(nd.array([0, 10], dtype="float64"), nd.array([1, 11], dtype="float64")),
     (2,), np.float32),
    (lambda: R.uniform(nd.array([0, 10]), nd.array([1, 11]), dtype="float64"), (2,),
     np.float64),
    (lambda: R.uniform(shape=[2, 2]), (2, 2), np.float32),
    (lambda: R.normal(0, 1, shape=(2, 2)), (2, 2), np.float32),
    (lambda: R.normal(nd.array([0, 10]), nd.array([1, 1]), shape=2), (2, 2), np.float32),
    (lambda: R.gamma(), (1,), np.float32),
    (lambda: R.gamma(2, 2, shape=2, dtype="float64"), (2,), np.float64),
    (lambda: R.exponential(), (1,), np.float32),
    (lambda: R.poisson(nd.array([1, 2])), (2,), np.float32),
    (lambda: R.poisson(2, shape=2, dtype="float16"), (2,), np.float16),
    (lambda: R.negative_binomial(3, .5, shape=4), (4,), np.float32),
    (lambda: R.generalized_negative_binomial(nd.array([1, 2]), nd.array([.5, .5])), (2,),
     np.float32),
    (lambda: R.randint(0, 5, shape=4), (4,), np.int32),
    (lambda: R.randint(0, 5), (1,), np.int32),
    (lambda: R.randint(0, 5, shape=4, dtype="int64"), (4,), np.int64),
    (lambda: R.randn(2, 3), (2, 3), np.float32),
    (lambda: R.randn(2, dtype="float64"), (2,), np.float64),
    (lambda: R.multinomial(nd.array([0.1, 0.2, 0.7])), (1,), np.int32),
    (lambda: R.multinomial(nd.array([[0.1, 0.2, 0.7], [1, 0, 0]])), (2,), np.int32),
    (lambda: R.multinomial(nd.array([[0.1, 0.2, 0.7], [1, 0, 0]]), shape=3), (2, 3), np.int32),
    (lambda: R.multinomial(nd.array([0.1, 0.2, 0.7]), shape=(2, 2)), (2, 2), np.int32),
    (lambda: R.multinomial(nd.array([0.1, 0.2, 0.7]), dtype="float32"), (1,), np.float32),
    (lambda: R.shuffle(nd.arange(6).reshape((3, 2))), (3, 2), np.float32),
    (lambda: R.shuffle(nd.arange(6, dtype="int32")), (6,), np.int32),
    (lambda: R.uniform_like(nd.zeros((2, 2)), low=5, high=6), (2, 2), np.float32),
    (lambda: R.uniform_like(nd.zeros((2, 2), dtype="float64")), (2, 2), np.float64),
    (lambda: R.normal_like(nd.zeros((2, 2))), (2, 2), np.float32),
    (lambda: R.gamma_like(nd.zeros((2, 2)), alpha=2, beta=3), (2, 2), np.float32),
    (lambda: R.poisson_like(nd.zeros((2, 2)), lam=2), (2, 2), np.float32),
    (lambda: R.negative_binomial_like(nd.zeros((2, 2)), k=2, p=0.3), (2, 2), np.float32),
    (lambda: R.generalized_negative_binomial_like(nd.zeros((2, 2)), mu=2, alpha=0.3), (2, 2),
     np.float32),
    (lambda: nd.uniform(0, 1, (2,)), (2,), np.float32),
    (lambda: nd.normal(shape=(2,)), (2,), np.float32),
    (lambda: nd.random_uniform(shape=(2,)), (2,), np.float32),
    (lambda: nd.sample_uniform(nd.array([0, 1]), nd.array([1, 2]), shape=3), (2, 3), np.float32),
    (lambda: nd.sample_multinomial(nd.array([0.5, 0.5])), (1,), np.int32),
    (lambda: nd.random_randint(0, 3, shape=(2,)), (2,), np.int32),
    (lambda: nd.random_negative_binomial(k=2, p=0.5, shape=(2,)), (2,), np.float32),
    (lambda: nd.random_generalized_negative_binomial(mu=2, alpha=0.5, shape=(2,)), (2,),
     np.float32),
    (lambda: nd.shuffle(nd.arange(4)), (4,), np.float32),
    (lambda: nd._internal._random_gamma(shape=(3,)), (3,), np.float32),
    (lambda: nd._internal._sample_poisson(nd.array([1.0])), (1,), np.float32),
    (lambda: mx.random.normal(0, 1, shape=(3,), ctx=mx.cpu()), (3,), np.float32),
])
def test_shapes_and_dtypes(call, shape, dtype):
    out = call()
    assert out.shape == shape
    assert out.dtype == dtype
    assert out.stype == "default"


def test_values_in_range_and_integral():
    u = R.uniform(2, 3, shape=(1000,)).asnumpy()
    assert u.min() >= 2 and u.max() < 3
    i = R.randint(-3, -1, shape=(1000,)).asnumpy()
    assert set(np.unique(i)) == {-3, -2}  # measured with MXNet 1.9.1: values in [-3, -1)
    for sampler, params in ((R.poisson, (2.0,)), (R.negative_binomial, (2, 0.5)),
                            (R.generalized_negative_binomial, (2.0, 0.5))):
        x = sampler(*params, shape=(1000,)).asnumpy()
        assert x.min() >= 0 and np.all(x == np.round(x))
    assert R.uniform(1, 1, shape=2).asnumpy().tolist() == [1.0, 1.0]  # measured: MXNet too


def test_degenerate_parameters():
    # measured with MXNet 1.9.1: negative_binomial() (k=1, p=1) and k=0 give zeros
    np.testing.assert_array_equal(R.negative_binomial().asnumpy(), [0.0])
    np.testing.assert_array_equal(R.negative_binomial(0, 0.5, shape=2).asnumpy(), [0.0, 0.0])
    np.testing.assert_array_equal(R.generalized_negative_binomial(0.0, 1.0, shape=2).asnumpy(),
                                  [0.0, 0.0])


def test_seed_reproduces_every_sampler():
    def draws():
        return [R.uniform(shape=3), R.normal(shape=3), R.gamma(2, 2, shape=3),
                R.exponential(shape=3), R.poisson(3, shape=3), R.negative_binomial(2, .5, shape=3),
                R.generalized_negative_binomial(2, .5, shape=3), R.randint(0, 9, shape=3),
                R.multinomial(nd.array([0.2, 0.8]), shape=3), R.shuffle(nd.arange(5))]
    mx.random.seed(7)
    first = [a.asnumpy() for a in draws()]
    mx.random.seed(7)
    for a, b in zip(first, draws()):
        np.testing.assert_array_equal(a, b.asnumpy())


def test_out_argument():
    out = nd.zeros((2, 2))
    res = R.uniform(shape=(2, 2), out=out)
    assert res is out
    assert (out.asnumpy() > 0).all()


def test_multinomial_frequencies_and_log_probabilities():
    p = np.array([0.1, 0.2, 0.7])
    x = R.multinomial(nd.array(p), shape=N).asnumpy()
    np.testing.assert_allclose(np.bincount(x, minlength=3) / N, p, atol=0.01)
    # unnormalised weights are normalised (MXNet 1.9.1 silently returns category 0)
    y = R.multinomial(nd.array([1.0, 2.0, 7.0]), shape=N).asnumpy()
    np.testing.assert_allclose(np.bincount(y, minlength=3) / N, p, atol=0.01)
    samples, logp = R.multinomial(nd.array([[0.1, 0.2, 0.7], [1, 0, 0]]), shape=2, get_prob=True)
    assert samples.shape == (2, 2) and logp.shape == (2, 2)
    # the log-probability of each draw (MXNet 1.9.1: -0.35667497 for category 2, 0.0 for p=1)
    table = np.log(np.array([[0.1, 0.2, 0.7], [1.0, 1e-30, 1e-30]]))
    want = np.take_along_axis(table, samples.asnumpy().astype(int), axis=1)
    np.testing.assert_allclose(logp.asnumpy(), want, rtol=1e-6)


def test_multinomial_log_probability_is_differentiable():
    data = nd.array([0.25, 0.75])
    data.attach_grad()
    with mx.autograd.record():
        samples, logp = R.multinomial(data, shape=4, get_prob=True)
        loss = logp.sum()
    loss.backward()
    k = np.bincount(samples.asnumpy(), minlength=2)  # by hand: d/dp_i sum log(p_s / sum p)
    np.testing.assert_allclose(data.grad.asnumpy(), k / np.array([0.25, 0.75]) - 4.0, rtol=1e-5)


def test_shuffle_permutes_the_first_axis():
    x = nd.arange(20).reshape((10, 2))
    y = R.shuffle(x).asnumpy()
    assert sorted(y[:, 0].tolist()) == x.asnumpy()[:, 0].tolist()
    np.testing.assert_array_equal(y[:, 1] - y[:, 0], np.ones(10))
    assert not np.array_equal(y, x.asnumpy())


@pytest.mark.parametrize("stype", ["csr", "row_sparse"])
def test_shuffle_of_sparse_falls_back_like_mxnet(stype):
    x = nd.arange(6).reshape((3, 2)).tostype(stype)
    with pytest.raises(mx.base.StorageFallbackError, match="_shuffle"):
        R.shuffle(x)
    with mx.config.storage_fallback("silent"):
        y = R.shuffle(x)  # measured with MXNet 1.9.1: fallback, dense result
    assert y.stype == "default"
    assert sorted(y.asnumpy()[:, 0].tolist()) == [0.0, 2.0, 4.0]


@pytest.mark.parametrize("call,error,match", [
    # MXNet 1.9.1 raises for these (measured)
    (lambda: R.uniform(shape=3, dtype="int32"), InvalidArgumentError, "dtype must be one of"),
    (lambda: R.randint(0, 5, shape=4, dtype="float32"), InvalidArgumentError, "dtype"),
    (lambda: R.uniform(nd.array([0, 10]), 11), InvalidArgumentTypeError, "all be numbers"),
    (lambda: R.uniform(1, 0, shape=2), InvalidArgumentError, "low must be less"),
    (lambda: R.normal(0, -1, shape=2), InvalidArgumentError, "scale must be positive"),
    (lambda: R.normal(0, 0, shape=2), InvalidArgumentError, "scale must be positive"),
    (lambda: R.exponential(0, shape=2), InvalidArgumentError, "scale must be positive"),
    (lambda: R.exponential(-1, shape=2), InvalidArgumentError, "scale must be positive"),
    (lambda: R.poisson(-1, shape=2), InvalidArgumentError, "lam must be non-negative"),
    (lambda: R.gamma(-1, 1, shape=2), InvalidArgumentError, "alpha must be positive"),
    (lambda: R.gamma(1, 0, shape=2), InvalidArgumentError, "beta must be positive"),
    (lambda: R.negative_binomial(-1, 0.5, shape=2), InvalidArgumentError, "k must be"),
    (lambda: R.generalized_negative_binomial(-1, 0.5, shape=2), InvalidArgumentError, "mu must"),
    (lambda: R.generalized_negative_binomial(1, -0.5, shape=2), InvalidArgumentError, "alpha"),
    (lambda: R.normal(nd.array([0, 10]), nd.array([1, 1, 1])), InvalidArgumentError,
     "one shape"),
    (lambda: R.randint(0.5, 3.7, shape=5), InvalidArgumentTypeError, "low must be an int"),
    (lambda: nd.random_exponential(lam=0, shape=(2,)), InvalidArgumentError, "lam must be"),
    # MXNet 1.9.1 does not check these: garbage, a hang or a crash (docs/differences.md)
    (lambda: R.randint(5, 5, shape=2), InvalidArgumentError, "low must be less than high"),
    (lambda: R.negative_binomial(1, 0, shape=2), InvalidArgumentError, r"p must be in \(0, 1\]"),
    (lambda: R.negative_binomial(1, 2, shape=2), InvalidArgumentError, r"p must be in \(0, 1\]"),
    (lambda: R.normal(nd.array([0, 0]), nd.array([-1, 1])), InvalidArgumentError, "scale"),
    (lambda: R.uniform(nd.array([1, 0]), nd.array([0, 1])), InvalidArgumentError, "low"),
    (lambda: R.poisson(nd.array([-1, 1])), InvalidArgumentError, "lam"),
    (lambda: R.gamma(nd.array([-1, 1]), nd.array([1, 1])), InvalidArgumentError, "alpha"),
    (lambda: R.multinomial(nd.array([-0.5, 1.5])), InvalidArgumentError, "non-negative"),
    (lambda: R.multinomial(nd.array([0.0, 0.0])), InvalidArgumentError, "positive total"),
    (lambda: R.randint(nd.array([0]), nd.array([5])), InvalidArgumentTypeError, "must be an int"),
])
def test_parameter_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("name,params", [
    # measured with MXNet 1.9.1: inspect.signature of mx.nd.random.<name>
    ("uniform", ["low", "high", "shape", "dtype", "ctx", "out", "kwargs"]),
    ("normal", ["loc", "scale", "shape", "dtype", "ctx", "out", "kwargs"]),
    ("gamma", ["alpha", "beta", "shape", "dtype", "ctx", "out", "kwargs"]),
    ("exponential", ["scale", "shape", "dtype", "ctx", "out", "kwargs"]),
    ("poisson", ["lam", "shape", "dtype", "ctx", "out", "kwargs"]),
    ("negative_binomial", ["k", "p", "shape", "dtype", "ctx", "out", "kwargs"]),
    ("generalized_negative_binomial", ["mu", "alpha", "shape", "dtype", "ctx", "out", "kwargs"]),
    ("randint", ["low", "high", "shape", "dtype", "ctx", "out", "kwargs"]),
    ("multinomial", ["data", "shape", "get_prob", "out", "dtype", "kwargs"]),
    ("uniform_like", ["data", "low", "high", "out", "kwargs"]),
    ("exponential_like", ["data", "lam", "out", "kwargs"]),
])
def test_signatures_follow_mxnet(name, params):
    assert list(inspect.signature(getattr(R, name)).parameters) == params


@pytest.mark.parametrize("name,params", [
    # measured with MXNet 1.9.1 (the keyword order of the operator functions, name= dropped)
    ("random_uniform", ["low", "high", "shape", "ctx", "dtype", "out"]),
    ("random_exponential", ["lam", "shape", "ctx", "dtype", "out"]),
    ("random_randint", ["low", "high", "shape", "ctx", "dtype", "out"]),
    ("sample_normal", ["mu", "sigma", "shape", "dtype", "out"]),
    ("sample_multinomial", ["data", "shape", "get_prob", "dtype", "out"]),
    ("uniform", ["low", "high", "shape", "ctx", "dtype", "out"]),
    ("normal", ["loc", "scale", "shape", "ctx", "dtype", "out"]),
])
def test_operator_style_signatures(name, params):
    got = [p for p in inspect.signature(getattr(nd, name)).parameters if p != "kwargs"]
    assert got == params

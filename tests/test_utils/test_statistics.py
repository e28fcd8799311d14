"""mx.test_utils statistics of generators; p-values and frequencies measured with MXNet 1.9.1."""
import numpy as np
import pytest
from scipy import stats

from sparsenet import test_utils as tu
from sparsenet.base import InvalidArgumentError


def test_buckets_from_ppf():
    assert tu.gen_buckets_probs_with_ppf(lambda p: p * 2, 4) == (
        [(0.0, 0.5), (0.5, 1.0), (1.0, 1.5), (1.5, 2.0)], [0.25, 0.25, 0.25, 0.25])
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda p: stats.norm.ppf(p, 0, 1), 5)
    assert buckets[0][0] == -np.inf and buckets[-1][1] == np.inf and probs == [0.2] * 5
    with pytest.raises(InvalidArgumentError):
        tu.gen_buckets_probs_with_ppf(lambda p: p, 0)


def test_chi_square_check_equals_mxnet():
    np.random.seed(0)
    p, obs, exp = tu.chi_square_check(lambda n: np.random.randint(0, 3, size=n), [0, 1, 2],
                                      [1 / 3, 1 / 3, 1 / 3], nsamples=3000)
    assert p == pytest.approx(0.7565399032150474, rel=1e-10)
    assert obs.tolist() == [985, 1018, 997] and exp.tolist() == [1000, 1000, 1000]
    assert exp.dtype == np.int32
    np.random.seed(0)
    p, obs, _ = tu.chi_square_check(lambda n: np.random.uniform(0, 1, size=n),
                                    [(0, 0.5), (0.5, 1)], [0.5, 0.5], nsamples=1000)
    assert p == pytest.approx(0.28229665258331127, rel=1e-10) and obs.tolist() == [517, 483]
    # expected frequencies that do not add up to nsamples (1000 / 3 truncated) still work
    p, _, exp = tu.chi_square_check(lambda n: np.random.randint(0, 3, size=n), [0, 1, 2],
                                    [1 / 3] * 3, nsamples=1000)
    assert exp.tolist() == [333, 333, 333] and 0 <= p <= 1
    with pytest.raises(InvalidArgumentError, match="ascending and disjoint"):
        tu.chi_square_check(np.zeros, [(0, 1), (0.5, 2)], [0.5, 0.5], nsamples=10)
    with pytest.raises(InvalidArgumentError, match="2 probabilities for 3 buckets"):
        tu.chi_square_check(np.zeros, [0, 1, 2], [0.5, 0.5], nsamples=10)


def test_verify_generator():
    np.random.seed(0)
    ps = tu.verify_generator(lambda n: np.random.uniform(0, 1, size=n), [(0, 0.5), (0.5, 1)],
                             [0.5, 0.5], nsamples=1000, nrepeat=3)
    np.testing.assert_allclose(ps, [0.28229665258331127, 0.22949314873258014,
                                    0.9495709711511051], rtol=1e-10)  # MXNet 1.9.1
    np.random.seed(0)
    with pytest.raises(AssertionError, match=r"Generator test fails, Chi-square p=\[5.2067477"):
        tu.verify_generator(lambda n: np.random.uniform(0, 0.7, size=n), [(0, 0.5), (0.5, 1)],
                            [0.5, 0.5], nsamples=1000, nrepeat=2)


def test_mean_and_var_checks():
    np.random.seed(0)
    assert tu.mean_check(lambda n: np.random.normal(0, 1, size=n), 0, 1, nsamples=10000)
    assert tu.var_check(lambda n: np.random.normal(0, 1, size=n), 1, nsamples=10000)
    np.random.seed(0)
    assert not tu.mean_check(lambda n: np.random.normal(0.1, 1, size=n), 0, 1, nsamples=10000)
    assert not tu.var_check(lambda n: np.random.normal(0, 1.2, size=n), 1, nsamples=10000)

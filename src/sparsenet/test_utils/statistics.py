"""Statistical checks of random generators: mean, variance and chi-square tests.

A generator is a function ``generator(n)`` that returns ``n`` i.i.d. samples.

>>> import numpy as np
>>> np.random.seed(0)
>>> buckets, probs = gen_buckets_probs_with_ppf(lambda p: p, 4)
>>> p, observed, expected = chi_square_check(lambda n: np.random.uniform(size=n), buckets, probs,
...                                          nsamples=4000)
>>> bool(p > 0.05), expected.tolist()
(True, [1000, 1000, 1000, 1000])
"""
import numpy as np

from ..base import InvalidArgumentError

__all__ = ["gen_buckets_probs_with_ppf", "mean_check", "var_check", "chi_square_check",
           "verify_generator"]


def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` equally likely buckets of a continuous distribution from its quantile function.

    Parameters
    ----------
    ppf : callable
        The quantile function (inverse CDF).
    nbuckets : int

    Returns
    -------
    buckets : list of (float, float)
    probs : list of float

    Examples
    --------
    >>> gen_buckets_probs_with_ppf(lambda p: 2 * p, 2)
    ([(0.0, 1.0), (1.0, 2.0)], [0.5, 0.5])
    """
    if nbuckets <= 0:
        raise InvalidArgumentError(f"nbuckets must be positive, got {nbuckets}")
    probs = [1.0 / nbuckets for _ in range(nbuckets)]
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets)))
               for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator, mu, sigma, nsamples=1000000):
    """True if the sample mean lies within ``mu +- 3 sigma / sqrt(nsamples)``.

    >>> np.random.seed(0)
    >>> mean_check(lambda n: np.random.normal(0, 1.0, size=n), 0, 1.0, nsamples=10000)
    True
    """
    mean = np.array(generator(nsamples)).mean()
    half = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - half < mean < mu + half)


def var_check(generator, sigma, nsamples=1000000):
    """True if the sample variance lies within ``sigma**2 +- 3 sqrt(2 sigma**4 / (nsamples - 1))``.

    >>> np.random.seed(0)
    >>> var_check(lambda n: np.random.normal(0, 2.0, size=n), 2.0, nsamples=10000)
    True
    """
    var = np.array(generator(nsamples)).var(ddof=1)
    half = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - half < var < sigma ** 2 + half)


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Pearson's chi-square test of a generator against bucket probabilities.

    Parameters
    ----------
    generator : callable
    buckets : list
        Continuous: ascending, disjoint ``(low, high)`` ranges covering the
        distribution. Discrete: the possible values.
    probs : list of float
        The probability of each bucket.
    nsamples : int

    Returns
    -------
    p : float
        The p-value (higher: more confidence that the generator is right).
    obs_freq : numpy.ndarray
        Samples per bucket.
    expected_freq : numpy.ndarray
        ``int32(nsamples * probs)``.
    """
    if not isinstance(buckets, list) or not buckets:
        raise InvalidArgumentError(f"buckets must be a non-empty list, got {buckets!r}")
    if len(probs) != len(buckets):
        raise InvalidArgumentError(f"{len(probs)} probabilities for {len(buckets)} buckets")
    samples = np.asarray(generator(nsamples))
    continuous = isinstance(buckets[0], (list, tuple))
    if continuous:
        edges = np.zeros(len(buckets) * 2, dtype=np.float32)
        for i, (low, high) in enumerate(buckets):
            if low > high or (i + 1 < len(buckets) and high > buckets[i + 1][0]):
                raise InvalidArgumentError(f"buckets must be ascending and disjoint, got "
                                           f"{buckets!r}")
            edges[2 * i], edges[2 * i + 1] = low, high
        ids = np.searchsorted(edges, samples, side="right") // 2
        obs_freq = np.array([(ids == i).sum() for i in range(len(buckets))], dtype=np.int64)
    else:
        obs_freq = np.array([(samples == b).sum() for b in buckets], dtype=np.int64)
    from scipy import stats  # imported here: scipy.stats takes most of a second to import
    expected_freq = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    # Pearson's statistic directly: SciPy's chisquare refuses sums that differ by rounding
    statistic = np.sum((obs_freq - expected_freq) ** 2 / expected_freq.astype(np.float64))
    p = float(stats.chi2.sf(statistic, len(buckets) - 1))
    return p, obs_freq, expected_freq


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2,
                     alpha=0.05):
    """Repeat :func:`chi_square_check` and assert that enough runs have ``p > alpha``.

    Parameters
    ----------
    generator, buckets, probs, nsamples
        As in :func:`chi_square_check`.
    nrepeat : int
        Number of tests.
    success_rate : float
        Fraction of tests that must pass.
    alpha : float
        Significance level of one test.

    Returns
    -------
    list of float
        The p-values.

    Raises
    ------
    AssertionError
        With the p-values and frequencies, when too few tests pass.
    """
    results = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    p_values = [r[0] for r in results]
    if (np.array(p_values) > alpha).sum() < nrepeat * success_rate:
        # builtin: an assertion helper fails with AssertionError, as numpy.testing does
        raise AssertionError(
            "Generator test fails, Chi-square p=%s, obs_freq=%s, expected_freq=%s."
            "\nbuckets=%s, probs=%s" % (p_values, [r[1] for r in results],
                                        [r[2] for r in results], buckets, probs))
    return p_values

"""Log-uniform candidate sampling for sampled softmax (NumPy; no compiled extension).

Class ``c`` of ``range_max`` classes has probability
``P(c) = log((c + 2) / (c + 1)) / log(range_max + 1)``, which suits vocabularies sorted by
decreasing frequency. :meth:`LogUniformSampler.draw` draws ``num_sampled`` distinct
classes (drawing with replacement until that many distinct ones came, as TensorFlow's and
MXNet's unique samplers do) and returns, for the sampled classes and for the true classes,
the expected number of times each would appear in that many tries:
``1 - (1 - P(c)) ** tries`` (``P(c) * num_sampled`` when no draw was repeated).

>>> s = LogUniformSampler(1000, 10, seed=0)
>>> sample, count_sample, count_true = s.draw([0, 5])
>>> len(set(sample.tolist())), sample.dtype.name, count_true.shape
(10, 'int64', (2,))
"""
import numpy as np


class LogUniformSampler:
    """Draws distinct classes from the log-uniform distribution over ``[0, range_max)``.

    Parameters
    ----------
    range_max : int
        Number of classes.
    num_sampled : int
        Distinct classes per draw (``< range_max``).
    seed : int
        Seed of the sampler's own generator.
    """

    def __init__(self, range_max, num_sampled, seed=0):
        if not 0 < num_sampled < range_max:
            raise SystemExit(f"sampler: expected 0 < num_sampled < range_max, got "
                             f"num_sampled={num_sampled}, range_max={range_max}")
        self.range_max, self.num_sampled = int(range_max), int(num_sampled)
        self.log_range = np.log(range_max + 1.0)
        self.rng = np.random.default_rng(seed)

    def prob(self, classes):
        """``P(c)`` of each class (float64)."""
        c = np.asarray(classes, dtype=np.float64)
        return np.log((c + 2.0) / (c + 1.0)) / self.log_range

    def _expected_count(self, classes, tries):
        p = self.prob(classes)
        if tries == self.num_sampled:
            return p * self.num_sampled
        return -np.expm1(tries * np.log1p(-p))

    def _unique(self):
        """``num_sampled`` distinct classes in order of first appearance, and the tries."""
        k = self.num_sampled
        draws = np.empty(0, np.int64)
        chunk = 2 * k
        while True:
            u = self.rng.random(chunk)
            new = (np.exp(u * self.log_range) - 1.0).astype(np.int64)
            draws = np.concatenate([draws, np.minimum(new, self.range_max - 1)])
            _, first = np.unique(draws, return_index=True)
            if len(first) >= k:
                first.sort()
                return draws[first[:k]], int(first[k - 1]) + 1
            chunk *= 2

    def draw(self, true_classes):
        """Sampled classes (int64), their expected counts and the true classes' (float32)."""
        sample, tries = self._unique()
        return (sample, self._expected_count(sample, tries).astype(np.float32),
                self._expected_count(np.asarray(true_classes).reshape(-1), tries)
                .astype(np.float32))

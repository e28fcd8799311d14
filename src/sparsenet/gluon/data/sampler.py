"""Samplers: the order in which a DataLoader visits a dataset, and how it batches it.

>>> list(BatchSampler(SequentialSampler(5), 2, 'keep'))
[[0, 1], [2, 3], [4]]
>>> list(BatchSampler(SequentialSampler(5), 2, 'discard'))
[[0, 1], [2, 3]]
"""
import numpy as np

from ...base import InvalidArgumentError, UnsupportedError

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "BatchSampler", "FilterSampler"]

_LAST_BATCH = ("keep", "discard", "rollover")


class Sampler:
    """Base class: iterate over sample indices; ``len()`` is how many."""

    def __iter__(self):
        raise UnsupportedError(f"{type(self).__name__} must define __iter__")

    def __len__(self):
        raise UnsupportedError(f"{type(self).__name__} must define __len__")


class SequentialSampler(Sampler):
    """``start, start + 1, ..., start + length - 1``.

    >>> list(SequentialSampler(3, start=2))
    [2, 3, 4]
    """

    def __init__(self, length, start=0):
        self._length, self._start = int(length), int(start)

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """A fresh random permutation of ``range(length)`` each pass (``numpy.random``).

    >>> sorted(RandomSampler(4))
    [0, 1, 2, 3]
    """

    def __init__(self, length):
        self._length = int(length)

    def __iter__(self):
        return iter(np.random.permutation(self._length).tolist())

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices of the samples of ``dataset`` for which ``fn(sample)`` is true."""

    def __init__(self, fn, dataset):
        self._indices = [i for i in range(len(dataset)) if fn(dataset[i])]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size``.

    Parameters
    ----------
    sampler : Sampler
    batch_size : int
    last_batch : {'keep', 'discard', 'rollover'}
        A short last batch is kept, dropped, or carried over to the start of
        the next pass.

    Examples
    --------
    >>> b = BatchSampler(SequentialSampler(5), 2, 'rollover')
    >>> list(b), list(b)
    ([[0, 1], [2, 3]], [[4, 0], [1, 2], [3, 4]])
    """

    def __init__(self, sampler, batch_size, last_batch="keep"):
        if last_batch not in _LAST_BATCH:
            raise InvalidArgumentError(
                f"last_batch must be one of {_LAST_BATCH}, got {last_batch!r}")
        if int(batch_size) < 1:
            raise InvalidArgumentError(f"batch_size must be positive, got {batch_size}")
        self._sampler = sampler
        self._batch_size = int(batch_size)
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self):
        n = len(self._sampler)
        if self._last_batch == "keep":
            return (n + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return n // self._batch_size
        return (len(self._prev) + n) // self._batch_size

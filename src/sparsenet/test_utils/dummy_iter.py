"""``DummyIter``: an endless iterator over one batch, for speed tests.

>>> import numpy as np, sparsenet as mx
>>> real = mx.io.NDArrayIter(np.arange(8.).reshape(4, 2), np.arange(4.), batch_size=2)
>>> it = DummyIter(real)
>>> next(it) is next(it), it.batch_size
(True, 2)
"""
from ..io.base import DataIter

__all__ = ["DummyIter"]


class DummyIter(DataIter):
    """An iterator that returns the first batch of ``real_iter`` forever (never StopIteration).

    Parameters
    ----------
    real_iter : DataIter
        Its first batch is taken at construction; ``provide_data``,
        ``provide_label`` and ``batch_size`` are copied from it.
    """

    def __init__(self, real_iter):
        super().__init__(real_iter.batch_size)
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        """The batch taken from ``real_iter`` (the same object every time)."""
        return self.the_batch

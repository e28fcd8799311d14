"""``ResizeIter``: a fixed number of batches per epoch from any iterator."""
import numpy as np

from ..base import InvalidArgumentError, SparsenetError
from .base import DataIter

__all__ = ["ResizeIter", "EmptyIteratorError"]


class EmptyIteratorError(InvalidArgumentError):
    """A wrapped iterator yields no batch, even right after ``reset()``."""


class ResizeIter(DataIter):
    """Serve exactly ``size`` batches per epoch from ``data_iter``, as MXNet's ``ResizeIter``.

    When ``data_iter`` runs out before ``size`` batches, it is reset and
    iteration goes on from its start; when it has more, the rest waits for the
    next epoch (unless ``reset_internal`` resets it). Batches pass through
    unchanged: data, label, ``pad`` and ``index`` are ``data_iter``'s. Threads sharing
    it take turns (see :class:`~sparsenet.io.DataIter`): ``size`` batches an epoch in all.

    Parameters
    ----------
    data_iter : DataIter
        The iterator to resize.
    size : int
        Batches per epoch (>= 0).
    reset_internal : bool
        Whether :meth:`reset` also resets ``data_iter`` (default True); False
        lets every epoch continue where the previous one stopped.

    Raises
    ------
    InvalidArgumentError
        ``size`` is not a non-negative integer (MXNet loops forever on ``-1``
        or ``2.5``).
    EmptyIteratorError
        ``data_iter`` has no batch even after a reset (an ``InvalidArgumentError``;
        MXNet ends the epoch silently).

    Examples
    --------
    >>> import sparsenet as mx
    >>> it = mx.io.NDArrayIter(mx.nd.arange(10).reshape((5, 2)), batch_size=2)
    >>> r = mx.io.ResizeIter(it, 4)
    >>> [(b.data[0].asnumpy()[:, 0].tolist(), b.pad) for b in r]
    [([0.0, 2.0], 0), ([4.0, 6.0], 0), ([8.0, 0.0], 1), ([0.0, 2.0], 0)]
    """

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__()
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
            raise InvalidArgumentError(f"ResizeIter: size must be a non-negative integer "
                                       f"(batches per epoch), got {size!r}")
        self.data_iter = data_iter
        self.size = int(size)
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        """Start a new epoch of ``size`` batches (resetting ``data_iter`` if ``reset_internal``)."""
        with self._turns:
            self.cur = 0
            if self.reset_internal:
                self.data_iter.reset()

    def iter_next(self):
        """Fetch the next batch from ``data_iter`` (resetting it when it runs out)."""
        with self._turns:
            return self._advance()

    def _advance(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            try:
                self.current_batch = self.data_iter.next()
            except StopIteration:
                raise EmptyIteratorError(
                    f"ResizeIter: the wrapped {type(self.data_iter).__name__} yields no batch "
                    f"even right after reset(), so it cannot give {self.size} batches per "
                    f"epoch") from None
        self.cur += 1
        return True

    def _batch(self):
        if self.current_batch is None:
            raise SparsenetError("ResizeIter: no current batch: call iter_next() (or next()) "
                                 "first")
        return self.current_batch

    def getdata(self):
        """The data arrays of the current batch."""
        return self._batch().data

    def getlabel(self):
        """The label arrays of the current batch."""
        return self._batch().label

    def getindex(self):
        """The example indices of the current batch (``data_iter``'s)."""
        return self._batch().index

    def getpad(self):
        """The padding count of the current batch (``data_iter``'s)."""
        return self._batch().pad

"""``DataLoader``: batches from a Dataset, in order or shuffled, optionally in worker threads."""
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from ... import ndarray as nd
from ...base import InvalidArgumentError
from ...ndarray.base_sparse import BaseSparseNDArray
from ...ndarray.ndarray import NDArray
from ...ops.indexing import take
from .batchify import default_batchify_fn
from .dataset import ArrayDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader"]


def _pin(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_pin(v) for v in x)
    if not torch.cuda.is_available() or not isinstance(x, NDArray) or x.device.type != "cpu":
        return x
    if isinstance(x, BaseSparseNDArray):
        return type(x)._from_parts(*(p.pin_memory() for p in x._parts()), x.shape)
    return NDArray(x._t.pin_memory())


class DataLoader:
    """Load batches from a :class:`Dataset`, as MXNet's ``gluon.data.DataLoader``.

    With the default batchify, CSR samples give CSR batches; an
    :class:`ArrayDataset` is gathered a whole batch at a time (one ``take`` per
    array, the same result as joining samples one by one, but faster).

    Parameters
    ----------
    dataset : Dataset
    batch_size : int
        Required unless ``batch_sampler`` is given.
    shuffle : bool
        Visit samples in a new random order each pass.
    sampler : Sampler, optional
        The order of samples (excludes ``shuffle``).
    last_batch : {'keep', 'discard', 'rollover'}
        What to do with a short last batch (default 'keep').
    batch_sampler : Sampler, optional
        Yields lists of indices (excludes batch_size, shuffle, sampler, last_batch).
    batchify_fn : callable, optional
        Joins a list of samples (default :func:`default_batchify_fn`).
    num_workers : int
        Batches prepared ahead by this many worker *threads* (0: in the
        caller's thread). Threads rather than processes: the arrays are torch
        tensors, whose kernels release the GIL.
    pin_memory : bool
        Put CPU batches in page-locked memory (when CUDA is available).
    pin_device_id : int
        Accepted for MXNet compatibility (torch pins for all devices).
    prefetch : int, optional
        Batches prepared ahead (default ``2 * num_workers``).
    thread_pool : bool
        Accepted for MXNet compatibility (workers are always threads).
    timeout : float
        Seconds to wait for a worker's batch before raising.

    Examples
    --------
    >>> import sparsenet as mx
    >>> ds = mx.gluon.data.ArrayDataset(mx.nd.arange(10).reshape((5, 2)), mx.nd.arange(5))
    >>> [y.asnumpy().tolist() for _, y in DataLoader(ds, batch_size=2, last_batch='discard')]
    [[0.0, 1.0], [2.0, 3.0]]
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, pin_memory=False,
                 pin_device_id=0, prefetch=None, thread_pool=False, timeout=120):
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._timeout = timeout
        if batch_sampler is None:
            if batch_size is None:
                raise InvalidArgumentError("batch_size must be given when batch_sampler is not")
            if sampler is None:
                sampler = RandomSampler(len(dataset)) if shuffle else SequentialSampler(
                    len(dataset))
            elif shuffle:
                raise InvalidArgumentError("give either shuffle=True or a sampler, not both")
            batch_sampler = BatchSampler(sampler, batch_size,
                                         last_batch if last_batch else "keep")
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise InvalidArgumentError(
                "batch_size, shuffle, sampler and last_batch must not be given with "
                "batch_sampler")
        self._batch_sampler = batch_sampler
        self._num_workers = max(0, int(num_workers))
        self._prefetch = max(0, int(prefetch if prefetch is not None else 2 * self._num_workers))
        self._batchify_fn = default_batchify_fn if batchify_fn is None else batchify_fn
        self._fields = (dataset._batch_fields()
                        if batchify_fn is None and type(dataset) is ArrayDataset else None)

    def _gather(self, field, indices):
        if isinstance(field, NDArray):
            return take(field, NDArray(torch.as_tensor(indices, dtype=torch.int64,
                                                       device=field.device)))
        if isinstance(field, np.ndarray):
            arr = field[np.asarray(indices, dtype=np.int64)]
            return nd.array(arr, dtype=arr.dtype)
        return self._batchify_fn([field[i] for i in indices])

    def _fetch(self, indices):
        if self._fields is not None:
            out = [self._gather(f, indices) for f in self._fields]
            batch = out[0] if len(out) == 1 else out
        else:
            batch = self._batchify_fn([self._dataset[i] for i in indices])
        return _pin(batch) if self._pin_memory else batch

    def __iter__(self):
        if self._num_workers == 0:
            for indices in self._batch_sampler:
                yield self._fetch(indices)
            return
        ahead = max(1, self._prefetch)
        with ThreadPoolExecutor(self._num_workers,
                                thread_name_prefix="sparsenet-dataloader") as pool:
            pending = deque()
            batches = iter(self._batch_sampler)
            try:
                for indices in batches:
                    pending.append(pool.submit(self._fetch, indices))
                    if len(pending) >= ahead:
                        yield pending.popleft().result(timeout=self._timeout)
                while pending:
                    yield pending.popleft().result(timeout=self._timeout)
            finally:
                for f in pending:
                    f.cancel()

    def __len__(self):
        return len(self._batch_sampler)

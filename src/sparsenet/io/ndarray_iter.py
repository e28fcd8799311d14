"""``NDArrayIter``: batches from in-memory arrays; CSR data and labels stay CSR."""
from collections import OrderedDict

import numpy as np
import torch

from ..base import InvalidArgumentError, InvalidArgumentTypeError, ShapeError
from ..ndarray.base_sparse import BaseSparseNDArray
from ..ndarray.creation import array as nd_array
from ..ndarray.creation import _issparse, from_scipy
from ..ndarray.ndarray import NDArray
from ..ops.indexing import take
from .base import DataBatch, DataDesc, DataIter

__all__ = ["NDArrayIter"]

_HANDLES = ("pad", "discard", "roll_over")
_CHUNK_BYTES = 1 << 20  # a shuffled array's rows are gathered for this many bytes of ...
_CHUNK_BATCHES = 16  # ... upcoming batches at most (one batch at least)


def _as_array(x, name):
    if isinstance(x, NDArray):
        return x
    if _issparse(x):
        return from_scipy(x.tocsr())
    if isinstance(x, torch.Tensor):
        return NDArray(x)
    if isinstance(x, (np.ndarray, list, tuple)):
        return nd_array(np.asarray(x))  # float32, as MXNet
    raise InvalidArgumentTypeError(
        f"NDArrayIter: {name} must be an NDArray, numpy array, scipy.sparse matrix or "
        f"torch tensor (or a list/dict of them), got {type(x).__name__}")


def _init_data(data, allow_empty, default_name):
    """``[(name, array)]`` from an array, a list or a dict (MXNet's naming)."""
    if data is None:
        if not allow_empty:
            raise InvalidArgumentError("NDArrayIter: data must not be None")
        return []
    if isinstance(data, (NDArray, np.ndarray, torch.Tensor)) or _issparse(data):
        data = [data]
    if isinstance(data, (list, tuple)):
        if not data and not allow_empty:
            raise InvalidArgumentError("NDArrayIter: data must not be empty")
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict((f"_{i}_{default_name}", d) for i, d in enumerate(data))
    if not isinstance(data, dict):
        raise InvalidArgumentTypeError(
            f"NDArrayIter: expected an array, a list or a dict of arrays, got "
            f"{type(data).__name__}")
    return [(k, _as_array(v, k)) for k, v in data.items()]


class NDArrayIter(DataIter):
    """Iterate over in-memory arrays in batches, as MXNet's ``mx.io.NDArrayIter``.

    CSR data and labels come out as CSR batches (MXNet 1.9.1 densifies them and
    allows only ``last_batch_handle='discard'``); SciPy sparse matrices are
    accepted and become CSR.

    Parameters
    ----------
    data : array, list of arrays or dict name -> array
        NDArray (any storage type), numpy array, scipy.sparse matrix or torch tensor.
    label : same, optional
    batch_size : int
    shuffle : bool
        Draw a new random order (``numpy.random``) at construction and at every
        :meth:`reset`.
    last_batch_handle : {'pad', 'discard', 'roll_over'}
        A short last batch is completed with rows from the start of the epoch's
        order (``pad`` reports how many), dropped, or carried over to start the
        next epoch after :meth:`reset`.
    data_name, label_name : str
        Names when ``data``/``label`` is a single array.
    layout : str
        Position of the batch axis ``N`` (CSR arrays need it first).

    Examples
    --------
    >>> import sparsenet as mx
    >>> x = mx.nd.sparse.csr_matrix(([1., 2., 3., 4.], [0, 2, 1, 0], [0, 2, 3, 3, 4]),
    ...                             shape=(4, 3))
    >>> it = mx.io.NDArrayIter(x, mx.nd.array([0, 1, 0, 1]), batch_size=3)
    >>> for b in it:
    ...     print(b.data[0].stype, b.data[0].shape, b.pad, b.label[0].asnumpy())
    csr (3, 3) 0 [0. 1. 0.]
    csr (3, 3) 2 [1. 0. 1.]
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle="pad",
                 data_name="data", label_name="softmax_label", layout="NCHW"):
        super().__init__(batch_size)
        if not isinstance(batch_size, (int, np.integer)) or isinstance(batch_size, bool) \
                or batch_size < 1:
            raise InvalidArgumentError(f"batch_size must be a positive integer, got {batch_size!r}")
        if last_batch_handle not in _HANDLES:
            raise InvalidArgumentError(f"last_batch_handle must be one of {_HANDLES}, got "
                                       f"{last_batch_handle!r}")
        self.batch_size = int(batch_size)
        self.data = _init_data(data, False, data_name)
        self.label = _init_data(label, True, label_name)
        self.layout = layout
        self._axis = DataDesc.get_batch_axis(layout)
        if self._axis < 0:
            raise InvalidArgumentError(f"layout {layout!r} has no batch axis 'N'")
        sizes = {name: arr.shape[self._axis] for name, arr in self.data + self.label}
        if len(set(sizes.values())) != 1:
            raise ShapeError(f"NDArrayIter: all arrays need the same number of examples along "
                             f"the batch axis, got {sizes}")
        for name, arr in self.data + self.label:
            if isinstance(arr, BaseSparseNDArray) and self._axis != 0:
                raise InvalidArgumentError(
                    f"NDArrayIter: sparse array {name!r} needs the batch axis first "
                    f"(layout {layout!r})")
        self.num_data = next(iter(sizes.values()))
        self.shuffle = bool(shuffle)
        self.last_batch_handle = last_batch_handle
        self._order = None
        self._batch = None
        self.reset()

    @property
    def provide_data(self):
        """One DataDesc per data array, batch axis set to ``batch_size``."""
        return list(self._descs()[0])

    @property
    def provide_label(self):
        """One DataDesc per label array."""
        return list(self._descs()[1])

    def _descs(self):
        """The (data, label) DataDescs, made once per ``batch_size`` (read for every batch by
        PrefetchingIter and Module)."""
        key = (self.batch_size, self.layout)
        cached = getattr(self, "_desc_cache", None)
        if cached is None or cached[0] != key:
            cached = (key, tuple(self._desc(k, v) for k, v in self.data),
                      tuple(self._desc(k, v) for k, v in self.label))
            self._desc_cache = cached
        return cached[1:]

    def _desc(self, name, arr):
        shape = list(arr.shape)
        shape[self._axis] = self.batch_size
        return DataDesc(name, tuple(shape), arr.dtype, layout=self.layout)

    def hard_reset(self):
        """Start over, forgetting rolled-over rows."""
        with self._turns:
            self._order = None
            self.reset()

    def reset(self):
        """Start the next epoch (a new order when shuffling; rolled-over rows first)."""
        with self._turns:
            carry = np.zeros(0, dtype=np.int64)
            if self._order is not None and self.last_batch_handle == "roll_over":
                left = self._order[self._cursor:]
                if 0 < left.size < self.batch_size:
                    carry = left
            base = (np.random.permutation(self.num_data) if self.shuffle
                    else np.arange(self.num_data))
            self._order = np.concatenate([carry, base]).astype(np.int64)
            self._cursor = 0
            self._batch = None
            self._chunks = {}

    def iter_next(self):
        """Advance to the next batch; False at the end of the epoch."""
        with self._turns:
            return self._advance()

    def _advance(self):
        n, bs, a = self._order.size, self.batch_size, self._cursor
        if a >= n or (n - a < bs and self.last_batch_handle != "pad"):
            self._batch = None
            return False
        ids = self._order[a:a + bs]
        pad = bs - ids.size
        if pad:
            base = self._order[self._order.size - self.num_data:]  # this epoch's fresh order
            ids = np.concatenate([ids, np.resize(base, pad)])
        self._cursor = a + bs
        self._batch = (ids, pad, a)
        return True

    def _gather(self, slot, arr, ids, pad, start):
        """The current batch's rows of ``arr`` (a view when they are consecutive)."""
        lo = int(ids[0])
        if ids[-1] - lo == ids.size - 1 and np.array_equal(ids, np.arange(lo, lo + ids.size)):
            return self._rows(arr, lo, ids.size)
        if pad:
            return take(arr, NDArray(torch.from_numpy(ids).to(arr.device)), axis=self._axis)
        return self._chunked(slot, arr, start)

    def _rows(self, arr, lo, n):
        if self._axis == 0:
            return arr[lo:lo + n]
        return NDArray(arr._dense_tensor().narrow(self._axis, lo, int(n)))

    def _chunked(self, slot, arr, start):
        """A shuffled batch: its rows in a chunk gathered for several upcoming batches at
        once (one ``take`` per chunk instead of one per batch)."""
        bs, chunk = self.batch_size, self._chunks.get(slot)
        if chunk is None or not chunk[0] <= start < chunk[1]:
            n = self._order.size
            row_bytes = arr.nbytes // max(arr.shape[self._axis], 1)
            count = max(1, min(_CHUNK_BATCHES, _CHUNK_BYTES // max(row_bytes * bs, 1)))
            stop = start + min(count, (n - start) // bs) * bs  # full batches only
            idx = NDArray(torch.from_numpy(self._order[start:stop]).to(arr.device))
            chunk = self._chunks[slot] = (start, stop, take(arr, idx, axis=self._axis))
        return self._rows(chunk[2], start - chunk[0], bs)

    def _current(self):
        if self._batch is None:
            raise StopIteration
        return self._batch

    def getdata(self):
        """The data arrays of the current batch (CSR stays CSR)."""
        with self._turns:
            ids, pad, start = self._current()
            return [self._gather(k, arr, ids, pad, start)
                    for k, (_, arr) in enumerate(self.data)]

    def getlabel(self):
        """The label arrays of the current batch."""
        with self._turns:
            ids, pad, start = self._current()
            n = len(self.data)
            return [self._gather(n + k, arr, ids, pad, start)
                    for k, (_, arr) in enumerate(self.label)]

    def getpad(self):
        """Rows of padding at the end of the current batch ('pad' only)."""
        return self._current()[1]

    def getindex(self):
        """Row numbers of the current batch in the original arrays."""
        return self._current()[0]

    def next(self):
        """The next :class:`DataBatch` (StopIteration at the end of the epoch); threads
        sharing the iterator take turns, each call hands one whole batch to one thread."""
        with self._turns:
            if not self._advance():
                raise StopIteration
            ids, pad, _ = self._batch
            return DataBatch(self.getdata(), self.getlabel(), pad=pad, index=ids)

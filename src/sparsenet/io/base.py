"""MXNet's data-iterator protocol: :class:`DataDesc`, :class:`DataBatch`, :class:`DataIter`.

>>> import sparsenet as mx
>>> d = mx.io.DataDesc('data', (10, 5))
>>> d
DataDesc[data,(10, 5),<class 'numpy.float32'>,NCHW]
>>> d.name, d.shape, DataDesc.get_batch_axis('NTC')
('data', (10, 5), 0)
"""
import threading
from collections import namedtuple

import numpy as np

from ..base import InvalidArgumentTypeError, UnsupportedError

__all__ = ["DataDesc", "DataBatch", "DataIter"]


class _Turns:
    """``iterator._turns``: the iterator's own reentrant lock, made at first use.

    The iterators of :mod:`sparsenet.io` take it in every method that moves or
    reads their cursor (``next``, ``iter_next``, ``reset``, the getters), so that
    threads sharing one iterator take turns: each ``next()`` is one whole batch.
    A non-data descriptor: once made, the lock is a plain attribute of the
    instance (a subclass that does not call ``DataIter.__init__`` gets one too).
    """

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        return obj.__dict__.setdefault("_turns", threading.RLock())  # atomic


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name, shape, dtype and layout of one input or label of a batch.

    Parameters
    ----------
    name : str
    shape : tuple of int
        Batch shape (the batch axis is the ``N`` of ``layout``).
    dtype : numpy type
        Default float32.
    layout : str
        Default ``'NCHW'`` (MXNet's default; only the position of ``N`` matters).

    Examples
    --------
    >>> DataDesc('softmax_label', (4,), np.float64).dtype
    <class 'numpy.float64'>
    """

    def __new__(cls, name, shape, dtype=np.float32, layout="NCHW"):
        ret = super().__new__(cls, name, tuple(shape))
        ret.dtype = np.dtype(dtype).type  # a NumPy type, as in MXNet
        ret.layout = layout
        return ret

    def __getnewargs__(self):
        return (self.name, self.shape, self.dtype, self.layout)

    def __repr__(self):
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout):
        """The axis of ``N`` in ``layout`` (0 when layout is None; -1 when absent).

        >>> DataDesc.get_batch_axis('TNC')
        1
        """
        if layout is None:
            return 0
        return layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        """DataDescs from ``[(name, shape)]`` and optional ``[(name, dtype)]``.

        >>> DataDesc.get_list([('x', (2, 3))], [('x', np.int64)])
        [DataDesc[x,(2, 3),<class 'numpy.int64'>,NCHW]]
        """
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(name, shape, type_dict[name]) for name, shape in shapes]
        return [DataDesc(name, shape) for name, shape in shapes]


class DataBatch:
    """One batch: lists of data and label arrays, padding count and example indices.

    Parameters
    ----------
    data : list of NDArray
    label : list of NDArray, optional
    pad : int, optional
        How many examples at the end of the batch are padding (to be ignored
        in evaluation and prediction).
    index : numpy.ndarray, optional
        Indices of the examples in the batch.
    bucket_key, provide_data, provide_label : optional
        As in MXNet (bucketing and per-batch shapes).

    Examples
    --------
    >>> import sparsenet as mx
    >>> b = DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros((2,))], pad=1)
    >>> print(b)
    DataBatch: data shapes: [(2, 3)] label shapes: [(2,)]
    """

    __slots__ = ("data", "label", "pad", "index", "bucket_key", "provide_data", "provide_label")

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise InvalidArgumentTypeError(f"DataBatch data must be a list of NDArrays, got "
                                           f"{type(data).__name__}")
        if label is not None and not isinstance(label, (list, tuple)):
            raise InvalidArgumentTypeError(f"DataBatch label must be a list of NDArrays, got "
                                           f"{type(label).__name__}")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = [lab.shape for lab in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {data_shapes} label shapes: {label_shapes}"


class DataIter:
    """Base class of data iterators: ``next()`` returns a :class:`DataBatch`.

    Subclasses implement :meth:`iter_next` (advance; False at the end) and the
    getters, or override :meth:`next`. Iterating does not reset: call
    :meth:`reset` before every epoch after the first, as in MXNet.

    Threads: the iterators of :mod:`sparsenet.io` may be shared by threads, which
    take turns (``self._turns``, a reentrant lock, is held by every method that
    moves the cursor): each :meth:`next` hands one whole batch to one thread, and
    together the threads get every batch of the epoch exactly once. The current
    batch, though, is the iterator's, not the thread's: threads that share an
    iterator call :meth:`next` (or iterate), not ``iter_next()`` then ``getdata()``.

    Parameters
    ----------
    batch_size : int

    Examples
    --------
    >>> class Count(DataIter):
    ...     def __init__(self):
    ...         super().__init__(1)
    ...         self.i = 0
    ...     def iter_next(self):
    ...         self.i += 1
    ...         return self.i <= 2
    ...     def getdata(self):
    ...         return [self.i]
    ...     def reset(self):
    ...         self.i = 0
    >>> [b.data for b in Count()]
    [[1], [2]]
    """

    _turns = _Turns()

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Go back to the start of the data."""

    def next(self):
        """The next :class:`DataBatch`; raises StopIteration at the end of the data."""
        with self._turns:
            if self.iter_next():
                return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                                 index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Move to the next batch; return whether there is one."""
        raise UnsupportedError(f"{type(self).__name__} must implement iter_next() or next()")

    def getdata(self):
        """The data arrays of the current batch."""
        return None

    def getlabel(self):
        """The label arrays of the current batch."""
        return None

    def getindex(self):
        """The example indices of the current batch (None if unknown)."""
        return None

    def getpad(self):
        """The number of padding examples at the end of the current batch."""
        return 0

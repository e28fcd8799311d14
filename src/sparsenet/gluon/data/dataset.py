"""Datasets: anything with ``len()`` and ``[i]``, plus transforms, filters and shards.

>>> ds = SimpleDataset([1, 2, 3, 4]).transform(lambda x: x * 10)
>>> [ds[i] for i in range(len(ds))]
[10, 20, 30, 40]
>>> list(SimpleDataset(list(range(10))).shard(3, 1))
[4, 5, 6]
"""
from ...base import InvalidArgumentError, InvalidArgumentTypeError, ShapeError, UnsupportedError
from ...ndarray.base_sparse import BaseSparseNDArray
from ...ndarray.ndarray import NDArray
from .sampler import FilterSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset"]


class Dataset:
    """Base class of datasets: subclasses define ``__getitem__`` and ``__len__``.

    Examples
    --------
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 3
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> list(Squares().take(2))
    [0, 1]
    """

    def __getitem__(self, idx):
        raise UnsupportedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self):
        raise UnsupportedError(f"{type(self).__name__} must define __len__")

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def filter(self, fn):
        """The samples for which ``fn(sample)`` is true.

        >>> list(SimpleDataset([1, 2, 3, 4]).filter(lambda x: x % 2 == 0))
        [2, 4]
        """
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """Contiguous shard ``index`` of ``num_shards`` (sizes differ by at most one)."""
        if num_shards < 1 or not 0 <= index < num_shards:
            raise InvalidArgumentError(
                f"shard index {index} is out of range for num_shards={num_shards}")
        base, rest = divmod(len(self), num_shards)
        start = base * index + min(index, rest)
        return _SampledDataset(self, SequentialSampler(base + (index < rest), start))

    def take(self, count):
        """The first ``count`` samples (all of them when count is None or larger)."""
        if count is None or count > len(self):
            count = len(self)
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler):
        """The samples at the indices ``sampler`` yields."""
        if not isinstance(sampler, Sampler):
            raise InvalidArgumentTypeError(
                f"expected a gluon.data.Sampler, got {type(sampler).__name__}")
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """Each sample passed through ``fn`` (tuples are unpacked as arguments).

        ``lazy=False`` transforms everything now (do not use with random transforms).
        """
        trans = _LazyTransformDataset(self, fn)
        return trans if lazy else SimpleDataset([trans[i] for i in range(len(trans))])

    def transform_first(self, fn, lazy=True):
        """Transform only the first element of each sample (the data, not the label).

        >>> ArrayDataset([1, 2], [5, 6]).transform_first(lambda x: -x)[1]
        (-2, 6)
        """
        return self.transform(_TransformFirst(fn), lazy)


class SimpleDataset(Dataset):
    """Wrap any object with ``len()`` and ``[i]`` (a list, an array).

    >>> SimpleDataset('abc')[1]
    'b'
    """

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data, self._fn = data, fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        return self._fn(*item) if isinstance(item, tuple) else self._fn(item)


class _TransformFirst:
    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        return (self._fn(x),) + args if args else self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._indices = list(iter(sampler))

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Samples ``(x1[i], x2[i], ...)`` from arrays of equal length (or ``x1[i]`` for one).

    A CSRNDArray's sample is its row ``i`` as a ``(1, features)`` CSR array; the
    DataLoader's default batchify joins such rows into a ``(batch, features)``
    CSR batch. 1-D NDArrays are kept as NumPy arrays, so their samples are
    scalars (as in MXNet).

    Parameters
    ----------
    *args : arrays, lists or datasets of one length

    Examples
    --------
    >>> import sparsenet as mx
    >>> x = mx.nd.sparse.csr_matrix(([1., 2.], [0, 2], [0, 1, 2]), shape=(2, 3))
    >>> d, y = ArrayDataset(x, mx.nd.array([5, 6]))[1]
    >>> d.stype, d.shape, y
    ('csr', (1, 3), np.float32(6.0))
    """

    def __init__(self, *args):
        if not args:
            raise InvalidArgumentError("ArrayDataset needs at least one array")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise ShapeError(f"ArrayDataset: all arrays must have the same length; array 0 "
                                 f"has {self._length} samples, array {i} has {len(data)}")
            if isinstance(data, NDArray) and not isinstance(data, BaseSparseNDArray) \
                    and data.ndim == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length

    def _batch_fields(self):
        """The arrays, for loaders that gather whole batches at once."""
        return self._data

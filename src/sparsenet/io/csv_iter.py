"""``CSVIter``: dense batches from CSV files, as MXNet's ``mx.io.CSVIter``, validated."""
import numpy as np
import torch

from ..base import InvalidArgumentError, SparsenetError
from ..context import as_context, cpu, place
from ..ndarray.ndarray import NDArray
from .base import DataBatch, DataDesc, DataIter
from .csv_format import DTYPES, CSVFormatError, as_tensor, read_csv

__all__ = ["CSVIter"]


def _shape(shape, name):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    try:
        shape = tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"CSVIter: {name} must be a shape such as (3,) or (3, 2), "
                                   f"got {shape!r}") from None
    if not shape or any(s <= 0 for s in shape):
        raise InvalidArgumentError(f"CSVIter: {name} must be a non-empty shape of positive "
                                   f"sizes, got {shape}")
    return shape


def _dtype(dtype):
    name = "float32" if dtype in (None, "None") else dtype
    try:
        name = np.dtype(name).name
    except TypeError:
        name = None
    if name not in DTYPES:
        raise InvalidArgumentError(f"CSVIter: dtype must be one of {sorted(DTYPES)} (or None: "
                                   f"float32), got {dtype!r}")
    return name


class CSVIter(DataIter):
    """Batches of dense rows from CSV files, as MXNet's ``mx.io.CSVIter``.

    Each non-blank line of ``data_csv`` holds one example: ``prod(data_shape)``
    comma-separated numbers, reshaped to ``data_shape``. The files are read and
    validated once, at construction; batches are slices of the result (they
    share its memory: copy a batch before modifying it in place).

    Parameters
    ----------
    data_csv : str or os.PathLike
        A CSV file, or a directory whose files are read in name order (hidden
        files and subdirectories skipped). ``.gz``/``.bz2``/``.xz``/``.zst`` files
        are decompressed.
    data_shape : tuple of int
        The shape of one example.
    label_csv : str, optional
        A CSV file (or directory) with one row of ``prod(label_shape)`` numbers
        per data row. Without it every label is 0, of shape ``(batch_size,)``
        whatever ``label_shape`` says (as MXNet).
    label_shape : tuple of int
        The shape of one label; a one-element shape gives labels of shape
        ``(batch_size,)``, any other ``(batch_size,) + label_shape``.
    batch_size : int
    round_batch : bool
        ``True`` (default): a short last batch is filled with rows from the start
        of the data (wrapping as often as needed) and ``pad`` says how many; those
        rows are not consumed, so every epoch starts at row 0 and sees every row
        once. ``False``: the last batch is short, ``pad`` 0.
    prefetch_buffer : int
        Accepted for compatibility (the data is read once, at construction).
    ctx : Context or str, optional
        Where batches go (default CPU).
    dtype : {None, 'float32', 'float64', 'int32', 'int64'}
        Data and label type (None: float32). Integer dtypes need whole numbers.

    Other Parameters
    ----------------
    allow_nonfinite : bool
        Accept ``nan``/``inf`` values (default: an error).
    data_name, label_name : str
        Names in ``provide_data``/``provide_label``.

    Raises
    ------
    CSVFormatError
        At construction, for the first malformed line: ``path:line:column:``,
        what was expected and what was found (a ``ValueError``); also when the
        label file's row count differs from the data's.

    Examples
    --------
    >>> import os, tempfile
    >>> import sparsenet as mx
    >>> p = os.path.join(tempfile.mkdtemp(), 'd.csv')
    >>> with open(p, 'w') as f:
    ...     _ = f.write('1,2,3\\n2,3,4\\n3,4,5\\n4,5,6\\n')
    >>> it = mx.io.CSVIter(data_csv=p, data_shape=(3,), batch_size=3)
    >>> for batch in it:
    ...     print(batch.data[0].asnumpy().tolist(), batch.pad)
    [[1.0, 2.0, 3.0], [2.0, 3.0, 4.0], [3.0, 4.0, 5.0]] 0
    [[4.0, 5.0, 6.0], [1.0, 2.0, 3.0], [2.0, 3.0, 4.0]] 2
    >>> it.provide_label
    [DataDesc[softmax_label,(3,),<class 'numpy.float32'>,NCHW]]
    """

    def __init__(self, data_csv, data_shape, label_csv=None, label_shape=(1,), batch_size=1,
                 round_batch=True, prefetch_buffer=4, ctx=None, dtype=None, *,
                 allow_nonfinite=False, data_name="data", label_name="softmax_label"):
        super().__init__(batch_size)
        if not isinstance(batch_size, (int, np.integer)) or isinstance(batch_size, bool) \
                or batch_size < 1:
            raise InvalidArgumentError(f"CSVIter: batch_size must be a positive integer, got "
                                       f"{batch_size!r}")
        if not isinstance(prefetch_buffer, (int, np.integer)) or prefetch_buffer < 0:
            raise InvalidArgumentError(f"CSVIter: prefetch_buffer must be a non-negative "
                                       f"integer, got {prefetch_buffer!r}")
        self.batch_size = int(batch_size)
        self._data_shape = _shape(data_shape, "data_shape")
        self._label_shape = _shape(label_shape, "label_shape")
        self._dtype_name = _dtype(dtype)
        self._dtype = np.dtype(self._dtype_name).type
        self._round_batch = bool(round_batch)
        self._ctx = as_context(ctx) if ctx is not None else cpu()
        self.data_name, self.label_name = data_name, label_name
        if label_csv in ("NULL", ""):
            label_csv = None
        width = int(np.prod(self._data_shape))
        rows = read_csv(data_csv, width, self._dtype_name, allow_nonfinite=allow_nonfinite,
                        what="data_csv", shape_text=f"data_shape {self._data_shape}")
        if rows.shape[0] == 0:
            raise CSVFormatError(f"{data_csv}: data_csv holds no rows (only blank lines or "
                                 f"empty files)", path=str(data_csv))
        self._num_rows = rows.shape[0]
        device = self._ctx.torch_device
        self._data = as_tensor(rows).to(device)
        self._label = None
        if label_csv is not None:
            lwidth = int(np.prod(self._label_shape))
            labels = read_csv(label_csv, lwidth, self._dtype_name,
                              allow_nonfinite=allow_nonfinite, what="label_csv",
                              shape_text=f"label_shape {self._label_shape}")
            if labels.shape[0] != self._num_rows:
                raise CSVFormatError(f"label_csv '{label_csv}' has {labels.shape[0]} rows but "
                                     f"data_csv '{data_csv}' has {self._num_rows}: every data "
                                     f"row needs one label row", path=str(label_csv))
            self._label = as_tensor(labels).to(device)
        one = self._label is None or int(np.prod(self._label_shape)) == 1
        self._label_batch_shape = (self.batch_size,) + (() if one else self._label_shape)
        self._cursor = 0
        self._batch = None

    @property
    def provide_data(self):
        """``[DataDesc(data_name, (batch_size,) + data_shape, dtype)]``."""
        return [DataDesc(self.data_name, (self.batch_size,) + self._data_shape, self._dtype)]

    @property
    def provide_label(self):
        """``[DataDesc(label_name, (batch_size,) or (batch_size,) + label_shape, dtype)]``."""
        return [DataDesc(self.label_name, self._label_batch_shape, self._dtype)]

    def reset(self):
        """Start the next epoch at the first row."""
        with self._turns:
            self._cursor = 0
            self._batch = None

    def iter_next(self):
        """Advance to the next batch; False at the end of the epoch."""
        with self._turns:
            return self._advance()

    def _advance(self):
        a, n, bs = self._cursor, self._num_rows, self.batch_size
        if a >= n:
            self._batch = None
            return False
        b = min(a + bs, n)
        index = np.arange(a, b, dtype=np.int64)
        pad = 0
        if b - a < bs and self._round_batch:
            pad = bs - (b - a)
            index = np.concatenate([index, np.arange(pad, dtype=np.int64) % n])
        self._cursor = b
        self._batch = (a, b, pad, index)
        return True

    def _current(self):
        if self._batch is None:
            raise SparsenetError("CSVIter: no current batch: call iter_next() (or next()) "
                                 "first, and reset() after the end of an epoch")
        return self._batch

    @staticmethod
    def _rows(t, batch):
        a, b, pad, index = batch
        if not pad:
            return t[a:b]
        return t.index_select(0, torch.from_numpy(index).to(t.device))

    def getdata(self):
        """``[NDArray (batch,) + data_shape]`` of the current batch."""
        return self._data_of(self._current())

    def _data_of(self, batch):
        rows = self._rows(self._data, batch)
        return [place(NDArray(rows.reshape((rows.shape[0],) + self._data_shape)), self._ctx)]

    def getlabel(self):
        """``[NDArray]`` labels of the current batch (zeros without ``label_csv``)."""
        return self._label_of(self._current())

    def _label_of(self, batch):
        a, b, pad, _ = batch
        n = b - a + pad
        if self._label is None:
            out = torch.zeros(n, dtype=self._data.dtype, device=self._data.device)
        else:
            out = self._rows(self._label, batch).reshape((n,) + self._label_batch_shape[1:])
        return [place(NDArray(out), self._ctx)]

    def getpad(self):
        """Rows of padding at the end of the current batch (``round_batch`` only)."""
        return self._current()[2]

    def getindex(self):
        """Row numbers of the current batch, padding included."""
        return self._current()[3]

    def next(self):
        """The next :class:`DataBatch` (StopIteration at the end of the epoch); threads
        sharing the iterator take turns, each call hands one whole batch to one thread."""
        with self._turns:
            if not self._advance():
                raise StopIteration
            batch = self._batch
        return DataBatch(self._data_of(batch), self._label_of(batch), pad=batch[2],
                         index=batch[3])

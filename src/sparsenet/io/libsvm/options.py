"""Parsing options shared by the LibSVM reader, iterator and kernels.

>>> opts = ParseOptions(num_features=5)
>>> opts.limit, opts.dtype
(5, dtype('float32'))
"""
from dataclasses import dataclass

import numpy as np

from ...base import InvalidArgumentError, InvalidArgumentTypeError

__all__ = ["ParseOptions", "DEFAULT_MAX_NUM_FEATURES", "DEFAULT_MAX_LINE_BYTES"]

#: The longest line of a compressed file (decompressed bytes) the readers accept by default:
#: a small file can decompress to one huge line, and a line is held whole in memory.
DEFAULT_MAX_LINE_BYTES = 128 << 20

#: Without ``num_features``, feature indices must stay below this (2**40) unless raised.
DEFAULT_MAX_NUM_FEATURES = 2 ** 40
_INT64_MAX = 2 ** 63 - 1
_MAX_CLASS = 2 ** 53  # class ids are parsed as doubles: integers are exact below 2**53

_DUPLICATES = ("error", "sum")
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


@dataclass(frozen=True)
class ParseOptions:
    """How to read LibSVM text (see :func:`sparsenet.io.load_libsvm` for each field).

    Parameters
    ----------
    zero_based : bool
        Feature indices in the file count from 0 (MXNet's convention) or from 1.
    duplicates : {'error', 'sum'}
        A feature index repeated within a line is an error, or its values are added.
    strict_order : bool
        Indices that do not increase within a line are an error (else the line is sorted).
    allow_nonfinite : bool
        Accept ``nan``/``inf`` values and labels.
    dtype : str or numpy dtype
        ``float32`` or ``float64``, for values and labels.
    multilabel : bool
        Labels are comma-separated class ids (``1,3``).
    num_features : int or None
        Indices must be below this (after the 1-based shift); None infers the width.
    max_num_features : int
        The index limit when ``num_features`` is None.
    num_labels : int or None
        With ``multilabel``, class ids must be below this.
    query_id : bool
        Keep the ``qid:`` of every line.
    weights : bool
        The label token may be ``label:weight`` (an instance weight, as in XGBoost's
        text format); lines without one weigh 1. Weights must be numbers >= 0.
        Without this option a ``label:weight`` token is an error.
    max_line_bytes : int
        The longest line (decompressed bytes) a compressed file may hold; a longer
        one raises :class:`~sparsenet.io.LibSVMFormatError` (a small compressed file
        can hold one huge line, and a line is held whole in memory). Default 128 MiB.

    Examples
    --------
    >>> ParseOptions(duplicates='last')
    Traceback (most recent call last):
    ...
    sparsenet.base.InvalidArgumentError: duplicates must be 'error' or 'sum', got 'last'
    """

    zero_based: bool = True
    duplicates: str = "error"
    strict_order: bool = False
    allow_nonfinite: bool = False
    dtype: object = np.float32
    multilabel: bool = False
    num_features: object = None
    max_num_features: int = DEFAULT_MAX_NUM_FEATURES
    num_labels: object = None
    query_id: bool = False
    weights: bool = False
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES

    def __post_init__(self):
        if not isinstance(self.zero_based, (bool, np.bool_)):
            raise InvalidArgumentTypeError(
                f"zero_based must be True (indices count from 0, MXNet's default) or "
                f"False (from 1), got {self.zero_based!r}; it is never guessed")
        if self.duplicates not in _DUPLICATES:
            raise InvalidArgumentError(
                f"duplicates must be 'error' or 'sum', got {self.duplicates!r}")
        try:
            dt = np.dtype(self.dtype)
        except TypeError:
            dt = None
        if dt not in _DTYPES:
            raise InvalidArgumentError(f"dtype must be 'float32' or 'float64', got {self.dtype!r}")
        object.__setattr__(self, "dtype", dt)
        for name in ("num_features", "num_labels"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, (int, np.integer)) or isinstance(v, bool)
                                  or v <= 0 or v > _INT64_MAX):
                raise InvalidArgumentError(f"{name} must be a positive integer or None, got {v!r}")
            if v is not None:
                object.__setattr__(self, name, int(v))
        if self.weights and self.multilabel:
            raise InvalidArgumentError("weights=True (label:weight tokens) cannot be combined with "
                                       "multilabel=True")
        b = self.max_line_bytes
        if not isinstance(b, (int, np.integer)) or isinstance(b, bool) or b < 1:
            raise InvalidArgumentError(f"max_line_bytes must be a positive integer, got {b!r}")
        m = self.max_num_features
        if not isinstance(m, (int, np.integer)) or isinstance(m, bool) or not 0 < m <= _INT64_MAX:
            raise InvalidArgumentError(
                f"max_num_features must be a positive integer below 2**63, got {m!r}")

    @property
    def limit(self):
        """Every 0-based feature index must be below this."""
        return self.num_features if self.num_features is not None else int(self.max_num_features)

    @property
    def label_limit(self):
        """Every multi-label class id must be below this."""
        return self.num_labels if self.num_labels is not None else _MAX_CLASS

    @property
    def f64(self):
        return self.dtype == np.float64

    def native_args(self):
        """The argument tuple of the native kernel's ``parse`` after the buffer."""
        return (bool(self.zero_based), self.duplicates == "sum", bool(self.strict_order),
                bool(self.allow_nonfinite), self.f64, bool(self.multilabel), self.limit,
                self.label_limit, bool(self.query_id), bool(self.weights))

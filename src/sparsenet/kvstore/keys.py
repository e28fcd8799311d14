"""Keys, values and row ids as the KVStore methods take them, checked and normalised.

MXNet's KVStore methods take one key (an ``int`` or a ``str``) with one array or a
list of arrays (one per device), or a list of keys with a list of such entries.
:func:`key_value_pairs` turns every accepted form into ``[(key, [array, ...]), ...]``
and rejects the rest with an error naming the argument; :func:`checked_row_ids`
validates the row ids of ``row_sparse_pull``.

>>> import sparsenet as mx
>>> key_value_pairs(3, mx.nd.ones((2,)), 'value')[0][0]
3
>>> [(k, len(v)) for k, v in key_value_pairs(['a', 'b'], [mx.nd.ones(1), [mx.nd.ones(1)] * 2],
...                                            'value')]
[('a', 1), ('b', 2)]
"""
import numbers

import torch

from ..base import IndexOutOfRangeError, InvalidArgumentError, InvalidArgumentTypeError
from ..ndarray.ndarray import NDArray
from ..ops.row_kernels import unique_ids

__all__ = ["check_key", "check_priority", "key_value_pairs", "flat_arrays", "checked_row_ids",
           "KeyType"]


def check_key(key):
    """Return ``key`` as an ``int`` or a ``str``; anything else raises.

    >>> check_key(3), check_key('w')
    (3, 'w')
    >>> check_key(1.5)
    Traceback (most recent call last):
    ...
    sparsenet.base.InvalidArgumentTypeError: kvstore key: expected an int or a str ... float 1.5
    """
    if isinstance(key, str):
        return key
    if isinstance(key, numbers.Integral) and not isinstance(key, bool):
        return int(key)
    raise InvalidArgumentTypeError(f"kvstore key: expected an int or a str (or a list of them), "
                                   f"got {type(key).__name__} {key!r}")


class KeyType:
    """The one type of key a store takes, int or str, fixed by the first key it sees (as MXNet,
    whose stores refuse to mix the two).

    >>> kinds = KeyType()
    >>> kinds.check(3)
    >>> kinds.check('w')
    Traceback (most recent call last):
    ...
    sparsenet.base.InvalidArgumentTypeError: kvstore key 'w' is a str, but this store's keys are ints ...
    """

    def __init__(self):
        self.kind = None

    def check(self, key):
        """Raise unless ``key`` (an int or a str, already checked) has the store's key type."""
        kind = str if isinstance(key, str) else int
        if self.kind is None:
            self.kind = kind
        elif kind is not self.kind:
            raise InvalidArgumentTypeError(
                f"kvstore key {key!r} is a {kind.__name__}, but this store's keys are "
                f"{self.kind.__name__}s (a store takes int keys or str keys, not both)")


def check_priority(priority, method):
    """Return ``priority`` as an ``int``, as MXNet takes it (any integer, NumPy's too; work
    runs in call order here, so its value changes nothing); anything else raises.

    >>> import numpy as np
    >>> check_priority(-3, 'push'), check_priority(np.int64(2), 'pull')
    (-3, 2)
    >>> check_priority(1.5, 'push')
    Traceback (most recent call last):
    ...
    sparsenet.base.InvalidArgumentTypeError: kvstore push: priority must be an integer, ... 1.5
    """
    if isinstance(priority, numbers.Integral):
        return int(priority)
    raise InvalidArgumentTypeError(f"kvstore {method}: priority must be an integer, got "
                                   f"{type(priority).__name__} {priority!r}")


def _arrays(entry, name, key):
    """One key's entry: an NDArray or a non-empty list of NDArrays (one per device)."""
    if isinstance(entry, NDArray):
        return [entry]
    if (isinstance(entry, (list, tuple)) and entry
            and all(isinstance(a, NDArray) for a in entry)):
        return list(entry)
    got = type(entry).__name__
    if isinstance(entry, (list, tuple)):
        got = f"a {got} of " + (", ".join(sorted({type(a).__name__ for a in entry})) or "nothing")
    raise InvalidArgumentTypeError(
        f"kvstore {name} for key {key!r}: expected an NDArray or a list of NDArrays "
        f"(one per device), got {got}")


def key_value_pairs(key, value, name):
    """Pair keys with their arrays: ``[(key, [array, ...]), ...]``.

    Parameters
    ----------
    key : int, str or list of them
    value : NDArray, list of NDArray, or (for a list of keys) a list with one entry per key
    name : str
        The argument ``value`` came as (``'value'``, ``'out'``), named in errors.

    Raises
    ------
    InvalidArgumentTypeError
        A key that is neither int nor str, or an entry that is not an NDArray (list).
    InvalidArgumentError
        A list of keys with a ``value`` list of another length.
    """
    if isinstance(key, (list, tuple)):
        keys = [check_key(k) for k in key]
        if not isinstance(value, (list, tuple)) or len(value) != len(keys):
            got = (f"a {type(value).__name__} of {len(value)}" if isinstance(value, (list, tuple))
                   else type(value).__name__)
            raise InvalidArgumentError(
                f"kvstore {name}: expected a list of {len(keys)} entries (one per key in "
                f"{keys!r}), got {got}")
        return [(k, _arrays(v, name, k)) for k, v in zip(keys, value)]
    k = check_key(key)
    return [(k, _arrays(value, name, k))]


def flat_arrays(entry, name):
    """An NDArray or a (nested, one level) list of NDArrays as one flat list.

    >>> import sparsenet as mx
    >>> len(flat_arrays([mx.nd.ones(1), [mx.nd.ones(1), mx.nd.ones(1)]], 'row_ids'))
    3
    """
    if isinstance(entry, NDArray):
        return [entry]
    if isinstance(entry, (list, tuple)) and entry:
        flat = []
        for item in entry:
            if isinstance(item, NDArray):
                flat.append(item)
            elif (isinstance(item, (list, tuple)) and item
                  and all(isinstance(a, NDArray) for a in item)):
                flat.extend(item)
            else:
                raise InvalidArgumentTypeError(
                    f"kvstore {name}: expected an NDArray or a list of NDArrays, got a list "
                    f"holding {type(item).__name__} {item!r}")
        return flat
    raise InvalidArgumentTypeError(f"kvstore {name}: expected an NDArray or a list of NDArrays, "
                                   f"got {type(entry).__name__}")


def checked_row_ids(row_ids, num_rows, key):
    """The unique sorted int64 row ids in ``row_ids`` (a dense NDArray), checked.

    Ids may be unsorted and repeated, of an integer or a float dtype; a float id
    must be a whole number. Every id must lie in ``[0, num_rows)``.

    >>> import sparsenet as mx
    >>> checked_row_ids(mx.nd.array([3, 0, 3, 1]), 5, 'w').tolist()
    [0, 1, 3]
    >>> checked_row_ids(mx.nd.array([5]), 5, 'w')
    Traceback (most recent call last):
    ...
    sparsenet.base.IndexOutOfRangeError: ... row_ids holds 5, out of range [0, 5)

    Raises
    ------
    InvalidArgumentTypeError
        ``row_ids`` is not a dense NDArray.
    InvalidArgumentError
        A float id that is not a whole number (or not finite).
    IndexOutOfRangeError
        An id outside ``[0, num_rows)``.
    """
    if not isinstance(row_ids, NDArray) or row_ids.stype != "default":
        got = getattr(row_ids, "stype", None) or type(row_ids).__name__
        raise InvalidArgumentTypeError(
            f"kvstore row_sparse_pull of key {key!r}: row_ids must be a dense NDArray (or a list "
            f"of them, one per out), got {got}")
    raw = row_ids.to_torch().detach().reshape(-1)
    if raw.dtype.is_floating_point or raw.dtype.is_complex:
        whole = torch.isfinite(raw) & (raw == torch.trunc(raw))
        if not bool(whole.all()):
            bad = raw[~whole][0].item()
            raise InvalidArgumentError(
                f"kvstore row_sparse_pull of key {key!r}: row_ids must hold whole numbers, "
                f"got {bad}")
    elif raw.dtype == torch.bool:
        raise InvalidArgumentTypeError(
            f"kvstore row_sparse_pull of key {key!r}: row_ids must hold integer row ids, got "
            f"a bool array")
    ids = unique_ids(raw.to(torch.int64), num_rows)  # ids out of range: torch's, then below
    if ids.numel() and (int(ids[0]) < 0 or int(ids[-1]) >= num_rows):
        bad = int(ids[0]) if int(ids[0]) < 0 else int(ids[-1])
        raise IndexOutOfRangeError(
            f"kvstore row_sparse_pull of key {key!r}: row_ids holds {bad}, out of range "
            f"[0, {num_rows})")
    return ids

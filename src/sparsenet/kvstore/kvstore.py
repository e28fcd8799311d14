"""The in-process key-value store: ``mx.kv.create('local')`` and ``mx.kv.create('device')``.

A :class:`KVStore` keeps one array per key. ``push`` sums the arrays given for a
key (one per device; row_sparse arrays sum to a row_sparse array holding the union
of their rows) and either applies the optimizer to the stored value (after
:meth:`KVStore.set_optimizer`: the lazy row update when the sum is row_sparse) or,
without one, stores the sum. ``pull`` copies the stored value into arrays on any
context; ``row_sparse_pull`` copies only the rows asked for.

'local' keeps the values on ``cpu(0)``; 'device' keeps a key on the GPU its value
came from (on ``cpu(0)`` for host values). Both give the same numbers.

The methods a distributed store (:class:`sparsenet.kvstore.dist.DistKVStore`)
overrides are :meth:`KVStore._init_value` and :meth:`KVStore._reduce_all`; here they
return their argument.

>>> import sparsenet as mx
>>> kv = mx.kv.create('local')
>>> kv.init('w', mx.nd.zeros((2, 3)))
>>> kv.push('w', [mx.nd.ones((2, 3)), mx.nd.ones((2, 3), ctx=mx.cpu(1))])
>>> out = mx.nd.zeros((2, 3), ctx=mx.cpu(1))
>>> kv.pull('w', out=out)
>>> out.asnumpy()[0], out.context
(array([2., 2., 2.], dtype=float32), cpu(1))
"""
import warnings

from .. import profiler
from ..base import InvalidArgumentError, InvalidArgumentTypeError, ShapeError, StorageTypeError
from ..context import cpu, place
from ..ndarray.ndarray import NDArray
from ..ndarray.stype import CSR, DEFAULT, ROW_SPARSE
from ..ops.binary import add_n
from .compression import GradientCompression
from .keys import KeyType, check_priority, checked_row_ids, flat_arrays, key_value_pairs
from .rows import pull_rows_into
from .updating import UpdatingStore

__all__ = ["KVStore", "LOCAL_TYPES", "sum_pushed"]

# MXNet's in-process store names ('device' in the name: merge on the devices)
LOCAL_TYPES = ("local", "device", "local_update_cpu", "local_allreduce_cpu",
               "local_allreduce_device")

_IGNORED_PULL = ("kvstore pull of key {key!r}: the out array has storage type {stype}, so "
                 "the pull into it was skipped (MXNet does the same). Use "
                 "kv.row_sparse_pull(key, out, row_ids=...) (or module.prepare() with row ids) "
                 "to pull rows into a row_sparse array, or pass ignore_sparse=False to copy "
                 "the whole value.")


def sum_pushed(key, values, shape, dtype, ctx, borrow=False):
    """The sum of the arrays pushed for ``key`` (checked against the key's ``shape``; cast to
    its ``dtype``), on ``ctx``: a new array, never one of the caller's.

    With ``borrow`` (for a reader that neither writes nor keeps the sum: the store's
    optimizer updater) one array that already has the dtype and context comes back
    as it is, not copied.

    >>> import sparsenet as mx
    >>> sum_pushed('w', [mx.nd.ones((2,)), mx.nd.ones((2,))], (2,), 'float32',
    ...            mx.cpu()).asnumpy()
    array([2., 2.], dtype=float32)
    >>> g = mx.nd.ones((2,))
    >>> sum_pushed('w', [g], (2,), 'float32', mx.cpu()) is g
    False
    >>> sum_pushed('w', [g], (2,), 'float32', mx.cpu(), borrow=True) is g
    True
    """
    moved = []
    for v in values:
        if tuple(v.shape) != tuple(shape):
            raise ShapeError(f"kvstore push of key {key!r}: value has shape {v.shape}, the "
                             f"key was initialized with shape {tuple(shape)}")
        if v.stype == CSR:
            raise StorageTypeError(
                f"kvstore push of key {key!r}: expected default or row_sparse values, got a "
                f"csr value")
        if v.dtype != dtype:
            v = v.astype(dtype)
        moved.append(v.as_in_context(ctx))
    if len(moved) == 1:
        if borrow:
            return moved[0]
        return moved[0].copyto(ctx)  # never keep the caller's array
    return add_n(*moved)


class KVStore(UpdatingStore):
    """An in-process key-value store for data-parallel training (MXNet's 'local'/'device').

    Keys are ints or strs. Values pushed for a key on several devices are summed;
    with an optimizer set (:meth:`set_optimizer`) the sum updates the stored
    weight in place, else it replaces the stored value.

    Parameters
    ----------
    name : str
        ``'local'`` (values kept on ``cpu(0)``), ``'device'`` (kept on the GPU
        they came from) or one of MXNet's aliases ``'local_update_cpu'``,
        ``'local_allreduce_cpu'``, ``'local_allreduce_device'``. Normally made by
        :func:`sparsenet.kvstore.create`.

    Examples
    --------
    >>> import sparsenet as mx
    >>> kv = mx.kv.create('device')
    >>> kv.init(3, mx.nd.ones((2,)))
    >>> kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5))
    >>> kv.push(3, mx.nd.ones((2,)))
    >>> out = mx.nd.zeros((2,))
    >>> kv.pull(3, out=out)
    >>> out.asnumpy()
    array([0.5, 0.5], dtype=float32)
    """

    def __init__(self, name="local"):
        if not isinstance(name, str):
            raise InvalidArgumentTypeError(f"KVStore: name must be a str, got "
                                           f"{type(name).__name__}")
        self._type = name
        self._store = {}
        self._key_type = KeyType()
        self._updater = None
        self._compression = None  # set_gradient_compression
        profiler.note_kvstore(self)  # the profiler's 'server' profile records this store

    # ------------------------------------------------------------------ properties
    @property
    def type(self):
        """The name the store was created with (``'local'``, ``'device'``, ...)."""
        return self._type

    @property
    def rank(self):
        """This worker's rank: 0 (one process)."""
        return 0

    @property
    def num_workers(self):
        """The number of workers: 1 (one process)."""
        return 1

    # ------------------------------------------------------------------ hooks
    def _init_value(self, key, value):
        """The value a key starts with (a distributed store returns rank 0's)."""
        return value

    def _reduce_all(self, merged):
        """The sums over the workers of this process's pushed sums ``{key: merged}`` (here:
        ``merged`` itself); a distributed store reduces every key of one push together."""
        return merged

    def _store_context(self, value):
        """Where the store keeps a key whose first value is ``value``."""
        ctx = value.context
        if "device" in self._type and ctx.device_type == "gpu":
            return ctx
        return cpu(0)

    # ------------------------------------------------------------------ init / push / pull
    def _pairs(self, key, entries, name):
        """:func:`~sparsenet.kvstore.keys.key_value_pairs`, keys of the store's one key type."""
        pairs = key_value_pairs(key, entries, name)
        for k, _ in pairs:
            self._key_type.check(k)
        return pairs

    def init(self, key, value):
        """Initialise ``key`` (or each key of a list) with a copy of ``value``.

        Parameters
        ----------
        key : int, str or list of int or str
        value : NDArray or list of NDArray
            One array per key; its storage type (default, row_sparse, csr) and dtype
            are the key's.

        Raises
        ------
        InvalidArgumentError
            The key was initialised before, or several arrays were given for one key.

        Examples
        --------
        >>> import sparsenet as mx
        >>> kv = mx.kv.create('local')
        >>> kv.init(['a', 'b'], [mx.nd.ones((2,)), mx.nd.zeros((2,))])
        >>> out = mx.nd.zeros((2,))
        >>> kv.pull('a', out=out)
        >>> out.asnumpy()
        array([1., 1.], dtype=float32)
        """
        self._init(key, value)

    @profiler.traced("init")
    def _init(self, key, value, replace=False):
        """:meth:`init`; with ``replace`` a key the store holds already is re-initialised
        (its value replaced, the updater's state for it dropped), as a second Trainer over
        the store re-initialises the keys (parameter positions) it shares with the first."""
        pairs = self._pairs(key, value, "value")
        seen = set()
        for k, values in pairs:
            if len(values) != 1:
                raise InvalidArgumentError(
                    f"kvstore init of key {k!r}: expected one value per key, got a list of "
                    f"{len(values)}")
            if k in seen or (k in self._store and not replace):
                raise InvalidArgumentError(
                    f"kvstore init: duplicate init of key {k!r}. Please double check if you "
                    f"called kv.init or kv.broadcast with this key multiple times")
            seen.add(k)
        for k, values in pairs:
            v = self._init_value(k, values[0])
            if k in self._store:
                self._forget_state(k)
            self._store[k] = v.copyto(self._store_context(v))

    def _forget_state(self, key):
        """Drop the updater's optimizer state of ``key`` (its value is being replaced)."""
        states = getattr(self._updater, "states", None)
        if isinstance(states, dict):
            index = key.encode() if isinstance(key, str) else key
            states.pop(index, None)
            getattr(self._updater, "states_synced", {}).pop(index, None)

    def _stored(self, key, method):
        try:
            return self._store[key]
        except KeyError:
            raise InvalidArgumentError(
                f"kvstore {method}: key {key!r} has not been initialized; call "
                f"kv.init({key!r}, value) first") from None

    def _borrows_pushed(self):
        """Whether a pushed array may reach the updater uncopied: the updater only reads it
        (:meth:`~sparsenet.kvstore.updating.UpdatingStore._updater_only_reads`) and nothing
        between the sum and the updater writes (a distributed store's reduction does)."""
        return self._updater_only_reads()

    def _merge(self, key, values):
        """This process's sum of the arrays pushed for ``key``, on the store's context (one
        array from one device is handed on as it is when :meth:`_borrows_pushed`)."""
        stored = self._stored(key, "push")
        return sum_pushed(key, values, stored.shape, stored.dtype, stored.context,
                          borrow=self._borrows_pushed())

    def _merge_compressed(self, grouped):
        """``{key: sum}`` of the pushes ``{key: [arrays]}`` under gradient compression: each
        array (each device's) is quantised against its own residual (per key and position in
        the list, as MXNet's 'device' store keeps one per device) and the quantised values are
        summed in list order. Every array is checked before any residual changes."""
        staged = {}
        for k, values in grouped.items():
            stored = self._stored(k, "push")
            staged[k] = [sum_pushed(k, [v], stored.shape, stored.dtype, stored.context)
                         for v in values]
            for v in staged[k]:
                self._compression.check(k, v)
        merged = {}
        for k, copies in staged.items():
            total = None
            for i, v in enumerate(copies):
                sent = self._compression.quantized((k, i), v._t)
                total = sent if total is None else total.add_(sent)
            merged[k] = place(NDArray(total), copies[0].context)
        return merged

    @profiler.traced("push")
    def push(self, key, value, priority=0):
        """Push ``value`` into ``key``: sum the arrays, then update or replace the stored value.

        Parameters
        ----------
        key : int, str or list of int or str
        value : NDArray, list of NDArray, or a list of such entries (one per key)
            Arrays of one key (one per device) are summed; row_sparse arrays sum to a
            row_sparse array holding the union of their rows. A list of keys may
            repeat a key: its arrays are summed together.
        priority : int
            Accepted for MXNet compatibility (work runs in call order).

        Notes
        -----
        With gradient compression set (:meth:`set_gradient_compression`), each dense
        array is quantised against its own residual before the sum.

        With an optimizer, ``updater(key, summed, stored)`` updates the stored value
        in place (a str key is passed as ``bytes``, as MXNet does); without one, the
        stored value becomes the sum, in the sum's storage type (as MXNet keeps the pushed sum).

        Examples
        --------
        >>> import sparsenet as mx
        >>> kv = mx.kv.create('local')
        >>> kv.init('emb', mx.nd.zeros((4, 2)).tostype('row_sparse'))
        >>> g0 = mx.nd.sparse.row_sparse_array(([[1., 1.]], [0]), shape=(4, 2))
        >>> g1 = mx.nd.sparse.row_sparse_array(([[2., 2.]], [3]), shape=(4, 2))
        >>> kv.push('emb', [g0, g1])
        >>> out = mx.nd.zeros((4, 2))
        >>> kv.pull('emb', out=out)
        >>> out.asnumpy()[:, 0]
        array([1., 0., 0., 2.], dtype=float32)
        """
        check_priority(priority, "push")
        grouped = {}
        for k, values in self._pairs(key, value, "value"):
            grouped.setdefault(k, []).extend(values)
        if self._compression is not None:
            merged = self._merge_compressed(grouped)
        else:
            merged = {k: self._merge(k, values) for k, values in grouped.items()}
        for k, total in self._reduce_all(merged).items():
            self._apply(k, total)

    def _apply(self, key, total):
        """Update the stored value of ``key`` with the pushed ``total``; without an updater
        ``total`` (the store's own array) becomes the value, in its storage type, as MXNet
        keeps the pushed sum."""
        if self._updater is not None:
            self._updater(key.encode() if isinstance(key, str) else key, total,
                          self._store[key])
        else:
            self._store[key] = total

    def _adopt(self, key, value, replace=False):
        """Initialise ``key`` (see :meth:`_init`) and keep ``value`` itself as the stored
        array, rank 0's value written into it: the caller (a Trainer's parameter) and the
        store then share one array, so pulling the updated weight back costs nothing."""
        self._init(key, value, replace)
        stored = self._store[key]
        if (stored.context == value.context and stored.stype == value.stype
                and stored.dtype == value.dtype):
            stored.copyto(value)
            self._store[key] = value

    @profiler.traced("pull")
    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the value of ``key`` into ``out`` (every array of it, each on its own context).

        Parameters
        ----------
        key : int, str or list of int or str
        out : NDArray, list of NDArray, or a list of such entries (one per key)
        priority : int
            Accepted for MXNet compatibility.
        ignore_sparse : bool
            With True (the default, as MXNet) an ``out`` of sparse storage type is
            skipped with a warning (use :meth:`row_sparse_pull`); with False it
            receives the whole value.

        Examples
        --------
        >>> import sparsenet as mx
        >>> kv = mx.kv.create('local')
        >>> kv.init(0, mx.nd.full((2,), 7.0))
        >>> outs = [mx.nd.zeros((2,), ctx=mx.cpu(0)), mx.nd.zeros((2,), ctx=mx.cpu(1))]
        >>> kv.pull(0, out=outs)
        >>> [o.asnumpy()[0] for o in outs], outs[1].context
        ([np.float32(7.0), np.float32(7.0)], cpu(1))
        """
        check_priority(priority, "pull")
        if out is None:
            raise InvalidArgumentError(f"kvstore pull of key {key!r}: out is required (the "
                                       f"array or list of arrays to copy the value into)")
        for k, outs in self._pairs(key, out, "out"):
            stored = self._stored(k, "pull")
            for o in outs:
                if o.shape != stored.shape:
                    raise ShapeError(f"kvstore pull of key {k!r}: out has shape {o.shape}, the "
                                     f"value has shape {stored.shape}")
            for o in outs:
                if o.stype != DEFAULT and ignore_sparse:
                    warnings.warn(_IGNORED_PULL.format(key=k, stype=o.stype), UserWarning,
                                  stacklevel=2)
                    continue
                stored.copyto(o)

    def pushpull(self, key, value, out=None, priority=0):
        """Push ``value``, then pull the result into ``out`` (into ``value`` when ``out`` is None).

        Examples
        --------
        >>> import sparsenet as mx
        >>> kv = mx.kv.create('local')
        >>> kv.init(1, mx.nd.zeros((2,)))
        >>> grads = [mx.nd.ones((2,)), mx.nd.ones((2,), ctx=mx.cpu(1))]
        >>> kv.pushpull(1, grads)
        >>> grads[1].asnumpy()
        array([2., 2.], dtype=float32)
        """
        check_priority(priority, "pushpull")
        self.push(key, value, priority)
        self.pull(key, out if out is not None else value, priority)

    def broadcast(self, key, value, out, priority=0):
        """Initialise ``key`` with ``value``, then pull it into ``out``.

        Examples
        --------
        >>> import sparsenet as mx
        >>> kv = mx.kv.create('local')
        >>> outs = [mx.nd.zeros((2,)), mx.nd.zeros((2,), ctx=mx.cpu(1))]
        >>> kv.broadcast('w', mx.nd.full((2,), 3.0), out=outs)
        >>> outs[1].asnumpy()
        array([3., 3.], dtype=float32)
        """
        check_priority(priority, "broadcast")
        if out is None:
            raise InvalidArgumentError(f"kvstore broadcast of key {key!r}: out is required (the "
                                       f"array or list of arrays to copy the value into)")
        self._pairs(key, out, "out")  # check out before the key is initialised
        self.init(key, value)
        self.pull(key, out, priority)

    @profiler.traced("row_sparse_pull")
    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Copy the rows ``row_ids`` of ``key``'s value into the row_sparse array(s) ``out``.

        Parameters
        ----------
        key : int, str or list of int or str
        out : RowSparseNDArray, list of them, or a list of such entries (one per key)
        priority : int
            Accepted for MXNet compatibility.
        row_ids : NDArray or list of NDArray
            The rows to pull: one array for every out, or one per out (in the
            order of ``out``). Ids may be unsorted and repeated; each out gets the
            rows of the unique sorted ids (rows the value does not store come as
            zeros), with the value's full shape.

        Raises
        ------
        StorageTypeError
            An out that is not row_sparse.
        IndexOutOfRangeError
            A row id outside ``[0, number of rows)``.

        Examples
        --------
        >>> import sparsenet as mx
        >>> kv = mx.kv.create('local')
        >>> kv.init('emb', mx.nd.arange(8).reshape((4, 2)).tostype('row_sparse'))
        >>> out = mx.nd.sparse.zeros('row_sparse', (4, 2))
        >>> kv.row_sparse_pull('emb', out=out, row_ids=mx.nd.array([3, 1, 3]))
        >>> out.indices.asnumpy(), out.data.asnumpy()
        (array([1, 3]), array([[2., 3.],
               [6., 7.]], dtype=float32))
        """
        check_priority(priority, "row_sparse_pull")
        if out is None:
            raise InvalidArgumentError(f"kvstore row_sparse_pull of key {key!r}: out is "
                                       f"required (row_sparse array or list of them)")
        if row_ids is None:
            raise InvalidArgumentError(f"kvstore row_sparse_pull of key {key!r}: row_ids is "
                                       f"required (an NDArray of row ids, or one per out)")
        targets = [(k, o) for k, outs in self._pairs(key, out, "out") for o in outs]
        ids = flat_arrays(row_ids, "row_ids")
        if len(ids) == 1:
            ids = ids * len(targets)
        elif len(ids) != len(targets):
            raise InvalidArgumentError(
                f"kvstore row_sparse_pull: expected one row_ids array, or one per out "
                f"({len(targets)}), got {len(ids)}")
        checked, unique = [], {}  # one check per row_ids array and row count
        for (k, o), r in zip(targets, ids):
            stored = self._stored(k, "row_sparse_pull")
            if o.stype != ROW_SPARSE:
                raise StorageTypeError(
                    f"kvstore row_sparse_pull of key {k!r}: out must be row_sparse, got "
                    f"{o.stype}; use kv.pull for a {o.stype} out")
            if o.shape != stored.shape:
                raise ShapeError(f"kvstore row_sparse_pull of key {k!r}: out has shape "
                                 f"{o.shape}, the value has shape {stored.shape}")
            seen = unique.get((id(r), stored.shape[0]))
            if seen is None:
                seen = unique[id(r), stored.shape[0]] = checked_row_ids(r, stored.shape[0], k)
            checked.append(seen)
        for (k, o), rows in zip(targets, checked):
            pull_rows_into(self._store[k], rows, o, k)

    # ------------------------------------------------------------------ misc
    def is_sharded(self, key):
        """Whether ``key`` is a table partitioned over the workers (never, in one process).

        >>> import sparsenet as mx
        >>> mx.kv.create('local').is_sharded('w')
        False
        """
        return False

    def barrier(self):
        """Wait for all workers (one process: returns at once)."""

    _barrier = barrier  # MXNet 1.x's name

    def set_gradient_compression(self, compression_params):
        """Send dense pushes 2-bit quantised, the rest kept in a residual (MXNet's ``2bit``).

        Each value ``v`` of a dense push is added to a residual kept per key and per
        sender (here: per position in the pushed list, one per device); where the
        residual reaches ``threshold`` the sender sends ``+threshold`` and keeps the
        rest, where it reaches ``-threshold`` it sends ``-threshold``, elsewhere 0.
        The store sums what was sent. A distributed store sends the 2-bit codes, 16
        per 32-bit word. See :mod:`sparsenet.kvstore.compression`.

        Parameters
        ----------
        compression_params : dict
            ``{'type': '2bit', 'threshold': t}``; ``threshold`` (a float ``> 0``)
            defaults to 0.5. Calling it again changes the threshold and keeps the
            residuals (as MXNet does).

        Raises
        ------
        InvalidArgumentTypeError
            ``compression_params`` is not a dict.
        InvalidArgumentError
            No ``type``, a type other than ``'2bit'``, an unknown key, or a threshold
            that is not a float ``> 0``.

        Notes
        -----
        Pushes of row_sparse values, and of dtypes other than float32, raise while
        compression is set (MXNet 1.9.1 refuses them as well). ``init`` is never
        compressed. MXNet's 'local' store refuses compression; here every store
        supports it.

        Examples
        --------
        >>> import sparsenet as mx
        >>> kv = mx.kv.create('device')
        >>> kv.set_gradient_compression({'type': '2bit', 'threshold': 0.5})
        >>> kv.init('w', mx.nd.zeros((3,)))
        >>> out = mx.nd.zeros((3,))
        >>> for g in (0.4, 0.1, 0.2):
        ...     kv.push('w', mx.nd.full((3,), g))
        ...     kv.pull('w', out=out)
        ...     print(out.asnumpy())
        [0. 0. 0.]
        [0.5 0.5 0.5]
        [0. 0. 0.]
        """
        compression = GradientCompression.from_params(compression_params)
        compression.adopt_residuals(self._compression)
        self._compression = compression

    def __repr__(self):
        return f"<KVStore {self._type!r}: {len(self._store)} keys>"

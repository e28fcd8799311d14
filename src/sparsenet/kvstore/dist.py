"""The distributed KVStore: ``mx.kv.create('dist_sync')`` on ``torch.distributed``.

Every process of a job launched with ``torchrun`` (or ``sparsenet launch -n N``)
creates the store; it joins the default process group (gloo on CPU, NCCL for
``'dist_device_sync'`` when each rank has a GPU) with a finite timeout.
The store is SPMD: every rank calls the same methods with the same keys in the
same order, and each keeps a full replica of every ordinary key.

``init``
    rank 0's value is broadcast (MXNet initializes from worker 0).
``push``
    this process's arrays are summed, then summed over the ranks: a dense sum
    with an all-reduce, a row_sparse sum with an all-gather of (row ids, rows)
    and a coalesce (duplicate rows summed, ids sorted), or, when that would move
    more data than the table itself (:attr:`DistKVStore.sparse_as_dense`), with
    an all-reduce of the densified rows plus a column marking the rows some rank
    pushed, so the result is the same row_sparse sum. Every rank then applies
    the same update (``set_optimizer``), so the replicas stay bit-identical.
``pull``, ``row_sparse_pull``
    read the local replica (no communication).

Sharded keys (``init(key, value, sharded=True)`` or :meth:`DistKVStore.init_sharded`)
are tables range-partitioned over the ranks (:class:`~sparsenet.kvstore.sharded.ShardedRows`):
``row_sparse_pull`` fetches rows from their owners, ``push`` sends gradient rows
to their owners, which run the (lazy) optimizer and keep its state; ``pull``
gathers the whole table.

Arguments are checked on every rank before each exchange, so a bad id or
shape on one rank raises the same :class:`~sparsenet.base.DistributedError` on
all of them; a rank that dies makes the others raise a DistributedError naming it
instead of hanging.

>>> 'dist_sync' in DIST_TYPES and 'dist_async' in DIST_TYPES
True
"""
import os
import warnings

import torch

from .. import profiler
from ..atomic import atomic_write
from ..base import (InvalidArgumentError, ShapeError, SparsenetError, StorageTypeError,
                    dtype_name)
from ..context import cpu, place
from ..ndarray.ndarray import NDArray
from ..ndarray.stype import DEFAULT, ROW_SPARSE
from . import collective
from .keys import check_key, check_priority, checked_row_ids, flat_arrays
from .kvstore import KVStore, sum_pushed
from .reduction import reduce_over_ranks
from .sharded import ShardedRows

__all__ = ["DistKVStore", "DIST_TYPES"]

#: The names MXNet's ``kv.create`` takes for a distributed store ('dist' is synchronous).
DIST_TYPES = ("dist", "dist_sync", "dist_async", "dist_device_sync", "dist_sync_device",
              "dist_device_async", "dist_async_device")


def _describe(arr):
    return f"{arr.stype} {dtype_name(arr.dtype)} {tuple(arr.shape)}"


class DistKVStore(KVStore):
    """A KVStore whose workers are the ranks of a ``torch.distributed`` job.

    Parameters
    ----------
    name : str
        ``'dist_sync'``, ``'dist_device_sync'``, ``'dist_async'`` or ``'dist'``
        (made by :func:`sparsenet.kvstore.create`). ``'dist_async'`` runs
        synchronously: there are no parameter servers to update asynchronously.
    timeout : float, optional
        Seconds a collective may wait for the other ranks (default: the
        environment variable ``SPARSENET_DIST_TIMEOUT``, else 600).

    Attributes
    ----------
    sparse_as_dense : float
        When every rank's row_sparse push is gathered, each rank receives
        ``W * max_nnz`` rows (``max_nnz``: the most rows one rank pushes). Above
        ``sparse_as_dense * R`` rows (``R``: rows of the key) the sum goes
        through a dense all-reduce of ``R`` rows instead; the result is the same
        row_sparse sum. ``float('inf')`` always gathers, ``0`` always reduces
        densely. Default 0.5, from the crossover measured on a 2-core machine
        (gloo over loopback, 2 ranks, a 1 000 000 x 16 float32 key, median of 5
        pushes; density ``W * nnz / R``): 0.01: gather 11 ms, dense 384 ms;
        0.1: 60 vs 253 ms; 0.3: 138 vs 340 ms; 0.6: 240 vs 253 ms; 0.8: 377 vs
        294 ms (a 100 000 x 16 key crosses over at about the same density).

    Raises
    ------
    DistributedError
        The launcher environment is missing (run under ``torchrun`` or
        ``sparsenet launch -n N``), or the rendezvous failed.

    Examples
    --------
    Every rank of ``torchrun --nproc-per-node=2 train.py`` runs::

        kv = mx.kv.create('dist_sync')
        kv.init('w', mx.nd.zeros((4, 2)))            # rank 0's value everywhere
        kv.push('w', grad)                           # summed over the ranks
        kv.pull('w', out=w)
        kv.init_sharded('emb', (10_000_000, 64), init=mx.init.Uniform(0.01))
        kv.row_sparse_pull('emb', out=rows, row_ids=batch_ids)
    """

    sparse_as_dense = 0.5

    def __init__(self, name="dist_sync", timeout=None):
        if name not in DIST_TYPES:
            raise InvalidArgumentError(f"kvstore create: unknown distributed store {name!r}; "
                                       f"expected one of {', '.join(map(repr, DIST_TYPES))}")
        super().__init__(name)
        device = None
        if "device" in name and torch.cuda.is_available():
            device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        collective.ensure_process_group(timeout, device=device)
        self._sharded = {}
        profiler.note_kvstore(self, distributed=True)

    # ------------------------------------------------------------------ properties
    @property
    def rank(self):
        """This worker's rank in the process group."""
        return collective.rank()

    @property
    def num_workers(self):
        """The number of workers (the world size)."""
        return collective.world_size()

    # ------------------------------------------------------------------ collective checks
    def _agree(self, op, check, key=None):
        """Run ``check()`` (returns what every rank must agree on) and agree on its outcome:
        a local error becomes the same DistributedError on every rank."""
        try:
            signature, ok, problem = check(), True, ""
        except (SparsenetError, TypeError, ValueError, IndexError) as e:
            signature, ok, problem = "failed", False, f"{type(e).__name__}: {e}"
        collective.agree(ok, problem, op=op, key=key, signature=f"{op}: {signature}")

    # ------------------------------------------------------------------ hooks
    @profiler.traced("broadcast")
    def _init_value(self, key, value):
        """Rank 0's value, broadcast to every rank."""
        parts = [value._t] if value.stype == DEFAULT else list(value._parts())
        lengths = torch.tensor([p.shape[0] if p.dim() else 1 for p in parts], dtype=torch.int64)
        lengths = collective.broadcast_from0(lengths, op="init", key=key).tolist()
        out = []
        for p, n in zip(parts, lengths):
            if p.dim() == 0:
                buf = p.detach().clone()
            elif collective.rank() == 0:
                buf = p.detach()
            else:
                buf = p.new_empty((n,) + tuple(p.shape[1:]))
            out.append(collective.broadcast_from0(buf, op="init", key=key)
                       if buf.numel() else buf)
        if value.stype == DEFAULT:
            return place(NDArray(out[0]), value.context)
        return place(type(value)._from_parts(*out, value.shape), value.context)

    def _borrows_pushed(self):
        """Never: the reduction over the ranks may write into this process's sum."""
        return False

    @profiler.traced("allreduce")
    def _reduce_all(self, merged):
        """Every rank's sum of this push's ``{key: merged}``, all keys in a few collectives
        (:func:`~sparsenet.kvstore.reduction.reduce_over_ranks`)."""
        return reduce_over_ranks(merged, self.sparse_as_dense, self._compression)

    # ------------------------------------------------------------------ init
    def _check_new(self, keys):
        for k in keys:
            if k in self._store or k in self._sharded:
                raise InvalidArgumentError(
                    f"kvstore init: duplicate init of key {k!r}. Please double check if you "
                    f"called kv.init or kv.broadcast with this key multiple times")

    def init(self, key, value, sharded=False):
        """Initialise ``key`` with rank 0's ``value`` (collective).

        Parameters
        ----------
        key : int, str or list of them
        value : NDArray or list of NDArray
            The value on rank 0 is used; every rank must give the same shape,
            dtype and storage type.
        sharded : bool, default False
            Store each key as a table range-partitioned over the ranks
            (:class:`~sparsenet.kvstore.sharded.ShardedRows`): rank 0's value is
            scattered, each rank keeping only its rows (and, later, their
            optimizer state). Use :meth:`init_sharded` for a table that must never
            be materialized whole.
        """
        self._init(key, value, sharded=sharded)

    @profiler.traced("init")
    def _init(self, key, value, replace=False, sharded=False):
        """:meth:`init`; with ``replace`` an ordinary key the store holds already is
        re-initialised with rank 0's value (see :meth:`KVStore._init`); a sharded one is not."""
        def check():
            pairs = self._pairs(key, value, "value")
            keys = [k for k, _ in pairs]
            if len(set(keys)) != len(keys):
                raise InvalidArgumentError(f"kvstore init: a key appears twice in {keys!r}")
            if not replace or sharded:
                self._check_new(keys)
            for k in keys:
                if k in self._sharded:
                    raise InvalidArgumentError(
                        f"kvstore init: key {k!r} is a sharded table; it cannot be "
                        f"re-initialised (use another key)")
            for k, vals in pairs:
                if len(vals) != 1:
                    raise InvalidArgumentError(f"kvstore init of key {k!r}: expected one value "
                                               f"per key, got a list of {len(vals)}")
                if sharded and vals[0].stype not in (DEFAULT, ROW_SPARSE):
                    raise StorageTypeError(f"kvstore init of sharded key {k!r}: expected a "
                                           f"default or row_sparse value, got {vals[0].stype}")
            return ", ".join(f"{k!r} {_describe(v[0])}" for k, v in pairs) + f" sharded={sharded}"
        self._agree("init", check)
        if not sharded:
            super()._init(key, value, replace)
            return
        for k, vals in self._pairs(key, value, "value"):
            v = vals[0]
            table = ShardedRows(k, v.shape, dtype=v.dtype, ctx=self._store_context(v))
            self._sharded[k] = table.scatter_from0(v)

    def init_sharded(self, key, shape, init=None, dtype=None, ctx=None):
        """Create the sharded table ``key`` of ``shape``, each rank initialising only its rows.

        Parameters
        ----------
        key : int or str
        shape : tuple of int
            The whole table's shape ``(R, D...)``; rank ``r`` holds rows
            ``[R*r//W, R*(r+1)//W)``.
        init : Initializer, str or callable, optional
            See :meth:`ShardedRows.fill`; zeros when None.
        dtype : str, default float32
        ctx : Context, optional
            Where the shard lives (default ``cpu(0)``).

        Returns
        -------
        ShardedRows
        """
        def check():
            self._key_type.check(check_key(key))
            self._check_new([key])
            return f"{key!r} {tuple(shape)} {dtype}"
        self._agree("init_sharded", check, key)
        table = ShardedRows(key, shape, dtype=dtype, ctx=ctx if ctx is not None else cpu(0))
        if init is not None:
            table.fill(init)
        self._sharded[key] = table
        return table

    def is_sharded(self, key):
        """Whether ``key`` was declared sharded (:meth:`init` with ``sharded=True`` or
        :meth:`init_sharded`)."""
        return key in self._sharded

    def sharded_table(self, key):
        """The :class:`~sparsenet.kvstore.sharded.ShardedRows` of a sharded key."""
        try:
            return self._sharded[key]
        except KeyError:
            raise InvalidArgumentError(f"kvstore: key {key!r} is not a sharded key; declare it "
                                       f"with kv.init(key, value, sharded=True) or "
                                       f"kv.init_sharded(key, shape)") from None

    # ------------------------------------------------------------------ push / pull
    def _touches_sharded(self, key):
        """Whether ``key`` (or a key of the list) is sharded: then the call is collective."""
        keys = key if isinstance(key, (list, tuple)) else [key]
        return any(not isinstance(k, (list, tuple)) and k in self._sharded for k in keys
                   if isinstance(k, (int, str)))

    def _updater_for(self, key):
        if self._updater is None:
            return None
        upd, k = self._updater, key.encode() if isinstance(key, str) else key
        return lambda _key, grad, weight: upd(k, grad, weight)

    @profiler.traced("push")
    def push(self, key, value, priority=0):
        """Sum ``value`` over this process's arrays and over the ranks, then update (collective).

        See :meth:`KVStore.push`; a sharded key's rows go to their owners, which
        apply the optimizer to their shard.
        """
        grouped, merged, tables = {}, {}, {}

        def check():  # every key's local sum, checked; one agreement for the whole push
            grouped.clear()
            merged.clear()
            tables.clear()
            check_priority(priority, "push")
            for k, values in self._pairs(key, value, "value"):
                if k not in self._store and k not in self._sharded:
                    raise InvalidArgumentError(f"kvstore push: key {k!r} has not been "
                                               f"initialized; call kv.init({k!r}, value) first")
                grouped.setdefault(k, []).extend(values)
            described = []
            for k, values in grouped.items():
                if k in self._sharded:
                    if self._compression is not None:
                        raise InvalidArgumentError(
                            f"kvstore push of key {k!r}: gradient compression does not apply "
                            f"to a sharded key (its rows are routed to their owners); use a "
                            f"store without set_gradient_compression for sharded keys")
                    table = self._sharded[k]
                    tables[k] = sum_pushed(k, values, table.shape, table.dtype, table.ctx)
                    described.append(f"{k!r} sharded")
                else:
                    merged[k] = self._merge(k, values)
                    if self._compression is not None:
                        self._compression.check(k, merged[k])
                    described.append(f"{k!r} {_describe(self._store[k])}")
            if self._compression is not None:  # every rank must send codes, or none
                described.append(f"compression {self._compression.describe()}")
            return ", ".join(described)
        self._agree("push", check)
        for k, total in self._reduce_all(merged).items():
            self._apply(k, total)
        for k, m in tables.items():
            self._sharded[k].push(m, self._updater_for(k))

    @profiler.traced("pull")
    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy ``key``'s value into ``out`` (see :meth:`KVStore.pull`).

        An ordinary key is read from the local replica. A sharded key's table
        is gathered from every rank (collective: every rank must pull it).
        """
        if not self._touches_sharded(key):
            super().pull(key, out, priority, ignore_sparse)
            return
        pairs = []

        def check():
            check_priority(priority, "pull")
            if out is None:
                raise InvalidArgumentError(f"kvstore pull of key {key!r}: out is required (the "
                                           f"array or list of arrays to copy the value into)")
            pairs[:] = self._pairs(key, out, "out")
            for k, outs in pairs:
                shape = self._sharded[k].shape if k in self._sharded else \
                    self._stored(k, "pull").shape
                for o in outs:
                    if tuple(o.shape) != tuple(shape):
                        raise ShapeError(f"kvstore pull of key {k!r}: out has shape {o.shape}, "
                                         f"the value has shape {tuple(shape)}")
            return repr([k for k, _ in pairs])
        self._agree("pull", check)
        for k, outs in pairs:
            if k not in self._sharded:
                super().pull(k, outs, priority, ignore_sparse)
                continue
            table = self._sharded[k]
            full = table.gather()
            for o in outs:
                if o.stype != DEFAULT and ignore_sparse:
                    warnings.warn(f"kvstore pull of key {k!r}: the out array has storage type "
                                  f"{o.stype}, so the pull into it was skipped (MXNet does the "
                                  f"same). Use kv.row_sparse_pull(key, out, row_ids=...) to pull "
                                  f"rows, or pass ignore_sparse=False to copy the whole table.",
                                  UserWarning, stacklevel=2)
                    continue
                full.copyto(o)

    @profiler.traced("row_sparse_pull")
    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Copy the rows ``row_ids`` of ``key`` into the row_sparse ``out`` (see
        :meth:`KVStore.row_sparse_pull`).

        An ordinary key is read from the local replica; a sharded key's rows are
        fetched from their owners (collective: every rank must call it, possibly
        with an empty ``row_ids``). Ids may be unsorted and repeated; an id out of
        range on any rank raises the same DistributedError on every rank.
        """
        if not self._touches_sharded(key):
            super().row_sparse_pull(key, out, priority, row_ids)
            return
        targets, ids = [], []

        def check():
            check_priority(priority, "row_sparse_pull")
            if out is None or row_ids is None:
                raise InvalidArgumentError(f"kvstore row_sparse_pull of key {key!r}: out and "
                                           f"row_ids are required")
            targets[:] = [(k, o) for k, outs in self._pairs(key, out, "out") for o in outs]
            ids[:] = flat_arrays(row_ids, "row_ids")
            if len(ids) == 1:
                ids[:] = ids * len(targets)
            elif len(ids) != len(targets):
                raise InvalidArgumentError(
                    f"kvstore row_sparse_pull: expected one row_ids array, or one per out "
                    f"({len(targets)}), got {len(ids)}")
            for (k, o), r in zip(targets, ids):
                shape = self._sharded[k].shape if k in self._sharded else \
                    self._stored(k, "row_sparse_pull").shape
                if o.stype != ROW_SPARSE:
                    raise StorageTypeError(f"kvstore row_sparse_pull of key {k!r}: out must be "
                                           f"row_sparse, got {o.stype}")
                if tuple(o.shape) != tuple(shape):
                    raise ShapeError(f"kvstore row_sparse_pull of key {k!r}: out has shape "
                                     f"{o.shape}, the value has shape {tuple(shape)}")
                if k not in self._sharded:
                    checked_row_ids(r, shape[0], k)
            return repr([k for k, _ in targets])
        self._agree("row_sparse_pull", check)
        for (k, o), r in zip(targets, ids):
            if k in self._sharded:
                self._sharded[k].pull(r).copyto(o)
            else:
                super().row_sparse_pull(k, o, priority, r)

    # ------------------------------------------------------------------ optimizer states
    def _states_file(self, fname):
        """Each rank's file when sharded keys make the ranks' states differ, else ``fname``."""
        if self._sharded:
            return f"{os.fspath(fname)}.rank{self.rank}-of-{self.num_workers}"
        return os.fspath(fname)

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Save the optimizer states (collective).

        Without sharded keys every rank holds the same states and rank 0 writes
        ``fname``. With sharded keys each rank writes its own states (replicated
        keys and its shards) to ``<fname>.rank<r>-of-<W>``;
        :meth:`load_optimizer_states` reads them back into as many ranks.
        """
        problem = ""
        try:
            self._need_updater("save_optimizer_states")
            if self._sharded or self.rank == 0:
                blob = self._updater.get_states(dump_optimizer)
                atomic_write(self._states_file(fname), lambda f: f.write(blob))
        except (SparsenetError, OSError) as e:
            problem = f"{type(e).__name__}: {e}"
        collective.agree(not problem, problem, op="save_optimizer_states",
                         signature="save_optimizer_states")

    def load_optimizer_states(self, fname):
        """Load the states written by :meth:`save_optimizer_states` (collective)."""
        problem = ""
        try:
            super().load_optimizer_states(self._states_file(fname))
        except (SparsenetError, OSError) as e:
            problem = f"{type(e).__name__}: {e}"
        collective.agree(not problem, problem, op="load_optimizer_states",
                         signature="load_optimizer_states")

    # ------------------------------------------------------------------ misc
    def barrier(self):
        """Wait until every rank reaches the barrier (bounded by the timeout)."""
        with profiler.kvstore_span("barrier"):
            collective.barrier()

    _barrier = barrier

    def __repr__(self):
        return (f"<DistKVStore {self._type!r} rank {self.rank} of {self.num_workers}: "
                f"{len(self._store)} keys, {len(self._sharded)} sharded>")

"""Row_sparse tables whose rows are range-partitioned over the ranks.

A :class:`ShardedRows` table of shape ``(R, D...)`` keeps on rank ``r`` of ``W``
only the rows ``[R*r//W, R*(r+1)//W)`` (the layout of MXNet's
``EncodeRowSparseKey`` and TorchRec's row-wise sharding), and the optimizer
state of those rows. A table larger than one process's memory trains this way,
as long as the rows of one batch fit:

``pull(row_ids)``
    three ``all_to_all_single`` exchanges (counts, ids to their owners, rows
    back); returns a :class:`~sparsenet.ndarray.row_sparse.RowSparseNDArray`
    of the unique sorted ids, as ``KVStore.row_sparse_pull``;
``push(grad, updater)``
    routes the gradient rows to their owners, which sum the duplicates coming
    from several ranks and apply the optimizer lazily to their shard (only the
    touched rows change), or store the sum when there is no optimizer (the
    pushed value replaces the table, as in MXNet's KVStore).

Every call is collective (every rank calls the same methods in the same order)
and checks its arguments on all ranks first (:func:`~sparsenet.kvstore.collective.agree`),
so a bad id on one rank raises the same :class:`~sparsenet.base.DistributedError`
on every rank.

>>> shard_bounds(10, 3)
[0, 3, 6, 10]
"""
import numpy as np
import torch

from ..base import InvalidArgumentError, dtype_name, numpy_dtype, torch_dtype
from ..context import as_context, place
from ..initializer import InitDesc, Initializer, Xavier
from ..initializer import create as create_initializer
from ..ndarray.ndarray import NDArray
from ..ndarray.row_sparse import RowSparseNDArray
from ..ndarray.serialization import save as nd_save
from . import collective

__all__ = ["ShardedRows", "shard_bounds", "INIT_BLOCK_ROWS"]

#: Rows per block when an initializer fills a sharded table (see :meth:`ShardedRows.fill`).
INIT_BLOCK_ROWS = 4096


def shard_bounds(num_rows, world):
    """Row ranges of the shards: rank ``r`` owns ``[bounds[r], bounds[r + 1])``.

    ``bounds[r] = num_rows * r // world`` (MXNet's and TorchRec's range split).

    >>> shard_bounds(5, 2)
    [0, 2, 5]
    """
    return [num_rows * r // world for r in range(world + 1)]


def _row_ids(row_ids, num_rows, device):
    """``(ids, problem)``: the int64 tensor of ``row_ids``, and what is wrong with them."""
    if isinstance(row_ids, NDArray):
        if row_ids.stype != "default":
            return None, f"row_ids must be a dense array, got stype {row_ids.stype!r}"
        t = row_ids._dense_tensor().detach()
    elif isinstance(row_ids, torch.Tensor):
        t = row_ids.detach()
    else:
        try:
            t = torch.as_tensor(np.asarray(row_ids))
        except (TypeError, ValueError) as e:
            return None, f"row_ids must be an array of integers, got {type(row_ids).__name__} ({e})"
    t = t.reshape(-1).to(device)
    if t.dtype.is_floating_point:
        if t.numel() and not bool((t == t.floor()).all()):
            bad = t[t != t.floor()][:5].tolist()
            return None, f"row_ids must be whole numbers, got {bad}"
    elif t.dtype == torch.bool or t.is_complex():
        return None, f"row_ids must be integers, got dtype {t.dtype}"
    t = t.to(torch.int64)
    bad = t[(t < 0) | (t >= num_rows)]
    if bad.numel():
        return None, (f"row id out of range [0, {num_rows}): {bad[:5].tolist()}"
                      + (f" and {bad.numel() - 5} more" if bad.numel() > 5 else ""))
    return t, ""


def _state_leaves(state, path=()):
    """``[(path, NDArray)]`` of an optimizer state (None, an array, or nested tuples/lists)."""
    if state is None:
        return []
    if isinstance(state, NDArray):
        return [(path, state)]
    if isinstance(state, (tuple, list)):
        out = []
        for i, s in enumerate(state):
            out.extend(_state_leaves(s, path + (i,)))
        return out
    raise InvalidArgumentError(f"cannot checkpoint an optimizer state of type "
                               f"{type(state).__name__}; expected arrays or tuples of arrays")


def _dense_local(arr):
    """The dense tensor of a shard's state array (row_sparse states are densified)."""
    return arr._dense_tensor()


class ShardedRows:
    """A table of shape ``(R, D...)`` whose rows are range-partitioned over the ranks.

    Creating it is collective: every rank constructs it with the same key,
    shape and dtype; each allocates only its own rows (zeros). Fill it with
    :meth:`fill` (an initializer, without ever materializing the whole table)
    or :meth:`scatter_from0` (rank 0's full value).

    Parameters
    ----------
    key : int or str
        The name used in messages and checkpoints.
    shape : tuple of int
        The shape of the whole table.
    dtype : str or numpy dtype, default float32
    ctx : Context, optional
        Where this rank's shard lives (default: the current context).

    Attributes
    ----------
    local : NDArray
        This rank's rows, shape ``(hi - lo, D...)``.
    lo, hi : int
        The global row range of :attr:`local`.
    bounds : list of int
        Every rank's range (:func:`shard_bounds`).

    Examples
    --------
    In a process group of ``W`` ranks (launched with ``torchrun``), every rank runs::

        table = ShardedRows('embed', (1_000_000, 64))
        table.fill(mx.init.Uniform(0.01))
        rows = table.pull(batch_ids)                 # RowSparseNDArray
        table.push(grad_rsp, updater)                # lazy update at the owners
    """

    def __init__(self, key, shape, dtype=None, ctx=None):
        self.key = key
        self.shape = tuple(int(s) for s in shape)
        self.dtype = numpy_dtype(dtype)
        self.ctx = as_context(ctx)
        collective.ensure_process_group(device=self.ctx.torch_device)
        ok = len(self.shape) >= 1 and all(s >= 0 for s in self.shape)
        collective.agree(ok, f"shape must be a tuple of sizes >= 0 with at least one axis, got "
                             f"{shape!r}", op="init (sharded)", key=key,
                         signature=f"init sharded key {key!r} shape {self.shape} "
                                   f"dtype {dtype_name(self.dtype)}")
        self.rank, self.world = collective.rank(), collective.world_size()
        self.bounds = shard_bounds(self.shape[0], self.world)
        self.lo, self.hi = self.bounds[self.rank], self.bounds[self.rank + 1]
        self._inner = torch.tensor(self.bounds[1:-1], dtype=torch.int64)
        tensor = torch.zeros((self.hi - self.lo,) + self.shape[1:], dtype=torch_dtype(self.dtype),
                             device=self.ctx.torch_device)
        self.local = self._wrap(tensor)

    def __repr__(self):
        return (f"<ShardedRows {self.key!r} {self.shape} {dtype_name(self.dtype)}: rank "
                f"{self.rank} of {self.world} holds rows [{self.lo}, {self.hi})>")

    # ------------------------------------------------------------------ helpers
    @property
    def _device(self):
        return self.ctx.torch_device

    def _wrap(self, tensor):
        return place(NDArray(tensor), self.ctx)

    def _rsp(self, data, ids, shape):
        return place(RowSparseNDArray._from_parts(data, ids, tuple(shape)), self.ctx)

    def _owners(self, ids):
        """Owner rank of each (sorted) id, and how many ids go to each rank."""
        owner = torch.bucketize(ids, self._inner.to(ids.device), right=True)
        return torch.bincount(owner, minlength=self.world).tolist()

    def _sig(self, op, extra=""):
        return f"{op} key {self.key!r} shape {self.shape} {extra}"

    # ------------------------------------------------------------------ filling
    def fill(self, init, name=None):
        """Initialize the table, each rank its own rows only.

        Parameters
        ----------
        init : Initializer, str or callable
            An initializer (``mx.init.Uniform(0.01)``, ``'zeros'``, ...) fills the
            table block by block: block ``b`` (rows ``[b*B, (b+1)*B)``,
            ``B = INIT_BLOCK_ROWS``) is drawn right after ``torch.manual_seed(seed + b)``,
            ``seed`` being rank 0's ``torch.randint(0, 2**62, (1,))`` (the global torch
            generator is left as it was, one draw further). So the table does not depend
            on the number of ranks, and a process seeded alike gives the same table.
            Initializers that read the array's shape (``Xavier``, ``MSRAPrelu``) are
            refused: a block's shape is not the table's. A callable is called
            ``init(lo, hi)`` and returns rows ``lo..hi-1`` (array-like of shape
            ``(hi - lo, D...)``).
        name : str, optional
            The name the initializer sees (default: ``'<key>_weight'``).
        """
        if isinstance(init, str):
            init = create_initializer(init)
        ok, problem = True, ""
        if isinstance(init, Xavier):
            ok, problem = False, (f"{type(init).__name__} reads the array's shape and cannot fill "
                                  f"a table block by block; use mx.init.Uniform/Normal with the "
                                  f"scale for shape {self.shape}, or a callable init(lo, hi)")
        elif not (isinstance(init, Initializer) or callable(init)):
            ok, problem = False, (f"init must be an Initializer, its name or a callable "
                                  f"init(lo, hi), got {type(init).__name__}")
        collective.agree(ok, problem, op="fill", key=self.key, signature=self._sig("fill"))
        local = self.local._t
        if not isinstance(init, Initializer):
            values = init(self.lo, self.hi)
            values = values._dense_tensor() if isinstance(values, NDArray) else \
                torch.as_tensor(np.asarray(values))
            ok = tuple(values.shape) == tuple(local.shape)
            collective.agree(ok, f"init({self.lo}, {self.hi}) returned shape "
                                 f"{tuple(values.shape)}, expected {tuple(local.shape)}",
                             op="fill", key=self.key, signature=self._sig("fill values"))
            local.copy_(values.to(dtype=local.dtype, device=local.device))
            return self
        seed = collective.broadcast_from0(torch.randint(0, 2 ** 62, (1,)), op="fill",
                                          key=self.key)
        seed = int(seed.item())
        desc = InitDesc(name if name is not None else f"{self.key}_weight")
        block = INIT_BLOCK_ROWS
        with torch.random.fork_rng(devices=[]):
            for b in range(self.lo // block, -(-self.hi // block)):
                start, stop = b * block, min((b + 1) * block, self.shape[0])
                torch.manual_seed(seed + b)
                chunk = self._wrap(torch.zeros((stop - start,) + self.shape[1:],
                                               dtype=local.dtype, device=local.device))
                init(desc, chunk)
                a, z = max(start, self.lo), min(stop, self.hi)
                local[a - self.lo:z - self.lo] = chunk._t[a - start:z - start]
        return self

    def scatter_from0(self, value):
        """Set the table to rank 0's ``value`` (dense or row_sparse, the whole table's shape).

        Only rank 0's value is read (MXNet initializes from worker 0); the other
        ranks may pass None. Rank 0 sends each owner its rows only.
        """
        ok, problem, ids, rows = True, "", None, None
        if self.rank == 0:
            if isinstance(value, RowSparseNDArray):
                ids, rows = value._indices, value._data
            elif isinstance(value, NDArray):
                rows = value._dense_tensor()
            elif value is None:
                ok, problem = False, "rank 0 must give the value of the table"
            else:
                rows = torch.as_tensor(np.asarray(value))
            if ok and tuple(value.shape if hasattr(value, "shape") else rows.shape) != self.shape:
                got = tuple(value.shape if hasattr(value, "shape") else rows.shape)
                ok, problem = False, f"the value has shape {got}, the table {self.shape}"
            if ok and ids is None:
                ids = torch.arange(self.shape[0], device=rows.device)
        collective.agree(ok, problem, op="init (sharded)", key=self.key,
                         signature=self._sig("scatter"))
        local = self.local._t
        if self.rank == 0:
            ids = ids.to(self._device)
            rows = rows.detach().to(device=self._device, dtype=local.dtype)
            counts = self._owners(ids)
        else:
            ids = torch.empty(0, dtype=torch.int64, device=self._device)
            rows = local.new_empty((0,) + self.shape[1:])
            counts = [0] * self.world
        got_ids, recv = collective.all_to_all_v(ids, counts, op="init (sharded)", key=self.key)
        got_rows, _ = collective.all_to_all_v(rows, counts, recv, op="init (sharded)",
                                              key=self.key)
        local.zero_()
        if got_ids.numel():
            local[got_ids - self.lo] = got_rows
        return self

    # ------------------------------------------------------------------ pull / push
    def pull(self, row_ids):
        """The rows ``row_ids`` of the table, as a RowSparseNDArray of the unique sorted ids.

        Ids may be unsorted, repeated, or empty on some ranks; an id out of range
        on any rank raises :class:`~sparsenet.base.DistributedError` on every rank.
        """
        ids, problem = _row_ids(row_ids, self.shape[0], self._device)
        collective.agree(ids is not None, problem, op="row_sparse_pull", key=self.key,
                         signature=self._sig("row_sparse_pull"))
        ids = torch.unique(ids)  # sorted, so already grouped by owner
        send = self._owners(ids)
        req, recv = collective.all_to_all_v(ids, send, op="row_sparse_pull", key=self.key)
        rows = self.local._t.index_select(0, req - self.lo)
        got, _ = collective.all_to_all_v(rows, recv, send, op="row_sparse_pull", key=self.key)
        return self._rsp(got, ids, self.shape)

    def push(self, grad, updater=None):
        """Send the rows of ``grad`` to their owners, which sum them and update their shard.

        Parameters
        ----------
        grad : RowSparseNDArray or NDArray
            This rank's gradient for the whole table (a dense one sends every row).
        updater : Updater, optional
            Applied by each owner to its shard with the summed row_sparse gradient
            re-indexed to local rows (``updater(key, grad, shard)``; lazy optimizers
            change only the touched rows). Every owner calls it once per push, rows or
            not, so step counts stay the same on every rank. Without it the summed
            rows replace the table (untouched rows become zero), as MXNet's KVStore
            stores a pushed value.
        """
        ok, problem = True, ""
        if not isinstance(grad, NDArray) or grad.stype not in ("default", "row_sparse"):
            ok, problem = False, (f"push expects a dense or row_sparse NDArray, got "
                                  f"{getattr(grad, 'stype', type(grad).__name__)}")
        elif tuple(grad.shape) != self.shape:
            ok, problem = False, (f"the gradient has shape {tuple(grad.shape)}, the table "
                                  f"{self.shape}")
        elif grad.dtype != self.dtype:
            ok, problem = False, (f"the gradient has dtype {dtype_name(grad.dtype)}, the table "
                                  f"{dtype_name(self.dtype)}")
        collective.agree(ok, problem, op="push", key=self.key, signature=self._sig("push"))
        if isinstance(grad, RowSparseNDArray):
            ids, rows = grad._indices.to(self._device), grad._data.to(self._device)
        else:
            rows = grad._dense_tensor().to(self._device)
            ids = torch.arange(self.shape[0], device=self._device)
        send = self._owners(ids)
        got_ids, recv = collective.all_to_all_v(ids, send, op="push", key=self.key)
        got_rows, _ = collective.all_to_all_v(rows.detach(), send, recv, op="push", key=self.key)
        local_ids, inverse = torch.unique(got_ids - self.lo, return_inverse=True)
        summed = got_rows.new_zeros((local_ids.numel(),) + self.shape[1:])
        summed.index_add_(0, inverse, got_rows)
        local = self.local
        if updater is None:
            local._t.zero_()
            local._t[local_ids] = summed
            return
        local_grad = self._rsp(summed, local_ids, local.shape)
        updater(self.key, local_grad, local)

    # ------------------------------------------------------------------ whole table
    def gather(self):
        """The whole table (dense NDArray) on every rank (checkpoints, tests)."""
        collective.agree(True, op="gather", key=self.key, signature=self._sig("gather"))
        full, _ = collective.allgather_v(self.local._t, op="gather", key=self.key)
        return self._wrap(full)

    def gather_to0(self):
        """The whole table (dense NDArray) on rank 0; None on the other ranks."""
        collective.agree(True, op="gather", key=self.key, signature=self._sig("gather_to0"))
        full, _ = collective.gather_v_to0(self.local._t, op="gather", key=self.key)
        return None if full is None else self._wrap(full)

    def save(self, fname):
        """Gather the table to rank 0, which writes it with ``mx.nd.save`` as ``{key: array}``
        (row_sparse, every row stored, as MXNet saves a row_sparse parameter); collective."""
        full = self.gather_to0()
        ok, problem = True, ""
        if full is not None:
            ids = torch.arange(self.shape[0], device=full.device)
            try:
                nd_save(fname, {str(self.key): self._rsp(full._t, ids, self.shape)})
            except OSError as e:
                ok, problem = False, f"cannot write {fname!r}: {e}"
        collective.agree(ok, problem, op="save", key=self.key, signature=self._sig("save"))

    # ------------------------------------------------------------------ sharded checkpoints
    def _range_key(self, what, lo, hi):
        return f"{self.key}.{what}.rows_{lo}_{hi}"

    def state_dict(self, states=None):
        """This rank's tensors for ``torch.distributed.checkpoint``: the shard and, when given,
        the optimizer ``states`` of this key (an Updater's ``states[key]``), each under a key
        that names its global row range, so that :meth:`load_state_dict` reshards."""
        out = {self._range_key("weight", self.lo, self.hi): self.local._t}
        for path, arr in _state_leaves(states):
            tag = "state" + "".join(f"_{i}" for i in path)
            out[self._range_key(tag, self.lo, self.hi)] = _dense_local(arr)
        return out

    def save_dcp(self, path, updater=None):
        """Write every rank's shard (and optimizer state) with ``torch.distributed.checkpoint``.

        Collective. Each rank writes its own rows; :meth:`load_dcp` reads them back
        into any number of ranks. With ``updater``, its state for this key and its
        step counts are saved too.
        """
        states = None
        if updater is not None and self.key in updater.states:
            states = updater.states[self.key]
        collective.agree(True, op="save_dcp", key=self.key, signature=self._sig("save_dcp"))
        sd = self.state_dict(states)
        if updater is not None:
            opt = updater.optimizer
            sd[f"{self.key}.num_update"] = torch.tensor(
                [opt.num_update, opt._index_update_count.get(self.key, 0)], dtype=torch.int64)
        collective.checkpoint_save(sd, path, key=self.key)

    def load_dcp(self, path, updater=None):
        """Read a checkpoint written by :meth:`save_dcp`, with any number of ranks (collective).

        Each rank reads the saved ranges that overlap its rows. With ``updater``,
        the optimizer state of this key is restored too (created first if needed).
        """
        try:
            meta = collective.checkpoint_keys(path)
            problem = ""
        except (OSError, ValueError, RuntimeError) as e:
            meta, problem = {}, f"cannot read the checkpoint {str(path)!r}: {e}"
        prefix = f"{self.key}."
        ranges = {}
        for name in meta:
            if name.startswith(prefix) and ".rows_" in name:
                what, rng = name[len(prefix):].rsplit(".rows_", 1)
                lo, hi = (int(x) for x in rng.split("_"))
                ranges.setdefault(what, []).append((lo, hi))
        if not problem and "weight" not in ranges:
            problem = f"the checkpoint {str(path)!r} has no table {self.key!r}"
        if not problem:
            covered = sorted(ranges["weight"])
            if covered[0][0] != 0 or covered[-1][1] != self.shape[0] or any(
                    a[1] != b[0] for a, b in zip(covered, covered[1:])):
                problem = (f"the checkpoint's rows of {self.key!r} {covered} do not cover the "
                           f"table's {self.shape[0]} rows")
        collective.agree(not problem, problem, op="load_dcp", key=self.key,
                         signature=self._sig("load_dcp"))
        leaves = []
        if updater is not None:
            if self.key not in updater.states:
                updater.states[self.key] = updater.optimizer.create_state_multi_precision(
                    self.key, self.local)
                updater.states_synced[self.key] = True
            leaves = _state_leaves(updater.states[self.key])
        targets = [("weight", self.local._t)]
        targets += [("state" + "".join(f"_{i}" for i in p), _dense_local(a)) for p, a in leaves]
        sd, plan = {}, []
        for what, dst in targets:
            for lo, hi in ranges.get(what, []):
                a, z = max(lo, self.lo), min(hi, self.hi)
                if a < z:
                    buf = dst.new_empty((hi - lo,) + tuple(dst.shape[1:]))
                    sd[self._range_key(what, lo, hi)] = buf
                    plan.append((dst, buf, a - self.lo, z - self.lo, a - lo, z - lo))
        counts_key = f"{self.key}.num_update"
        if updater is not None and counts_key in meta:
            sd[counts_key] = torch.zeros(2, dtype=torch.int64)
        collective.checkpoint_load(sd, path, key=self.key)
        for dst, buf, d0, d1, s0, s1 in plan:
            dst[d0:d1] = buf[s0:s1]
        for (_, arr), (_, dst) in zip(leaves, targets[1:]):
            if arr.stype != "default":  # row_sparse state: store the loaded rows
                arr._replace(self._rsp(dst, torch.arange(dst.shape[0], device=dst.device),
                                       dst.shape))
        if counts_key in sd:
            num_update, count = sd[counts_key].tolist()
            opt = updater.optimizer
            opt.num_update = max(opt.num_update, num_update)
            opt._index_update_count[self.key] = count

"""Collective operations over ``torch.distributed``, with finite timeouts and clear errors.

This is the only module of sparsenet that calls ``torch.distributed``. The
distributed KVStore (:mod:`sparsenet.kvstore.dist`) and the sharded tables
(:mod:`sparsenet.kvstore.sharded`) exchange tensors through the functions here:

``ensure_process_group``
    join (or create, from the ``torchrun`` environment) the default process
    group, with a finite timeout; it is destroyed at exit.
``agree``
    the collective error check made before every exchange: if any rank found a
    problem (bad ids, another key, another shape), every rank raises the same
    :class:`~sparsenet.base.DistributedError`, naming the rank(s) and their
    message, instead of one rank raising while the others wait in the next
    collective until the timeout.
``allgather_v``, ``all_to_all_v``, ``all_reduce_sum``, ``broadcast_from0``, ``barrier``
    the exchanges, with uneven sizes along dim 0 where the name says ``_v``.

Every collective runs under a guard: a peer that died (gloo's "Connection
closed by peer"), a timeout or any other backend failure becomes a
:class:`~sparsenet.base.DistributedError` naming this rank, the operation, the
key and the peer ranks found dead on this host (each rank records its host and
process id when it joins). After such a failure the process group is unusable
and every later call raises at once, never hangs.

Tensors may live on any device: with gloo they travel through the CPU, with
NCCL through the current CUDA device, and come back on the device they came from.

>>> from sparsenet.kvstore import collective
>>> collective.timeout_seconds(30)
30.0
"""
import atexit
import contextlib
import datetime
import hashlib
import os
import socket
import threading
import time

import torch
import torch.distributed as dist

from ..base import DistributedError, InvalidArgumentError

__all__ = ["DEFAULT_TIMEOUT", "MAX_TIMEOUT", "ensure_process_group", "shutdown", "rank",
           "world_size", "joined_world",
           "timeout_seconds", "agree", "allgather_v", "all_to_all_v", "exchange_counts",
           "gather_v_to0", "allgather", "all_reduce_sum", "broadcast_from0", "barrier",
           "all_gather_objects", "checkpoint_save", "checkpoint_load", "checkpoint_keys"]

#: Seconds a collective may wait for its peers when neither ``timeout=`` nor the
#: environment variable ``SPARSENET_DIST_TIMEOUT`` says otherwise.
DEFAULT_TIMEOUT = 600.0

#: The longest timeout accepted, in seconds (about 31.7 years). ``datetime.timedelta``
#: overflows past about 8.6e13 s, and torch.distributed counts a deadline in int64
#: nanoseconds, so from about 9.2e9 s its rendezvous fails at once ("timed out after 0
#: seconds").
MAX_TIMEOUT = 1e9

_LAUNCH_ENV = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
_LAUNCH_HINT = ("launch the script with `torchrun --nproc-per-node=N script.py` or "
                "`sparsenet launch -n N script.py` (they set RANK, WORLD_SIZE, MASTER_ADDR "
                "and MASTER_PORT), or call torch.distributed.init_process_group first")
# how long a failed collective waits for a dead peer's process to disappear before the
# error is raised without naming it (a rank that raised may still be printing its traceback)
_DEATH_GRACE = 3.0
# how long exiting waits for the process group's teardown
_DESTROY_WAIT = 10.0


class _State:
    """What this process knows about the process group it joined."""

    def __init__(self):
        self.owned = False       # created here (destroyed at exit) or by the user
        self.atexit = False
        self.peers = None        # [(host, pid)] by rank
        self.broken = None       # message of the failure that made the group unusable
        self.timeout = None


_STATE = _State()


def timeout_seconds(timeout=None):
    """The collective timeout in seconds: ``timeout``, else ``SPARSENET_DIST_TIMEOUT``, else 600.

    Accepted: a number of seconds in ``(0, MAX_TIMEOUT]`` (:data:`MAX_TIMEOUT`, 1e9 s);
    anything else raises ``InvalidArgumentError`` naming ``timeout`` or the variable.

    Parameters
    ----------
    timeout : float or datetime.timedelta, optional

    Returns
    -------
    float

    Examples
    --------
    >>> import datetime
    >>> timeout_seconds(datetime.timedelta(minutes=2))
    120.0
    """
    where = "timeout"
    if timeout is None:
        env = os.environ.get("SPARSENET_DIST_TIMEOUT")
        if env is None or env.strip() == "":
            return DEFAULT_TIMEOUT
        timeout, where = env, "environment variable SPARSENET_DIST_TIMEOUT"
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    try:
        value = float(timeout)
    except (TypeError, ValueError, OverflowError):
        value = float("nan")
    if not 0 < value <= MAX_TIMEOUT:
        raise InvalidArgumentError(f"{where} must be a finite number of seconds > 0, got "
                                   f"{timeout!r} (the longest accepted is {MAX_TIMEOUT:g} s, "
                                   f"about 31 years)")
    return value


def _backend_for(device):
    return "nccl" if device is not None and torch.device(device).type == "cuda" else "gloo"


def ensure_process_group(timeout=None, device=None):
    """Join the default process group, creating it from the ``torchrun`` environment if needed.

    A group the user initialized is used as it is. Otherwise the group is created
    with backend gloo (NCCL when ``device`` is a CUDA device), the rank and world
    size of ``RANK``/``WORLD_SIZE``, the rendezvous at ``MASTER_ADDR:MASTER_PORT``
    and a finite timeout (:func:`timeout_seconds`), and it is destroyed at exit.
    Idempotent. Every rank must call it (it exchanges host names and process ids).

    Parameters
    ----------
    timeout : float, optional
        Seconds a collective may wait (default: ``SPARSENET_DIST_TIMEOUT`` or 600).
    device : torch.device, optional
        The device the caller's arrays live on (CUDA selects NCCL).

    Raises
    ------
    DistributedError
        The launcher environment is missing or the rendezvous failed.
    """
    if not dist.is_available():
        raise DistributedError("torch.distributed is not available in this build of torch; "
                               "the dist_* KVStores need it")
    if _STATE.broken is not None:
        raise DistributedError(_STATE.broken)
    if not dist.is_initialized():
        seconds = timeout_seconds(timeout)
        missing = [k for k in _LAUNCH_ENV if not os.environ.get(k)]
        if missing:
            raise DistributedError(f"a distributed KVStore needs the launcher environment, "
                                   f"missing: {', '.join(missing)}; {_LAUNCH_HINT}")
        try:
            rank_, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        except ValueError as e:
            raise DistributedError(f"RANK and WORLD_SIZE must be integers, got "
                                   f"RANK={os.environ['RANK']!r}, "
                                   f"WORLD_SIZE={os.environ['WORLD_SIZE']!r}") from e
        backend = _backend_for(device)
        if backend == "nccl":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        try:
            dist.init_process_group(backend, rank=rank_, world_size=world,
                                    timeout=datetime.timedelta(seconds=seconds))
        except (RuntimeError, ValueError) as e:
            raise DistributedError(
                f"rank {rank_}: could not join the process group of {world} ranks at "
                f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']} within {seconds:g} s "
                f"({_first_line(e)}); check that every rank was started with the same "
                f"MASTER_ADDR/MASTER_PORT and WORLD_SIZE") from e
        _STATE.owned = True
        _STATE.timeout = seconds
        if not _STATE.atexit:
            atexit.register(shutdown)
            _STATE.atexit = True
    if _STATE.peers is None:
        mine = (socket.gethostname(), os.getpid())
        _STATE.peers = [tuple(p) for p in all_gather_objects(mine, op="join")]


def shutdown():
    """Destroy the process group created by :func:`ensure_process_group` (idempotent).

    Registered with ``atexit``; a group the user created is left to the user.

    >>> shutdown()  # nothing to do outside a distributed run
    """
    if _STATE.owned and dist.is_available() and dist.is_initialized():
        # bounded: with a peer gone, some torch releases block in the teardown; a process
        # that is exiting must not hang on it
        done = threading.Event()

        def destroy():
            try:
                dist.destroy_process_group()
            except RuntimeError:
                pass
            finally:
                done.set()
        threading.Thread(target=destroy, name="sparsenet-pg-destroy", daemon=True).start()
        done.wait(_DESTROY_WAIT)
    _STATE.owned = False
    _STATE.peers = None
    _STATE.broken = None


def rank():
    """This process's rank in the default group (0 outside a distributed run).

    >>> rank()
    0
    """
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def world_size():
    """The number of ranks in the default group (1 outside a distributed run).

    >>> world_size()
    1
    """
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def joined_world():
    """``(world size, rank)`` once a distributed KVStore joined the process group in this
    process (:func:`ensure_process_group`), else ``(None, None)``: what the LibSVM
    iterator's ``num_parts``/``part_index`` default to.

    >>> joined_world()
    (None, None)
    """
    if _STATE.peers is None or not (dist.is_available() and dist.is_initialized()):
        return None, None
    return dist.get_world_size(), dist.get_rank()


# ---------------------------------------------------------------------- failures
def _first_line(exc):
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def _process_gone(pid):
    """Whether process ``pid`` (on this host) has exited (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2:stat.rindex(b")") + 3] in (b"Z", b"X")
    except FileNotFoundError:
        return True
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _dead_peers(wait):
    """Ranks on this host whose process has exited, waiting up to ``wait`` seconds for one."""
    peers = _STATE.peers or []
    host, me = socket.gethostname(), rank()
    local = [(r, pid) for r, (h, pid) in enumerate(peers) if h == host and r != me]
    deadline = time.monotonic() + wait
    while True:
        dead = [r for r, pid in local if _process_gone(pid)]
        if dead or time.monotonic() >= deadline:
            return dead, len(local) < len(peers) - 1
        time.sleep(0.05)


def _failure_message(exc, op, key):
    text = str(exc)
    low = text.lower()
    timed_out = "timed out" in low or "timeout" in low
    where = f"rank {rank()}: {op}" + (f" of key {key!r}" if key is not None else "")
    if timed_out:
        dead, remote = _dead_peers(0.0)
        what = (f"timed out after {_STATE.timeout or timeout_seconds():g} s waiting for the other "
                f"ranks (a rank is hung, slow, or calls the collectives in another order)")
    else:
        dead, remote = _dead_peers(_DEATH_GRACE)
        what = "lost the connection to a peer"
    if dead:
        who = f"; dead peer rank(s): {dead}"
    else:
        who = ("; no peer process on this host has exited"
               + (" (peers on other hosts could not be checked)" if remote else ""))
    return (f"{where} failed: {what}{who} ({_first_line(exc)}). The process group cannot be "
            f"used any more: stop this process and restart the job (torchrun --max-restarts "
            f"restarts it)")


@contextlib.contextmanager
def _guard(op, key=None):
    """Turn a backend failure inside the block into a DistributedError; refuse a broken group."""
    if _STATE.broken is not None:
        raise DistributedError(f"rank {rank()}: {op} refused: an earlier collective failed: "
                               f"{_STATE.broken}")
    if not (dist.is_available() and dist.is_initialized()):
        raise DistributedError(f"{op}: no process group; {_LAUNCH_HINT}")
    try:
        yield
    except DistributedError:
        raise
    except RuntimeError as e:
        msg = _failure_message(e, op, key)
        _STATE.broken = msg
        raise DistributedError(msg) from e


def _comm_device():
    if dist.is_available() and dist.is_initialized() and dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


# ---------------------------------------------------------------------- agreement
def _fingerprint(text):
    """A 56-bit integer digest of ``text``, the same in every process."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=7).digest(), "little")


def agree(ok, message="", *, op, key=None, signature=""):
    """Collective error check: raise the same DistributedError on every rank if any rank failed.

    Every rank calls it with its own verdict before an exchange. ``signature``
    describes what must be the same on every rank (operation, key, shape,
    dtype); ranks whose signatures differ are reported as a mismatch. Costs one
    all-reduce of three integers; messages are gathered only when something failed.

    Parameters
    ----------
    ok : bool
        This rank's verdict.
    message : str
        What is wrong here (used when ``ok`` is False).
    op, key : str
        The operation and key, for the message.
    signature : str
        What every rank must agree on.

    Raises
    ------
    DistributedError
        On every rank, naming the failing rank(s) and their messages.
    """
    where = f"{op}" + (f" of key {key!r}" if key is not None else "")
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() == 1:
        if not ok:  # one rank: nothing to exchange
            raise DistributedError(f"{where} failed on 1 of 1 rank(s): rank 0: {message}")
        return
    fp = _fingerprint(signature)
    flags = torch.tensor([0 if ok else 1, fp, -fp], dtype=torch.int64, device=_comm_device())
    with _guard(op, key):
        dist.all_reduce(flags, op=dist.ReduceOp.MAX)
    flags = flags.tolist()
    if flags[0] == 0 and flags[1] == -flags[2]:
        return
    reports = all_gather_objects((bool(ok), str(message), signature), op=op, key=key)
    failed = [f"rank {r}: {m}" for r, (good, m, _) in enumerate(reports) if not good]
    if failed:
        raise DistributedError(f"{where} failed on {len(failed)} of {len(reports)} rank(s): "
                               + "; ".join(failed))
    calls = "; ".join(f"rank {r} called {s}" for r, (_, _, s) in enumerate(reports))
    raise DistributedError(f"{where}: the ranks disagree on the call ({calls}); every rank must "
                           f"call the same KVStore operations with the same keys, shapes and "
                           f"dtypes in the same order")


def all_gather_objects(obj, *, op, key=None):
    """Every rank's ``obj`` (picklable), as a list by rank."""
    with _guard(op, key):
        out = [None] * dist.get_world_size()
        dist.all_gather_object(out, obj)
    return out


# ---------------------------------------------------------------------- exchanges
def all_reduce_sum(tensor, *, op="all_reduce", key=None):
    """Sum ``tensor`` over the ranks; returns the sum (on the tensor's device)."""
    dev = _comm_device()
    t = tensor.to(dev).contiguous()
    with _guard(op, key):
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.to(tensor.device)


def broadcast_from0(tensor, *, op="broadcast", key=None):
    """Rank 0's ``tensor`` on every rank (same shape and dtype everywhere)."""
    dev = _comm_device()
    t = tensor.to(dev).contiguous()
    with _guard(op, key):
        dist.broadcast(t, src=0)
    return t.to(tensor.device)


def barrier(*, op="barrier", key=None):
    """Wait until every rank reaches this point (bounded by the timeout).

    It is an :func:`agree` with the signature ``op``: a rank that meanwhile calls
    another operation (whose first exchange is an ``agree`` as well) is reported as
    a mismatch instead of corrupting a collective.
    """
    agree(True, op=op, key=key, signature=op)


def allgather(tensor, *, op="allgather", key=None):
    """Every rank's ``tensor`` (same shape and dtype everywhere), stacked: shape ``(W, ...)``."""
    dev, world = _comm_device(), dist.get_world_size()
    t = tensor.to(dev).contiguous()
    parts = [torch.empty_like(t) for _ in range(world)]
    with _guard(op, key):
        dist.all_gather(parts, t)
    return torch.stack(parts).to(tensor.device)


def allgather_v(tensor, counts=None, *, op="allgather", key=None):
    """Concatenate every rank's ``tensor`` along dim 0; the sizes along dim 0 may differ.

    The counts are gathered first (unless given: every rank's ``tensor.shape[0]``),
    every tensor is padded to the largest and gathered, and the padding is cut off.

    Returns
    -------
    (torch.Tensor, list of int)
        The concatenation in rank order, and each rank's count.
    """
    dev, world = _comm_device(), dist.get_world_size()
    t = tensor.to(dev).contiguous()
    if counts is None:
        counts = allgather(torch.tensor([t.shape[0]], dtype=torch.int64), op=op,
                           key=key).reshape(-1).tolist()
    counts = [int(c) for c in counts]
    top = max(counts)
    rest = tuple(t.shape[1:])
    if top == 0:
        return tensor.new_empty((0,) + rest), counts
    if t.shape[0] < top:
        t = torch.cat([t, t.new_zeros((top - t.shape[0],) + rest)])
    parts = [t.new_empty((top,) + rest) for _ in range(world)]
    with _guard(op, key):
        dist.all_gather(parts, t)
    out = torch.cat([p[:c] for p, c in zip(parts, counts)])
    return out.to(tensor.device), counts


def gather_v_to0(tensor, *, op="gather", key=None):
    """Like :func:`allgather_v`, but only rank 0 receives (others get None): rank 0 alone
    needs the memory for the whole concatenation."""
    dev, world, me = _comm_device(), dist.get_world_size(), dist.get_rank()
    t = tensor.to(dev).contiguous()
    counts = allgather(torch.tensor([t.shape[0]], dtype=torch.int64), op=op,
                       key=key).reshape(-1).tolist()
    top, rest = max(counts), tuple(t.shape[1:])
    if top == 0:
        return (tensor.new_empty((0,) + rest), counts) if me == 0 else (None, counts)
    if t.shape[0] < top:
        t = torch.cat([t, t.new_zeros((top - t.shape[0],) + rest)])
    parts = [t.new_empty((top,) + rest) for _ in range(world)] if me == 0 else None
    with _guard(op, key):
        dist.gather(t, gather_list=parts, dst=0)
    if me != 0:
        return None, counts
    return torch.cat([p[:c] for p, c in zip(parts, counts)]).to(tensor.device), counts


def exchange_counts(send_counts, *, op="all_to_all", key=None):
    """``recv[j]`` = what rank ``j`` sends here, from every rank's ``send_counts`` (length W)."""
    dev = _comm_device()
    send = torch.as_tensor(send_counts, dtype=torch.int64).to(dev)
    recv = torch.empty_like(send)
    with _guard(op, key):
        dist.all_to_all_single(recv, send)
    return [int(c) for c in recv.tolist()]


def all_to_all_v(send, send_counts, recv_counts=None, *, op="all_to_all", key=None):
    """Send ``send[offsets[j]:offsets[j] + send_counts[j]]`` to rank ``j``; receive likewise.

    Parameters
    ----------
    send : torch.Tensor
        The rows for every rank, grouped by destination rank in rank order.
    send_counts : list of int
        Rows for each rank (length W).
    recv_counts : list of int, optional
        Rows coming from each rank; exchanged first when not given.

    Returns
    -------
    (torch.Tensor, list of int)
        The received rows, grouped by source rank in rank order, and ``recv_counts``.
    """
    send_counts = [int(c) for c in send_counts]
    if recv_counts is None:
        recv_counts = exchange_counts(send_counts, op=op, key=key)
    dev = _comm_device()
    t = send.to(dev).contiguous()
    out = t.new_empty((sum(recv_counts),) + tuple(t.shape[1:]))
    with _guard(op, key):
        dist.all_to_all_single(out, t, output_split_sizes=list(recv_counts),
                               input_split_sizes=send_counts)
    return out.to(send.device), list(recv_counts)


# ---------------------------------------------------------------------- checkpoints
def checkpoint_keys(path):
    """The tensor names stored in a ``torch.distributed.checkpoint`` folder (read locally)."""
    import torch.distributed.checkpoint as dcp  # heavy; only checkpoints need it
    return set(dcp.FileSystemReader(str(path)).read_metadata().state_dict_metadata)


def checkpoint_save(state_dict, path, *, key=None):
    """Write every rank's ``state_dict`` (tensors) to the folder ``path`` with
    ``torch.distributed.checkpoint`` (collective; tensors under the same name on
    several ranks are written once)."""
    import torch.distributed.checkpoint as dcp  # heavy; only checkpoints need it
    with _guard("save (torch.distributed.checkpoint)", key):
        dcp.save(state_dict, checkpoint_id=str(path))


def checkpoint_load(state_dict, path, *, key=None):
    """Fill this rank's ``state_dict`` tensors from the folder ``path`` (collective; each rank
    may ask for other names)."""
    import torch.distributed.checkpoint as dcp  # heavy; only checkpoints need it
    with _guard("load (torch.distributed.checkpoint)", key):
        dcp.load(state_dict, checkpoint_id=str(path))

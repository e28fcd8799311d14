"""Failures in a distributed run end with a clear DistributedError on every rank, never a hang.

A rank that raises, one that is SIGKILLed and one that hangs: the other ranks
raise a DistributedError naming the dead rank (or the timeout) within the
collective timeout, and a later collective is refused at once. Plus the checks
that need no process group (launcher environment, timeout, store names).
"""
import time

import pytest

import sparsenet as mx
from sparsenet.base import DistributedError, InvalidArgumentError
from sparsenet.kvstore import collective
from sparsenet.kvstore.sharded import shard_bounds
from tests.kvstore.dist_helpers import run_ranks

TIMEOUT = 6.0


def scenario_failure(rank, world, mode):
    """Rank 1 fails as ``mode`` says after init; the others push and report what they saw."""
    import os  # in the rank process
    kv = mx.kv.create("dist_sync")
    kv.init("w", mx.nd.zeros((4, 2)))
    if rank == 1:
        if mode == "raise":
            raise ValueError("boom on rank 1")
        if mode == "kill":
            os.kill(os.getpid(), 9)
        if mode == "hang":
            time.sleep(TIMEOUT + 1.0)
            return None
    start = time.monotonic()
    try:
        kv.push("w", mx.nd.ones((4, 2)))
    except DistributedError as e:
        first = (str(e), time.monotonic() - start)
    else:
        return {"first": None}
    start = time.monotonic()
    try:
        kv.push("w", mx.nd.ones((4, 2)))
    except DistributedError as e:
        second = (str(e), time.monotonic() - start)
    out = mx.nd.zeros((4, 2))
    kv.pull("w", out=out)  # the local replica is still readable
    return {"first": first, "second": second, "pulled": out.asnumpy().sum()}


def _dead_ranks(msg):
    head = msg.split("dead peer rank(s): [", 1)[1]
    return [int(x) for x in head.split("]", 1)[0].split(",")]


@pytest.mark.parametrize("mode,world", [("raise", 3), ("kill", 2)])
def test_a_dead_rank_is_named_on_the_others(mode, world):
    start = time.monotonic()
    results = run_ranks("tests.kvstore.test_dist_failures:scenario_failure", world, mode,
                        timeout=TIMEOUT, wall=60)
    assert time.monotonic() - start < 40
    if mode == "raise":
        assert results[1].error == ("ValueError", "boom on rank 1")
    else:
        assert results[1].returncode == -9 and not results[1].finished
    for r in results:
        if r.rank == 1:
            continue
        assert r.error is None, r.output
        msg, waited = r.value["first"]
        assert msg.startswith(f"rank {r.rank}: push") and "lost the connection to a peer" in msg
        assert 1 in _dead_ranks(msg)
        assert waited < TIMEOUT  # a dead peer is noticed at once, not at the timeout
        msg2, waited2 = r.value["second"]
        assert "refused: an earlier collective failed" in msg2 and waited2 < 0.5
        assert r.value["pulled"] == 0.0


def test_a_hung_rank_times_out():
    results = run_ranks("tests.kvstore.test_dist_failures:scenario_failure", 2, "hang",
                        timeout=TIMEOUT, wall=60)
    msg, waited = results[0].value["first"]
    assert "rank 0: push" in msg and f"timed out after {TIMEOUT:g} s" in msg
    assert TIMEOUT * 0.8 < waited < TIMEOUT + 5


# ---------------------------------------------------------------------- no process group needed
def test_missing_launcher_environment(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(DistributedError, match=r"missing: RANK, WORLD_SIZE, MASTER_ADDR, "
                                               r"MASTER_PORT; launch the script with `torchrun"):
        mx.kv.create("dist_sync")
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(DistributedError, match=r"missing: WORLD_SIZE, MASTER_ADDR, MASTER_PORT"):
        mx.kv.create("dist_async")


def test_timeout_setting(monkeypatch):
    monkeypatch.delenv("SPARSENET_DIST_TIMEOUT", raising=False)
    assert collective.timeout_seconds() == 600.0
    monkeypatch.setenv("SPARSENET_DIST_TIMEOUT", "12.5")
    assert collective.timeout_seconds() == 12.5
    assert collective.timeout_seconds(3) == 3.0
    monkeypatch.setenv("SPARSENET_DIST_TIMEOUT", "forever")
    with pytest.raises(InvalidArgumentError, match="SPARSENET_DIST_TIMEOUT must be a finite "
                                                   "number of seconds > 0, got 'forever'"):
        collective.timeout_seconds()
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="timeout must be a finite number"):
            collective.timeout_seconds(bad)


def test_unknown_dist_name():
    with pytest.raises(InvalidArgumentError, match="unknown distributed store 'dist_fast'"):
        mx.kv.create("dist_fast")


def test_shard_bounds_match_mxnet_range_split():
    # rank r of W owns [R*r//W, R*(r+1)//W): every row once, sizes differ by at most one
    assert shard_bounds(7, 2) == [0, 3, 7]
    assert shard_bounds(7, 3) == [0, 2, 4, 7]
    assert shard_bounds(2, 3) == [0, 0, 1, 2]  # more ranks than rows: an empty shard
    assert shard_bounds(0, 2) == [0, 0, 0]

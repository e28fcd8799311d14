"""The distributed KVStore and sharded tables on 2 and 3 gloo ranks, against one-process NumPy.

Each test spawns the ranks once (``dist_helpers.run_ranks``) and runs many
scenarios inside that run; the ranks return what they pulled, and the parent
compares it with the same computation done here with NumPy on the gradients
every rank pushed (the generators below are shared by parent and ranks).
"""
import math
import os

import numpy as np
import pytest
import torch

from tests.kvstore.dist_helpers import run_ranks, values

R, D = 7, 2          # 7 rows: shards [0,3,7) on 2 ranks and [0,2,4,7) on 3 (R % W != 0)
STEPS = 3
LR, MOM, WD = 0.1, 0.9, 0.01
B1, B2, EPS, ALR = 0.9, 0.999, 1e-8, 0.01


# ---------------------------------------------------------------------- shared generators
def grad_rows(rank, step, salt):
    """Rank ``rank``'s row_sparse gradient at ``step``: (sorted unique ids, rows); some empty,
    the others share a row at a shard boundary (3 on 2 ranks, 2 on 3 ranks)."""
    rng = np.random.RandomState(1000 * salt + 10 * step + rank)
    if (rank + step) % 3 == 2:
        return np.zeros(0, np.int64), np.zeros((0, D), np.float32)
    ids = rng.choice(R, size=rng.randint(1, 5), replace=False)
    ids = np.union1d(ids, [3 if step % 2 == 0 else 2]).astype(np.int64)  # shared by the ranks
    return ids, rng.uniform(-1, 1, (len(ids), D)).astype(np.float32)


def dense_grad(rank, step):
    rng = np.random.RandomState(500 + 10 * step + rank)
    return rng.uniform(-1, 1, (R, D)).astype(np.float32)


def pull_ids(rank, step):
    """Unsorted ids with duplicates and shard boundaries; empty for one rank at step 1."""
    if rank == 1 and step == 1:
        return np.zeros(0, np.int64)
    base = [[6, 2, 2, 3], [0, 4, 4, 3, 1], [5, 6, 0, 2]][(rank + step) % 3]
    return np.array(base, np.int64)


def initial(salt):
    rng = np.random.RandomState(salt)
    return rng.uniform(-1, 1, (R, D)).astype(np.float32)


def summed(step, salt, world):
    """(dense sum, union of ids) of every rank's gradient at ``step``."""
    total = np.zeros((R, D), np.float32)
    rows = set()
    for r in range(world):
        ids, vals = grad_rows(r, step, salt)
        total[ids] += vals
        rows.update(ids.tolist())
    return total, np.array(sorted(rows), np.int64)


# ---------------------------------------------------------------------- NumPy references
def ref_sgd_mom(w, salt, world):
    """Lazy SGD with momentum (MXNet's rule): only the pushed rows and their momentum move."""
    w, mom = w.copy(), np.zeros_like(w)
    for step in range(STEPS):
        g, rows = summed(step, salt, world)
        mom[rows] = MOM * mom[rows] - LR * WD * w[rows] - LR * g[rows]
        w[rows] += mom[rows]
    return w


def ref_adam(w, salt, world):
    """Lazy Adam: bias correction by the key's update count, only pushed rows move."""
    w = w.astype(np.float64)
    m, v = np.zeros_like(w), np.zeros_like(w)
    for step in range(STEPS):
        t = step + 1
        g, rows = summed(step, salt, world)
        g = g.astype(np.float64) + WD * w
        m[rows] = B1 * m[rows] + (1 - B1) * g[rows]
        v[rows] = B2 * v[rows] + (1 - B2) * g[rows] ** 2
        lr = ALR * math.sqrt(1 - B2 ** t) / (1 - B1 ** t)
        w[rows] -= lr * m[rows] / (np.sqrt(v[rows]) + EPS)
    return w


# ---------------------------------------------------------------------- what every rank runs
def _rsp(mx, ids, rows):
    return mx.nd.sparse.row_sparse_array((rows, ids), shape=(R, D))


def _catch(fn):
    """Run ``fn``; return (error type, message) when it raises a DistributedError."""
    import sparsenet as mx  # the scenario runs in the rank processes
    try:
        fn()
    except mx.base.DistributedError as e:
        return ("DistributedError", str(e))
    return None


def scenario_main(rank, world, ckpt_dir):
    import sparsenet as mx  # imported in the rank process, after the environment is set
    from sparsenet.kvstore import sharded
    out = {}
    kv = mx.kv.create("dist_sync")
    out["meta"] = (kv.type, kv.rank, kv.num_workers)

    # --- dense: rank 0's init wins; a list push is summed per rank, then over ranks
    kv.init("d", mx.nd.full((R, D), float(rank + 1)))
    o = mx.nd.zeros((R, D))
    kv.pull("d", out=o)
    out["d_init"] = o.asnumpy()
    g = dense_grad(rank, 0)
    kv.push("d", [mx.nd.array(g), mx.nd.array(2 * g, ctx=mx.cpu(1))])
    kv.pull("d", out=o)
    out["d_push"] = o.asnumpy()

    # --- row_sparse: gathered sum (sparse path) and the dense-threshold path
    kv.init(["r", "r_dense"], [mx.nd.zeros((R, D)).tostype("row_sparse")] * 2)
    ids, rows = grad_rows(rank, 0, salt=1)
    kv.sparse_as_dense = float("inf")  # always gather
    kv.push("r", _rsp(mx, ids, rows))
    kv.sparse_as_dense = 0.0
    kv.push("r_dense", _rsp(mx, ids, rows))
    kv.sparse_as_dense = float("inf")
    for name in ("r", "r_dense"):
        o = mx.nd.zeros((R, D))
        kv.pull(name, out=o)
        out[name] = o.asnumpy()
        pulled = mx.nd.sparse.zeros("row_sparse", (R, D))
        kv.row_sparse_pull(name, out=pulled, row_ids=mx.nd.array(pull_ids(rank, 0)))
        out[name + "_rsp"] = (pulled.indices.asnumpy(), pulled.data.asnumpy())

    # --- row_sparse init (rank 0's rows win), and a push mixing dense and row_sparse
    mine = [rank % R, (rank + 3) % R]
    kv.init("ri", _rsp(mx, np.array(sorted(mine)), np.full((2, D), rank + 1.0, np.float32)))
    o = mx.nd.zeros((R, D))
    kv.pull("ri", out=o)
    out["ri"] = o.asnumpy()
    kv.init("csr", mx.nd.array(np.eye(R, D, k=rank, dtype=np.float32)).tostype("csr"))
    kv.pull("csr", out=o)
    out["csr"] = o.asnumpy()
    kv.init("mix", mx.nd.zeros((R, D)))
    ids, rows = grad_rows(rank, 0, salt=1)
    kv.push("mix", mx.nd.array(dense_grad(0, 0)) if rank == 0 else _rsp(mx, ids, rows))
    kv.pull("mix", out=o)
    out["mix"] = o.asnumpy()

    # --- a sharded table with fewer rows than ranks (an empty shard on 3 ranks)
    kv.init("tiny", mx.nd.array([[1.0] * D, [2.0] * D]), sharded=True)
    pulled = mx.nd.sparse.zeros("row_sparse", (2, D))
    kv.row_sparse_pull("tiny", out=pulled, row_ids=mx.nd.array([1, 0, 1][:rank + 1]))
    out["tiny_pull"] = (pulled.indices.asnumpy(), pulled.data.asnumpy())
    kv.push("tiny", mx.nd.sparse.row_sparse_array(([[1.0] * D], [1]), shape=(2, D)))
    o = mx.nd.zeros((2, D))
    kv.pull("tiny", out=o)
    out["tiny"] = o.asnumpy()

    # --- sharded, no optimizer: rank 0's value scattered, a push replaces (MXNet's rule)
    kv.init("s", mx.nd.array(initial(7) + rank), sharded=True)
    o = mx.nd.zeros((R, D))
    kv.pull("s", out=o)
    out["s_init"] = o.asnumpy()
    for step in range(STEPS):
        pulled = mx.nd.sparse.zeros("row_sparse", (R, D))
        kv.row_sparse_pull("s", out=pulled, row_ids=mx.nd.array(pull_ids(rank, step)))
        out[f"s_pull{step}"] = (pulled.indices.asnumpy(), pulled.data.asnumpy())
    ids, rows = grad_rows(rank, 0, salt=2)
    kv.push("s", _rsp(mx, ids, rows))
    kv.pull("s", out=o)
    out["s_push"] = o.asnumpy()

    # --- errors found on one rank are raised on every rank; the group stays usable
    bad = [3, 99] if rank == world - 1 else [1]
    out["err_range"] = _catch(lambda: kv.row_sparse_pull(
        "s", out=mx.nd.sparse.zeros("row_sparse", (R, D)), row_ids=mx.nd.array(bad)))
    out["err_keys"] = _catch(lambda: kv.push("d" if rank == 0 else "r", mx.nd.zeros((R, D))))
    shape = (R, D) if rank == 0 else (R, D + 1)
    out["err_shape"] = _catch(lambda: kv.push("d", mx.nd.zeros(shape)))
    out["err_dup"] = _catch(lambda: kv.init("d", mx.nd.zeros((R, D))))
    out["err_ops"] = _catch(kv.barrier if rank == 0 else lambda: kv.push("d", mx.nd.zeros((R, D))))
    o = mx.nd.zeros((R, D))
    kv.pull("d", out=o)
    out["d_after_errors"] = o.asnumpy()

    # --- optimizers on replicated and sharded keys
    for opt_name, make in (("sgd", lambda: mx.optimizer.SGD(learning_rate=LR, momentum=MOM,
                                                             wd=WD)),
                           ("adam", lambda: mx.optimizer.Adam(learning_rate=ALR, beta1=B1,
                                                              beta2=B2, epsilon=EPS, wd=WD))):
        kvo = mx.kv.create("dist_sync")
        kvo.sparse_as_dense = float("inf")  # gathered rows are summed in rank order, as a shard's
        kvo.set_optimizer(make())
        kvo.init("rep", mx.nd.array(initial(3)))
        kvo.init("shard", mx.nd.array(initial(3)), sharded=True)
        for step in range(STEPS):
            ids, rows = grad_rows(rank, step, salt=5)
            for key in ("rep", "shard"):
                pulled = mx.nd.sparse.zeros("row_sparse", (R, D))
                kvo.row_sparse_pull(key, out=pulled, row_ids=mx.nd.array(pull_ids(rank, step)))
                kvo.push(key, _rsp(mx, ids, rows))
        for key in ("rep", "shard"):
            o = mx.nd.zeros((R, D))
            kvo.pull(key, out=o)
            out[f"{opt_name}_{key}"] = o.asnumpy()
        if opt_name == "adam":  # shards and their Adam state, written and read back
            path = os.path.join(ckpt_dir, f"dcp_w{world}")
            table = kvo.sharded_table("shard")
            table.save_dcp(path, kvo._updater)
            out["adam_local_state"] = [a.asnumpy() for a in kvo._updater.states["shard"]]
            fresh = mx.kv.create("dist_sync")
            fresh.set_optimizer(make())
            t2 = fresh.init_sharded("shard", (R, D))
            t2.load_dcp(path, fresh._updater)
            o = mx.nd.zeros((R, D))
            fresh.pull("shard", out=o)
            out["dcp_reload"] = o.asnumpy()
            out["dcp_state"] = [a.asnumpy() for a in fresh._updater.states["shard"]]
            out["dcp_count"] = fresh._updater.optimizer._index_update_count["shard"]
            kvo.save_optimizer_states(os.path.join(ckpt_dir, f"states_w{world}"))
            out["states_files"] = sorted(os.listdir(ckpt_dir))
            table.save(os.path.join(ckpt_dir, f"table_w{world}.nd"))

    # --- init_sharded: blocks drawn from rank 0's seed, the same table for any W
    sharded.INIT_BLOCK_ROWS = 3
    torch.manual_seed(1234 + rank)  # rank 0's seed decides
    kv.init_sharded("u", (R, D), init=mx.init.Uniform(0.5))
    kv.init_sharded("c", (R, D), init=lambda lo, hi: np.arange(lo * D, hi * D,
                                                               dtype=np.float32).reshape(-1, D))
    for key in ("u", "c"):
        o = mx.nd.zeros((R, D))
        kv.pull(key, out=o)
        out[f"init_{key}"] = o.asnumpy()
    out["err_xavier"] = _catch(lambda: kv.init_sharded("x", (R, D), init=mx.init.Xavier()))
    kv.barrier()
    return out


def scenario_reshard(rank, world, path, optimizer_kwargs):
    """Read a sharded checkpoint written by another number of ranks."""
    import sparsenet as mx  # imported in the rank process, after the environment is set
    kv = mx.kv.create("dist_sync")
    kv.set_optimizer(mx.optimizer.Adam(**optimizer_kwargs))
    table = kv.init_sharded("shard", (R, D))
    table.load_dcp(path, kv._updater)
    return {"table": table.gather().asnumpy(),
            "state": [a.asnumpy() for a in kv._updater.states["shard"]],
            "rows": (table.lo, table.hi)}


# ---------------------------------------------------------------------- checks
def _check_main(outs, world, tmp_path):
    rtol, atol = (0, 0) if world == 2 else (1e-6, 1e-7)
    for r, out in enumerate(outs):
        assert out["meta"] == ("dist_sync", r, world)
        np.testing.assert_array_equal(out["d_init"], np.full((R, D), 1.0, np.float32))
        expect = np.ones((R, D), np.float32) * 0  # push without optimizer: the sum replaces
        for q in range(world):
            expect = expect + (dense_grad(q, 0) + 2 * dense_grad(q, 0))
        np.testing.assert_allclose(out["d_push"], expect, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(out["d_after_errors"], out["d_push"])

        total, union = summed(0, 1, world)
        np.testing.assert_array_equal(out["r"], total)
        np.testing.assert_allclose(out["r_dense"], total, rtol=rtol, atol=atol)
        want_ids = np.unique(pull_ids(r, 0))
        for name in ("r", "r_dense"):
            got_ids, got_rows = out[name + "_rsp"]
            np.testing.assert_array_equal(got_ids, want_ids)
            np.testing.assert_allclose(got_rows, total[want_ids], rtol=rtol, atol=atol)

        want = np.zeros((R, D), np.float32)
        want[[0, 3]] = 1.0
        np.testing.assert_array_equal(out["ri"], want)
        np.testing.assert_array_equal(out["csr"], np.eye(R, D, dtype=np.float32))
        mix = dense_grad(0, 0) + sum(np.eye(R, dtype=np.float32)[grad_rows(q, 0, 1)[0]].T
                                     @ grad_rows(q, 0, 1)[1] for q in range(1, world))
        np.testing.assert_allclose(out["mix"], mix, rtol=1e-6, atol=1e-6)
        ids, rows = out["tiny_pull"]
        want_ids = np.unique([1, 0, 1][:r + 1])
        np.testing.assert_array_equal(ids, want_ids)
        np.testing.assert_array_equal(rows, np.array([[1.0] * D, [2.0] * D])[want_ids])
        np.testing.assert_array_equal(out["tiny"], [[0.0] * D, [float(world)] * D])

        np.testing.assert_array_equal(out["s_init"], initial(7))  # rank 0's value
        for step in range(STEPS):
            want = np.unique(pull_ids(r, step))
            got_ids, got_rows = out[f"s_pull{step}"]
            np.testing.assert_array_equal(got_ids, want)
            np.testing.assert_array_equal(got_rows, initial(7)[want].reshape(-1, D))
        np.testing.assert_array_equal(out["s_push"], summed(0, 2, world)[0])

        kind, msg = out["err_range"]
        assert f"rank {world - 1}: row id out of range [0, {R}): [99]" in msg
        assert "1 of" in msg and "row_sparse_pull of key 's'" in msg
        kind, msg = out["err_keys"]
        assert "disagree" in msg and "'d'" in msg and "'r'" in msg
        kind, msg = out["err_shape"]
        assert "ShapeError" in msg and f"({R}, {D + 1})" in msg
        assert all(f"rank {q}:" in msg for q in range(1, world)) and "rank 0:" not in msg
        kind, msg = out["err_ops"]
        assert "rank 0 called barrier; rank 1 called push: 'd' default float32" in msg
        kind, msg = out["err_dup"]
        assert f"failed on {world} of {world}" in msg and "duplicate init of key 'd'" in msg

        w0 = initial(3)
        np.testing.assert_allclose(out["sgd_rep"], ref_sgd_mom(w0, 5, world), rtol=1e-6,
                                   atol=1e-6)
        np.testing.assert_array_equal(out["sgd_shard"], out["sgd_rep"])
        np.testing.assert_allclose(out["adam_rep"], ref_adam(w0, 5, world), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_array_equal(out["adam_shard"], out["adam_rep"])

        np.testing.assert_array_equal(out["dcp_reload"], out["adam_shard"])
        for a, b in zip(out["dcp_state"], out["adam_local_state"]):
            np.testing.assert_array_equal(a, b)
        assert out["dcp_count"] == STEPS
        assert [f for f in out["states_files"] if f.startswith(f"states_w{world}")] == [
            f"states_w{world}.rank{q}-of-{world}" for q in range(world)]

        np.testing.assert_array_equal(out["init_c"], np.arange(R * D, dtype=np.float32)
                                      .reshape(R, D))
        torch.manual_seed(1234)  # the documented block scheme: block b after seed + b
        seed = int(torch.randint(0, 2 ** 62, (1,)).item())
        blocks = []
        for b in range(math.ceil(R / 3)):
            torch.manual_seed(seed + b)
            blocks.append(torch.zeros((min(3, R - 3 * b), D)).uniform_(-0.5, 0.5).numpy())
        np.testing.assert_array_equal(out["init_u"], np.concatenate(blocks))
        assert "Xavier reads the array's shape" in out["err_xavier"][1]

    # replicas are bit-identical on every rank
    for key in ("d_push", "r", "r_dense", "s_push", "sgd_rep", "adam_rep", "adam_shard"):
        for out in outs[1:]:
            np.testing.assert_array_equal(out[key], outs[0][key])
    import sparsenet as mx  # the parent reads the table rank 0 saved
    saved = mx.nd.load(os.path.join(tmp_path, f"table_w{world}.nd"))["shard"]
    assert saved.stype == "row_sparse"
    np.testing.assert_array_equal(saved.asnumpy(), outs[0]["adam_shard"])


@pytest.mark.parametrize("world", [2, 3])
def test_dist_store_and_sharded_tables(world, tmp_path):
    outs = values(run_ranks("tests.kvstore.test_dist_core:scenario_main", world, str(tmp_path),
                            timeout=30, wall=120))
    _check_main(outs, world, tmp_path)
    if world == 3:  # a checkpoint of 3 shards read back by 2 ranks
        kwargs = dict(learning_rate=ALR, beta1=B1, beta2=B2, epsilon=EPS, wd=WD)
        back = values(run_ranks("tests.kvstore.test_dist_core:scenario_reshard", 2,
                                str(tmp_path / "dcp_w3"), kwargs, timeout=30, wall=90))
        assert [b["rows"] for b in back] == [(0, 3), (3, 7)]
        for b in back:
            np.testing.assert_array_equal(b["table"], outs[0]["adam_shard"])
        mean = np.concatenate([b["state"][0] for b in back])
        assert mean.shape == (R, D) and np.abs(mean).sum() > 0

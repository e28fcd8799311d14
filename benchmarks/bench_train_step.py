"""One full training step of a weighted sum-pooled embedding table, side by side.

    OMP_NUM_THREADS=1 python benchmarks/bench_train_step.py [--rows 1000000] [--dim 128]
        [--per-row 20] [--batches 10,100,1000] [--optimizers sgd,adam,adagrad]
        [--threads 1,2] [--steps 200] [--check] [--profile]

A step is: forward (sum pooling of ``per-row`` weighted ids per row from a ``rows x dim``
float32 table), the loss ``sum((pooled - target) ** 2)``, backward, and the optimizer's
step, all inside the timed region. The same batches (distinct sorted ids per row, weights
in [0, 1), a dense target) feed every side; a side takes a different batch of a pool of 16
at each step, so the rows it reads are not warm from the side before it. Sides take turns
step by step and the table reports medians of ``--steps`` steps per side (``--steps`` / 4
at batch 1000) after warm-up.

Sides:

* ``sparsenet mx dot``: ``mx.nd.sparse.dot(csr_batch, w)`` under ``autograd.record`` with a
  ``grad_stype='row_sparse'`` Gluon ``Parameter`` and ``gluon.Trainer`` (``step(1)``);
* ``sparsenet mx Embedding``: ``mx.nd.Embedding(ids, w, sparse_grad=True)`` times the
  per-id weights, summed over the ids (MXNet's idiom without a fused weighted bag), same
  parameter and Trainer;
* ``sparsenet.torch``: ``nn.EmbeddingBag(mode='sum', sparse=True)`` with
  ``per_sample_weights`` and ``sparsenet.torch.optim`` (SGD, Adam, Adagrad);
* ``torch``: the same EmbeddingBag with ``torch.optim.SGD`` / ``SparseAdam`` / ``Adagrad``;
* ``FBGEMM``: ``fbgemm_gpu``'s ``SplitTableBatchedEmbeddingBagsCodegen`` on the CPU (one
  HOST table, SUM pooling, ``per_sample_weights``) with its fused backward-optimizer
  ``EXACT_SGD`` / ``EXACT_ADAGRAD``; FBGEMM has no Adam on the CPU (its ``ADAM`` asserts
  "not supported in CPU mode"), so the Adam rows have no FBGEMM cell.

The same math on every side, all lazy (only the rows of the batch change; no weight
decay, no momentum): SGD ``w[r] -= lr g[r]``; Adam MXNet's lazy rule = torch
``SparseAdam`` (moments of the touched rows only, bias correction by the global step);
AdaGrad ``s[r] += g[r]^2, w[r] -= lr g[r] / (sqrt(s[r]) + eps)`` (sparsenet keeps MXNet's
``sqrt(s + eps)`` form, given ``eps ** 2`` so it is the same to ~eps / |g|; eps = 1e-7). FBGEMM's
``EXACT_*`` optimizers sum duplicate ids before updating (as the others do). ``--check``
runs 3 steps of every side on a small table from one initial weight and prints the largest
difference of each side's weight to torch's.

Memory: the sides share one table (sparsenet's parameter's storage, viewed by the torch
modules and FBGEMM's host weights), each side keeps its own optimizer state: at 1M x 128
Adam holds 0.5 GB of table plus 1 GB of moments per side (3.5 GB in all).

``--profile`` prints, for the sparsenet sides at each batch size, Python function calls per
step (cProfile) and the 15 most expensive functions by own time.
"""
import argparse
import cProfile
import gc
import io
import pstats
import random
import statistics
import time

import numpy as np
import torch

import sparsenet as mx
from sparsenet import autograd, gluon
from sparsenet.torch import optim as sn_optim

POOL = 16
LR = {"sgd": 0.01, "adam": 0.001, "adagrad": 0.01}
EPS_ADAGRAD = 1e-7


def make_batches(rows, dim, batch, per_row, seed):
    """``POOL`` batches: ids ``(batch, per_row)`` (distinct, sorted per row), weights, target."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(POOL):
        ids = np.sort(_distinct_rows(rng, rows, batch, per_row), 1)
        w = rng.random((batch, per_row), dtype=np.float32)
        y = rng.standard_normal((batch, dim), dtype=np.float32)
        out.append(Batch(ids, w, y, rows))
    return out


def _distinct_rows(rng, rows, batch, per_row):
    ids = rng.integers(0, rows, (batch, per_row))
    for r in range(batch):  # redraw the rare rows with a repeated id
        while len(np.unique(ids[r])) < per_row:
            ids[r] = rng.integers(0, rows, per_row)
    return ids


class Batch:
    """One batch in every side's form (built outside the timing)."""

    def __init__(self, ids, w, y, rows):
        batch, per_row = ids.shape
        self.t_ids = torch.from_numpy(ids.astype(np.int64))
        self.t_w = torch.from_numpy(w)
        self.t_y = torch.from_numpy(y)
        self.t_flat = self.t_ids.reshape(-1)
        self.t_wflat = self.t_w.reshape(-1)
        self.t_offsets = torch.arange(0, batch * per_row + 1, per_row, dtype=torch.int64)
        indptr = np.arange(0, batch * per_row + 1, per_row, dtype=np.int64)
        self.csr = mx.nd.sparse.csr_matrix((w.reshape(-1), ids.reshape(-1), indptr),
                                           shape=(batch, rows))
        self.mx_ids = mx.nd.array(ids.astype(np.float32))
        self.mx_w = mx.nd.array(w.reshape(batch, per_row, 1))
        self.mx_y = mx.nd.array(y)


def mx_param(rows, dim, init):
    """A row_sparse-gradient Gluon parameter holding ``init`` (or N(0, 0.01) when None)."""
    p = gluon.Parameter("embed_weight", shape=(rows, dim), grad_stype="row_sparse")
    p.initialize(mx.init.Normal(0.01))
    if init is not None:
        p.set_data(mx.nd.from_torch(init.clone()))
    return p


def mx_trainer(p, opt):
    kwargs = {"learning_rate": LR[opt]}
    if opt == "adagrad":  # MXNet's rule takes eps inside the square root
        kwargs["eps"] = EPS_ADAGRAD ** 2
    return gluon.Trainer([p], opt, kwargs)


def mx_dot_side(p, trainer):
    def step(b):
        with autograd.record():
            out = mx.nd.sparse.dot(b.csr, p.data())
            loss = mx.nd.square(out - b.mx_y).sum()
        loss.backward()
        trainer.step(1)
    return step


def mx_embedding_side(p, trainer, rows, dim):
    def step(b):
        with autograd.record():
            e = mx.nd.Embedding(b.mx_ids, p.data(), input_dim=rows, output_dim=dim,
                                sparse_grad=True)
            out = (e * b.mx_w).sum(axis=1)
            loss = mx.nd.square(out - b.mx_y).sum()
        loss.backward()
        trainer.step(1)
    return step


def torch_bag(weight):
    rows, dim = weight.shape
    return torch.nn.EmbeddingBag(rows, dim, mode="sum", sparse=True, _weight=weight)


def torch_side(bag, opt):
    def step(b):
        opt.zero_grad(set_to_none=True)
        out = bag(b.t_ids, per_sample_weights=b.t_w)
        loss = (out - b.t_y).square().sum()
        loss.backward()
        opt.step()
    return step


def torch_optimizer(kind, params, opt):
    if kind == "sparsenet":
        return {"sgd": lambda: sn_optim.SGD(params, lr=LR["sgd"]),
                "adam": lambda: sn_optim.Adam(params, lr=LR["adam"]),
                "adagrad": lambda: sn_optim.Adagrad(params, lr=LR["adagrad"],
                                                    eps=EPS_ADAGRAD)}[opt]()
    return {"sgd": lambda: torch.optim.SGD(params, lr=LR["sgd"]),
            "adam": lambda: torch.optim.SparseAdam(params, lr=LR["adam"]),
            "adagrad": lambda: torch.optim.Adagrad(params, lr=LR["adagrad"],
                                                   eps=EPS_ADAGRAD)}[opt]()


def fbgemm_table(weight, opt):
    """FBGEMM's CPU table-batched bag on ``weight``'s storage, or None (no such optimizer)."""
    try:
        from fbgemm_gpu.split_embedding_configs import EmbOptimType
        from fbgemm_gpu.split_table_batched_embeddings_ops_common import (EmbeddingLocation,
                                                                          PoolingMode)
        from fbgemm_gpu.split_table_batched_embeddings_ops_training import (
            ComputeDevice, SplitTableBatchedEmbeddingBagsCodegen)
    except ImportError:
        return None
    kind = {"sgd": EmbOptimType.EXACT_SGD, "adagrad": EmbOptimType.EXACT_ADAGRAD}.get(opt)
    if kind is None:
        return None
    rows, dim = weight.shape
    m = SplitTableBatchedEmbeddingBagsCodegen(
        [(rows, dim, EmbeddingLocation.HOST, ComputeDevice.CPU)], optimizer=kind,
        learning_rate=LR[opt], eps=EPS_ADAGRAD, pooling_mode=PoolingMode.SUM)
    m.weights_host.data = weight.reshape(-1)  # share the table (a view, no copy)
    return m


def fbgemm_side(m):
    def step(b):
        out = m(b.t_flat, b.t_offsets, per_sample_weights=b.t_wflat)
        loss = (out - b.t_y).square().sum()
        loss.backward()  # the fused optimizer updates the table here
    return step


def fbgemm_weight(m):
    return m.split_embedding_weights()[0]


def build_sides(opt, rows, dim, shared, init=None):
    """``({side: step(batch)}, {side: weight tensor})`` for optimizer ``opt``.

    ``shared``: one table for all sides; else each side gets a copy of ``init``.
    """
    steps, weights = {}, {}
    p = mx_param(rows, dim, init)
    trainer = mx_trainer(p, opt)
    steps["sparsenet mx dot"] = mx_dot_side(p, trainer)
    weights["sparsenet mx dot"] = p.data().to_torch()
    table = p.data().to_torch().detach()
    if shared:
        p2, trainer2 = p, trainer
    else:
        p2 = mx_param(rows, dim, init)
        trainer2 = mx_trainer(p2, opt)
        weights["sparsenet mx Embedding"] = p2.data().to_torch()
    steps["sparsenet mx Embedding"] = mx_embedding_side(p2, trainer2, rows, dim)
    for kind, name in (("sparsenet", "sparsenet.torch"), ("torch", "torch")):
        bag = torch_bag(table if shared else init.clone())
        steps[name] = torch_side(bag, torch_optimizer(kind, [bag.weight], opt))
        weights[name] = bag.weight
    fb = fbgemm_table(table if shared else init.clone(), opt)
    if fb is not None:
        steps["FBGEMM"] = fbgemm_side(fb)
        weights["FBGEMM"] = fbgemm_weight(fb)
    return steps, weights


def measure(steps, batches, count, warmup=5):
    """Median ms per step of each side; sides take turns step by step, in a new random
    order each round (a fixed rotation puts each side after the same neighbour every time,
    and what ran just before changes a step's time: measured 40-65 us at batch 10)."""
    names = list(steps)
    times = {n: [] for n in names}
    rng = random.Random(0)
    for i in range(warmup + count):
        order = rng.sample(names, len(names))
        for n in order:
            b = batches[(i + 5 * names.index(n)) % len(batches)]
            t0 = time.perf_counter()
            steps[n](b)
            dt = time.perf_counter() - t0
            if i >= warmup:
                times[n].append(dt * 1e3)
    return {n: statistics.median(ts) for n, ts in times.items()}


def profile(step, batches, n=50):
    """``(Python calls per step, top functions by own time)`` of ``step``."""
    for b in batches[:3]:
        step(b)
    prof = cProfile.Profile()
    prof.enable()
    for i in range(n):
        step(batches[i % len(batches)])
    prof.disable()
    st = pstats.Stats(prof, stream=io.StringIO())
    calls = st.total_calls / n
    st.sort_stats("tottime").print_stats(15)
    return calls, st.stream.getvalue()


def check(opt, per_row):
    """Largest |weight - torch's weight| of every side after 3 steps from one start."""
    rows, dim = 200, 8
    init = torch.randn(rows, dim, generator=torch.Generator().manual_seed(0)) * 0.1
    batches = make_batches(rows, dim, 6, min(per_row, rows // 4), seed=7)
    steps, weights = build_sides(opt, rows, dim, shared=False, init=init)
    for b in batches[:3]:
        for s in steps.values():
            s(b)
    ref = weights["torch"].detach()
    return {n: float((w.detach() - ref).abs().max()) for n, w in weights.items()}


def peers_of(med):
    return {n: t for n, t in med.items() if not n.startswith("sparsenet")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--per-row", type=int, default=20)
    ap.add_argument("--batches", default="10,100,1000")
    ap.add_argument("--optimizers", default="sgd,adam,adagrad")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--check", action="store_true", help="compare the sides' weights first")
    ap.add_argument("--profile", action="store_true",
                    help="cProfile the sparsenet sides at every batch size")
    args = ap.parse_args()
    mx.config.set_storage_fallback("error")
    opts = args.optimizers.split(",")
    sizes = [int(x) for x in args.batches.split(",")]
    threads = [int(x) for x in args.threads.split(",")]
    if args.check:
        torch.set_num_threads(1)
        for opt in opts:
            diffs = check(opt, args.per_row)
            print(f"check {opt}: max |w - torch's w| after 3 steps: "
                  + ", ".join(f"{n} {d:.2e}" for n, d in diffs.items()))
        print()
    pools = {bs: make_batches(args.rows, args.dim, bs, args.per_row, seed=bs) for bs in sizes}
    print(f"table {args.rows:,} x {args.dim} float32, {args.per_row} weighted ids a row, "
          f"torch {torch.__version__}; median ms per step over {args.steps} steps "
          f"({max(args.steps // 4, 20)} at batch >= 1000)\n")
    rows_out = []
    for opt in opts:
        steps, _ = build_sides(opt, args.rows, args.dim, shared=True)
        for th in threads:
            torch.set_num_threads(th)
            for bs in sizes:
                count = args.steps if bs < 1000 else max(args.steps // 4, 20)
                med = measure(steps, pools[bs], count)
                rows_out.append((opt, th, bs, med))
                peers = peers_of(med)
                best = min(peers, key=peers.get)
                print(f"  {opt} threads={th} batch={bs}: " + ", ".join(
                    f"{n} {t:.3f}" for n, t in med.items()) + f"  (best peer {best})",
                    flush=True)
                if args.profile and th == threads[0]:
                    for n in ("sparsenet mx dot", "sparsenet mx Embedding", "sparsenet.torch"):
                        calls, text = profile(steps[n], pools[bs])
                        print(f"\n### {n}, {opt}, batch {bs}: {calls:.0f} Python calls/step\n")
                        print(text)
        del steps
        gc.collect()
    print()
    print("| optimizer | threads | batch | sparsenet mx dot | sparsenet mx Embedding | "
          "sparsenet.torch | torch | FBGEMM | best sparsenet / best peer |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for opt, th, bs, med in rows_out:
        peers = peers_of(med)
        best = min(peers.values())
        ours = min(t for n, t in med.items() if n.startswith("sparsenet"))
        cells = [f"{med[n]:.3f}" if n in med else "-" for n in
                 ("sparsenet mx dot", "sparsenet mx Embedding", "sparsenet.torch", "torch",
                  "FBGEMM")]
        print(f"| {opt} | {th} | {bs} | " + " | ".join(cells) + f" | **{ours / best:.2f}** |")
    print()
    print("Each sparsenet side / best peer:")
    print("| optimizer | threads | batch | mx dot | mx Embedding | sparsenet.torch |")
    print("|---|---:|---:|---:|---:|---:|")
    for opt, th, bs, med in rows_out:
        best = min(peers_of(med).values())
        print(f"| {opt} | {th} | {bs} | " + " | ".join(
            f"{med[n] / best:.2f}" for n in ("sparsenet mx dot", "sparsenet mx Embedding",
                                            "sparsenet.torch")) + " |")


if __name__ == "__main__":
    main()

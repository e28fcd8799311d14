"""Distributed training on one machine: seed 000's row_sparse model on 1 and 2 ranks, and
the cost of aggregating row_sparse gradients by all-gather vs by dense all-reduce.

    python benchmarks/bench_dist.py [--ranks 1,2] [--samples 20000] [--batch 100]
                                    [--epochs 3] [--threads 1] [--parts train,comm]
                                    [--via kvstore,trainer]
                                    [--densities 0.001,0.01,0.1,0.5] [--rows 1000000]
                                    [--dim 128] [--reps 5] [--comm-ranks 2]
                                    [--dense-shape 1000,1000] [--mxnet-python PATH]
                                    [--cfeatures 1000] [--cbatch 50] [--clr 0.003]
                                    [--cepochs 6] [--thresholds 0.5,0.05,0.005]

Every run is a job of ``sparsenet launch -n W`` (torchrun, gloo over loopback),
with ``--threads`` torch threads per rank; this script is both the driver and
the workers (``--worker``).

``train``: samples/s of seed 000's third network (``FullyConnectedSparse`` with a
1,000,000 x 128 weight and ``grad_stype='row_sparse'``, two small dense layers,
``SigmoidBinaryCrossEntropyLoss``, SGD lr 0.1; ``examples/seed000_model.py``) on
``--samples`` rows of the seed's data (density 1e-5, label = row sum above the
mean), written once as a LibSVM file. Each rank reads its part with
``LibSVMIter(num_parts=W, part_index=rank)`` (batches held in memory; every rank
trains on as many full batches as the smallest part has). Gradients are summed
over the ranks through ``mx.kv.create('dist_sync')`` (the row_sparse weight
gradient is all-gathered as (row ids, rows) and coalesced, the dense ones
all-reduced), in one of these ways (``--via``):

* ``kvstore``: the weights start equal through ``kv.init``/``kv.pull`` of rank 0's
  values; each step pushes every gradient (one ``kv.push`` of all keys), pulls the
  sums back into the gradients and runs a local ``Trainer`` step, the same lazy
  update on every rank (MXNet's ``update_on_kvstore=False``, written out);
* ``trainer``: ``Trainer(..., kvstore=kv)`` (the store runs the optimizer);

(``Trainer(..., kvstore=kv, update_on_kvstore=False)`` is refused with row_sparse
gradients on a dist store, as MXNet 1.9.1 refuses it; ``kvstore`` writes that loop out.)

A first row runs the same loop in one process without a store. samples/s counts
every rank's samples; the share column is the time in ``trainer.step`` plus the
explicit push and pull.

``comm``: per row_sparse push of a ``--rows`` x ``--dim`` float32 key, each rank
pushing ``density * rows`` distinct random rows: the bytes each rank sends (ring
algorithms: all-gather of the ids and rows, padded to the largest rank's count,
``(W-1) * max_nnz * (8 + 4*dim)``; all-reduce of the densified rows plus a
marker column, ``2 (W-1)/W * rows * (dim+1) * 4``), the bytes that crossed the
loopback interface per rank (``/proc/net/dev``; any other loopback traffic on
the machine adds to it), and the median time of ``kv.push`` with
``DistKVStore.sparse_as_dense`` forcing each method, and with its default rule.

``compressed``: the bytes of one dense push of a ``--dense-shape`` key with and without
``2bit`` compression (threshold 0.5).

``compressed-train``: seed 000's second network (a dense ``--cfeatures`` x 128 weight
gradient, two small sigmoid layers) trained on ``--comm-ranks`` ranks through a
``dist_sync`` store that runs Adam at ``--clr``, without compression and with ``2bit`` at
each of ``--thresholds``: the seed's data rule (density 10 / ``--cfeatures``, label: row
sum above the mean), ``--samples`` rows per rank, batch ``--cbatch``; held-out log-loss
(4,000 rows) after each of ``--cepochs`` epochs, the same initial weights and batches in
every run (``compressed_train_program.py``, one program for both libraries; with
``--mxnet-python`` also MXNet 1.9.1, as two workers of its parameter server with one
scheduler and one server on 127.0.0.1).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

import sparsenet as mx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
from seed000_model import build_net  # noqa: E402

NUM_FEATURES = 1_000_000
VARIANT = 3  # FullyConnectedSparse, row_sparse weight gradient


# ---------------------------------------------------------------------- driver
def make_libsvm(path, num_samples, seed=0):
    """Seed 000's data (density 1e-5, label: row sum above the mean) as a LibSVM file."""
    np.random.seed(seed)
    data = mx.test_utils.rand_ndarray((num_samples, NUM_FEATURES), stype='csr', density=0.00001)
    sums = data.sum(axis=1)
    label = sums > sums.mean()
    mx.io.save_libsvm(path, data, label)


def launch(world, worker, args, tmp, **extra):
    """Run ``worker`` on ``world`` ranks with ``sparsenet launch``; return rank 0's JSON."""
    out = os.path.join(tmp, f"{worker}-{world}-{extra.get('mode', '')}.json")
    opts = {"worker": worker, "out": out, "batch": args.batch, "epochs": args.epochs,
            "threads": args.threads, "rows": args.rows, "dim": args.dim, "reps": args.reps,
            "densities": ",".join(f"{d:g}" for d in args.densities),
            "dense-shape": ",".join(map(str, args.dense_shape)), **extra}
    cmd = [sys.executable, "-m", "sparsenet.cli", "launch", "-n", str(world),
           "--timeout", f"{args.timeout:g}", os.path.abspath(__file__)]
    for name, value in opts.items():
        cmd += [f"--{name}", str(value)]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    subprocess.run(cmd, env=env, check=True)
    with open(out) as f:
        return json.load(f)


def report_train(results, args):
    print(f"\nSeed 000 variant 3 (1,000,000 x 128 weight, row_sparse gradient), "
          f"{args.samples:,} samples, batch {args.batch} per rank, {args.threads} thread(s) "
          f"per rank, median of {args.epochs} epochs\n")
    print("| ranks | gradient aggregation | batches per rank | s per epoch | samples/s "
          "(all ranks) | vs one process | share of time in aggregation + update | "
          "final loss |")
    print("|---|---|---|---|---|---|---|---|")
    base = None
    for res in results:
        sps = res["samples"] / res["epoch_s"]
        base = base or sps
        print(f"| {res['world']} | {VIA[res['via']]} | {res['batches']} | {res['epoch_s']:.2f} | "
              f"{sps:,.0f} | {sps / base:.2f}x | {100 * res['step_share']:.0f} % | "
              f"{res['loss']:.4f} |")


def report_comm(res, args):
    w = res["world"]
    print(f"\nRow_sparse push of a {args.rows:,} x {args.dim} float32 key on {w} ranks "
          f"(gloo, loopback), median of {args.reps}\n")
    print("| density per rank | rows per rank | gather: bytes sent per rank (model / "
          "loopback) | dense: bytes sent per rank (model / loopback) | gather ms | dense ms "
          "| default rule picks | default ms |")
    print("|---|---|---|---|---|---|---|---|")
    for row in res["rows"]:
        g, d = row["gather"], row["dense"]
        print(f"| {row['density']:g} | {row['nnz']:,} | {_mb(g['model'])} / {_mb(g['lo'])} | "
              f"{_mb(d['model'])} / {_mb(d['lo'])} | {g['ms']:.1f} | {d['ms']:.1f} | "
              f"{row['auto_picks']} | {row['auto']['ms']:.1f} |")


def report_compressed(res, args):
    w, n = res["world"], res["numel"]
    print(f"\nDense push of a {'x'.join(map(str, args.dense_shape))} float32 key ({n:,} values) "
          f"on {w} ranks (gloo, loopback), median of {args.reps}\n")
    print("| push | bytes handed to the collectives per rank | bytes sent per rank (ring "
          "model) | loopback bytes per rank | ms |")
    print("|---|---|---|---|---|")
    for mode in ("plain", "2bit"):
        r = res[mode]
        print(f"| {'uncompressed' if mode == 'plain' else '2bit compressed'} | "
              f"{r['payload']:,} | {r['model']:,.0f} | {r['lo']:,.0f} | {r['ms']:.1f} |")
    p, c = res["plain"], res["2bit"]
    print(f"\nfewer bytes with 2bit: {p['payload'] / c['payload']:.1f}x handed over, "
          f"{p['model'] / c['model']:.1f}x sent (model), {p['lo'] / max(c['lo'], 1):.1f}x "
          f"on the loopback")


PROGRAM = os.path.join(HERE, "compressed_train_program.py")


def run_compressed_train(args, tmp, threshold, mxnet_python=None):
    """Rank 0's JSON of one run of ``compressed_train_program.py`` on ``--comm-ranks`` ranks."""
    lib = "mxnet" if mxnet_python else "sparsenet"
    out = os.path.join(tmp, f"ctrain-{lib}-{threshold:g}.json")
    prog = [PROGRAM, lib, f"{threshold:g}", str(args.samples), str(args.cfeatures),
            str(args.cbatch), f"{args.clr:g}", str(args.cepochs), out]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    if not mxnet_python:
        subprocess.run([sys.executable, "-m", "sparsenet.cli", "launch", "-n",
                        str(args.comm_ranks), "--timeout", f"{args.timeout:g}", *prog],
                       env=env, check=True)
    else:  # MXNet's own launcher needs ssh or its tracker: start ps-lite's roles directly
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env.update(DMLC_PS_ROOT_URI="127.0.0.1", DMLC_PS_ROOT_PORT=str(port),
                   DMLC_NUM_SERVER="1", DMLC_NUM_WORKER=str(args.comm_ranks),
                   MXNET_MKLDNN_ENABLED="0")
        roles = [subprocess.Popen([mxnet_python, "-c", "import mxnet"],
                                  env=dict(env, DMLC_ROLE=role)) for role in ("scheduler", "server")]
        workers = [subprocess.Popen([mxnet_python, *prog], env=dict(env, DMLC_ROLE="worker"))
                   for _ in range(args.comm_ranks)]
        try:
            codes = [w.wait(timeout=args.timeout) for w in workers]
        finally:
            for proc in roles + workers:
                if proc.poll() is None:
                    proc.kill()
        if any(codes):
            raise RuntimeError(f"MXNet's workers exited with {codes}")
    with open(out) as f:
        return dict(json.load(f), library=lib)


def report_compressed_train(results, args):
    print(f"\nSeed 000's second network ({args.cfeatures:,} x 128 dense weight gradient) on "
          f"{results[0]['world']} ranks, {args.samples:,} rows per rank, batch {args.cbatch}, "
          f"adam lr {args.clr:g}: held-out log-loss after each epoch\n")
    print("| library | compression | " + " | ".join(f"epoch {e + 1}" for e in range(args.cepochs))
          + " | last / uncompressed |")
    print("|---|---|" + "---:|" * (args.cepochs + 1))
    base = {r["library"]: r["losses"][-1] for r in results if r["threshold"] == 0}
    for res in results:
        name = "none" if res["threshold"] == 0 else f"2bit, threshold {res['threshold']:g}"
        lib = "MXNet 1.9.1" if res["library"] == "mxnet" else "sparsenet"
        print(f"| {lib} | {name} | " + " | ".join(f"{v:.4f}" for v in res["losses"])
              + f" | {res['losses'][-1] / base[res['library']]:.3f} |")


def _mb(n):
    return f"{n / 1e6:,.2f} MB"


# ---------------------------------------------------------------------- workers
def _sync_min(value):
    """The smallest ``value`` over the ranks (plain torch.distributed, outside the kvstore)."""
    import torch.distributed as dist  # the process group exists once the kvstore is made
    t = torch.tensor([value], dtype=torch.int64)
    dist.all_reduce(t, op=dist.ReduceOp.MIN)
    return int(t.item())


#: How the train worker aggregates gradients (``--via``).
VIA = {
    "none": "none (one process, no kvstore)",
    "kvstore": "kv.push + kv.pull, local Trainer step",
    "trainer": "Trainer(kvstore=kv)",
}


def train_worker(args):
    world, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
    kv = mx.kv.create('dist_sync') if args.mode != "none" else None
    it = mx.io.LibSVMIter(data_libsvm=args.data, data_shape=(NUM_FEATURES,),
                          batch_size=args.batch, num_parts=world, part_index=rank)
    batches = [(b.data[0], b.label[0]) for b in it if not b.pad]
    if kv is not None:
        batches = batches[:_sync_min(len(batches))]
    mx.random.seed(rank)  # different on purpose: the store makes rank 0's weights everyone's
    net = build_net(VARIANT, NUM_FEATURES)
    params = [net.collect_params()[k] for k in sorted(net.collect_params().keys())]
    sgd = ('sgd', {'learning_rate': 0.1})
    if args.mode in ("none", "kvstore"):
        trainer = mx.gluon.Trainer(params, *sgd, kvstore=None)
    else:
        trainer = mx.gluon.Trainer(params, *sgd, kvstore=kv)
    loss_fn = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss()
    keys = [f"g{i}" for i in range(len(params))]
    if args.mode == "kvstore":
        for i, p in enumerate(params):
            kv.init(f"w{i}", p.data())
            kv.pull(f"w{i}", out=p.data())
            g = p.grad()
            kv.init(f"g{i}", mx.nd.sparse.zeros(g.stype, g.shape) if g.stype != "default"
                    else mx.nd.zeros(g.shape))

    def epoch():
        total, step_s = 0.0, 0.0
        for data, label in batches:
            with mx.autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            t0 = time.perf_counter()
            if args.mode == "kvstore":
                grads = [p.grad() for p in params]
                kv.push(keys, grads)  # one call for every key
                kv.pull(keys, out=grads, ignore_sparse=False)
            trainer.step(args.batch * world)
            step_s += time.perf_counter() - t0
            total += float(loss.mean().asscalar())
        return total / len(batches), step_s

    epoch()  # warm-up
    times, steps, loss = [], [], None
    for _ in range(args.epochs):
        if kv is not None:
            kv.barrier()
        t0 = time.perf_counter()
        loss, step_s = epoch()
        if kv is not None:
            kv.barrier()
        times.append(time.perf_counter() - t0)
        steps.append(step_s)
    if rank == 0:
        ep = statistics.median(times)
        _write(args.out, {"world": world, "via": args.mode, "batches": len(batches),
                          "samples": world * len(batches) * args.batch, "epoch_s": ep,
                          "step_share": statistics.median(steps) / ep, "loss": loss})


def _loopback_tx():
    with open("/proc/net/dev") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name.strip() == "lo":
                return int(rest.split()[8])  # transmit bytes
    return 0


def comm_worker(args):
    kv = mx.kv.create('dist_sync')
    world, rank = kv.num_workers, kv.rank
    rows, dim = args.rows, args.dim
    default_rule = type(kv).sparse_as_dense
    out = []
    for density in args.densities:
        nnz = max(1, int(round(density * rows)))
        gen = torch.Generator().manual_seed(1000 + rank)
        ids = torch.randperm(rows, generator=gen)[:nnz].sort().values
        vals = torch.randn(nnz, dim, generator=gen)
        grad = mx.nd.sparse.row_sparse_array((vals.numpy(), ids.numpy()), shape=(rows, dim))
        key = f"density{density:g}"
        kv.init(key, mx.nd.sparse.zeros('row_sparse', (rows, dim)))
        max_nnz = nnz  # every rank pushes the same number of rows
        row = {"density": density, "nnz": nnz}
        for method, rule in (("gather", float("inf")), ("dense", 0.0), ("auto", default_rule)):
            kv.sparse_as_dense = rule
            kv.push(key, grad)  # warm-up
            ms, lo = [], []
            for _ in range(args.reps):
                kv.barrier()
                b0, t0 = _loopback_tx(), time.perf_counter()
                kv.push(key, grad)
                t1 = time.perf_counter()
                kv.barrier()
                ms.append((t1 - t0) * 1e3)
                lo.append((_loopback_tx() - b0) / world)
            model = ((world - 1) * max_nnz * (8 + 4 * dim) if method == "gather"
                     else 2 * (world - 1) / world * rows * (dim + 1) * 4)
            row[method] = {"ms": statistics.median(ms), "lo": statistics.median(lo),
                           "model": model}
        row["auto_picks"] = ("gather" if world * max_nnz <= default_rule * rows else "dense")
        out.append(row)
    if rank == 0:
        _write(args.out, {"world": world, "rows": out})


def compressed_worker(args):
    from sparsenet.kvstore import collective
    kv = mx.kv.create('dist_sync')
    world, rank = kv.num_workers, kv.rank
    shape = tuple(args.dense_shape)
    numel = int(np.prod(shape))
    payload = []
    real = {name: getattr(collective, name) for name in ("allgather", "all_reduce_sum")}

    def counting(name):
        def call(t, *a, **kw):
            if kw.get("op") == "push":
                payload.append(t.numel() * t.element_size())
            return real[name](t, *a, **kw)
        return call
    for name in real:
        setattr(collective, name, counting(name))
    gen = torch.Generator().manual_seed(2000 + rank)
    grad = mx.nd.array(torch.randn(shape, generator=gen).numpy())
    out = {"world": world, "numel": numel}
    for mode in ("plain", "2bit"):
        if mode == "2bit":
            kv.set_gradient_compression({'type': '2bit', 'threshold': 0.5})
        kv.init(mode, mx.nd.zeros(shape))
        kv.push(mode, grad)  # warm-up
        ms, lo, sizes = [], [], []
        for _ in range(args.reps):
            kv.barrier()
            payload.clear()
            b0, t0 = _loopback_tx(), time.perf_counter()
            kv.push(mode, grad)
            t1 = time.perf_counter()
            kv.barrier()
            ms.append((t1 - t0) * 1e3)
            lo.append((_loopback_tx() - b0) / world)
            sizes.append(sum(payload))
        words = -(-numel // 16)
        model = (2 * (world - 1) / world * 4 * numel if mode == "plain"
                 else (world - 1) * 4 * words)
        out[mode] = {"ms": statistics.median(ms), "lo": statistics.median(lo),
                     "payload": int(statistics.median(sizes)), "model": model}
    if rank == 0:
        _write(args.out, out)


def _write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


# ---------------------------------------------------------------------- main
def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--ranks", default="1,2", help="world sizes of the train part")
    ap.add_argument("--parts", default="train,comm",
                    help="comma-separated: train, comm, compressed, compressed-train")
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=100, help="batch size per rank")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    ap.add_argument("--via", default="kvstore",
                    type=lambda s: s.split(","),
                    help="gradient aggregation of the ranks' rows: kvstore (push + pull, local "
                         "step), trainer (Trainer(kvstore=kv)); the one-process row always "
                         "runs")
    ap.add_argument("--densities", default="0.001,0.01,0.1,0.5",
                    type=lambda s: [float(x) for x in s.split(",")])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--comm-ranks", type=int, default=2)
    ap.add_argument("--dense-shape", default="1000,1000",
                    type=lambda s: [int(x) for x in s.split(",")],
                    help="shape of the dense key of the compressed part")
    ap.add_argument("--cfeatures", type=int, default=1000,
                    help="features of the compressed-train part")
    ap.add_argument("--cbatch", type=int, default=50, help="batch of the compressed-train part")
    ap.add_argument("--clr", type=float, default=0.003,
                    help="Adam's learning rate in the compressed-train part")
    ap.add_argument("--cepochs", type=int, default=6, help="epochs of the compressed-train part")
    ap.add_argument("--thresholds", default="0.5,0.05,0.005",
                    type=lambda s: [float(x) for x in s.split(",")],
                    help="2bit thresholds of the compressed-train part")
    ap.add_argument("--mxnet-python", help="a Python with mxnet==1.9.1: the compressed-train "
                    "part runs it too")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="SPARSENET_DIST_TIMEOUT of the workers (seconds)")
    ap.add_argument("--worker", choices=("train", "comm", "compressed"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--mode", choices=tuple(VIA), help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    if args.worker == "train":
        return train_worker(args)
    if args.worker == "comm":
        return comm_worker(args)
    if args.worker == "compressed":
        return compressed_worker(args)
    parts = args.parts.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        if "train" in parts:
            data = os.path.join(tmp, "seed000.libsvm")
            make_libsvm(data, args.samples)
            results = [launch(1, "train", args, tmp, data=data, mode="none")]
            for w in (int(r) for r in args.ranks.split(",")):
                for via in args.via:
                    results.append(launch(w, "train", args, tmp, data=data, mode=via))
            report_train(results, args)
        if "comm" in parts:
            report_comm(launch(args.comm_ranks, "comm", args, tmp), args)
        if "compressed" in parts:
            report_compressed(launch(args.comm_ranks, "compressed", args, tmp), args)
        if "compressed-train" in parts:
            runs = []
            for t in [0.0] + args.thresholds:  # the two libraries take turns
                runs.append(run_compressed_train(args, tmp, t))
                if args.mxnet_python:
                    runs.append(run_compressed_train(args, tmp, t, args.mxnet_python))
            report_compressed_train(sorted(runs, key=lambda r: r["library"] == "mxnet"), args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

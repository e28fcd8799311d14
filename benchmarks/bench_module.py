"""Seed 003's Module training side by side: sparsenet vs MXNet 1.9.1 (symbol, executor, Module).

    python benchmarks/bench_module.py [--epochs 15] [--threads 1] [--kinds loop,fit]
                                      [--mxnet-python /tmp/mx/bin/python] [--phases]

The tutorial's model and data ("Train a Linear Regression Model with Sparse
Symbols", ``benchmarks/seed003_module.py``): 1,000 x 100 CSR data (density
0.01), label ``dot(data, 1..100)``, batch size 1 through
``NDArrayIter(last_batch_handle='discard')``, the symbol
``LinearRegressionOutput(broadcast_add(sparse.dot(X, weight), bias))`` with a
row_sparse ``weight``, ``SGD(learning_rate=0.05, momentum=0.9)``, and two loops:

* ``loop``: the seed's own loop (``forward``, ``update_metric('MSE')``,
  ``backward``, ``update`` for every batch);
* ``fit``: ``Module.fit(eval_metric='mse')``, one epoch per call, on the same module.

MXNet 1.9.1 runs the same code in a worker subprocess (``OMP_NUM_THREADS`` as
``--threads``; ``waitall`` closes each epoch). The machine is shared and noisy,
so the two alternate epoch by epoch (sparsenet first on even epochs, MXNet first
on odd ones), after one warm-up epoch each; the report gives the median epoch
of each and the median of the per-pair ratios sparsenet / MXNet (<= 1.0:
sparsenet at least as fast). ``--phases`` adds, for sparsenet, the time per
batch of each step of the seed's loop.
"""
import argparse
import logging
import os
import statistics
import subprocess
import sys
import time
import warnings

import torch

import sparsenet as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seed003_module  # noqa: E402 - the seed's code, shared with MXNet's worker

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seed003_module.py")


class MXNetWorker:
    """MXNet 1.9.1 training the seed in a subprocess, one epoch per :meth:`epoch` call."""

    def __init__(self, python, kind, threads):
        env = {"OMP_NUM_THREADS": str(threads), "MXNET_STORAGE_FALLBACK_LOG_VERBOSE": "0",
               "PATH": "/usr/bin:/bin"}
        self.proc = subprocess.Popen([python, WORKER, kind], env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the MXNet worker ({python}) did not start")

    def epoch(self):
        self.proc.stdin.write("epoch\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def compare(kind, epochs, python, threads):
    """Per-epoch seconds of sparsenet and MXNet, alternating, after a warm-up epoch each."""
    ours = seed003_module.Trainer(mx, kind)
    theirs = MXNetWorker(python, kind, threads) if python else None
    ours.epoch()
    if theirs is not None:
        theirs.epoch()
    a, b = [], []
    try:
        for e in range(epochs):
            if theirs is not None and e % 2:
                b.append(theirs.epoch())
                a.append(ours.epoch())
            else:
                a.append(ours.epoch())
                if theirs is not None:
                    b.append(theirs.epoch())
    finally:
        if theirs is not None:
            theirs.close()
    return a, b


def phases(epochs):
    """Microseconds per batch of each step of the seed's loop in sparsenet (medians of epochs)."""
    mod, train_iter = seed003_module.make_module(mx)
    metric = mx.metric.create('MSE')
    clock = time.perf_counter
    steps = ("next batch", "forward", "update_metric", "backward", "update")
    per_epoch = []
    for _ in range(epochs + 1):
        spent = dict.fromkeys(steps, 0.0)
        train_iter.reset()
        metric.reset()
        it, n = iter(train_iter), 0
        while True:
            t0 = clock()
            try:
                batch = next(it)
            except StopIteration:
                break
            t1 = clock()
            mod.forward(batch, is_train=True)
            t2 = clock()
            mod.update_metric(metric, batch.label)
            t3 = clock()
            mod.backward()
            t4 = clock()
            mod.update()
            t5 = clock()
            for k, start, end in zip(steps, (t0, t1, t2, t3, t4), (t1, t2, t3, t4, t5)):
                spent[k] += end - start
            n += 1
        per_epoch.append({k: v / n * 1e6 for k, v in spent.items()})
    per_epoch = per_epoch[1:]
    return {k: statistics.median(e[k] for e in per_epoch) for k in steps}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--kinds", default="loop,fit")
    ap.add_argument("--mxnet-python", default=None)
    ap.add_argument("--phases", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")  # fit() on a bound module warns that it is (as MXNet does)
    print(f"\nSeed 003 Module training, 1,000 x 100 CSR (density 0.01), batch 1, "
          f"{args.threads} thread(s); ms per epoch, {args.epochs} alternating epochs after a "
          f"warm-up\n")
    print("| loop | sparsenet (median) | MXNet 1.9.1 (median) | sparsenet / MXNet "
          "(median of pairs) | pairs where sparsenet is faster |")
    print("|---|---|---|---|---|")
    for kind in args.kinds.split(","):
        ours, theirs = compare(kind, args.epochs, args.mxnet_python, args.threads)
        a = statistics.median(ours) * 1e3
        if theirs:
            b = statistics.median(theirs) * 1e3
            ratio = statistics.median(x / y for x, y in zip(ours, theirs))
            wins = sum(x < y for x, y in zip(ours, theirs))
            print(f"| {kind} | {a:.1f} | {b:.1f} | **{ratio:.2f}** | {wins} of {len(ours)} |")
        else:
            print(f"| {kind} | {a:.1f} | - | - | - |")
    if args.phases:
        spent = phases(5)
        print("\nsparsenet, us per batch (median of 5 epochs): " +
              ", ".join(f"{k} {v:.0f}" for k, v in spent.items()) +
              f"; total {sum(spent.values()):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

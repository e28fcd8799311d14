"""Seed 003's Module training side by side: sparsenet vs MXNet 1.9.1 (symbol, executor, Module).

    python benchmarks/bench_module.py [--epochs 5] [--rounds 3] [--threads 1]
                                      [--mxnet-python /tmp/mx/bin/python] [--phases]

The tutorial's model and data ("Train a Linear Regression Model with Sparse
Symbols"): 1,000 x 100 CSR data (density 0.01), label ``dot(data, 1..100)``,
batch size 1 through ``NDArrayIter(last_batch_handle='discard')``, the symbol
``LinearRegressionOutput(broadcast_add(sparse.dot(X, weight), bias))`` with a
row_sparse ``weight``, ``SGD(learning_rate=0.05, momentum=0.9)``, and two loops:

* ``loop``: the seed's own loop (``forward``, ``update_metric('MSE')``,
  ``backward``, ``update`` for every batch);
* ``fit``: ``Module.fit(eval_metric='mse', num_epoch=...)`` on the same module.

Each round runs sparsenet in this process (a warm-up epoch, then ``--epochs``
timed epochs) and then, with ``--mxnet-python``, the same code in MXNet 1.9.1 in
a subprocess (``OMP_NUM_THREADS`` as ``--threads``; ``waitall`` closes each
epoch). The machine is shared and noisy: rounds alternate the two, and the
report gives the median epoch of each round and the median of the rounds, with
the ratio sparsenet / MXNet (<= 1.0: sparsenet at least as fast). ``--phases``
adds, for sparsenet, the time per batch of each step of the seed's loop.
"""
import argparse
import warnings
import json
import logging
import os
import statistics
import subprocess
import sys
import time

import torch

import sparsenet as mx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seed003_module  # noqa: E402 - the seed's code, shared with MXNet's run

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seed003_module.py")

def sparsenet_times(kind, epochs):
    return seed003_module.timed_epochs(mx, kind, epochs)


def mxnet_times(python, kind, epochs, threads):
    env = {"OMP_NUM_THREADS": str(threads), "MXNET_STORAGE_FALLBACK_LOG_VERBOSE": "0",
           "PATH": "/usr/bin:/bin"}
    out = subprocess.run([python, SCRIPT, kind, str(epochs)], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def phases(epochs):
    """Microseconds per batch of each step of the seed's loop in sparsenet (medians of epochs)."""
    mod, train_iter = seed003_module.make_module(mx)
    metric = mx.metric.create('MSE')
    clock = time.perf_counter
    per_epoch = []
    for _ in range(epochs + 1):
        spent = dict.fromkeys(("next batch", "forward", "update_metric", "backward", "update"),
                              0.0)
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
            for k, a, b in (("next batch", t0, t1), ("forward", t1, t2),
                            ("update_metric", t2, t3), ("backward", t3, t4), ("update", t4, t5)):
                spent[k] += b - a
            n += 1
        per_epoch.append({k: v / n * 1e6 for k, v in spent.items()})
    per_epoch = per_epoch[1:]
    return {k: statistics.median(e[k] for e in per_epoch) for k in per_epoch[0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--kinds", default="loop,fit")
    ap.add_argument("--mxnet-python", default=None)
    ap.add_argument("--phases", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")  # fit() on a bound module warns that it is (as MXNet does)
    kinds = args.kinds.split(",")
    rounds = {k: ([], []) for k in kinds}
    for r in range(args.rounds):
        for kind in kinds:
            ours = statistics.median(sparsenet_times(kind, args.epochs)) * 1e3
            theirs = (statistics.median(mxnet_times(args.mxnet_python, kind, args.epochs,
                                                    args.threads)) * 1e3
                      if args.mxnet_python else float("nan"))
            rounds[kind][0].append(ours)
            rounds[kind][1].append(theirs)
            print(f"round {r + 1} {kind}: sparsenet {ours:.1f} ms, MXNet {theirs:.1f} ms per epoch",
                  file=sys.stderr)
    print(f"\nSeed 003 Module training, 1,000 x 100 CSR (density 0.01), batch 1, "
          f"{args.threads} thread(s); ms per epoch, median of {args.epochs} epochs per round\n")
    print("| loop | round | sparsenet | MXNet 1.9.1 | sparsenet / MXNet |")
    print("|---|---|---|---|---|")
    for kind in kinds:
        ours, theirs = rounds[kind]
        for r, (a, b) in enumerate(zip(ours, theirs)):
            print(f"| {kind} | {r + 1} | {a:.1f} | {b:.1f} | {a / b:.2f} |")
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"| {kind} | **median** | **{a:.1f}** | **{b:.1f}** | **{a / b:.2f}** |")
    if args.phases:
        spent = phases(args.epochs)
        print("\nsparsenet, us per batch (median of epochs): " +
              ", ".join(f"{k} {v:.0f}" for k, v in spent.items()) +
              f"; total {sum(spent.values()):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

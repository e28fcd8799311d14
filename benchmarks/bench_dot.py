"""Sparse dot side by side: sparsenet vs SciPy vs PyTorch (vs MXNet 1.9.1 when given).

    python benchmarks/bench_dot.py [--threads 1] [--repeat 30] [--mxnet-python /tmp/mx/bin/python]

Two products on a 1,000,000 x 128 float32 weight ``W``:

* ``dot(X, W)`` with ``X`` CSR (rows x 1,000,000, nnz per row as given): dense output;
* ``dot(X.T, G)`` with ``G`` dense (rows x 128): row_sparse output (sorted unique rows).

Batches rotate over 8 random matrices so the gathered rows of ``W`` are cold in the
cache, as in training. Prints a Markdown table of median milliseconds and the
ratio of sparsenet to the fastest peer (<= 1.0 means sparsenet is at least as fast).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F

import sparsenet as mx

FEATURES, DIM, ROTATE = 1_000_000, 128, 8
CASES = [(1024, 40), (10, 10)]


def median_ms(fn, args_list, repeat):
    for a in args_list[:2]:
        fn(a)
    times = []
    for i in range(repeat):
        a = args_list[i % len(args_list)]
        t0 = time.perf_counter()
        fn(a)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def make_batches(rows, per_row, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(ROTATE):
        cols = np.sort(np.stack([rng.choice(FEATURES, per_row, replace=False)
                                 for _ in range(rows)]), axis=1).reshape(-1)
        indptr = np.arange(0, rows * per_row + 1, per_row)
        data = rng.random(rows * per_row, dtype=np.float32)
        out.append(sp.csr_matrix((data, cols, indptr), shape=(rows, FEATURES)))
    return out


def bench_sparsenet_and_peers(rows, per_row, repeat):
    batches = make_batches(rows, per_row, seed=rows)
    W = torch.randn(FEATURES, DIM)
    Wn = W.numpy()
    G = torch.randn(rows, DIM)
    Gn = G.numpy()
    nd_x = [mx.nd.sparse.csr_matrix(b) for b in batches]
    nd_w, nd_g = mx.nd.from_torch(W), mx.nd.from_torch(G)
    t_csr = [torch.sparse_csr_tensor(torch.from_numpy(b.indptr.astype(np.int64)),
                                     torch.from_numpy(b.indices.astype(np.int64)),
                                     torch.from_numpy(b.data), b.shape) for b in batches]
    t_parts = [(torch.from_numpy(b.indices.astype(np.int64)),
                torch.from_numpy(b.indptr[:-1].astype(np.int64)),
                torch.from_numpy(b.data)) for b in batches]
    t_rows = [torch.repeat_interleave(torch.arange(rows), torch.from_numpy(np.diff(b.indptr)))
              for b in batches]

    fwd = {
        "sparsenet dot(csr, W)": median_ms(lambda x: mx.nd.dot(x, nd_w), nd_x, repeat),
        "scipy csr @ W": median_ms(lambda b: b @ Wn, batches, repeat),
        "torch sparse.mm(csr, W)": median_ms(lambda x: torch.sparse.mm(x, W), t_csr, repeat),
        "torch embedding_bag": median_ms(
            lambda p: F.embedding_bag(p[0], W, p[1], mode="sum", per_sample_weights=p[2]),
            t_parts, repeat),
    }

    def scipy_t(b):
        cols = np.unique(b.indices)
        return cols, (b[:, cols].T @ Gn)

    def torch_unique_index_add(i):
        idx, _, vals = t_parts[i]
        u, inv = torch.unique(idx, return_inverse=True)
        return u, torch.zeros(u.numel(), DIM).index_add_(0, inv,
                                                         G.index_select(0, t_rows[i]) * vals[:, None])

    def torch_gather(i):
        idx, _, vals = t_parts[i]
        return idx, G.index_select(0, t_rows[i]) * vals[:, None]

    rng = list(range(ROTATE))
    bwd = {
        "sparsenet dot(csr.T, G) -> rsp": median_ms(
            lambda x: mx.nd.dot(x, nd_g, transpose_a=True), nd_x, repeat),
        "scipy unique + csr[:, cols].T @ G": median_ms(scipy_t, batches, repeat),
        "torch unique + index_add_": median_ms(torch_unique_index_add, rng, repeat),
        "torch gather-and-scale (no dedup, not a valid rsp)": median_ms(torch_gather, rng,
                                                                        repeat),
    }
    return fwd, bwd


MXNET_SCRIPT = textwrap.dedent("""
    import json, statistics, sys, time
    import numpy as np, scipy.sparse as sp, mxnet as mx
    rows, per_row, repeat, feats, dim, rotate = map(int, sys.argv[1:7])
    rng = np.random.default_rng(rows)
    xs = []
    for _ in range(rotate):
        cols = np.sort(np.stack([rng.choice(feats, per_row, replace=False)
                                 for _ in range(rows)]), axis=1).reshape(-1)
        indptr = np.arange(0, rows * per_row + 1, per_row)
        data = rng.random(rows * per_row, dtype=np.float32)
        xs.append(mx.nd.sparse.csr_matrix((data, cols, indptr), shape=(rows, feats)))
    W = mx.nd.random.normal(shape=(feats, dim)); G = mx.nd.random.normal(shape=(rows, dim))
    def med(fn):
        for x in xs[:2]: fn(x).wait_to_read()
        ts = []
        for i in range(repeat):
            t0 = time.perf_counter(); fn(xs[i % rotate]).wait_to_read()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts) * 1e3
    print(json.dumps({"fwd": med(lambda x: mx.nd.sparse.dot(x, W)),
                      "bwd": med(lambda x: mx.nd.sparse.dot(x, G, transpose_a=True))}))
""")


def bench_mxnet(python, rows, per_row, repeat, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MXNET_CPU_WORKER_NTHREADS=str(threads))
    out = subprocess.run([python, "-c", MXNET_SCRIPT, str(rows), str(per_row), str(repeat),
                          str(FEATURES), str(DIM), str(ROTATE)], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(title, results, ours):
    best_peer = min(v for k, v in results.items() if k != ours and "not a valid" not in k)
    lines = [f"**{title}**", "", "| implementation | median ms |", "|---|---|"]
    for k, v in results.items():
        lines.append(f"| {k} | {v:.3f} |")
    lines.append(f"| ratio sparsenet / fastest valid peer | {results[ours] / best_peer:.2f} |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--mxnet-python", default=None,
                   help="python of a venv with mxnet==1.9.1 (measured in a subprocess)")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s), W = {FEATURES:,} x {DIM} "
          f"float32, {ROTATE} rotating batches, median of {args.repeat}\n")
    for rows, per_row in CASES:
        fwd, bwd = bench_sparsenet_and_peers(rows, per_row, args.repeat)
        if args.mxnet_python:
            m = bench_mxnet(args.mxnet_python, rows, per_row, args.repeat, args.threads)
            fwd["MXNet 1.9.1 sparse.dot(csr, W)"] = m["fwd"]
            bwd["MXNet 1.9.1 sparse.dot(csr.T, G) -> rsp"] = m["bwd"]
        print(table(f"{rows} x 1,000,000 CSR ({per_row} nnz/row) @ W", fwd,
                    "sparsenet dot(csr, W)"))
        print()
        print(table(f"{rows} x 1,000,000 CSR ({per_row} nnz/row), X.T @ G", bwd,
                    "sparsenet dot(csr.T, G) -> rsp"))
        print()


if __name__ == "__main__":
    sys.exit(main())

"""Saving and loading arrays: sparsenet (MXNet's format), MXNet 1.9.1 and torch.save/torch.load.

Two tables, the same data for every peer: a dense ``rows x 128`` float32 table (default
1,000,000 rows, 512 MB) and a ``rows x 1,000,000`` CSR matrix with ``--nnz-per-row`` values per
row (default 10: 40 MB of values, 80 MB of int64 column ids, 8 MB of indptr). Each peer runs
in its own process; the data is built there (outside the timing), saved, the file read once
to put it in the page cache, then loaded; each is repeated and the median printed as Markdown.

    python benchmarks/bench_serialization.py [--rows 1000000] [--repeat 3]
        [--mxnet-python /tmp/mx/bin/python] [--dir /tmp]

Peers: sparsenet ``mx.nd.save/load`` (MXNet's format, the default), sparsenet
``format='sparsenet'`` (the torch archive), ``torch.save``/``torch.load(weights_only=True)``
of the same tensors (the CSR as its three parts), and MXNet's ``mx.nd.save/load`` when an MXNet
Python is given. The target: sparsenet loads at least as fast as ``torch.load``.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

CHILD = r"""
import json, os, sys, time
import numpy as np
peer, kind, rows, nnz, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rng = np.random.default_rng(0)
if kind == "dense":
    dense = rng.standard_normal((rows, 128), dtype=np.float32)
else:
    data = rng.standard_normal(rows * nnz, dtype=np.float32)
    indices = np.sort(rng.integers(0, 1000000 // nnz, (rows, nnz)) + np.arange(nnz) * (1000000 // nnz),
                      axis=1).reshape(-1).astype(np.int64)
    indptr = np.arange(0, rows * nnz + 1, nnz, dtype=np.int64)
if peer == "torch":
    import torch
    obj = torch.from_numpy(dense) if kind == "dense" else {
        "data": torch.from_numpy(data), "indices": torch.from_numpy(indices),
        "indptr": torch.from_numpy(indptr)}
    save = lambda: torch.save(obj, path)
    load = lambda: torch.load(path, weights_only=True)
else:
    if peer == "mxnet":
        import mxnet as mx
    else:
        sys.path.insert(0, sys.argv[6])
        import sparsenet as mx
    arr = mx.nd.array(dense) if kind == "dense" else mx.nd.sparse.csr_matrix(
        (data, indices, indptr), shape=(rows, 1000000))
    kw = {"format": "sparsenet"} if peer == "sparsenet-archive" else {}
    save = lambda: mx.nd.save(path, [arr], **kw)
    load = lambda: mx.nd.load(path)
t = time.perf_counter(); save(); t_save = time.perf_counter() - t
with open(path, "rb") as f:  # page cache
    while f.read(1 << 24):
        pass
t = time.perf_counter(); out = load(); t_load = time.perf_counter() - t
size = os.path.getsize(path)
os.unlink(path)
print(json.dumps({"save": t_save, "load": t_load, "mb": size / 2**20}))
"""


def run(python, peer, kind, args):
    path = os.path.join(args.dir, f"bench_serialization_{peer}_{kind}.bin")
    out = subprocess.run([python, "-c", CHILD, peer, kind, str(args.rows), str(args.nnz_per_row),
                          path, SRC], capture_output=True, text=True,
                         env=dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1")))
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--nnz-per-row", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mxnet-python", default=None)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()
    peers = [("sparsenet", sys.executable), ("sparsenet-archive", sys.executable),
             ("torch", sys.executable)]
    if args.mxnet_python:
        peers.append(("mxnet", args.mxnet_python))
    print(f"rows={args.rows}, dense {args.rows} x 128 float32, csr {args.rows} x 1000000 with "
          f"{args.nnz_per_row} values per row; median of {args.repeat}\n")
    print("| data | peer | file MB | save s | load s | load MB/s |")
    print("|---|---|---:|---:|---:|---:|")
    for kind in ("dense", "csr"):
        for peer, python in peers:
            runs = [run(python, peer, kind, args) for _ in range(args.repeat)]
            if any("error" in r for r in runs):
                print(f"| {kind} | {peer} | error: {runs[0].get('error', runs[-1].get('error'))} |||||")
                continue
            save = statistics.median(r["save"] for r in runs)
            load = statistics.median(r["load"] for r in runs)
            mb = runs[0]["mb"]
            print(f"| {kind} | {peer} | {mb:.0f} | {save:.3f} | {load:.3f} | {mb / load:.0f} |")


if __name__ == "__main__":
    main()

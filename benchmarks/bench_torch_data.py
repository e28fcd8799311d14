"""An epoch of ``sparsenet.torch.data`` batches vs the parser's plain ``load_libsvm``.

    python benchmarks/bench_torch_data.py [--rows 1000000] [--nnz 20] [--features 100000]
                                          [--batch-size 256] [--repeat 3] [--threads 1]
                                          [--per-row-rows 40000] [--keep DIR]

Generates a LibSVM file of ``rows`` rows with ``nnz`` distinct random features a row (float32
values, 0/1 labels), then times, in alternating rounds, medians of ``repeat``:

* ``load_libsvm``: the whole file read into a CSRNDArray (the parser's plain rate);
* ``LibSVMBatches`` through ``DataLoader(batch_size=None)``: one epoch of EmbeddingBag batches
  of ``batch-size`` (``((ids, offsets, per_sample_weights), labels)``), then the same
  shuffled (buffer of 8 chunks), as CSR tensors, with 2 DataLoader worker processes, and
  over the gzip-compressed file (next to ``load_libsvm`` of that file);
* the per-row ``IterableLibSVMDataset`` + ``collate_embedding_bag`` (one ``(row, label)``
  sample a row, batched by the DataLoader) on the first ``per-row-rows`` rows, extrapolated
  to rows a second.

Each epoch touches every batch (sums the ids' count); no model runs. Prints a Markdown table
of median seconds, rows a second and the rate as a fraction of ``load_libsvm``'s (the target
for EmbeddingBag batches is >= 0.5).
"""
import argparse
import gzip
import os
import shutil
import statistics
import tempfile
import time

import numpy as np
import scipy.sparse as sp
import torch

import sparsenet as mx
from sparsenet.torch.data import IterableLibSVMDataset, LibSVMBatches, collate_embedding_bag


def generate(path, rows, features, nnz, seed=0, block=200_000):
    """Write ``rows`` rows of ``nnz`` distinct random features each to ``path``."""
    rng = np.random.default_rng(seed)
    with open(path, "wb") as f:
        for start in range(0, rows, block):
            n = min(block, rows - start)
            # distinct sorted columns: nnz draws from disjoint strides of the feature range
            stride = features // nnz
            cols = (np.arange(nnz) * stride + rng.integers(0, stride, size=(n, nnz)))
            indptr = np.arange(0, n * nnz + 1, nnz)
            data = rng.uniform(0.5, 1.5, size=n * nnz).astype(np.float32)
            X = sp.csr_matrix((data, cols.ravel(), indptr), shape=(n, features))
            y = (rng.random(n) < 0.5).astype(np.float32)
            part = path + ".part"
            mx.io.save_libsvm(part, X, y)
            with open(part, "rb") as src:
                shutil.copyfileobj(src, f, 1 << 22)
            os.remove(part)


def time_load(path, features):
    t0 = time.perf_counter()
    data, _ = mx.io.load_libsvm(path, features, progress=False)
    seconds = time.perf_counter() - t0
    return seconds, data.shape[0]


def time_batches(path, features, batch_size, num_workers=0, **kwargs):
    ds = LibSVMBatches(path, features, batch_size, seed=0, **kwargs)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=num_workers)
    rows = 0
    t0 = time.perf_counter()
    for _, y in loader:
        rows += y.shape[0]
    return time.perf_counter() - t0, rows


def time_per_row(path, features, batch_size):
    ds = IterableLibSVMDataset(path, features, rank=0, world_size=1)
    loader = torch.utils.data.DataLoader(ds, batch_size=batch_size,
                                         collate_fn=collate_embedding_bag)
    rows = 0
    t0 = time.perf_counter()
    for _, y in loader:
        rows += y.shape[0]
    return time.perf_counter() - t0, rows


def head(src, dst, rows):
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        for _, line in zip(range(rows), fin):
            fout.write(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--nnz", type=int, default=20)
    ap.add_argument("--features", type=int, default=100_000)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--per-row-rows", type=int, default=40_000)
    ap.add_argument("--keep", help="a directory for the generated files (kept)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tmp = args.keep or tempfile.mkdtemp(prefix="bench_torch_data_")
    path = os.path.join(tmp, f"train_{args.rows}.svm")
    if not os.path.exists(path):
        generate(path, args.rows, args.features, args.nnz)
    gz = path + ".gz"
    if not os.path.exists(gz):
        with open(path, "rb") as fin, gzip.open(gz, "wb", compresslevel=1) as fout:
            shutil.copyfileobj(fin, fout, 1 << 22)
    small = os.path.join(tmp, f"head_{args.per_row_rows}.svm")
    head(path, small, args.per_row_rows)
    mb = os.path.getsize(path) / 2 ** 20
    bs, f = args.batch_size, args.features
    cases = {
        "load_libsvm (parser, plain)": lambda: time_load(path, f),
        f"LibSVMBatches embedding_bag, batch {bs}": lambda: time_batches(path, f, bs),
        f"LibSVMBatches embedding_bag, batch {bs}, shuffle": lambda: time_batches(
            path, f, bs, shuffle=True),
        f"LibSVMBatches csr, batch {bs}": lambda: time_batches(path, f, bs, collate="csr"),
        f"LibSVMBatches embedding_bag, batch {bs}, 2 DataLoader workers": lambda: time_batches(
            path, f, bs, num_workers=2),
        "load_libsvm (parser, .gz)": lambda: time_load(gz, f),
        f"LibSVMBatches embedding_bag, batch {bs}, .gz": lambda: time_batches(gz, f, bs),
        f"per-row IterableLibSVMDataset + collate_embedding_bag, batch {bs} "
        f"({args.per_row_rows} rows)": lambda: time_per_row(small, f, bs),
    }
    times = {k: [] for k in cases}
    counts = {}
    for _ in range(args.repeat):  # alternate the cases round by round
        for k, fn in cases.items():
            seconds, rows = fn()
            times[k].append(seconds)
            counts[k] = rows
    base = args.rows / statistics.median(times["load_libsvm (parser, plain)"])
    print(f"{args.rows:,} rows x {args.nnz} nnz, {args.features:,} features, {mb:.0f} MiB of "
          f"text; torch {torch.__version__}, {args.threads} torch thread(s), parser threads: "
          f"SPARSENET_IO_THREADS={os.environ.get('SPARSENET_IO_THREADS', 'default')}; "
          f"medians of {args.repeat}\n")
    print("| case | median s | rows/s | rate / load_libsvm |")
    print("|---|---:|---:|---:|")
    for k in cases:
        med = statistics.median(times[k])
        rate = counts[k] / med
        print(f"| {k} | {med:.3f} | {rate:,.0f} | {rate / base:.2f} |")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

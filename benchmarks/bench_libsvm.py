"""LibSVM parsing: sparsenet vs scikit-learn vs MXNet vs the I/O floor, side by side.

Generates the benchmark file once (default: 1,000,000 rows x 20 values, indices
below 1,000,000, 6-decimal values, about 300 MB; ``--big`` adds a 3 GB one),
then runs every peer in its own process, several times, and prints a Markdown
table of medians: seconds, MB/s, rows/s, CPU seconds (user + system, all
threads) and MB per CPU second (the rate per core, which other load on the
machine disturbs far less than wall time), the process's peak RSS while parsing
(imports included: torch alone is about 220 MiB) and that peak minus the RSS
just before parsing (what parsing itself costs).

    python benchmarks/bench_libsvm.py [--repeat 3] [--mxnet-python /tmp/mx/bin/python] [--big]
        [--compressed-rows 300000] [--only-compressed]

Peers: ``cat f > /dev/null`` and ``wc -l`` (the floor), sparsenet
``load_libsvm`` (whole file) and ``LibSVMIter`` (batches of 1000, one epoch),
scikit-learn ``load_svmlight_file`` (float32), and MXNet's ``LibSVMIter`` when
an MXNet Python is given. The compressed rows (``.gz``/``.zst`` read and write,
a 4-part read of a folder of 8 ``.gz`` files) come from
``bench_libsvm_compressed.py``. Timings are in-process (parse only); the file is in
the page cache (each peer reads it once before timing).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from bench_libsvm_compressed import bench_compressed

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

# Each peer runs this template in a fresh interpreter and prints one JSON line.
CHILD = r"""
import json, os, resource, sys, time
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def status(key):
    for line in open('/proc/self/status'):
        if line.startswith(key + ':'):
            return int(line.split()[1]) / 1024
path, features, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
{imports}
with open(path, 'rb') as f:           # warm the page cache outside the timing
    while f.read(1 << 20):
        pass
base = status('VmRSS')
with open('/proc/self/clear_refs', 'w') as f:
    f.write('5')                      # reset the peak (VmHWM) to the current RSS
c = cpu()
t = time.perf_counter()
{body}
dt = time.perf_counter() - t
c = cpu() - c
print(json.dumps({{"seconds": dt, "cpu": c, "rows": rows, "peak": status('VmHWM'),
                  "base": base}}))
"""

PEERS = {
    "sparsenet load_libsvm (whole file)": (
        "import sparsenet as mx",
        "data, label = mx.io.load_libsvm(path, num_features=features)\nrows = data.shape[0]"),
    "sparsenet LibSVMIter (batches of {batch})": (
        "import sparsenet as mx",
        "it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(features,), batch_size=batch)\n"
        "rows = 0\nfor b in it:\n    rows += b.data[0].shape[0] - b.pad"),
    "scikit-learn load_svmlight_file (float32)": (
        "import numpy as np\nfrom sklearn.datasets import load_svmlight_file",
        "X, y = load_svmlight_file(path, n_features=features, dtype=np.float32, "
        "zero_based=True)\nrows = X.shape[0]"),
}
MXNET_PEER = ("MXNet 1.9.1 LibSVMIter (batches of {batch})", (
    "import logging\nlogging.disable(logging.WARNING)\nimport mxnet as mx",
    "it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(features,), batch_size=batch)\n"
    "rows = 0\nfor b in it:\n    rows += b.data[0].shape[0] - b.pad"))


def generate(path, rows, nnz, features, seed=0):
    """Write the benchmark file: sorted unique indices, values ``0.dddddd`` (6 decimals)."""
    rng = np.random.default_rng(seed)
    S = np.dtypes.StringDType()
    tmp = path + ".tmp"
    t = time.perf_counter()
    with open(tmp, "w") as f:
        block = 100_000
        for start in range(0, rows, block):
            r = min(block, rows - start)
            # nnz distinct sorted indices per row: sorted draws, made distinct by rank
            idx = np.sort(rng.integers(0, features - nnz, size=(r, nnz)), axis=1)
            idx = idx + np.arange(nnz)
            vals = rng.integers(1, 1_000_000, size=(r, nnz))
            tok = np.strings.add(np.strings.add(" ", idx.astype(S)), ":0.")
            tok = np.strings.add(tok, np.strings.zfill(vals.astype(S), 6))
            lines = np.strings.add(rng.integers(0, 2, r).astype(S), tok[:, 0])
            for j in range(1, nnz):
                lines = np.strings.add(lines, tok[:, j])
            f.write("\n".join(lines.tolist()) + "\n")
    os.replace(tmp, path)
    print(f"generated {path}: {os.path.getsize(path) / 1e6:.0f} MB in "
          f"{time.perf_counter() - t:.0f} s", file=sys.stderr)


def run_child(python, imports, body, path, features, batch, env):
    code = CHILD.format(imports=imports, body=body)
    out = subprocess.run([python, "-c", code, path, str(features), str(batch)],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{python} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_tool(cmd):
    """Wall seconds and peak RSS (MiB) of a shell command, via /usr/bin/time -v."""
    t = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-v", "sh", "-c", cmd], capture_output=True,
                         text=True)
    dt = time.perf_counter() - t
    peak = next((int(line.split()[-1]) / 1024 for line in out.stderr.splitlines()
                 if "Maximum resident set size" in line), float("nan"))
    return {"seconds": dt, "cpu": float("nan"), "peak": peak, "base": float("nan"),
            "rows": None}


def bench_file(path, args, env):
    size = os.path.getsize(path)
    results = {}
    for name, cmd in (("`cat f > /dev/null` (floor)", f"cat {path} > /dev/null"),
                      ("`wc -l` (floor)", f"wc -l {path} > /dev/null")):
        run_tool(cmd)
        results[name] = [run_tool(cmd) for _ in range(args.repeat)]
    peers = dict(PEERS)
    if args.mxnet_python:
        peers[MXNET_PEER[0]] = MXNET_PEER[1]
    for name, (imports, body) in peers.items():
        python = args.mxnet_python if name.startswith("MXNet") else sys.executable
        if "scikit" in name and size > args.sklearn_max_mb * 1e6:
            continue
        runs = [run_child(python, imports, body, path, args.features, args.batch_size, env)
                for _ in range(args.repeat)]
        results[name.format(batch=args.batch_size)] = runs
    return size, results


EPOCHS = r"""
import json, sys, time
{imports}
path, features = sys.argv[1], int(sys.argv[2])
it = mx.io.LibSVMIter(data_libsvm=path, data_shape=(features,), batch_size=10)
times = []
for epoch in range(6):
    it.reset()
    t = time.perf_counter()
    n = 0
    for b in it:
        n += 1
    times.append((time.perf_counter() - t) / n)
print(json.dumps({{"us_per_batch": sorted(times[1:])[2] * 1e6, "batches": n}}))
"""


def seed_epochs(args, env):
    """Per-batch cost of iterating the seed-000-sized file (1000 x 1M, 10 per row), batch 10."""
    sys.path.insert(0, SRC)
    import sparsenet as mx
    path = os.path.join(args.dir, "seed000.svm")
    if not os.path.exists(path):
        data = mx.test_utils.rand_ndarray((1000, 1000000), stype="csr", density=0.00001)
        label = data.sum(axis=1) > data.sum(axis=1).mean()
        mx.io.save_libsvm(path, data, label)
    rows = []
    peers = [("sparsenet", sys.executable, "import sparsenet as mx")]
    if args.mxnet_python:
        peers.append(("MXNet 1.9.1", args.mxnet_python,
                      "import logging\nlogging.disable(logging.WARNING)\nimport mxnet as mx"))
    for name, python, imports in peers:
        runs = []
        for _ in range(args.repeat):
            out = subprocess.run([python, "-c", EPOCHS.format(imports=imports), path, "1000000"],
                                 capture_output=True, text=True, env=env)
            if out.returncode != 0:
                raise RuntimeError(out.stderr[-2000:])
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        rows.append((name, statistics.median(r["us_per_batch"] for r in runs),
                     runs[0]["batches"]))
    lines = ["| iterator | us per batch (median epoch) | batches per epoch |", "|---|---|---|"]
    lines += [f"| {n} LibSVMIter | {us:.1f} | {b} |" for n, us, b in rows]
    return "\n".join(lines)


def bench_writer(args):
    """Writing 200,000 rows x 20 float32 values: sparsenet save_libsvm vs scikit-learn."""
    sys.path.insert(0, SRC)
    import scipy.sparse as sp
    from sklearn.datasets import dump_svmlight_file
    import sparsenet as mx
    rng = np.random.default_rng(0)
    n, k = 200_000, 20
    cols = np.sort(rng.integers(0, 50_000, (n, k)), axis=1) * 20 + np.arange(k)
    X = sp.csr_matrix((rng.random(n * k).astype(np.float32), cols.ravel(),
                       np.arange(0, n * k + 1, k)), shape=(n, 1_000_000))
    y = (np.arange(n) % 2).astype(np.float32)
    out = os.path.join(args.dir, "written.svm")
    peers = [("sparsenet save_libsvm", lambda: mx.io.save_libsvm(out, X, y)),
             ("scikit-learn dump_svmlight_file",
              lambda: dump_svmlight_file(X, y, out, zero_based=True))]
    lines = ["| writer | seconds | M values/s | file MB |", "|---|---|---|---|"]
    for name, fn in peers:
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        s = statistics.median(times)
        lines.append(f"| {name} | {s:.2f} | {X.nnz / s / 1e6:.2f} | "
                     f"{os.path.getsize(out) / 1e6:.0f} |")
    return "\n".join(lines)


def table(size, results):
    def med(runs, key):
        vals = [r[key] for r in runs]
        return statistics.median(vals)

    ref = {k: med(v, "seconds") for k, v in results.items()}
    mx_key = next((k for k in ref if k.startswith("MXNet")), None)
    sk_key = next((k for k in ref if k.startswith("scikit")), None)
    lines = ["| peer | seconds | MB/s | rows/s | CPU s | MB per CPU s | peak RSS MiB | "
             "parse cost MiB | vs MXNet | vs scikit-learn |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, runs in results.items():
        s = ref[name]
        rows = runs[0]["rows"]
        peak, base = med(runs, "peak"), med(runs, "base")
        above = peak - base if base == base else float("nan")
        vs_mx = f"{ref[mx_key] / s:.1f}x" if mx_key else "-"
        vs_sk = f"{ref[sk_key] / s:.1f}x" if sk_key else "-"
        c = med(runs, "cpu")
        cpu = f"{c:.2f} | {size / c / 1e6:,.0f}" if c == c else "- | -"
        lines.append(f"| {name} | {s:.3f} | {size / s / 1e6:,.0f} | "
                     f"{'-' if rows is None else f'{rows / s / 1e6:.2f} M'} | "
                     f"{cpu} | {peak:,.0f} | "
                     f"{'-' if above != above else f'{above:,.0f}'} | {vs_mx} | {vs_sk} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/sparsenet_bench")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--nnz", type=int, default=20)
    ap.add_argument("--features", type=int, default=1_000_000)
    ap.add_argument("--batch-size", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big", action="store_true", help="also run a 3 GB file (10x the rows)")
    ap.add_argument("--mxnet-python", help="a Python with MXNet 1.9.1 (e.g. /tmp/mx/bin/python)")
    ap.add_argument("--sklearn-max-mb", type=float, default=1000,
                    help="skip scikit-learn on files larger than this")
    ap.add_argument("--compressed-rows", type=int, default=300_000,
                    help="rows of the file behind the compressed rows (0: skip them)")
    ap.add_argument("--only-compressed", action="store_true",
                    help="run only the compressed rows")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if args.compressed_rows:
        rows = args.compressed_rows
        path = os.path.join(args.dir, f"bench_{rows}x{args.nnz}_{args.features}.svm")
        if not os.path.exists(path):
            generate(path, rows, args.nnz, args.features)
        print(f"\n### Compressed input and output: {rows:,} rows x {args.nnz} values\n")
        print(bench_compressed(path, args, env))
    if args.only_compressed:
        return
    sizes = [args.rows] + ([args.rows * 10] if args.big else [])
    for rows in sizes:
        path = os.path.join(args.dir, f"bench_{rows}x{args.nnz}_{args.features}.svm")
        if not os.path.exists(path):
            generate(path, rows, args.nnz, args.features)
        size, results = bench_file(path, args, env)
        print(f"\n### {rows:,} rows x {args.nnz} values, {args.features:,} features: "
              f"{size / 1e6:,.0f} MB (median of {args.repeat} runs, "
              f"{os.cpu_count()} CPUs)\n")
        print(table(size, results))
    print("\n### Seed 000 file (1,000 x 1,000,000, 10 values per row), batch 10, epochs 2-6\n")
    print(seed_epochs(args, env))
    print("\n### Writing 200,000 x 1,000,000 rows with 20 float32 values each\n")
    print(bench_writer(args))


if __name__ == "__main__":
    main()

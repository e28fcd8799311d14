"""``sparsenet train`` (logistic regression, its default settings) against Vowpal Wabbit and
scikit-learn, end to end, each a whole process.

    python benchmarks/bench_cli.py [--rows 1000000] [--features 100000] [--nnz 30]
                                   [--repeat 3] [--peers vw,sklearn] [--data-dir DIR]
                                   [--sparsenet-args "--batch-size 4096"]
    python benchmarks/bench_cli.py --grid [--rows 100000] [--grid-batch 256,1024,4096,16384]
                                   [--grid-lr 0.005,0.01,0.02,0.05] [--grid-epochs 3]

Generates a training file of ``--rows`` rows, a validation file and a held-out test file
of ``rows // 10`` rows each (``--nnz`` distinct features per row, values in [0.5, 1.5),
labels drawn from a hidden linear model through the logistic function, 0-based LibSVM;
``--data-dir`` keeps them for the next run), then times, alternating the tools for
``--repeat`` rounds, each from a fresh process and from the file on disk (start-up
included):

- ``sparsenet train TRAIN --features N --val VAL --out DIR --quiet`` with the default
  settings (``--sparsenet-args`` adds flags);
- Vowpal Wabbit, one pass: ``vw -d TRAIN.vw --loss_function logistic -b 20`` (the same rows
  in VW's format, converted outside the timing). VW's command line runs as ``vw`` where
  that is on ``PATH``, else through the ``vowpalwabbit`` Python package (``pip install
  vowpalwabbit``: its wheels ship no ``vw`` program) in ``--vw-python`` (default: this
  interpreter) as ``Workspace(ARGS).run_parser()``, the very driver ``vw`` runs. The row
  must run: a missing VW is an error unless ``--peers`` leaves it out;
- scikit-learn (``--peers sklearn``): ``load_svmlight_file`` + ``SGDClassifier(loss=
  'log_loss', random_state=0)`` (its defaults: up to 1000 epochs, ``tol=1e-3``).

and prints the medians of wall time and the log-loss on the test file (neither tool's
prediction of it is timed), with each tool's ratio to sparsenet. The test log-loss of the
hidden model itself (the floor) is printed too.

``--grid`` instead measures ``sparsenet train`` over batch sizes and learning rates (the
default optimizer unless ``--sparsenet-args`` names another), ``--grid-epochs`` epochs
each, and prints per cell the test log-loss after each epoch and the process's wall time
(the test file is the run's ``--val``: ``metrics.jsonl`` holds its log-loss per epoch, and
``--patience`` is set so that no run stops early).
"""
import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

import sparsenet as mx

_SKLEARN = r"""
import sys, time, json
import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import log_loss
train, test, features = sys.argv[1], sys.argv[2], int(sys.argv[3])
t0 = time.perf_counter()
X, y = load_svmlight_file(train, n_features=features, zero_based=True)
X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)  # SGD needs int32
model = SGDClassifier(loss="log_loss", random_state=0).fit(X, y)
seconds = time.perf_counter() - t0
Xt, yt = load_svmlight_file(test, n_features=features, zero_based=True)
Xt.indices, Xt.indptr = Xt.indices.astype(np.int32), Xt.indptr.astype(np.int32)
print(json.dumps({"seconds": seconds, "logloss": log_loss(yt, model.predict_proba(Xt)),
                  "epochs": int(model.n_iter_)}))
"""

# VW's own driver (what the ``vw`` program runs) through the Python package's bindings
_PYVW = "import sys; from vowpalwabbit import Workspace; " \
        "w = Workspace(' '.join(sys.argv[1:])); w.run_parser(); w.finish()"

_VW_TRAIN = ["--loss_function", "logistic", "-b", "20", "--quiet"]


def _generate(path, rows, features, nnz, w, rng, block=200_000):
    """Write ``rows`` rows to ``path`` in blocks; return the true probabilities of the
    drawn labels."""
    probs = []
    with open(path, "wb") as f:
        for start in range(0, rows, block):
            n = min(block, rows - start)
            cols = np.sort(rng.integers(0, features, size=(n, nnz)), axis=1)
            keep = np.ones_like(cols, dtype=bool)
            keep[:, 1:] = cols[:, 1:] != cols[:, :-1]
            counts = keep.sum(1)
            indptr = np.concatenate([[0], np.cumsum(counts)])
            data = rng.uniform(0.5, 1.5, size=int(counts.sum())).astype(np.float32)
            X = sp.csr_matrix((data, cols[keep], indptr), shape=(n, features))
            p = 1 / (1 + np.exp(-(X @ w)))
            y = (rng.random(n) < p).astype(np.float32)
            probs.append(np.where(y > 0, p, 1 - p))
            part = path + ".part"
            mx.io.save_libsvm(part, X, y)
            with open(part, "rb") as src:
                shutil.copyfileobj(src, f, 1 << 22)
            os.remove(part)
    return np.concatenate(probs)


def _to_vw(src, dst):
    with open(src) as fin, open(dst, "w") as fout:
        for line in fin:
            label, _, feats = line.partition(" ")
            fout.write(f"{'1' if float(label) > 0 else '-1'} | {feats}")


def make_data(folder, rows, features, nnz):
    """The train/val/test files (LibSVM and VW's format) in ``folder``, generated unless
    already there for these sizes; returns their paths and the floor (hidden model's
    test log-loss)."""
    tag = f"{rows}x{features}x{nnz}"
    names = {k: os.path.join(folder, f"{k}-{tag}.svm") for k in ("train", "val", "test")}
    names["train_vw"] = os.path.join(folder, f"train-{tag}.vw")
    names["test_vw"] = os.path.join(folder, f"test-{tag}.vw")
    floor_file = os.path.join(folder, f"floor-{tag}.json")
    if not os.path.isfile(floor_file):
        t0 = time.perf_counter()
        rng = np.random.default_rng(0)
        w = rng.normal(0, 3 / np.sqrt(nnz), size=features)
        held = max(1000, rows // 10)
        _generate(names["train"], rows, features, nnz, w, rng)
        _generate(names["val"], held, features, nnz, w, rng)
        truth = _generate(names["test"], held, features, nnz, w, rng)
        _to_vw(names["train"], names["train_vw"])
        _to_vw(names["test"], names["test_vw"])
        with open(floor_file, "w") as f:
            json.dump({"floor": float(-np.mean(np.log(truth)))}, f)
        print(f"generated {rows:,} + 2 x {held:,} rows, "
              f"{os.path.getsize(names['train']) / 2**20:.0f} MiB, in "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
    with open(floor_file) as f:
        return names, json.load(f)["floor"]


def _run(cmd):
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return seconds, proc.stdout


def _sparsenet(files, features, extra, tmp):
    out = tempfile.mkdtemp(dir=tmp)
    seconds, _ = _run([sys.executable, "-m", "sparsenet", "train", files["train"],
                       "--features", str(features), "--val", files["val"], "--out", out,
                       "--quiet", *extra])
    _, text = _run([sys.executable, "-m", "sparsenet", "eval", out, files["test"], "--json"])
    kept = _kept_epoch(out)
    shutil.rmtree(out, ignore_errors=True)
    return {"seconds": seconds, "logloss": json.loads(text)["logloss"], "epochs": kept}


def _kept_epoch(out):
    with open(os.path.join(out, "metrics.jsonl")) as f:
        records = [json.loads(line) for line in f if line.strip()]
    kept = [r["epoch"] for r in records if r.get("kept")]
    return kept[-1] if kept else records[-1]["epoch"]


def vw_command(vw_python):
    """How VW's command line runs here: ``['vw']`` when on PATH, else the Python package's
    driver; None when neither is available."""
    vw = shutil.which("vw")
    if vw is not None:
        return [vw]
    probe = subprocess.run([vw_python, "-c", "import vowpalwabbit"], capture_output=True)
    return None if probe.returncode else [vw_python, "-c", _PYVW]


def _vw(files, cmd, tmp):
    model, preds = os.path.join(tmp, "vw.model"), os.path.join(tmp, "vw.preds")
    seconds, _ = _run([*cmd, "-d", files["train_vw"], *_VW_TRAIN, "-f", model])
    _run([*cmd, "-d", files["test_vw"], "-t", "-i", model, "--link", "logistic", "-p", preds,
          "--quiet"])
    p = np.clip(np.loadtxt(preds).reshape(-1, 1)[:, 0], 1e-15, 1 - 1e-15)
    with open(files["test_vw"]) as f:
        y = np.array([float(line.split(" ", 1)[0]) > 0 for line in f])
    return {"seconds": seconds,
            "logloss": float(-np.mean(np.where(y, np.log(p), np.log(1 - p))))}


def _sklearn(files, features):
    _, text = _run([sys.executable, "-c", _SKLEARN, files["train"], files["test"],
                    str(features)])
    return json.loads(text)


def compare(args, files, floor, tmp):
    """Alternate the tools ``args.repeat`` times; print the medians' table."""
    extra = shlex.split(args.sparsenet_args)
    peers = [p for p in args.peers.split(",") if p]
    runners = {"sparsenet": lambda: _sparsenet(files, args.features, extra, tmp)}
    if "vw" in peers:
        cmd = vw_command(args.vw_python)
        if cmd is None:
            sys.exit(f"Vowpal Wabbit: no 'vw' on PATH and {args.vw_python} cannot import "
                     f"vowpalwabbit; run '{args.vw_python} -m pip install vowpalwabbit' "
                     f"(or pass --vw-python, or leave vw out of --peers)")
        runners["vowpal wabbit"] = lambda: _vw(files, cmd, tmp)
    if "sklearn" in peers:
        runners["scikit-learn"] = lambda: _sklearn(files, args.features)
    runs = {name: [] for name in runners}
    for r in range(args.repeat):
        order = list(runners) if r % 2 == 0 else list(runners)[::-1]
        for name in order:
            runs[name].append(runners[name]())
            print(f"round {r + 1} {name}: {runs[name][-1]}", flush=True)
    med = {name: {"seconds": statistics.median(x["seconds"] for x in rs),
                  "logloss": statistics.median(x["logloss"] for x in rs),
                  "epochs": rs[-1].get("epochs")} for name, rs in runs.items()}
    base = med["sparsenet"]
    print(f"\n{args.rows:,} rows, medians of {args.repeat} alternating runs"
          f" (sparsenet flags: {args.sparsenet_args or 'the defaults'})")
    print("| tool | wall s | / sparsenet | test log-loss | - sparsenet | runs (s) |")
    print("|---|---:|---:|---:|---:|---|")
    for name, m in med.items():
        each = ", ".join(f"{x['seconds']:.2f}" for x in runs[name])
        epochs = (f" ({m['epochs']} epoch{'s' if m['epochs'] > 1 else ''})" if m["epochs"]
                  else "")
        print(f"| {name}{epochs} | {m['seconds']:.2f} | {m['seconds'] / base['seconds']:.2f} "
              f"| {m['logloss']:.4f} | {m['logloss'] - base['logloss']:+.4f} | {each} |")
    print(f"| the hidden model (the floor) | | | {floor:.4f} | | |")


def grid(args, files, tmp):
    """``sparsenet train`` over batch sizes x learning rates; print the table."""
    extra = shlex.split(args.sparsenet_args)
    epochs = args.grid_epochs
    print(f"| batch | lr | " + " | ".join(f"test log-loss after {e}" for e in
                                          range(1, epochs + 1)) +
          " | wall s | s an epoch |")
    print("|---:|---:|" + "---:|" * epochs + "---:|---:|")
    for batch in args.grid_batch.split(","):
        for lr in args.grid_lr.split(","):
            out = tempfile.mkdtemp(dir=tmp)
            seconds, _ = _run([sys.executable, "-m", "sparsenet", "train", files["train"],
                               "--features", str(args.features), "--val", files["test"],
                               "--out", out, "--quiet", "--epochs", str(epochs),
                               "--patience", str(epochs), "--batch-size", batch, "--lr", lr,
                               *extra])
            with open(os.path.join(out, "metrics.jsonl")) as f:
                records = [json.loads(line) for line in f if line.strip()]
            shutil.rmtree(out, ignore_errors=True)
            losses = " | ".join(f"{r['val']['logloss']:.4f}" for r in records)
            per_epoch = statistics.median(r["seconds"] for r in records)
            print(f"| {batch} | {lr} | {losses} | {seconds:.1f} | {per_epoch:.2f} |",
                  flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=100_000)
    ap.add_argument("--nnz", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3, help="alternating rounds (default 3)")
    ap.add_argument("--peers", default="vw,sklearn",
                    help="comma-separated peers among vw, sklearn (default both)")
    ap.add_argument("--vw-python", default=sys.executable,
                    help="a Python with the vowpalwabbit package, used when 'vw' is not on "
                         "PATH (default: this interpreter)")
    ap.add_argument("--sparsenet-args", default="", help="extra 'sparsenet train' flags")
    ap.add_argument("--data-dir", help="keep the generated files here and reuse them")
    ap.add_argument("--grid", action="store_true", help="measure the settings grid instead")
    ap.add_argument("--grid-batch", default="256,1024,4096,16384")
    ap.add_argument("--grid-lr", default="0.005,0.01,0.02,0.05")
    ap.add_argument("--grid-epochs", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench_cli_")
    try:
        folder = args.data_dir or tmp
        os.makedirs(folder, exist_ok=True)
        files, floor = make_data(folder, args.rows, args.features, args.nnz)
        if args.grid:
            grid(args, files, tmp)
            print(f"the hidden model (the floor): {floor:.4f}")
        else:
            compare(args, files, floor, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

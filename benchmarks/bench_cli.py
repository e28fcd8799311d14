"""``sparsenet train`` (logistic regression) against scikit-learn and Vowpal Wabbit, end to end.

    python benchmarks/bench_cli.py [--rows 1000000] [--features 100000] [--nnz 30]
                                   [--epochs 1] [--optimizer adagrad] [--lr 0.1]

Generates a training file of ``--rows`` rows and a held-out file of ``rows // 10``
rows (``--nnz`` distinct features per row, values in [0.5, 1.5), labels drawn from a
hidden linear model through the logistic function, 0-based LibSVM), then times,
each from a fresh process and from the file on disk:

- ``sparsenet train TRAIN --model logistic`` (streams the file, ``--epochs`` passes);
- scikit-learn: ``load_svmlight_file`` + ``SGDClassifier(loss='log_loss',
  random_state=0)`` (its defaults: alpha 1e-4, stopping rule: up to 1000 epochs, ``tol=1e-3``);
- ``vw --loss_function logistic -b 20 --passes`` on the same rows in VW's format
  (converted outside the timing), when ``vw`` is on ``PATH``; skipped otherwise.

and reports wall time and the log-loss on the held-out file side by side, with
each peer's ratio to sparsenet. The held-out log-loss of the hidden model itself
(the best any model can do) and of the constant predictor are printed too.
"""
import argparse
import json
import os
import shutil
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


def _generate(path, rows, features, nnz, w, rng, block=200_000):
    """Write ``rows`` rows to ``path`` in blocks; return the true positive probabilities."""
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


def _run(cmd):
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return seconds, proc.stdout


def _vw(train, test, epochs, tmp):
    vw = shutil.which("vw")
    if vw is None:
        return None
    vtrain, vtest = os.path.join(tmp, "train.vw"), os.path.join(tmp, "test.vw")
    _to_vw(train, vtrain)
    _to_vw(test, vtest)
    model, preds = os.path.join(tmp, "vw.model"), os.path.join(tmp, "vw.preds")
    seconds, _ = _run([vw, "-d", vtrain, "--loss_function", "logistic", "-b", "20", "--quiet",
                       "--passes", str(epochs), "-c", "-k", "-f", model])
    _run([vw, "-d", vtest, "-t", "-i", model, "--link", "logistic", "-p", preds, "--quiet"])
    p = np.clip(np.loadtxt(preds).reshape(-1, 1)[:, 0], 1e-15, 1 - 1e-15)
    y = np.array([float(line.split(" ", 1)[0]) > 0 for line in open(vtest)])
    return {"seconds": seconds, "logloss": float(-np.mean(np.where(y, np.log(p),
                                                                    np.log(1 - p))))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=100_000)
    ap.add_argument("--nnz", type=int, default=30)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--optimizer", default="adagrad")
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--batch-size", type=int, default=512)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    w = rng.normal(0, 3 / np.sqrt(args.nnz), size=args.features)
    tmp = tempfile.mkdtemp(prefix="bench_cli_")
    try:
        train, test = os.path.join(tmp, "train.svm"), os.path.join(tmp, "test.svm")
        t0 = time.perf_counter()
        _generate(train, args.rows, args.features, args.nnz, w, rng)
        truth = _generate(test, max(1000, args.rows // 10), args.features, args.nnz, w, rng)
        print(f"generated {args.rows:,} + {max(1000, args.rows // 10):,} rows, "
              f"{os.path.getsize(train) / 2**20:.0f} MiB, in {time.perf_counter() - t0:.0f} s")
        out = os.path.join(tmp, "model")
        seconds, _ = _run([sys.executable, "-m", "sparsenet", "train", train, "--features",
                           str(args.features), "--model", "logistic", "--optimizer",
                           args.optimizer, "--lr", str(args.lr), "--epochs", str(args.epochs),
                           "--batch-size", str(args.batch_size), "--out", out, "--quiet"])
        _, text = _run([sys.executable, "-m", "sparsenet", "eval", out, test, "--json"])
        results = {"sparsenet": {"seconds": seconds, "logloss": json.loads(text)["logloss"]}}
        _, text = _run([sys.executable, "-c", _SKLEARN, train, test, str(args.features)])
        results["scikit-learn"] = json.loads(text)
        vw = _vw(train, test, args.epochs, tmp)
        if vw is not None:
            results["vowpal wabbit"] = vw
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base = results["sparsenet"]
    print(f"\n{'':15}{'wall s':>9}{'/ sparsenet':>13}{'log-loss':>10}{'/ sparsenet':>13}")
    for name, r in results.items():
        extra = f"  ({r['epochs']} epochs)" if "epochs" in r else ""
        print(f"{name:15}{r['seconds']:9.2f}{r['seconds'] / base['seconds']:13.2f}"
              f"{r['logloss']:10.4f}{r['logloss'] / base['logloss']:13.3f}{extra}")
    if shutil.which("vw") is None:
        print("vowpal wabbit: not installed (vw not on PATH), skipped")
    print(f"{'hidden model':15}{'':22}{float(-np.mean(np.log(truth))):10.4f}   (the floor)")


if __name__ == "__main__":
    main()

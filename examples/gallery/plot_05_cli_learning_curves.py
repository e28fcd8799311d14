"""
The ``sparsenet`` command: train, evaluate, plot
================================================

``sparsenet train`` trains a model straight from LibSVM files: no Python to
write. This example writes a small binary classification problem, trains a
factorization machine on it with ``--plot``, shows the learning curves the
command drew, redraws them from ``metrics.jsonl``, and runs ``sparsenet eval``
on the model folder (``sparsenet predict MODEL DATA --out FILE`` writes predictions).

Each command runs as ``python -m sparsenet ...``, exactly what the
``sparsenet`` console script runs.
"""
import json
import os
import subprocess
import sys
import tempfile

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse

import sparsenet as mx

# %%
# A LibSVM training and validation file
# -------------------------------------
num_features = 2_000
rng = np.random.default_rng(4)
true_w = rng.normal(0, 1, num_features)
folder = tempfile.mkdtemp()
for name, rows in (("train.svm", 5_000), ("val.svm", 1_000)):
    x = scipy.sparse.random(rows, num_features, density=0.01, format="csr",
                            dtype=np.float32, random_state=rng)
    y = (x @ true_w + rng.normal(0, 0.3, rows) > 0).astype(np.float32)
    mx.io.save_libsvm(os.path.join(folder, name), x, y)


def sparsenet(*args):
    """Run one ``sparsenet`` command; print what it printed."""
    proc = subprocess.run([sys.executable, "-m", "sparsenet", *args], capture_output=True,
                          text=True, timeout=300)
    print(proc.stdout + proc.stderr)
    proc.check_returncode()


# %%
# ``sparsenet inspect`` reports what a file holds
# -----------------------------------------------
sparsenet("inspect", os.path.join(folder, "train.svm"))

# %%
# ``sparsenet train``
# -------------------
model_dir = os.path.join(folder, "fm")
sparsenet("train", os.path.join(folder, "train.svm"), "--val", os.path.join(folder, "val.svm"),
          "--features", str(num_features), "--model", "fm", "--factor-size", "4",
          "--optimizer", "adagrad", "--epochs", "5", "--out", model_dir, "--plot", "--quiet",
          "--threads", "1")
print(sorted(os.listdir(model_dir)))

# %%
# The plot ``--plot`` wrote
# -------------------------
image = plt.imread(os.path.join(model_dir, "learning_curves.png"))
fig, ax = plt.subplots(figsize=(8, 8 * image.shape[0] / image.shape[1]))
ax.imshow(image)
ax.axis("off")
fig.tight_layout()
plt.show()

# %%
# The same curves from ``metrics.jsonl``
# --------------------------------------
# One JSON object per epoch: plot whichever metrics you need.
with open(os.path.join(model_dir, "metrics.jsonl")) as f:
    records = [json.loads(line) for line in f]
print(records[-1])
fig, axes = plt.subplots(1, 2, figsize=(9, 3))
epochs = [r["epoch"] for r in records]
for ax, metric in zip(axes, ("auc", "logloss")):
    for split in ("train", "val"):
        ax.plot(epochs, [r[split].get(metric) for r in records], "o-", label=split)
    ax.set_xlabel("epoch")
    ax.set_ylabel(metric)
    ax.legend()
fig.tight_layout()
plt.show()

# %%
# ``sparsenet eval``
# ------------------
sparsenet("eval", model_dir, os.path.join(folder, "val.svm"))

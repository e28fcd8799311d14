"""Generated LibSVM files for the train/eval/predict tests: labels from a hidden model."""
import numpy as np
import scipy.sparse as sp

FEATURES = 120


def write_libsvm(path, X, y):
    """Write CSR ``X`` with labels ``y`` as 0-based LibSVM text."""
    X = sp.csr_matrix(X)
    with open(path, "w") as f:
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            feats = " ".join(f"{j}:{v:.6g}" for j, v in zip(X.indices[lo:hi], X.data[lo:hi]))
            f.write(f"{y[i]:g} {feats}\n")
    return path


def make_task(folder, task, rows=2000, seed=0):
    """``(train_path, val_path, val_labels)`` for ``task``: 80/20 split of generated rows."""
    rng = np.random.default_rng(seed)
    X = sp.random(rows, FEATURES, density=0.08, format="csr", random_state=seed,
                  dtype=np.float32)
    X.data = rng.uniform(0.5, 1.5, size=X.nnz).astype(np.float32)
    if task == "binary":
        z = X @ rng.normal(0, 2, size=FEATURES)
        y = (rng.random(rows) < 1 / (1 + np.exp(-(z - np.median(z))))).astype(int)
    elif task == "multiclass":
        z = X @ rng.normal(0, 2, size=(FEATURES, 4))
        y = np.argmax(z + rng.gumbel(size=z.shape), axis=1)
    else:
        y = X @ rng.normal(size=FEATURES) + 0.1 * rng.normal(size=rows) + 3.0
    cut = int(rows * 0.8)
    train = write_libsvm(folder / f"{task}_train.svm", X[:cut], y[:cut])
    val = write_libsvm(folder / f"{task}_val.svm", X[cut:], y[cut:])
    return str(train), str(val), y[cut:]

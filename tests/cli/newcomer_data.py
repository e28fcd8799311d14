"""Small generated LibSVM files for the tests/cli/test_newcomer_*.py tests."""
import contextlib
import io

import numpy as np

from sparsenet.cli.main import main


def write_rows(path, labels, rows, base=0):
    """Write LibSVM text: ``rows`` is a list of ``{column (0-based): value}``; indices are
    written ``+ base``."""
    with open(path, "w") as f:
        for y, row in zip(labels, rows):
            feats = " ".join(f"{j + base}:{v:.6g}" for j, v in sorted(row.items()))
            f.write(f"{y:g} {feats}\n")
    return str(path)


def random_rows(n, features, seed=0, nnz=5, scale=1.0, last_in_first=True):
    """``n`` rows of ``nnz`` distinct columns each; the first row holds the last column (so
    the largest index is ``features - 1``)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        cols = rng.choice(features, size=nnz, replace=False)
        if i == 0 and last_in_first:
            cols[0] = features - 1
            cols = np.unique(cols)
        rows.append({int(c): float(v) for c, v in
                     zip(cols, rng.uniform(0.5, 1.5, size=len(cols)) * scale)})
    return rows


def linear_labels(rows, features, seed=1):
    """Binary labels from a hidden linear model (learnable)."""
    rng = np.random.default_rng(seed)
    w = rng.normal(0, 2, size=features)
    z = np.array([sum(w[j] * v for j, v in r.items()) for r in rows])
    return (z > np.median(z)).astype(int)


def run(argv):
    """``(status, stdout, stderr)`` of ``main(argv)`` in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exc:  # argparse
            status = exc.code
    return status, out.getvalue(), err.getvalue()

"""
Reading compressed LibSVM files
===============================

``sparsenet.io.load_libsvm``, ``LibSVMIter`` and ``sparsenet.torch.data`` read
``.gz``, ``.zst``, ``.xz`` and ``.bz2`` files as they read plain text: the file
is decompressed in a thread of its own while the parsing threads work, and a
bad line is reported as ``path:line:column: problem 'token'``. This example
writes one dataset as plain text, ``.gz``, ``.zst`` and ``.bz2``, reads each
back, checks they are equal, and compares their sizes and reading times.
"""
import os
import tempfile
import time

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse

import sparsenet as mx

# %%
# One dataset, four files
# -----------------------
# ``save_libsvm`` compresses by suffix (standard formats: ``gzip -d``,
# ``zstd -d`` and Python's standard library read them too).
rng = np.random.default_rng(7)
x = scipy.sparse.random(10_000, 50_000, density=5e-4, format="csr", dtype=np.float32,
                        random_state=rng)
x.data = np.round(x.data, 3)
y = rng.integers(0, 2, x.shape[0]).astype(np.float32)
folder = tempfile.mkdtemp()
paths = {}
for suffix in ("", ".gz", ".zst", ".bz2"):
    paths[suffix or "plain"] = path = os.path.join(folder, "data.svm" + suffix)
    mx.io.save_libsvm(path, x, y)
for name, path in paths.items():
    print(f"{name:<6} {os.path.getsize(path) / 1e6:6.2f} MB  {os.path.basename(path)}")

# %%
# Each reads back to the same arrays
# ----------------------------------
seconds = {}
for name, path in paths.items():
    start = time.perf_counter()
    data, label = mx.io.load_libsvm(path, num_features=x.shape[1])
    seconds[name] = time.perf_counter() - start
    same = (data.asscipy() != x).nnz == 0 and np.array_equal(label.asnumpy(), y)
    print(f"{name:<6} {data.shape} equal to the original: {same}  {seconds[name] * 1e3:6.0f} ms")

# %%
# Streaming in batches, and reading one shard
# -------------------------------------------
# ``LibSVMIter`` streams a compressed file in bounded memory; ``num_parts`` and
# ``part_index`` read one shard (every line belongs to exactly one part).
it = mx.io.LibSVMIter(data_libsvm=paths[".gz"], data_shape=(x.shape[1],), batch_size=4096)
print("batches of the .gz file:", sum(1 for _ in it))
parts = [mx.io.load_libsvm(paths[".zst"], num_features=x.shape[1], num_parts=2,
                           part_index=i)[0].shape[0] for i in range(2)]
print("rows of the 2 parts of the .zst file:", parts, "sum", sum(parts))

# %%
# A bad line names the file, the line and the column
# --------------------------------------------------
import gzip  # noqa: E402

bad = os.path.join(folder, "bad.svm.gz")
with gzip.open(bad, "wt") as f:
    f.write("1 0:1.5 7:2\n0 3:0.5 9:x\n")
try:
    mx.io.load_libsvm(bad)
except mx.io.LibSVMFormatError as exc:
    print(type(exc).__name__, ":", exc)

# %%
# Size and time of each format
# ----------------------------
names = list(paths)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3))
ax1.bar(names, [os.path.getsize(paths[n]) / 1e6 for n in names], color="tab:green")
ax1.set_ylabel("file size (MB)")
ax2.bar(names, [seconds[n] * 1e3 for n in names], color="tab:purple")
ax2.set_ylabel("load_libsvm (ms)")
fig.tight_layout()
plt.show()

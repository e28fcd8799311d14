"""
CSR and row_sparse basics
=========================

The two sparse storage types: a ``CSRNDArray`` (compressed sparse rows: data,
feature batches) and a ``RowSparseNDArray`` (a few non-zero rows of a tall
array: gradients of embedding tables and of the weight of ``dot(csr, W)``).
This example builds both, converts them, shows which storage type each
operator returns, and draws what each one stores.
"""
import matplotlib.pyplot as plt
import numpy as np

import sparsenet as mx

# %%
# A CSR matrix from its three arrays
# ----------------------------------
# Row ``i`` holds ``data[indptr[i]:indptr[i+1]]`` at the columns
# ``indices[indptr[i]:indptr[i+1]]``. Row 1 is empty.
x = mx.nd.sparse.csr_matrix(([7.0, 8.0, 9.0], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 5))
print(x.stype, x.shape)
print("data   ", x.data.asnumpy())
print("indices", x.indices.asnumpy())
print("indptr ", x.indptr.asnumpy())
print(x.asnumpy())

# %%
# SciPy and NumPy in, SciPy and NumPy out
# ---------------------------------------
# ``csr_matrix`` takes a SciPy matrix; ``asscipy`` gives one back, ``asnumpy``
# a dense NumPy array, ``tostype`` another storage type.
import scipy.sparse  # noqa: E402

s = scipy.sparse.random(4, 6, density=0.3, format="csr", dtype=np.float32, random_state=0)
y = mx.nd.sparse.csr_matrix(s)
print(type(y).__name__, y.shape, "stored values:", y.data.size)
print("round trip equal:", (y.asscipy() != s).nnz == 0)
print("dense -> csr:", mx.nd.array(s.toarray()).tostype("csr").stype)

# %%
# A row_sparse array
# ------------------
# Only rows 1 and 4 of a ``(6, 2)`` array are stored; the others are zero.
r = mx.nd.sparse.row_sparse_array(([[1.0, 2.0], [3.0, 4.0]], [1, 4]), shape=(6, 2))
print(r.stype, "rows stored:", r.indices.asnumpy())
print(r.asnumpy())
kept = mx.nd.sparse.retain(r, mx.nd.array([4], dtype="int64"))
print("retain row 4:", kept.indices.asnumpy(), kept.data.asnumpy())

# %%
# Storage-type inference
# ----------------------
# Each operator decides its output storage type from its inputs'. The gradient
# of ``W`` in ``dot(x, W)`` is ``dot(x.T, g)``: row_sparse, holding only the
# rows of the features present in ``x``.
g = mx.nd.dot(x, mx.nd.ones((3, 2)), transpose_a=True)
cases = {"dot(csr, dense)": mx.nd.dot(x, mx.nd.ones((5, 2))),
         "dot(csr.T, dense)": g,
         "row_sparse * 2": g * 2,
         "row_sparse + dense": g + mx.nd.ones((5, 2)),
         "csr + csr": x + x,
         "sqrt(csr)": mx.nd.sqrt(x),
         "sum(csr, axis=1)": mx.nd.sum(x, axis=1)}
for name, out in cases.items():
    print(f"{name:<20} -> {out.stype}")

# %%
# Storage fallback
# ----------------
# ``log`` has no sparse kernel (``log(0)`` is not 0): its input is densified.
# The policy decides whether that warns, raises or stays silent; the counters
# say what fell back.
mx.config.reset_fallback_counts()
with mx.config.storage_fallback("silent"):
    print("log(row_sparse) ->", mx.nd.log(g).stype)
print(mx.config.fallback_report())
with mx.config.storage_fallback("error"):
    try:
        mx.nd.log(g)
    except mx.MXNetError as exc:
        print(type(exc).__name__, ":", str(exc)[:90], "...")

# %%
# What each one stores
# --------------------
# The dense layout of ``x`` and ``r`` against the values their sparse forms keep.
fig, axes = plt.subplots(1, 2, figsize=(8, 3))
for ax, arr, title in ((axes[0], x, "CSR (3 x 5): 3 values"),
                       (axes[1], r, "row_sparse (6 x 2): rows 1 and 4")):
    dense = arr.asnumpy()
    ax.imshow(dense != 0, cmap="Blues", vmin=0, vmax=1.5)
    for (i, j), v in np.ndenumerate(dense):
        if v:
            ax.text(j, i, f"{v:g}", ha="center", va="center")
    ax.set_title(title)
    ax.set_xticks(range(dense.shape[1]))
    ax.set_yticks(range(dense.shape[0]))
fig.tight_layout()
plt.show()

"""
Plain PyTorch: sparse optimizers, LibSVM batches, a sparse linear layer
=======================================================================

``sparsenet.torch`` gives PyTorch code sparsenet's engine without the MXNet
API: ``data.LibSVMBatches`` feeds LibSVM files to a ``DataLoader`` as
``EmbeddingBag`` or CSR batches, ``optim.Adam`` (and SGD, AdamW, Adagrad,
RMSprop, FTRL) update from the sparse gradients of
``nn.EmbeddingBag(sparse=True)`` lazily, densely, or exactly
(``lazy_update='exact'``: lazy cost, dense result), and ``nn.SparseLinear``
multiplies a sparse CSR batch without densifying it.

This example trains the same model three ways and compares each against
``torch.optim.Adam`` on the dense gradient.
"""
import os
import tempfile
import warnings

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse
import torch

import sparsenet as mx
from sparsenet.torch import data, nn as snn, optim

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")

# %%
# A LibSVM file, read as EmbeddingBag batches
# -------------------------------------------
num_features, rows = 5_000, 4_000
rng = np.random.default_rng(5)
x = scipy.sparse.random(rows, num_features, density=0.004, format="csr", dtype=np.float32,
                        random_state=rng)
y = (x @ rng.normal(0, 1, num_features) > 0).astype(np.float32)
path = os.path.join(tempfile.mkdtemp(), "train.svm")
mx.io.save_libsvm(path, x, y)

ds = data.LibSVMBatches(path, num_features=num_features, batch_size=200)
(ids, offsets, weights), labels = next(iter(ds))
print("ids", tuple(ids.shape), ids.dtype, " offsets", tuple(offsets.shape),
      " weights", tuple(weights.shape), " labels", tuple(labels.shape))
loader = torch.utils.data.DataLoader(ds, batch_size=None)


# %%
# A model with a sparse-gradient embedding table
# ----------------------------------------------
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(num_features, 16, mode="sum", sparse=True)
        self.out = torch.nn.Linear(16, 1)

    def forward(self, ids, offsets, weights):
        return self.out(torch.relu(self.bag(ids, offsets, per_sample_weights=weights)))


def train(make_opt, epochs=3):
    torch.manual_seed(0)
    model = Model()
    if make_opt is None:                      # the reference: dense gradients, torch's Adam
        model.bag.sparse = False
        opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-4)
    else:
        opt = make_opt(model.parameters())
        opt.attach(model)                     # catch rows up before the forward pass reads them
    loss_fn, losses = torch.nn.BCEWithLogitsLoss(), []
    for _ in range(epochs):
        total = 0.0
        for (ids, offsets, weights), labels in loader:
            opt.zero_grad()
            loss = loss_fn(model(ids, offsets, weights).squeeze(1), labels)
            loss.backward()
            opt.step()
            total += loss.item() * labels.shape[0]
        losses.append(total / rows)
    if make_opt is not None:
        opt.sync()                            # before reading or saving the weights
    return model, losses


# %%
# Lazy, exact and dense updates against ``torch.optim.Adam``
# ----------------------------------------------------------
# With weight decay, a lazy update leaves the rows a batch does not touch alone;
# ``'exact'`` applies the skipped steps in closed form when a row is read again,
# so the result is torch's dense one.
runs = {"torch.optim.Adam (dense grad)": None}
for mode in (True, "exact", False):
    runs[f"optim.Adam(lazy_update={mode!r})"] = (
        lambda params, mode=mode: optim.Adam(params, lr=0.01, weight_decay=1e-4,
                                             lazy_update=mode))
results = {name: train(make) for name, make in runs.items()}
reference = results["torch.optim.Adam (dense grad)"][0].bag.weight.detach()
for name, (model, losses) in results.items():
    diff = (model.bag.weight.detach() - reference).abs().max().item()
    print(f"{name:<32} final loss {losses[-1]:.4f}   max |weight - torch's| {diff:.2e}")

# %%
# A linear layer on CSR batches
# -----------------------------
# ``collate='csr'`` gives torch sparse CSR batches; ``SparseLinear``'s weight
# gradient is a sparse COO tensor holding only the rows of the batch's features.
csr_ds = data.LibSVMBatches(path, num_features=num_features, batch_size=200, collate="csr")
layer = snn.SparseLinear(num_features, 1)
opt = optim.SGD(layer.parameters(), lr=2.0)
for epoch in range(3):
    total = 0.0
    for xb, yb in csr_ds:
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(layer(xb).squeeze(1), yb)
        loss.backward()
        opt.step()
        total += loss.item() * yb.shape[0]
    print(f"epoch {epoch}: loss {total / rows:.4f}")
print("batch:", xb.layout, tuple(xb.shape), " weight grad:", layer.weight.grad.layout,
      f"{layer.weight.grad.coalesce().indices().shape[1]} of {num_features} rows")

# %%
# Training loss of the four runs
# ------------------------------
fig, ax = plt.subplots(figsize=(6, 3.2))
for (name, (_, losses)), style in zip(results.items(), ("k-", "o--", "s:", "^-.")):
    ax.plot(range(1, len(losses) + 1), losses, style, label=name)
ax.set_xlabel("epoch")
ax.set_ylabel("training log-loss")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()

"""
Sparse NDArrays with Gluon: the three networks
==============================================

MXNet's tutorial "Sparse NDArrays with Gluon", with ``import sparsenet as mx``:
random CSR data written as LibSVM and read back in batches by ``LibSVMIter``,
then the tutorial's three networks trained on it:

1. ``nn.Dense`` on the CSR batch (a dense weight gradient),
2. a ``FullyConnectedSparse`` block (``sparse.dot``) with a dense weight gradient,
3. the same block with ``grad_stype='row_sparse'``: the gradient holds only the
   rows of the features in the batch.

The tutorial uses 1,000 x 1,000,000 features; this example uses 100,000 so that it
runs in seconds (``make demo`` runs the full size).
"""
import os
import tempfile
import time

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse

import sparsenet as mx
from sparsenet import autograd, gluon

num_samples, num_features, density, batch_size = 1000, 100_000, 1e-4, 32

# %%
# Data: CSR, and its LibSVM file
# ------------------------------
rng = np.random.default_rng(42)
matrix = scipy.sparse.random(num_samples, num_features, density=density, format="csr",
                             dtype=np.float32, random_state=rng)
sums = np.asarray(matrix.sum(axis=1)).ravel()
data = mx.nd.sparse.csr_matrix(matrix)
label = mx.nd.array((sums > sums.mean()).astype(np.float32))
print(type(data).__name__, data.shape, f"{data.data.size:,} non-zero values")
print(f"dense: {num_samples * num_features * 4 / 1e6:.0f} MB, CSR: {data.nbytes / 1e6:.3f} MB")

path = os.path.join(tempfile.mkdtemp(), "dataset.libsvm")
mx.io.save_libsvm(path, data, label)
with open(path) as f:
    print(f.readline()[:70], "...")
data_iter = mx.io.LibSVMIter(data_libsvm=path, data_shape=(num_features,), label_shape=(1,),
                             batch_size=batch_size)
batch = next(iter(data_iter))
print("batch:", batch.data[0].stype, batch.data[0].shape, "label:", batch.label[0].shape)


# %%
# The tutorial's blocks
# ---------------------
class FullyConnected(gluon.HybridBlock):
    def __init__(self, in_units, units):
        super().__init__()
        with self.name_scope():
            self._units = units
            self.weight = self.params.get("weight", shape=(units, in_units))
            self.bias = self.params.get("bias", shape=(units,), init="zeros")

    def hybrid_forward(self, F, x, weight, bias):
        return F.FullyConnected(x, weight, bias, num_hidden=self._units)


class FullyConnectedSparse(gluon.HybridBlock):
    def __init__(self, in_units, units, weight_grad_stype="default"):
        super().__init__()
        with self.name_scope():
            self._units = units
            self.weight = self.params.get("weight", shape=(in_units, units),
                                          grad_stype=weight_grad_stype)
            self.bias = self.params.get("bias", shape=(units,), init="zeros")

    def hybrid_forward(self, F, x, weight, bias):
        return F.sparse.dot(x, weight) + bias


def build_net(variant):
    net = gluon.nn.Sequential()
    if variant == "nn.Dense":
        net.add(gluon.nn.Dense(in_units=num_features, units=128), gluon.nn.Activation("sigmoid"),
                gluon.nn.Dense(in_units=128, units=8), gluon.nn.Activation("sigmoid"),
                gluon.nn.Dense(in_units=8, units=1), gluon.nn.Activation("sigmoid"))
    else:
        stype = "row_sparse" if variant == "row_sparse grad" else "default"
        net.add(FullyConnectedSparse(num_features, 128, weight_grad_stype=stype),
                gluon.nn.Activation("sigmoid"),
                FullyConnected(128, 8), gluon.nn.Activation("sigmoid"),
                FullyConnected(8, 1), gluon.nn.Activation("sigmoid"))
    net.initialize(mx.init.Xavier())
    return net


# %%
# One epoch of each
# -----------------
# The tutorial's loop: record, backward, ``trainer.step``. The first layer's
# gradient is the size of its weight, except with ``grad_stype='row_sparse'``.
loss_fn = gluon.loss.SigmoidBinaryCrossEntropyLoss()
results = {}
for variant in ("nn.Dense", "dense grad", "row_sparse grad"):
    mx.random.seed(0)
    net = build_net(variant)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    data_iter.reset()
    start, losses = time.perf_counter(), []
    for batch in data_iter:
        with autograd.record():
            loss = loss_fn(net(batch.data[0]), batch.label[0])
        loss.backward()
        trainer.step(batch.data[0].shape[0])
        losses.append(float(loss.mean().asscalar()))
    seconds = time.perf_counter() - start
    grad = net[0].weight.grad()
    grad_mb = grad.data.nbytes / 1e6 if grad.stype == "row_sparse" else grad.nbytes / 1e6
    results[variant] = (seconds, grad_mb)
    print(f"{variant:<16} {seconds * 1e3:7.0f} ms/epoch  gradient {grad.stype:<10} "
          f"{grad_mb:8.3f} MB  mean loss {np.mean(losses):.4f}")

# %%
# Time and gradient memory
# ------------------------
names = list(results)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3))
ax1.barh(names, [results[n][0] * 1e3 for n in names], color="tab:blue")
ax1.set_xlabel("ms per epoch")
ax2.barh(names, [results[n][1] for n in names], color="tab:orange")
ax2.set_xscale("log")
ax2.set_xlabel("first layer's weight gradient (MB, log scale)")
fig.tight_layout()
plt.show()

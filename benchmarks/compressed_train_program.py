"""Seed 000's second network trained on 2 ranks with and without 2-bit gradient compression,
written once against MXNet's API and run under either library (``bench_dist.py --parts
compressed-train`` starts it: under sparsenet with ``sparsenet launch``, under MXNet 1.9.1 as
two workers of its own parameter server).

    python compressed_train_program.py LIBRARY THRESHOLD SAMPLES FEATURES BATCH LR EPOCHS OUT

LIBRARY is ``sparsenet`` or ``mxnet``; THRESHOLD 0 trains without compression. The network:
a dense ``FEATURES x 128`` layer on the CSR batch, sigmoid, 128 -> 8, sigmoid, 8 -> 1, sigmoid,
initial weights drawn from NumPy (the same in both libraries and on every rank). The data: the
seed's rule (10 values a row, label: row sum above the mean), SAMPLES rows per rank and a
held-out set of 4,000 rows. Adam on the store (``kv.set_optimizer``; gradients pushed,
weights pulled, as MXNet's Module does with ``update_on_kvstore``).
Rank 0 writes the held-out log-loss after each epoch to OUT (JSON).
"""
import importlib
import json
import sys

import numpy as np
import scipy.sparse as sp

lib, threshold, samples, features, batch, lr, epochs, out = sys.argv[1:9]
mx = importlib.import_module(lib)
threshold, lr = float(threshold), float(lr)
samples, features, batch, epochs = int(samples), int(features), int(batch), int(epochs)

kv = mx.kv.create("dist_sync")
rank, world = kv.rank, kv.num_workers
TEST = 4000
x = sp.random(samples * world + TEST, features, density=10 / features, format="csr",
              random_state=1, dtype=np.float32)
sums = np.asarray(x.sum(axis=1)).ravel()
y = (sums > sums.mean()).astype(np.float32)


def csr(part):
    return mx.nd.sparse.csr_matrix((part.data, part.indices, part.indptr), shape=part.shape)


mine, label = csr(x[rank * samples:(rank + 1) * samples]), y[rank * samples:(rank + 1) * samples]
label = mx.nd.array(label)
held, held_y = csr(x[samples * world:]), mx.nd.array(y[samples * world:])

net = mx.gluon.nn.Sequential()
net.add(mx.gluon.nn.Dense(in_units=features, units=128), mx.gluon.nn.Activation("sigmoid"),
        mx.gluon.nn.Dense(in_units=128, units=8), mx.gluon.nn.Activation("sigmoid"),
        mx.gluon.nn.Dense(in_units=8, units=1), mx.gluon.nn.Activation("sigmoid"))
net.initialize()
rng = np.random.default_rng(0)
for name in sorted(net.collect_params().keys()):
    p = net.collect_params()[name]
    init = (np.zeros(p.shape) if name.endswith("bias")
            else rng.uniform(-0.07, 0.07, size=p.shape))
    p.set_data(mx.nd.array(init.astype(np.float32)))
if threshold > 0:
    kv.set_gradient_compression({"type": "2bit", "threshold": threshold})
# the store runs Adam (MXNet's update_on_kvstore): push each gradient, pull each weight.
# Not Trainer(compression_params=...): MXNet 1.9.1's Trainer reduces dense gradients with
# pushpull, which its dist store refuses while compression is set.
weights = [net.collect_params()[name] for name in sorted(net.collect_params().keys())]
for i, p in enumerate(weights):
    kv.init(i, p.data())
kv.set_optimizer(mx.optimizer.create("adam", learning_rate=lr, rescale_grad=1.0 / batch))
loss_fn = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=True)
losses = []
for _ in range(epochs):
    for i in range(0, samples - batch + 1, batch):
        with mx.autograd.record():
            loss = loss_fn(net(mine[i:i + batch]), label[i:i + batch])
        loss.backward()
        for i, p in enumerate(weights):
            kv.push(i, p.grad(), priority=-i)
        for i, p in enumerate(weights):
            kv.pull(i, out=p.data(), priority=-i)
    losses.append(float(loss_fn(net(held), held_y).mean().asscalar()))
if rank == 0:
    with open(out, "w") as f:
        json.dump({"world": world, "threshold": threshold, "losses": losses}, f)

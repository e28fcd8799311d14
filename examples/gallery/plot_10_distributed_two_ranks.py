"""
Distributed training on two ranks
=================================

``mx.kv.create('dist_sync')`` on ``torch.distributed`` (gloo on CPU): every
process is a worker, a row_sparse gradient is pushed as (row ids, rows) and
summed over the ranks, and every rank's replica runs the same lazy update, so
the replicas stay identical. ``sparsenet launch -n 2 script.py`` starts the
ranks on this machine (a thin wrapper over ``torchrun --standalone``).

This example writes a worker script, launches it on two ranks over
127.0.0.1 with a timeout, and plots what each rank recorded.
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse

import sparsenet as mx

# %%
# One data file per rank
# ----------------------
# Each rank reads its own file (``LibSVMIter`` could also split one file with
# ``num_parts``/``part_index``; every rank must run the same number of steps).
num_features, rows_per_rank = 20_000, 2_000
folder = tempfile.mkdtemp()
rng = np.random.default_rng(6)
true_w = rng.normal(0, 1, num_features)
for rank in range(2):
    x = scipy.sparse.random(rows_per_rank, num_features, density=1e-3, format="csr",
                            dtype=np.float32, random_state=rng)
    y = (x @ true_w > 0).astype(np.float32)
    mx.io.save_libsvm(os.path.join(folder, f"part{rank}.svm"), x, y)

# %%
# The worker script
# -----------------
# A linear model whose weight gets a row_sparse gradient, a Gluon Trainer on the
# distributed store, and a record of each epoch's loss and the final weight.
worker = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    import sparsenet as mx
    from sparsenet import autograd, gluon

    folder, num_features = sys.argv[1], int(sys.argv[2])
    kv = mx.kv.create('dist_sync')
    rank = kv.rank

    class SparseLinear(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.weight = self.params.get('weight', shape=(num_features, 1),
                                              init='zeros', grad_stype='row_sparse')
                self.bias = self.params.get('bias', shape=(1,), init='zeros')

        def hybrid_forward(self, F, x, weight, bias):
            return F.sparse.dot(x, weight) + bias

    net = SparseLinear()
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), 'adagrad', {'learning_rate': 0.5},
                            kvstore=kv)
    data = mx.io.LibSVMIter(data_libsvm=os.path.join(folder, f'part{rank}.svm'),
                            data_shape=(num_features,), batch_size=200,
                            num_parts=1, part_index=0)
    loss_fn = gluon.loss.SigmoidBinaryCrossEntropyLoss()
    losses = []
    for epoch in range(4):
        data.reset()
        total, n = 0.0, 0
        for batch in data:
            with autograd.record():
                loss = loss_fn(net(batch.data[0]), batch.label[0])
            loss.backward()
            trainer.step(batch.data[0].shape[0] * kv.num_workers)
            total += float(loss.sum().asscalar())
            n += batch.data[0].shape[0]
        losses.append(total / n)
        print(f'rank {rank} epoch {epoch}: loss {losses[-1]:.4f}', flush=True)
    w = net.weight.data().asnumpy().ravel()
    with open(os.path.join(folder, f'rank{rank}.json'), 'w') as f:
        json.dump({'losses': losses, 'weight': w.tolist()}, f)
""")
script = os.path.join(folder, "train_dist.py")
with open(script, "w") as f:
    f.write(worker)

# %%
# Launch two ranks
# ----------------
# ``--timeout`` bounds each collective; ``timeout=`` bounds the whole job.
env = dict(os.environ, OMP_NUM_THREADS="1")
proc = subprocess.run([sys.executable, "-m", "sparsenet.cli", "launch", "-n", "2",
                       "--timeout", "60", script, folder, str(num_features)],
                      capture_output=True, text=True, timeout=300, env=env)
print("\n".join(sorted(line for line in proc.stdout.splitlines() if line.startswith("rank"))))
print("exit status:", proc.returncode)
proc.check_returncode()

# %%
# The replicas are identical
# --------------------------
records = [json.load(open(os.path.join(folder, f"rank{r}.json"))) for r in range(2)]
w0, w1 = (np.array(r["weight"]) for r in records)
print("max |w(rank 0) - w(rank 1)| =", np.abs(w0 - w1).max())
print("weight rows trained:", np.count_nonzero(w0), "of", num_features)
print("correlation with the true weight:", round(float(np.corrcoef(w0, true_w)[0, 1]), 3))

fig, ax = plt.subplots(figsize=(5, 3))
for r, style in zip(range(2), ("o-", "s--")):
    ax.plot(records[r]["losses"], style, label=f"rank {r} (its own data)")
ax.set_xlabel("epoch")
ax.set_ylabel("training log-loss")
ax.legend()
fig.tight_layout()
plt.show()

"""
Factorization machine
=====================

MXNet's ``example/sparse/factorization_machine`` (Criteo click-through data)
with ``import sparsenet as mx``, on generated data in the same LibSVM format.
The model

.. math:: y = w_0 + \\sum_i w_i x_i + \\tfrac12 \\sum_f \\Big[\\big(\\sum_i v_{if} x_i\\big)^2
          - \\sum_i v_{if}^2 x_i^2\\Big]

keeps its linear weights ``w`` and factors ``v`` as row_sparse parameters: each
step's gradient, and Adam's update, touch only the rows of the batch's features.
"""
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse

import sparsenet as mx

# %%
# Generated data with pairwise interactions
# -----------------------------------------
# 39 features per row (Criteo's 13 + 26 fields) out of 1,000; the label comes
# from a hidden factorization machine of rank 4.
num_features, per_row, factor_size, batch_size = 1_000, 39, 4, 500
rng = np.random.default_rng(1)
true_v = rng.normal(0, 0.3, (num_features, 4))
true_w = rng.normal(0, 0.5, num_features)


def make_split(rows):
    cols = np.sort(rng.choice(num_features, size=(rows, per_row)), axis=1)
    x = scipy.sparse.csr_matrix((np.ones(rows * per_row, np.float32), cols.ravel(),
                                 np.arange(0, rows * per_row + 1, per_row)),
                                shape=(rows, num_features))
    x.sum_duplicates()
    xv = x @ true_v
    score = x @ true_w + 0.5 * ((xv ** 2).sum(1) - (x.multiply(x) @ (true_v ** 2)).sum(1))
    score = (score - score.mean()) / score.std()
    return x, (rng.random(rows) < 1 / (1 + np.exp(-3 * score))).astype(np.float32)


folder = tempfile.mkdtemp()
for name, rows in (("train.libsvm", 20_000), ("test.libsvm", 5_000)):
    mx.io.save_libsvm(os.path.join(folder, name), *make_split(rows))

# %%
# The model, symbol by symbol (as in MXNet's example)
# ---------------------------------------------------
x = mx.sym.Variable("data", stype="csr")
v = mx.sym.Variable("v", shape=(num_features, factor_size), stype="row_sparse",
                    init=mx.init.Normal(sigma=0.01), wd_mult=1e-5)
w = mx.sym.var("w", shape=(num_features, 1), stype="row_sparse",
               init=mx.init.Normal(sigma=0.01), wd_mult=1e-3)
w0 = mx.sym.var("w0", shape=(1,), init=mx.init.Zero())
w1 = mx.sym.broadcast_add(mx.sym.dot(x, w), w0)
v_s = mx.sym._internal._square_sum(data=v, axis=1, keepdims=True)
bd_sum = mx.sym.dot(x.square(), v_s)
w2_squared = 0.5 * mx.sym.square(data=mx.sym.dot(x, v))
model = mx.sym.Concat(w1, w2_squared, dim=1).sum(axis=1, keepdims=True) - 0.5 * bd_sum
model = mx.sym.LogisticRegressionOutput(data=model, label=mx.sym.Variable("softmax_label"))
print(model.list_arguments())
print("output storage types:", model.infer_storage_type(data="csr")[1])


# %%
# A log-loss metric and training
# ------------------------------
def log_loss(label, pred):
    p = np.clip(pred.ravel().astype(np.float64), 1e-12, 1 - 1e-12)
    return float(-np.mean(label * np.log(p) + (1 - label) * np.log(1 - p)))


train_iter = mx.io.LibSVMIter(data_libsvm=os.path.join(folder, "train.libsvm"),
                              data_shape=(num_features,), batch_size=batch_size)
test_iter = mx.io.LibSVMIter(data_libsvm=os.path.join(folder, "test.libsvm"),
                             data_shape=(num_features,), batch_size=batch_size)
mod = mx.mod.Module(symbol=model, data_names=["data"], label_names=["softmax_label"])
mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)
mx.random.seed(0)
mod.init_params()
mod.init_optimizer(optimizer="adam", optimizer_params={"learning_rate": 0.002,
                                                       "rescale_grad": 1.0 / batch_size})
metric = mx.metric.np(log_loss, name="log-loss")
curve = []
for epoch in range(4):
    metric.reset()
    train_iter.reset()
    for batch in train_iter:
        mod.forward_backward(batch)
        mod.update()
        mod.update_metric(metric, batch.label)
    test_iter.reset()
    test = mod.score(test_iter, mx.metric.np(log_loss, name="log-loss"))[0][1]
    curve.append((metric.get()[1], test))
    print(f"epoch {epoch}: train log-loss {curve[-1][0]:.4f}  test log-loss {test:.4f}")

# %%
# Predictions against the labels
# ------------------------------
test_iter.reset()
prob = mod.predict(test_iter).asnumpy().ravel()
label = mx.io.load_libsvm(os.path.join(folder, "test.libsvm"), num_features)[1].asnumpy()
order = np.argsort(-prob)
tpr = np.cumsum(label[order]) / label.sum()
fpr = np.cumsum(1 - label[order]) / (1 - label).sum()
print(f"test AUC {np.trapezoid(tpr, fpr):.3f}")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
ax1.plot([c[0] for c in curve], "o-", label="train")
ax1.plot([c[1] for c in curve], "s-", label="test")
ax1.set_xlabel("epoch")
ax1.set_ylabel("log-loss")
ax1.legend()
ax2.plot(fpr, tpr)
ax2.plot([0, 1], [0, 1], ":", color="grey")
ax2.set_xlabel("false positive rate")
ax2.set_ylabel("true positive rate")
ax2.set_title("ROC on the test file")
fig.tight_layout()
plt.show()

"""
Linear classification on sparse LibSVM data
===========================================

MXNet's ``example/sparse/linear_classification`` (Avazu click-through data)
with ``import sparsenet as mx``, on generated data in the same format: a
linear model ``sparse.dot(csr, row_sparse weight) + bias`` whose loss is a
custom operator weighting the positive class, trained with the Module API.
(With a distributed kvstore, ``Module.prepare`` with a ``sparse_row_id_fn``
pulls only the weight rows a batch uses; on one device the module updates its
weight in place.)
"""
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse

import sparsenet as mx

# %%
# Generated click data
# --------------------
# 15 active features per row out of 10,001 (Avazu has 1,000,001), and a
# label drawn from a hidden linear model, so there is something to learn.
num_features, nnz_per_row, batch_size = 10_001, 15, 256
rng = np.random.default_rng(0)
true_w = rng.normal(0, 1.5, num_features).astype(np.float32)


def make_split(rows):
    cols = rng.integers(0, num_features, size=(rows, nnz_per_row))
    cols.sort(axis=1)
    matrix = scipy.sparse.csr_matrix(
        (np.ones(rows * nnz_per_row, np.float32), cols.ravel(),
         np.arange(0, rows * nnz_per_row + 1, nnz_per_row)), shape=(rows, num_features))
    matrix.sum_duplicates()
    p = 1 / (1 + np.exp(-(matrix @ true_w) / 2))
    return matrix, (rng.random(rows) < p).astype(np.float32)


folder = tempfile.mkdtemp()
for name, rows in (("avazu-app", 20_000), ("avazu-app.t", 4_000)):
    matrix, label = make_split(rows)
    mx.io.save_libsvm(os.path.join(folder, name), matrix, label)
print(open(os.path.join(folder, "avazu-app")).readline()[:75], "...")


# %%
# The weighted softmax loss: a custom operator
# --------------------------------------------
class WeightedSoftmaxCrossEntropyLoss(mx.operator.CustomOp):
    """Softmax cross-entropy whose gradient is scaled by (1 + label * w) / w."""

    def __init__(self, positive_cls_weight):
        self.positive_cls_weight = float(positive_cls_weight)

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.SoftmaxOutput(in_data[0], in_data[1]))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        label, pred = in_data[1], out_data[0]
        dx = pred - mx.nd.one_hot(label, 2)
        w = self.positive_cls_weight
        scale = ((1 + label * w) / w).reshape((pred.shape[0], 1))
        self.assign(in_grad[0], req[0], scale * dx)


@mx.operator.register("weighted_softmax_ce_loss")
class WeightedSoftmaxCrossEntropyLossProp(mx.operator.CustomOpProp):
    def __init__(self, positive_cls_weight):
        super().__init__(True)
        self.positive_cls_weight = positive_cls_weight

    def list_arguments(self):
        return ["data", "label"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shapes):
        return in_shapes, (in_shapes[0],), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return WeightedSoftmaxCrossEntropyLoss(self.positive_cls_weight)


# %%
# The model: ``dot(csr, row_sparse weight) + bias``
# -------------------------------------------------
x = mx.sym.Variable("data", stype="csr")
weight = mx.sym.Variable("weight", shape=(num_features, 2), stype="row_sparse",
                         init=mx.init.Normal(sigma=0.01))
bias = mx.sym.Variable("bias", shape=(2,))
pred = mx.sym.broadcast_add(mx.sym.sparse.dot(x, weight), bias)
out = mx.sym.Custom(pred, mx.sym.Variable("softmax_label"),
                    op_type="weighted_softmax_ce_loss", positive_cls_weight=2, name="out")
model = mx.sym.MakeLoss(out)

train_data = mx.io.LibSVMIter(data_libsvm=os.path.join(folder, "avazu-app"),
                              data_shape=(num_features,), batch_size=batch_size)
eval_data = mx.io.LibSVMIter(data_libsvm=os.path.join(folder, "avazu-app.t"),
                             data_shape=(num_features,), batch_size=batch_size)
mod = mx.mod.Module(symbol=model, data_names=["data"], label_names=["softmax_label"])
mod.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label)
mx.random.seed(0)
mod.init_params()
mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 2.0,
                                                      "rescale_grad": 1.0 / batch_size})


# %%
# Training: forward, backward, update
# -----------------------------------
metric = mx.metric.create(["nll_loss"])
history = {"train": [], "eval": []}
for epoch in range(5):
    metric.reset()
    train_data.reset()
    for batch in train_data:
        mod.forward_backward(batch)
        mod.update()
        mod.update_metric(metric, batch.label)
    history["train"].append(metric.get_name_value()[0][1])
    eval_data.reset()
    history["eval"].append(mod.score(eval_data, ["nll_loss"])[0][1])
    print(f"epoch {epoch}: train nll {history['train'][-1]:.4f}  "
          f"eval nll {history['eval'][-1]:.4f}")

# %%
# The learned weight keeps its storage type
# -----------------------------------------
arg_params, _ = mod.get_params()
w = arg_params["weight"]
print("weight:", w.stype, w.shape, f"{w.indices.shape[0]:,} rows stored")
learned = np.zeros(num_features, np.float32)
learned[w.indices.asnumpy()] = w.data.asnumpy()[:, 1] - w.data.asnumpy()[:, 0]
seen = w.indices.asnumpy()
print("correlation of learned and true weights:",
      round(float(np.corrcoef(learned[seen], true_w[seen])[0, 1]), 3))

fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(history["train"], "o-", label="train")
ax.plot(history["eval"], "s-", label="eval")
ax.set_xlabel("epoch")
ax.set_ylabel("negative log-likelihood")
ax.legend()
fig.tight_layout()
plt.show()

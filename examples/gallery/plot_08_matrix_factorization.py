"""
Matrix factorization
====================

MXNet's ``example/sparse/matrix_factorization`` (MovieLens ratings) with
``import sparsenet as mx``, on generated ratings: a user embedding and an item
embedding with ``sparse_grad=True`` (row_sparse weights and gradients), a ReLU
and a fully connected layer on each side, their inner product, and an L2 loss,
trained by SGD with momentum through kvstore ``'device'``.
"""
import matplotlib.pyplot as plt
import numpy as np

import sparsenet as mx

# %%
# Generated ratings
# -----------------
# Users and items have hidden rank-4 tastes; a rating is their agreement plus
# noise, on MovieLens' 0.5-5 scale.
max_user, max_item, rank, factor_size, batch_size = 500, 300, 4, 32, 128
rng = np.random.default_rng(2)
users_f, items_f = rng.normal(size=(max_user, rank)), rng.normal(size=(max_item, rank))


def ratings(n):
    user, item = rng.integers(0, max_user, n), rng.integers(0, max_item, n)
    score = (users_f[user] * items_f[item]).sum(1) / 2 + rng.normal(0, 0.3, n)
    return user, item, np.clip(np.round(2 * (3 + score)) / 2, 0.5, 5.0)


def make_iter(n, shuffle):
    user, item, score = ratings(n)
    it = mx.io.NDArrayIter(data={"user": mx.nd.array(user, dtype="int32"),
                                 "item": mx.nd.array(item)},
                           label={"score": mx.nd.array(score)},
                           batch_size=batch_size, shuffle=shuffle)
    return mx.io.PrefetchingIter(it)


train_iter, val_iter = make_iter(60_000, True), make_iter(10_000, False)
print("ratings:", train_iter.provide_data, train_iter.provide_label)

# %%
# The network
# -----------
user = mx.sym.Variable("user")
item = mx.sym.Variable("item")
user_weight = mx.sym.Variable("user_weight", stype="row_sparse")
item_weight = mx.sym.Variable("item_weight", stype="row_sparse")
user = mx.sym.Embedding(data=user, weight=user_weight, sparse_grad=True,
                        input_dim=max_user, output_dim=factor_size)
item = mx.sym.Embedding(data=item, weight=item_weight, sparse_grad=True,
                        input_dim=max_item, output_dim=factor_size)
user = mx.sym.FullyConnected(mx.sym.Activation(user, act_type="relu"), num_hidden=factor_size,
                             name="user_fc")
item = mx.sym.FullyConnected(mx.sym.Activation(item, act_type="relu"), num_hidden=factor_size,
                             name="item_fc")
pred = mx.sym.Flatten(mx.sym.sum(user * item, axis=1))
net = mx.sym.LinearRegressionOutput(data=pred, label=mx.sym.Variable("score"))

mod = mx.mod.Module(net, context=[mx.cpu()], data_names=["user", "item"], label_names=["score"])
mod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)
mx.random.seed(0)
mod.init_params(initializer=mx.init.Xavier(factor_type="in", magnitude=2.34))
mod.init_optimizer(kvstore="device", optimizer="sgd",
                   optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-4,
                                     "rescale_grad": 1.0 / batch_size})

# %%
# Training
# --------
# On one device the module updates in place; with a distributed kvstore,
# ``mod.prepare(batch, sparse_row_id_fn=...)`` would first pull the rows of the
# batch's users and items.
metric = mx.metric.create(["MSE"])
curve = []
for epoch in range(6):
    metric.reset()
    train_iter.reset()
    for batch in train_iter:
        mod.forward_backward(batch)
        mod.update()
        mod.update_metric(metric, batch.label)
    val_iter.reset()
    val = mod.score(val_iter, ["MSE"])[0][1]
    curve.append((metric.get_name_value()[0][1], val))
    print(f"epoch {epoch}: train MSE {curve[-1][0]:.3f}  validation MSE {val:.3f}")

# %%
# Predicted against true ratings
# ------------------------------
arg_params, _ = mod.get_params()
print({name: arr.stype for name, arr in arg_params.items()})
val_iter.reset()
predicted = mod.predict(val_iter).asnumpy().ravel()
val_iter.reset()
truth = np.concatenate([b.label[0].asnumpy() for b in val_iter])[: predicted.size]
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
ax1.plot([c[0] for c in curve], "o-", label="train")
ax1.plot([c[1] for c in curve], "s-", label="validation")
ax1.set_xlabel("epoch")
ax1.set_ylabel("MSE")
ax1.legend()
ax2.boxplot([predicted[truth == r] for r in np.unique(truth)],
            tick_labels=[f"{r:g}" for r in np.unique(truth)], showfliers=False)
ax2.set_xlabel("true rating")
ax2.set_ylabel("predicted")
fig.tight_layout()
plt.show()

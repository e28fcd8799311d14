"""
Wide and deep
=============

MXNet's ``example/sparse/wide_deep`` (UCI Adult census data) with
``import sparsenet as mx``, on generated data of the same shapes: a *wide*
linear model on hashed crossed features (a CSR input and a row_sparse weight)
plus a *deep* network on two ``SparseEmbedding`` ids and continuous columns,
summed into one softmax classifier and trained with Adam.
"""
import matplotlib.pyplot as plt
import numpy as np

import sparsenet as mx

# %%
# Generated census-like rows
# --------------------------
# Three crossed features hashed into 1,000 buckets each (the wide part), two
# categorical ids (the deep part's embeddings) and 38 continuous/indicator
# columns. The label depends on both parts.
num_linear, buckets, num_embed, num_cont = 3_000, 1_000, 2, 38
hidden_units, batch_size = [8, 50, 100], 100
rng = np.random.default_rng(3)
cross_effect = rng.normal(0, 1.0, num_linear)
embed_effect = rng.normal(0, 1.0, (num_embed, buckets))
cont_effect = rng.normal(0, 0.3, num_cont)


def make_split(rows):
    crossed = rng.integers(0, buckets, (rows, 3)) + np.arange(3) * buckets
    wide = mx.nd.sparse.csr_matrix((np.ones(rows * 3, np.float32), crossed.ravel(),
                                    np.arange(0, rows * 3 + 1, 3)), shape=(rows, num_linear))
    ids = rng.integers(0, buckets, (rows, num_embed))
    cont = rng.normal(size=(rows, num_cont))
    score = (cross_effect[crossed].sum(1) + embed_effect[np.arange(num_embed), ids].sum(1)
             + cont @ cont_effect)
    label = (score + rng.normal(0, 1, rows) > 0).astype(np.float32)
    deep = np.hstack([ids, cont]).astype(np.float32)
    return mx.io.NDArrayIter({"csr_data": wide, "dns_data": deep}, {"softmax_label": label},
                             batch_size, shuffle=True, last_batch_handle="discard")


train_data, eval_data = make_split(16_000), make_split(4_000)
print(train_data.provide_data)

# %%
# The model
# ---------
csr_data = mx.sym.Variable("csr_data", stype="csr")
weight = mx.sym.Variable("linear_weight", shape=(num_linear, 2),
                         init=mx.init.Normal(sigma=0.01), stype="row_sparse")
bias = mx.sym.Variable("linear_bias", shape=(2,))
linear_out = mx.sym.broadcast_add(mx.sym.sparse.dot(csr_data, weight), bias)

dns_data = mx.sym.Variable("dns_data")
x = mx.sym.slice(data=dns_data, begin=(0, 0), end=(None, num_embed))
embeds = mx.sym.split(data=x, num_outputs=num_embed, squeeze_axis=1)
features = [mx.sym.slice(data=dns_data, begin=(0, num_embed),
                         end=(None, num_embed + num_cont))]
for i, embed in enumerate(embeds):
    embed_weight = mx.sym.Variable("embed_%d_weight" % i, stype="row_sparse")
    features.append(mx.sym.contrib.SparseEmbedding(data=embed, weight=embed_weight,
                                                   input_dim=buckets,
                                                   output_dim=hidden_units[0]))
hidden = mx.sym.concat(*features, dim=1)
hidden = mx.sym.FullyConnected(hidden, num_hidden=hidden_units[1], name="deep_fc1")
hidden = mx.sym.FullyConnected(mx.sym.Activation(hidden, "relu"), num_hidden=hidden_units[2],
                               name="deep_fc2")
deep_out = mx.sym.FullyConnected(mx.sym.Activation(hidden, "relu"), num_hidden=2,
                                 name="deep_out")
model = mx.sym.SoftmaxOutput(linear_out + deep_out, mx.sym.Variable("softmax_label"),
                             name="model")

# %%
# Training
# --------
mod = mx.mod.Module(symbol=model, data_names=["csr_data", "dns_data"],
                    label_names=["softmax_label"])
mod.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label)
mx.random.seed(0)
mod.init_params()
mod.init_optimizer(optimizer="adam", optimizer_params={"learning_rate": 0.005,
                                                       "rescale_grad": 1.0 / batch_size})
metric = mx.metric.create(["acc"])
curve = []
for epoch in range(4):
    metric.reset()
    train_data.reset()
    for batch in train_data:
        mod.forward_backward(batch)
        mod.update()
        mod.update_metric(metric, batch.label)
    eval_data.reset()
    val = mod.score(eval_data, ["acc"])[0][1]
    curve.append((metric.get_name_value()[0][1], val))
    print(f"epoch {epoch}: train accuracy {curve[-1][0]:.3f}  validation accuracy {val:.3f}")

arg_params, _ = mod.get_params()
for name in ("linear_weight", "embed_0_weight", "deep_fc1_weight"):
    print(f"{name:<24} {arg_params[name].stype:<10} {arg_params[name].shape}")

# %%
# Accuracy by epoch
# -----------------
fig, ax = plt.subplots(figsize=(5, 3))
ax.plot([c[0] for c in curve], "o-", label="train")
ax.plot([c[1] for c in curve], "s-", label="validation")
ax.set_xlabel("epoch")
ax.set_ylabel("accuracy")
ax.legend()
fig.tight_layout()
plt.show()

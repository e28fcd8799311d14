"""Writes the fixtures in this folder with MXNet 1.9.1 (run with MXNet's own Python, not sparsenet's).

    /tmp/mx/bin/python tests/data/mxnet_1_9_1/make_fixtures.py tests/data/mxnet_1_9_1

Every array's values are simple formulas the tests recompute with NumPy; the model outputs and
the weights after one more training step are what MXNet 1.9.1 printed, kept in ``measured.json``.
"""
import json
import os
import sys

import mxnet as mx
import numpy as np

out = sys.argv[1]
os.chdir(out)
measured = {}
DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool"]


def dense(dt):
    return (np.arange(6).reshape(2, 3) % 2).astype(dt) if dt == "bool" else \
        (np.arange(6).reshape(2, 3) - 2).astype(dt)


mx.nd.save("dtypes.params", {dt: mx.nd.array(dense(dt), dtype=dt) for dt in DTYPES})
csr = mx.nd.sparse.csr_matrix(([1.5, -2.0, 3.0], [1, 0, 3], [0, 1, 1, 3]), shape=(3, 4))
rsp = mx.nd.sparse.row_sparse_array((np.array([[1, 2], [3, 4]], dtype="float64"), [1, 4]),
                                    shape=(6, 2))
mx.nd.save("sparse.params", {
    "csr": csr, "rsp": rsp,
    "csr_f16": mx.nd.sparse.csr_matrix(([0.5], [2], [0, 0, 1]), shape=(2, 3), dtype="float16"),
    "csr_empty": mx.nd.sparse.zeros("csr", (3, 4)),
    "rsp_empty": mx.nd.sparse.zeros("row_sparse", (5, 2)),
    "dense_empty": mx.nd.array(np.zeros((0, 3), dtype="float32")),
})
mx.nd.save("list.nd", [mx.nd.array(dense("float32")), csr, rsp])
mx.nd.save("empty_list.nd", [])
mx.npx.set_np()
mx.npx.save("scalar_v3.nd", [mx.np.array(5.0)])
mx.npx.reset_np()

# Module checkpoint with an aux state (BatchNorm)
mx.random.seed(0)
data = mx.sym.var("data")
net = mx.sym.FullyConnected(data, num_hidden=4, name="fc1")
net = mx.sym.BatchNorm(net, name="bn")
net = mx.sym.Activation(net, act_type="relu")
net = mx.sym.FullyConnected(net, num_hidden=2, name="fc2")
net = mx.sym.SoftmaxOutput(net, name="softmax")
mod = mx.mod.Module(net, data_names=["data"], label_names=["softmax_label"])
mod.bind(data_shapes=[("data", (2, 3))], label_shapes=[("softmax_label", (2,))], for_training=False)
mod.init_params(mx.init.Uniform(0.5))
arg, aux = mod.get_params()
aux["bn_moving_mean"][:] = mx.nd.array([0.1, -0.2, 0.3, 0.0])
aux["bn_moving_var"][:] = mx.nd.array([1.5, 0.5, 2.0, 1.0])
mod.set_params(arg, aux)
mod.save_checkpoint("mod", 7)
x = mx.nd.array(np.arange(6).reshape(2, 3) / 5.0)
mod.forward(mx.io.DataBatch([x]), is_train=False)
measured["module_output"] = mod.get_outputs()[0].asnumpy().tolist()

# Gluon export and save_parameters
gnet = mx.gluon.nn.HybridSequential()
gnet.add(mx.gluon.nn.Dense(3, activation="relu", in_units=3), mx.gluon.nn.Dense(2, in_units=3))
gnet.initialize(mx.init.Uniform(0.5))
gnet.hybridize()
measured["gluon_output"] = gnet(x).asnumpy().tolist()
gnet.export("gnet", 0)
gnet.save_parameters("gnet.params")

# optimizer states: one step, save, one more step (the weights after it are recorded)
for name, kw in [("adam", {"learning_rate": 0.1}), ("sgd", {"learning_rate": 0.1, "momentum": 0.9,
                                                              "wd": 0.01})]:
    w = mx.gluon.Parameter("w", shape=(3, 2), init=mx.init.Constant(1.0))
    w.initialize()
    tr = mx.gluon.Trainer([w], name, kw)
    for step in range(2):
        with mx.autograd.record():
            loss = (w.data() * mx.nd.array([[1, 2], [3, 4], [5, 6]])).sum() * (step + 1)
        loss.backward()
        tr.step(1)
        if step == 0:
            mx.nd.save(f"{name}_w.params", {"w": w.data()})
            tr.save_states(f"{name}.states")
    measured[f"{name}_w_after_step2"] = w.data().asnumpy().tolist()

with open("measured.json", "w") as f:
    json.dump(measured, f, indent=1)

"""Custom operators in a Module: training steps against the same Module with built-in
operators, and the model of MXNet's example/sparse/linear_classification against the
numbers MXNet 1.9.1 gives."""
import numpy as np
import pytest

import sparsenet as mx
import tests.operator.custom_ops  # noqa: F401 - registers the test_* operators


def _train(symbol, data, label, batch_size, arg_params, epochs=2, label_name="softmax_label",
           optimizer="sgd", optimizer_params=None, metric="acc"):
    it = mx.io.NDArrayIter(data, label, batch_size, label_name=label_name,
                           last_batch_handle="discard")
    mod = mx.mod.Module(symbol, data_names=["data"], label_names=[label_name])
    mod.fit(it, num_epoch=epochs, optimizer=optimizer,
            optimizer_params=optimizer_params or {"learning_rate": 0.5},
            arg_params={k: v.copy() for k, v in arg_params.items()}, eval_metric=metric)
    return mod


def test_module_fit_with_a_custom_loss_equals_softmax_output():
    rng = np.random.RandomState(3)
    data = mx.nd.array(rng.uniform(-1, 1, (32, 6)))
    label = mx.nd.array(rng.randint(0, 3, 32))
    params = {"fc_weight": mx.nd.array(rng.normal(0, 0.3, (3, 6))), "fc_bias": mx.nd.zeros((3,))}
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    custom = mx.sym.Custom(fc, mx.sym.var("softmax_label"), op_type="test_softmax_loss",
                           name="softmax")
    builtin = mx.sym.SoftmaxOutput(fc, mx.sym.var("softmax_label"), name="softmax")
    mods = [_train(s, data, label, 8, params) for s in (custom, builtin)]
    got, ref = (m.get_params()[0] for m in mods)
    for k in ("fc_weight", "fc_bias"):
        np.testing.assert_allclose(got[k].asnumpy(), ref[k].asnumpy(), rtol=1e-5, atol=1e-6)
    assert not np.allclose(got["fc_weight"].asnumpy(), params["fc_weight"].asnumpy())
    scores = [m.score(mx.io.NDArrayIter(data, label, 8), "acc") for m in mods]
    assert scores[0] == scores[1]


@pytest.mark.parametrize("lazy", [True, False])
def test_a_sparse_custom_operator_trains_as_the_builtin_sparse_dot(lazy):
    rng = np.random.RandomState(5)
    dense = (rng.rand(24, 10) < 0.3) * rng.uniform(-1, 1, (24, 10))
    data = mx.nd.array(dense).tostype("csr")
    label = mx.nd.array(rng.uniform(-1, 1, (24, 2)))
    x = mx.sym.var("data", stype="csr")
    w = mx.sym.var("w", stype="row_sparse", shape=(10, 2))
    y = mx.sym.var("label")

    def model(product):
        return mx.sym.LinearRegressionOutput(product, y, name="out")

    custom = model(mx.sym.Custom(x, w, op_type="test_csr_dot", name="cd"))
    builtin = model(mx.sym.sparse.dot(x, w))
    params = {"w": mx.nd.array(rng.normal(0, 0.3, (10, 2))).tostype("row_sparse")}
    mods = [_train(s, data, label, 6, params, label_name="label", metric="mse",
                   optimizer_params={"learning_rate": 0.1, "lazy_update": lazy, "wd": 0.01})
            for s in (custom, builtin)]
    got, ref = (m.get_params()[0]["w"] for m in mods)
    assert got.stype == ref.stype == "row_sparse"
    np.testing.assert_allclose(got.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-6)
    grads = [m._exec_group.grad_arrays[0][0] for m in mods]
    assert grads[0].stype == grads[1].stype == "row_sparse"


def test_the_linear_classification_model_matches_mxnet():
    """MXNet's example/sparse/linear_classification model (csr data, row_sparse weight,
    the weighted softmax cross-entropy custom operator under MakeLoss), trained for three
    epochs on a small generated set. Expected values: the same program run under MXNet
    1.9.1 with the same data and initial weights (max difference seen: 2e-8)."""
    rng = np.random.RandomState(0)
    n, features, batch = 64, 50, 16
    dense = (rng.rand(n, features) < 0.1) * rng.rand(n, features)
    labels = (rng.rand(n) < 0.3).astype(np.float32)
    x = mx.sym.Variable("data", stype="csr")
    weight = mx.sym.Variable("weight", shape=(features, 2), init=mx.init.Normal(sigma=0.01),
                             stype="row_sparse")
    bias = mx.sym.Variable("bias", shape=(2,))
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(x, weight), bias)
    y = mx.sym.Variable("softmax_label")
    model = mx.sym.MakeLoss(mx.sym.Custom(data=pred, label=y, op_type="test_weighted_softmax_ce",
                                          positive_cls_weight=2, name="out"))
    it = mx.io.NDArrayIter(mx.nd.array(dense).tostype("csr"), mx.nd.array(labels), batch,
                           last_batch_handle="discard")
    mod = mx.mod.Module(symbol=model, data_names=["data"], label_names=["softmax_label"])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    w0 = rng.normal(0, 0.1, (features, 2)).astype(np.float32)
    mod.init_params(arg_params={"weight": mx.nd.array(w0).tostype("row_sparse"),
                                "bias": mx.nd.zeros((2,))})
    mod.init_optimizer(optimizer=mx.optimizer.create("sgd", learning_rate=0.5,
                                                     rescale_grad=1.0 / batch))
    metric = mx.metric.create(["nll_loss"])
    losses = []
    for _ in range(3):
        it.reset()
        metric.reset()
        for b in it:
            mod.forward_backward(b)
            mod.update()
            mod.update_metric(metric, b.label)
        losses.append(metric.get()[1][0])
    # measured with MXNet 1.9.1
    np.testing.assert_allclose(losses, [0.7080391943454742, 0.7012654095888138,
                                        0.6869810223579407], rtol=1e-6)
    args, _ = mod.get_params()
    np.testing.assert_allclose(args["weight"].tostype("default").asnumpy()[:3],
                               [[-0.0398734, -0.15070032], [0.11283792, -0.1544594],
                                [0.0555681, -0.01166526]], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(args["bias"].asnumpy(), [-0.06502465, 0.06502464], rtol=1e-5)

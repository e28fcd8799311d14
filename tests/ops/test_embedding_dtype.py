"""Embedding's output dtype is its weight's (the ``dtype`` parameter), whatever the ids' dtype.

Every expected dtype below was measured with MXNet 1.9.1.
"""
import numpy as np
import pytest

import sparsenet as mx

ID_DTYPES = ["int32", "int64", "float32", "float16", "float64", "uint8"]


@pytest.mark.parametrize("ids", ID_DTYPES)
@pytest.mark.parametrize("op", ["Embedding", "SparseEmbedding"])
def test_sym_infer_type_default_float32(ids, op):
    d = mx.sym.var("d")
    if op == "Embedding":
        e = mx.sym.Embedding(d, input_dim=5, output_dim=3, name="e")
    else:
        e = mx.sym.contrib.SparseEmbedding(d, mx.sym.var("e_weight", stype="row_sparse"),
                                           input_dim=5, output_dim=3, name="e")
    assert e.infer_type(d=ids) == ([np.dtype(ids).type, np.float32], [np.float32], [])


@pytest.mark.parametrize("ids", ["int32", "float32", "float64"])
def test_sym_dtype_parameter_and_given_weight(ids):
    d = mx.sym.var("d")
    e = mx.sym.Embedding(d, input_dim=5, output_dim=3, dtype="float16", name="e")
    assert e.infer_type(d=ids) == ([np.dtype(ids).type, np.float16], [np.float16], [])
    # a weight dtype given to infer_type wins over the parameter (MXNet 1.9.1: float64)
    assert e.infer_type(d="int32", e_weight="float64") == ([np.int32, np.float64],
                                                           [np.float64], [])
    assert e.infer_type_partial(d="int32") == ([np.int32, np.float16], [np.float16], [])


def test_sym_embedding_int32_into_fully_connected_binds_and_trains():
    d = mx.sym.var("d")
    e = mx.sym.Embedding(d, input_dim=5, output_dim=3, name="e", sparse_grad=True)
    fc = mx.sym.FullyConnected(e, num_hidden=2, name="fc")
    assert fc.infer_type(d="int32") == ([np.int32, np.float32, np.float32, np.float32],
                                        [np.float32], [])
    ex = fc.simple_bind(mx.cpu(), d=(4,), type_dict={"d": "int32"})
    assert {k: np.dtype(v.dtype).name for k, v in ex.arg_dict.items()} == {
        "d": "int32", "e_weight": "float32", "fc_weight": "float32", "fc_bias": "float32"}
    ex.arg_dict["d"][:] = np.array([0, 1, 2, 3])
    ex.arg_dict["e_weight"][:] = np.arange(15, dtype=np.float32).reshape(5, 3)
    ex.arg_dict["fc_weight"][:] = np.ones((2, 3), np.float32)
    out = ex.forward(is_train=True)[0]
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), [[3, 3], [12, 12], [21, 21], [30, 30]])
    ex.grad_dict["d"][:] = 7
    ex.backward(mx.nd.ones((4, 2)))
    grad = ex.grad_dict["e_weight"]
    assert grad.dtype == np.float32 and grad.stype == "row_sparse"
    np.testing.assert_allclose(grad.asnumpy(), np.r_[np.full((4, 3), 2.0), np.zeros((1, 3))])
    # integer ids have no gradient: 'write' gives zeros (MXNet 1.9.1 raises "Embedding layer
    # doesn't support calculate data gradient", measured)
    assert ex.grad_dict["d"].asnumpy().tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("ids", ID_DTYPES)
@pytest.mark.parametrize("stype", ["default", "row_sparse"])
def test_nd_output_is_the_weights_dtype(ids, stype):
    w = mx.nd.arange(15).reshape((5, 3))
    x = mx.nd.array([4, 0], dtype=ids)
    for wdt in ("float32", "float16", "float64"):
        weight = w.astype(wdt).tostype(stype)
        out = mx.nd.Embedding(x, weight, input_dim=5, output_dim=3)
        assert out.dtype == np.dtype(wdt) and out.stype == "default"
        np.testing.assert_array_equal(out.asnumpy(), [[12, 13, 14], [0, 1, 2]])
    # nd ignores the dtype parameter: the weight decides (MXNet 1.9.1: float32 here)
    out = mx.nd.Embedding(x, w.tostype(stype), input_dim=5, output_dim=3, dtype="float16")
    assert out.dtype == np.float32
    out = mx.nd.contrib.SparseEmbedding(x, w.tostype(stype), input_dim=5, output_dim=3)
    assert out.dtype == np.float32


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("sparse_grad", [False, True])
def test_gluon_embedding_dtype(dtype, hybridize, sparse_grad):
    net = mx.gluon.nn.Embedding(5, 3, dtype=dtype, sparse_grad=sparse_grad)
    net.initialize()
    if hybridize:
        net.hybridize()
    for ids in ("int32", "int64", "float32"):
        x = mx.nd.array([0, 1, 2], dtype=ids)
        with mx.autograd.record():
            y = net(x)
        y.backward()
        grad = net.weight.grad()
        assert (y.dtype, net.weight.data().dtype, grad.dtype) == (np.dtype(dtype),) * 3
        assert grad.stype == ("row_sparse" if sparse_grad else "default")


def test_module_with_int32_ids_through_prefetching_iter():
    rng = np.random.default_rng(0)
    user = mx.nd.array(rng.integers(0, 6, 16), dtype="int32")
    item = mx.nd.array(rng.integers(0, 4, 16))
    score = mx.nd.array(rng.integers(1, 6, 16))
    it = mx.io.PrefetchingIter(mx.io.NDArrayIter({"user": user, "item": item},
                                                 {"score": score}, batch_size=8))
    assert [np.dtype(d.dtype).name for d in it.provide_data] == ["int32", "float32"]
    u = mx.sym.Embedding(mx.sym.var("user"), mx.sym.var("user_weight", stype="row_sparse"),
                         input_dim=6, output_dim=4, sparse_grad=True)
    i = mx.sym.Embedding(mx.sym.var("item"), mx.sym.var("item_weight", stype="row_sparse"),
                         input_dim=4, output_dim=4, sparse_grad=True)
    pred = mx.sym.sum(mx.sym.FullyConnected(u, num_hidden=4)
                      * mx.sym.FullyConnected(i, num_hidden=4), axis=1)
    net = mx.sym.LinearRegressionOutput(mx.sym.Flatten(pred), label=mx.sym.var("score"))
    mod = mx.mod.Module(net, data_names=["user", "item"], label_names=["score"])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(initializer=mx.init.Xavier())
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.01})
    metric = mx.metric.create("MSE")
    for batch in it:
        mod.forward_backward(batch)
        mod.update()
        mod.update_metric(metric, batch.label)
    assert np.isfinite(metric.get()[1])
    assert mod.get_outputs()[0].dtype == np.float32

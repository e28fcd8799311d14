"""Module._arg_params / _aux_params, MXNet's attributes that its test_module_initializer reads:
CPU copies of the initialised parameters (a row_sparse weight initialised by its own init)."""
import numpy as np

import sparsenet as mx


def _regression(m):
    x = mx.sym.var("data", stype="csr")
    v = mx.sym.var("v", shape=(m, 1), init=mx.init.Uniform(scale=0.1), stype="row_sparse")
    y = mx.sym.LinearRegressionOutput(mx.sym.dot(lhs=x, rhs=v), mx.sym.Variable("label"),
                                      name="out")
    return y


def test_arg_params_after_init_are_the_initialised_values():
    n, m = 16, 10
    it = mx.io.NDArrayIter(data=mx.nd.zeros((n, m), stype="csr"), label={"label": mx.nd.zeros((n, 1))},
                           batch_size=n, last_batch_handle="discard")
    mod = mx.mod.Module(_regression(m), data_names=["data"], label_names=["label"])
    assert mod._arg_params is None  # nothing given, nothing bound
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params()
    v = mod._arg_params["v"]
    assert v.stype == "row_sparse"
    values = v.asnumpy()
    assert values.shape == (m, 1) and np.abs(values).max() <= 0.1 and np.abs(values).sum() > 0
    np.testing.assert_array_equal(values, mod.get_params()[0]["v"].asnumpy())
    assert mod._aux_params == {}


def test_arg_params_before_bind_are_the_given_values():
    mod = mx.mod.Module(_regression(4), data_names=["data"], label_names=["label"])
    given = {"v": mx.nd.ones((4, 1))}
    mod.set_params(given)
    np.testing.assert_array_equal(mod._arg_params["v"].asnumpy(), np.ones((4, 1)))

"""An integer Parameter initializes, saves and loads with dtype casting (MXNet's test_parameter_dict).

MXNet allocates a gradient buffer for an int8 Parameter; torch cannot track gradients of integer
tensors, so the buffer stays zero (docs/differences.md).
"""
import numpy as np

import sparsenet as mx
from sparsenet import gluon


def test_int8_parameter_initializes_and_loads_with_cast(tmp_path):
    params0 = gluon.ParameterDict("")
    params0.get("w0", shape=(3, 4), dtype="float32")
    params0.get("w1", shape=(3, 4), dtype="int8")
    params0.initialize(mx.init.One(), ctx=mx.cpu())
    assert params0["w1"].data().dtype == np.int8
    np.testing.assert_array_equal(params0["w1"].data().asnumpy(), np.ones((3, 4), np.int8))
    assert params0["w1"].grad().dtype == np.int8
    np.testing.assert_array_equal(params0["w1"].grad().asnumpy(), np.zeros((3, 4), np.int8))
    path = str(tmp_path / "p.params")
    params0.save(path)

    params1 = gluon.ParameterDict("")
    params1.get("w0", shape=(3, 4), dtype="float16")
    params1.get("w1", shape=(3, 4), dtype="float64")
    params1.load(path, cast_dtype=True, dtype_source="current")
    assert params1["w0"].data().dtype == np.float16
    assert params1["w1"].data().dtype == np.float64
    np.testing.assert_array_equal(params1["w1"].data().asnumpy(), np.ones((3, 4)))
    params1.load(path, cast_dtype=True, dtype_source="saved")
    assert params1["w0"].data().dtype == np.float32
    assert params1["w1"].data().dtype == np.int8


def test_integer_array_attach_grad_float_gradient_still_flows():
    x = mx.nd.array([1, 2, 3], dtype="int32")
    x.attach_grad()
    y = mx.nd.array([1.0, 2.0, 3.0])
    y.attach_grad()
    with mx.autograd.record():
        z = (x.astype("float32") * y).sum()
    z.backward()
    np.testing.assert_allclose(y.grad.asnumpy(), [1.0, 2.0, 3.0])  # dz/dy = x
    np.testing.assert_array_equal(x.grad.asnumpy(), [0, 0, 0])

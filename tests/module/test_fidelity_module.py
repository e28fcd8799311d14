"""Module fidelity with MXNet 1.9.1: set_params/init_params with missing parameters, prediction
batches without labels, and fit's metric reading the labels of the batch it forwarded."""
from collections import namedtuple

import numpy as np
import pytest

import sparsenet as mx


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


def _net():
    fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc')
    return mx.sym.LinearRegressionOutput(fc, name='lro')


def _bound():
    mod = mx.mod.Module(_net(), label_names=['lro_label'])
    mod.bind(data_shapes=[('data', (3, 4))], label_shapes=[('lro_label', (3, 2))])
    return mod


def _params(mod):
    a = mod.get_params()[0]
    return a['fc_weight'].asnumpy(), a['fc_bias'].asnumpy()


def test_set_params_allow_missing_keeps_current_values():
    # measured with MXNet 1.9.1: Constant(3) fills the weight (a bias starts at zero); setting
    # only the bias keeps the weight at 3
    mod = _bound()
    mod.init_params(mx.init.Constant(3.0))
    mod.set_params({'fc_bias': mx.nd.full((2,), 4)}, {}, allow_missing=True)
    weight, bias = _params(mod)
    np.testing.assert_array_equal(weight, np.full((2, 4), 3.0))
    np.testing.assert_array_equal(bias, [4.0, 4.0])


def test_set_params_on_fresh_module_allow_missing():
    # measured with MXNet 1.9.1: the missing bias keeps the zeros it was bound with
    mod = _bound()
    mod.set_params({'fc_weight': mx.nd.full((2, 4), 5)}, {}, allow_missing=True)
    weight, bias = _params(mod)
    np.testing.assert_array_equal(weight, np.full((2, 4), 5.0))
    np.testing.assert_array_equal(bias, [0.0, 0.0])


def test_set_params_missing_without_allow_missing_raises():
    # measured with MXNet 1.9.1: RuntimeError "fc_bias is not presented"
    mod = _bound()
    mod.init_params(mx.init.Constant(3.0))
    with pytest.raises(RuntimeError, match="'fc_bias' is not in arg_params"):
        mod.set_params({'fc_weight': mx.nd.full((2, 4), 6)}, {}, allow_missing=False)


def test_init_params_missing_uses_initializer_or_keeps_value():
    # measured with MXNet 1.9.1
    mod = _bound()
    mod.init_params(mx.init.Constant(3.0))
    mod.init_params(None, arg_params={'fc_bias': mx.nd.full((2,), 7)}, allow_missing=True,
                    force_init=True)
    weight, bias = _params(mod)
    np.testing.assert_array_equal(weight, np.full((2, 4), 3.0))  # kept
    np.testing.assert_array_equal(bias, [7.0, 7.0])
    mod.init_params(mx.init.Constant(9.0), arg_params={'fc_bias': mx.nd.full((2,), 8)},
                    allow_missing=True, force_init=True)
    weight, bias = _params(mod)
    np.testing.assert_array_equal(weight, np.full((2, 4), 9.0))  # from the initializer
    np.testing.assert_array_equal(bias, [8.0, 8.0])


def test_forward_prediction_batch_without_label():
    # measured with MXNet 1.9.1: a namedtuple batch with only .data works on a module bound
    # without labels (outputs 4 = four ones times weight one, bias zero)
    Batch = namedtuple('Batch', ['data'])
    mod = mx.mod.Module(_net(), label_names=['lro_label'])
    mod.bind(data_shapes=[('data', (3, 4))], for_training=False)
    mod.init_params(mx.init.One())
    mod.forward(Batch([mx.nd.ones((3, 4))]))
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.full((3, 2), 4.0))
    # a smaller batch re-binds (MXNet 1.9.1 fails here: "Shape of unspecified arg: lro_label
    # changed"); hand-computed value
    mod.forward(Batch([mx.nd.ones((1, 4))]))
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.full((1, 2), 4.0))


def test_forward_data_batch_label_none_on_training_module():
    # measured with MXNet 1.9.1: DataBatch(data) has label None, and forward works
    mod = _bound()
    mod.init_params(mx.init.One())
    batch = mx.io.DataBatch([mx.nd.ones((3, 4))])
    assert batch.label is None
    mod.forward(batch, is_train=False)
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.full((3, 2), 4.0))


class _SharedLabelIter(mx.io.DataIter):
    """Batches whose label arrays are one buffer, overwritten by each ``next()``."""

    XS = [[[1.0], [2.0]], [[3.0], [4.0]], [[5.0], [6.0]]]
    YS = [[[0.0], [1.0]], [[10.0], [10.0]], [[2.0], [8.0]]]

    def __init__(self):
        super().__init__(batch_size=2)
        self.label_buf = mx.nd.zeros((2, 1))
        self.k = 0

    @property
    def provide_data(self):
        return [mx.io.DataDesc('data', (2, 1))]

    @property
    def provide_label(self):
        return [mx.io.DataDesc('lro_label', (2, 1))]

    def reset(self):
        self.k = 0

    def next(self):
        if self.k == len(self.XS):
            raise StopIteration
        self.label_buf[:] = mx.nd.array(self.YS[self.k])
        batch = mx.io.DataBatch([mx.nd.array(self.XS[self.k])], [self.label_buf])
        self.k += 1
        return batch


def test_fit_metric_uses_the_labels_of_the_forwarded_batch():
    # identity model (weight one, learning rate zero): prediction = data. NumPy: the mean over
    # batches of mean((x - y)**2) = 16.666..., which MXNet 1.9.1 also gives; reading the label
    # buffer after fetching the next batch would give 29.1666...
    net = mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=1, no_bias=True, name='fc'),
        name='lro')
    mod = mx.mod.Module(net, label_names=['lro_label'])
    metric = mx.metric.MSE()
    mod.fit(_SharedLabelIter(), eval_metric=metric, num_epoch=1, initializer=mx.init.One(),
            optimizer='sgd', optimizer_params={'learning_rate': 0.0})
    xs, ys = np.array(_SharedLabelIter.XS), np.array(_SharedLabelIter.YS)
    expected = np.mean([np.mean((x - y) ** 2) for x, y in zip(xs, ys)])
    assert metric.get() == ('mse', pytest.approx(expected))
    assert expected == pytest.approx(16.666666666666668)

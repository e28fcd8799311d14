"""gluon.Block / HybridBlock: naming, registration, deferred init, hooks, hybridize flag."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet import gluon
from sparsenet.gluon import nn
from sparsenet.gluon.block import _NAMES


@pytest.fixture(autouse=True)
def _fresh_names():
    saved = dict(_NAMES.counter)
    _NAMES.counter.clear()
    yield
    _NAMES.counter.clear()
    _NAMES.counter.update(saved)


def test_names_match_mxnet():
    # measured with MXNet 1.9.1: Sequential of Dense/Activation/Dense outside name_scope
    net = nn.Sequential()
    net.add(nn.Dense(in_units=20, units=4), nn.Activation("sigmoid"),
            nn.Dense(in_units=4, units=1))
    assert net.name == "sequential0"
    assert [b.name for b in net] == ["dense0", "sigmoid0", "dense1"]
    assert list(net.collect_params().keys()) == [
        "dense0_weight", "dense0_bias", "dense1_weight", "dense1_bias"]
    assert repr(net) == ("Sequential(\n  (0): Dense(20 -> 4, linear)\n  (1): "
                         "Activation(sigmoid)\n  (2): Dense(4 -> 1, linear)\n)")
    # inside a parent's name_scope: parent prefix and a per-parent counter
    net2 = nn.HybridSequential()
    with net2.name_scope():
        net2.add(nn.Dense(3, activation="relu"))
        net2.add(nn.Dense(2))
    assert list(net2.collect_params().keys()) == [
        "hybridsequential0_dense0_weight", "hybridsequential0_dense0_bias",
        "hybridsequential0_dense1_weight", "hybridsequential0_dense1_bias"]
    assert repr(net2) == ("HybridSequential(\n  (0): Dense(None -> 3, Activation(relu))\n"
                          "  (1): Dense(None -> 2, linear)\n)")
    assert net2._collect_params_with_prefix().keys() == {"0.weight", "0.bias", "1.weight",
                                                         "1.bias"}


def test_custom_block_names_use_class_name_counter():
    class FullyConnectedSparse(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x

    assert [FullyConnectedSparse().name for _ in range(2)] == ["fullyconnectedsparse0",
                                                              "fullyconnectedsparse1"]
    assert FullyConnectedSparse(prefix="mine_").name == "mine"


def test_params_sharing_between_blocks():
    d0 = nn.Dense(4, in_units=3)
    d1 = nn.Dense(4, in_units=3, params=d0.collect_params())
    assert d1.weight is d0.weight
    d0.initialize()
    x = mx.nd.ones((2, 3))
    np.testing.assert_array_equal(d0(x).asnumpy(), d1(x).asnumpy())


def test_collect_params_select_regex():
    net = nn.HybridSequential(prefix="m_")
    with net.name_scope():
        net.add(nn.Dense(2, in_units=2), nn.Dense(2, in_units=2))
    assert list(net.collect_params(".*bias").keys()) == ["m_dense0_bias", "m_dense1_bias"]
    assert list(net.collect_params("m_dense1_.*|m_dense0_weight").keys()) == [
        "m_dense0_weight", "m_dense1_weight", "m_dense1_bias"]


def test_attribute_registration_rules():
    class Net(gluon.Block):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.body = nn.Dense(2, in_units=2)
                self.w = self.params.get("w", shape=(1,))

        def forward(self, x):
            return self.body(x)

    net = Net()
    assert list(net._children) == ["body"] and list(net._reg_params) == ["w"]
    with pytest.raises(TypeError, match="Changing attribute type for body"):
        net.body = 3
    with pytest.raises(ValueError, match="Overriding Parameter attribute w"):
        net.w = gluon.Parameter("other", shape=(1,))


def test_unregistered_container_warns():
    class Net(gluon.Block):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Dense(2)]

    with pytest.warns(UserWarning, match="unregistered container with Blocks"):
        Net().collect_params()


def test_deferred_initialization_infers_in_units():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(3), nn.Dense(2, flatten=False))
    net.initialize(init="ones")
    assert net[0].weight.shape == (3, 0)
    out = net(mx.nd.ones((4, 2, 5)))
    assert net[0].weight.shape == (3, 10) and net[1].weight.shape == (2, 3)
    np.testing.assert_allclose(out.asnumpy(), np.full((4, 2), 30.0))


def test_deferred_init_without_infer_shape_explains():
    class Blk(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.w = self.params.get("w", shape=(0,), allow_deferred_init=True)

        def hybrid_forward(self, F, x, w):
            return x

    b = Blk()
    b.initialize()
    with pytest.raises(ValueError, match="Deferred initialization failed because shape cannot "
                                         "be inferred.*cannot infer the shapes"):
        b(mx.nd.ones((1,)))


def test_forward_hooks_and_handles():
    d = nn.Dense(1, in_units=2)
    d.initialize()
    seen = []
    h1 = d.register_forward_pre_hook(lambda blk, args: seen.append(("pre", len(args))))
    h2 = d.register_forward_hook(lambda blk, args, out: seen.append(("post", out.shape)))
    d(mx.nd.ones((3, 2)))
    h1.detach()
    with h2:
        d(mx.nd.ones((3, 2)))
    d(mx.nd.ones((3, 2)))
    assert seen == [("pre", 1), ("post", (3, 1)), ("post", (3, 1))]


def test_apply_and_hybridize_flag_keep_imperative_results():
    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=3), nn.Activation("tanh"))
    net.initialize()
    x = mx.nd.ones((2, 3))
    before = net(x).asnumpy()
    net.hybridize(static_alloc=True)
    assert net._active and net[0]._active and net[0]._flags == [("static_alloc", True)]
    np.testing.assert_array_equal(net(x).asnumpy(), before)
    names = []
    net.apply(lambda b: names.append(type(b).__name__))
    assert names == ["Dense", "Activation", "HybridSequential"]


def test_sequential_hybridize_warns_and_slicing():
    net = nn.Sequential()
    net.add(nn.Dense(2, in_units=2), nn.Dense(2, in_units=2), nn.Dense(2, in_units=2))
    with pytest.warns(UserWarning, match="Consider using HybridSequential"):
        net.hybridize()
    sub = net[1:]
    assert isinstance(sub, nn.Sequential) and len(sub) == 2 and sub[0] is net[1]


def test_hybrid_block_rejects_non_ndarray_input():
    d = nn.Dense(1, in_units=1)
    d.initialize()
    with pytest.raises(TypeError, match="first input must be an NDArray"):
        d([1.0])


def test_block_cast_and_zero_grad():
    d = nn.Dense(2, in_units=2)
    d.initialize()
    d.cast("float64")
    assert d.weight.data().dtype == np.float64
    with mx.autograd.record():
        y = d(mx.nd.ones((1, 2), dtype="float64"))
    y.backward()
    assert d.weight.grad().asnumpy().any()
    d.zero_grad()
    assert not d.weight.grad().asnumpy().any()


def test_summary_prints_shapes_and_counts(capsys):
    net = nn.Sequential()
    net.add(nn.Dense(4, in_units=3), nn.Activation("relu"))
    net.initialize()
    net.summary(mx.nd.ones((2, 3)))
    out = capsys.readouterr().out
    assert "Dense-1" in out and "(2, 4)" in out and "Total params: 16" in out


def test_memory_summary_counts_sparse_gradients(capsys):
    net = gluon.contrib.nn.SparseDense(2, in_units=1000, prefix="sd_")
    net.initialize()
    x = mx.nd.sparse.csr_matrix(([1.0, 1.0], [5, 9], [0, 2]), shape=(1, 1000))
    with mx.autograd.record():
        y = net(x)
    y.backward()
    net.memory_summary()
    lines = capsys.readouterr().out.splitlines()
    weight = [line for line in lines if line.startswith("sd_weight")][0].split()
    # 1000x2 float32 weight = 0.008 MB; its gradient holds 2 rows: 2*2*4 + 2*8 bytes
    assert weight[3:] == ["default", "0.008", "row_sparse", "0.000"]
    seq = nn.Sequential()
    seq.register_child(net)
    assert gluon.utils.memory_allocation(seq) == [("sd", 8000, 2 * 2 * 4 + 2 * 8)]

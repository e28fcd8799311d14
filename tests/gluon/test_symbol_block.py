"""Hybridized blocks (graphs run by the symbolic executor), export() and SymbolBlock.imports."""
import warnings

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import StorageFallbackWarning


class FullyConnected(mx.gluon.HybridBlock):
    """Seed 000's dense layer."""

    def __init__(self, in_units, units, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self._units = units
            self.weight = self.params.get('weight', shape=(units, in_units), init=None,
                                          allow_deferred_init=True, dtype='float32',
                                          stype='default', grad_stype='default')
            self.bias = self.params.get('bias', shape=(units), init='zeros',
                                        allow_deferred_init=True, dtype='float32',
                                        stype='default', grad_stype='default')

    def hybrid_forward(self, F, x, weight, bias):
        return F.FullyConnected(x, weight, bias, num_hidden=self._units)


class FullyConnectedSparse(mx.gluon.HybridBlock):
    """Seed 000's sparse layer, with ``F.broadcast_add`` for the bias (hybridizable)."""

    def __init__(self, in_units, units, weight_grad_stype='default', **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self._units = units
            self.weight = self.params.get('weight', shape=(in_units, units), init=None,
                                          allow_deferred_init=True, dtype='float32',
                                          stype='default', grad_stype=weight_grad_stype)
            self.bias = self.params.get('bias', shape=(units), init='zeros',
                                        allow_deferred_init=True, dtype='float32',
                                        stype='default', grad_stype='default')

    def hybrid_forward(self, F, x, weight, bias):
        return F.broadcast_add(F.sparse.dot(x, weight), bias)


def _seed000_net(num_features, prefix):
    net = mx.gluon.nn.HybridSequential(prefix=prefix)
    with net.name_scope():
        net.add(FullyConnectedSparse(num_features, 16, weight_grad_stype='row_sparse'),
                mx.gluon.nn.Activation('sigmoid'),
                FullyConnected(16, 8), mx.gluon.nn.Activation('sigmoid'),
                FullyConnected(8, 1), mx.gluon.nn.Activation('sigmoid'))
    return net


def _train(net, batches, steps_stypes=None):
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5})
    loss_fn = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss()
    losses = []
    for data, label in batches:
        with mx.autograd.record():
            pred = net(data)
            loss = loss_fn(pred, label)
        loss.backward()
        if steps_stypes is not None:
            w = net[0].weight
            steps_stypes.append((w.grad().stype, tuple(w.grad().indices.asnumpy())))
        trainer.step(data.shape[0])
        losses.append(float(loss.mean().asscalar()))
    return losses


def test_hybridized_seed000_network_trains_like_the_imperative_one():
    num_features = 200
    np.random.seed(1)
    data = mx.test_utils.rand_ndarray((64, num_features), 'csr', 0.02)
    label = mx.nd.array((data.asnumpy().sum(1) > 1.0).astype('f')).reshape((-1, 1))
    batches = [(data[i:i + 16], label[i:i + 16]) for i in range(0, 64, 16)] * 5
    imperative, hybrid = _seed000_net(num_features, 'a_'), _seed000_net(num_features, 'b_')
    imperative.initialize(mx.init.Xavier())
    hybrid.initialize(mx.init.Xavier())
    for (_, p), (_, q) in zip(imperative.collect_params().items(),
                              hybrid.collect_params().items()):
        q.set_data(p.data().copy())
    hybrid.hybridize()
    stypes = []
    ref = _train(imperative, batches)
    got = _train(hybrid, batches, stypes)
    np.testing.assert_allclose(got, ref, rtol=1e-5)
    assert got[-1] < got[0]
    assert hybrid._cached_graph is not None  # it really ran the graph
    assert 'dot' in hybrid._cached_graph.symbol.tojson()
    for gstype, rows in stypes[:4]:
        assert gstype == 'row_sparse' and len(rows) < num_features
    for (_, p), (_, q) in zip(imperative.collect_params().items(),
                              hybrid.collect_params().items()):
        np.testing.assert_allclose(q.data().asnumpy(), p.data().asnumpy(), rtol=1e-5,
                                   atol=1e-6)


def test_non_hybridizable_plus_fails_clearly_when_hybridized():
    class PlusBias(FullyConnectedSparse):
        def hybrid_forward(self, F, x, weight, bias):
            return F.sparse.dot(x, weight) + bias   # elemwise add: shapes differ

    blk = PlusBias(5, 3)
    blk.initialize()
    x = mx.test_utils.rand_ndarray((2, 5), 'csr', 0.5)
    assert blk(x).shape == (2, 3)   # imperative '+' broadcasts
    blk.hybridize()
    with pytest.raises(ValueError, match=r"shapes must be equal.*node '_plus\d+'"):
        blk(x)


def test_outputs_structure_children_and_rehybridize():
    class Two(mx.gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.dense = mx.gluon.nn.Dense(2, in_units=3)

        def hybrid_forward(self, F, x, y):
            h = self.dense(x)
            return h, F.broadcast_mul(h, y)

    blk = Two(prefix='two_')
    blk.initialize(mx.init.One())
    x, y = mx.nd.ones((1, 3)), mx.nd.array([[2.0, 3.0]])
    eager = blk(x, y)
    blk.hybridize()
    out = blk(x, y)
    assert isinstance(out, tuple) and len(out) == 2
    for a, b in zip(out, eager):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    sym = blk._cached_graph.symbol
    assert sym.list_arguments() == ['data0', 'two_dense0_weight', 'two_dense0_bias', 'data1']
    blk.hybridize(False)
    assert blk._cached_graph is None
    np.testing.assert_array_equal(blk(x, y)[1].asnumpy(), eager[1].asnumpy())


def test_deferred_initialization_then_graph():
    net = mx.gluon.nn.Dense(4)   # in_units unknown until the first call
    net.initialize(mx.init.One())
    net.hybridize()
    first = net(mx.nd.ones((2, 3)))  # imperative: shapes are set up
    second = net(mx.nd.ones((2, 3)))
    assert net._cached_graph is not None
    np.testing.assert_array_equal(first.asnumpy(), second.asnumpy())
    assert net.weight.shape == (4, 3)


def test_fallback_in_a_hybridized_graph_warns_once_per_node():
    net = mx.gluon.nn.HybridLambda(lambda F, x: F.log(x))
    net.hybridize()
    x = mx.nd.ones((2, 2)).tostype('csr')
    with mx.config.storage_fallback('warn'), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        for _ in range(3):
            out = net(x)
    assert out.stype == 'default'
    msgs = [w for w in caught if issubclass(w.category, StorageFallbackWarning)]
    assert len(msgs) == 1 and "at symbol node" in str(msgs[0].message)


def test_export_and_imports_round_trip(tmp_path):
    net = _seed000_net(30, 'ex_')
    net.initialize(mx.init.Xavier())
    x = mx.test_utils.rand_ndarray((4, 30), 'csr', 0.2)
    with pytest.raises(RuntimeError, match="hybridize.*at least once"):
        net.export(str(tmp_path / 'net'))
    net.hybridize()
    expected = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / 'net'), epoch=3)
    assert sym_file.endswith('net-symbol.json') and params_file.endswith('net-0003.params')
    saved = mx.nd.load(params_file)
    assert sorted(saved) == sorted(f'arg:{n}' for n in net.collect_params())
    blk = mx.gluon.SymbolBlock.imports(sym_file, ['data'], params_file)
    np.testing.assert_allclose(blk(x).asnumpy(), expected, rtol=1e-6)
    assert sorted(blk.collect_params()) == sorted(net.collect_params())
    # the imported block trains: gradients reach its parameters
    blk.collect_params().setattr('grad_req', 'write')
    with mx.autograd.record():
        loss = blk(x).sum()
    loss.backward()
    assert blk.collect_params()['ex_fullyconnectedsparse0_weight'].grad().asnumpy().any()


def test_symbol_block_infers_parameter_shapes():
    data = mx.sym.var('data')
    out = mx.sym.relu(mx.sym.FullyConnected(data, num_hidden=3, name='fc'))
    blk = mx.gluon.SymbolBlock(out, data)
    assert sorted(blk.collect_params()) == ['fc_bias', 'fc_weight']
    blk.initialize(mx.init.One())
    y = blk(mx.nd.ones((2, 5)))
    # Gluon semantics: the block initializer fills every parameter without its own init
    np.testing.assert_array_equal(y.asnumpy(), np.full((2, 3), 5.0 + 1.0))
    assert blk.collect_params()['fc_weight'].shape == (3, 5)
    with pytest.raises(TypeError, match="inputs must be Variables"):
        mx.gluon.SymbolBlock(out, [out])
    with pytest.raises(TypeError, match="cannot be called on Symbols"):
        blk(data)

"""Causes of MXNet 1.9.1 sparse unit-test failures, each reproduced.

Expected values were measured with MXNet 1.9.1 (/work/mxnet-venv, ``import mxnet as mx``
running the same statements) or are hand-computed; each test says which.
"""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet import gluon
from sparsenet.gluon.contrib.nn import PixelShuffle1D, PixelShuffle2D, PixelShuffle3D


# ---------------------------------------------------------------- PixelShuffle (contrib.nn)
# Measured with MXNet 1.9.1: L(mx.nd.arange(prod(shape)).reshape(shape)), flattened, as ints;
# identical when hybridized.
_PIXEL_SHUFFLE_191 = [
    (PixelShuffle1D, 2, (1, 4, 3), (1, 2, 6), [0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11]),
    (PixelShuffle2D, (2, 3), (1, 12, 2, 2), (1, 2, 4, 6),
     [0, 4, 8, 1, 5, 9, 12, 16, 20, 13, 17, 21, 2, 6, 10, 3, 7, 11, 14, 18, 22, 15, 19, 23,
      24, 28, 32, 25, 29, 33, 36, 40, 44, 37, 41, 45, 26, 30, 34, 27, 31, 35, 38, 42, 46, 39,
      43, 47]),
    (PixelShuffle3D, (2, 1, 2), (1, 8, 1, 2, 2), (1, 2, 2, 2, 4),
     [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15, 16, 20, 17, 21, 18, 22, 19, 23,
      24, 28, 25, 29, 26, 30, 27, 31]),
]


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("layer,factor,shape,out_shape,expected", _PIXEL_SHUFFLE_191)
def test_pixel_shuffle_matches_mxnet_191(layer, factor, shape, out_shape, expected, hybridize):
    block = layer(factor)
    if hybridize:
        block.hybridize()
    y = block(mx.nd.arange(int(np.prod(shape))).reshape(shape))
    assert y.shape == out_shape
    assert y.asnumpy().astype(int).ravel().tolist() == expected


def test_pixel_shuffle_2d_is_torch_pixel_shuffle():
    torch = pytest.importorskip("torch")
    x = np.random.RandomState(0).rand(2, 18, 3, 4).astype(np.float32)
    want = torch.nn.functional.pixel_shuffle(torch.from_numpy(x), 3).numpy()
    np.testing.assert_array_equal(PixelShuffle2D(3)(mx.nd.array(x)).asnumpy(), want)


def test_pixel_shuffle_gradient_is_the_inverse_permutation():
    x = mx.nd.arange(12).reshape((1, 4, 3))
    x.attach_grad()
    head = mx.nd.arange(12).reshape((1, 2, 6))
    with mx.autograd.record():
        y = PixelShuffle1D(2)(x)
    y.backward(head)
    # hand-computed: y[0, c, 2*w + i] = x[0, 2*c + i, w], so dx[0, 2*c + i, w] = head[0, c, 2*w + i]
    want = np.arange(12).reshape(2, 3, 2).transpose(0, 2, 1).reshape(1, 4, 3)
    np.testing.assert_array_equal(x.grad.asnumpy(), want)


@pytest.mark.parametrize("layer,bad", [(PixelShuffle2D, (2, 2, 2)), (PixelShuffle1D, 0)])
def test_pixel_shuffle_bad_factor(layer, bad):
    with pytest.raises(mx.MXNetError, match="factor") as e:
        layer(bad)
    assert isinstance(e.value, ValueError)


def test_pixel_shuffle_repr_as_mxnet():
    # MXNet 1.9.1: repr(PixelShuffle1D(2)) 'PixelShuffle1D(2)', PixelShuffle2D((2, 3)) '(2, 3)'
    assert repr(PixelShuffle1D(2)) == "PixelShuffle1D(2)"
    assert repr(PixelShuffle2D((2, 3))) == "PixelShuffle2D((2, 3))"


# ---------------------------------------------------------------- SymbolBlock, row_sparse
def test_symbol_block_refuses_row_sparse_weight_as_mxnet():
    # MXNet 1.9.1 (test_gluon.py::test_sparse_symbol_block): AssertionError at construction.
    # Before: the block was built and its first forward failed with a StateError.
    data = mx.sym.var('data')
    weight = mx.sym.var('weight', stype='row_sparse')
    out = mx.sym.broadcast_add(mx.sym.dot(data, weight), mx.sym.var('bias'))
    with pytest.raises(AssertionError, match="row_sparse") as e:
        gluon.SymbolBlock(out, data)
    assert isinstance(e.value, mx.MXNetError)


# ---------------------------------------------------------------- group2ctx
def test_simple_bind_group2ctx_places_sparse_arguments():
    # MXNet 1.9.1 test_multi_device_exec.py::test_ctx_group_sparse: arguments declared under
    # AttrScope(ctx_group=g) live on group2ctx[g].
    with mx.AttrScope(ctx_group='stage1'):
        lhs = mx.symbol.Variable('lhs', stype='csr')
        rhs = mx.symbol.Variable('rhs', stype='row_sparse')
        dot = mx.symbol.dot(lhs, rhs, name='dot')
    with mx.AttrScope(ctx_group='stage2'):
        softmax = mx.symbol.SoftmaxOutput(data=dot, name='softmax')
    group2ctx = {'stage1': mx.cpu(1), 'stage2': mx.cpu(2)}
    exe = softmax.simple_bind(mx.cpu(0), group2ctx=group2ctx, lhs=(8, 5), rhs=(5, 3))
    want = {'lhs': mx.cpu(1), 'rhs': mx.cpu(1), 'softmax_label': mx.cpu(2)}
    assert {n: a.context for n, a in exe.arg_dict.items()} == want
    assert {n: g.context for n, g in exe.grad_dict.items() if g is not None} == want
    assert exe.arg_dict['lhs'].stype == 'csr' and exe.arg_dict['rhs'].stype == 'row_sparse'
    assert exe.forward(is_train=True)[0].shape == (8, 3)
    exe.backward()


def test_simple_bind_without_group2ctx_uses_ctx():
    with mx.AttrScope(ctx_group='stage1'):
        x = mx.symbol.Variable('x')
    exe = (x * 2).simple_bind(mx.cpu(3), x=(2,))
    assert exe.arg_dict['x'].context == mx.cpu(3)
    with pytest.raises(TypeError, match="group2ctx"):
        (x * 2).simple_bind(mx.cpu(0), group2ctx=[mx.cpu(1)], x=(2,))


# ---------------------------------------------------------------- Trainer store selection
def _step(x, ws, trainer):
    with mx.autograd.record():
        for w in ws:
            (w + 1).backward()
    trainer.step(1)


def test_trainer_single_context_sparse_grad_has_no_store():
    # MXNet 1.9.1 test_trainer_with_sparse_grad_on_single_context: _kvstore None and
    # _update_on_kvstore None (was False); weight -1 after one step (lr 1, grad 1).
    x = gluon.Parameter('x', shape=(10,), grad_stype='row_sparse')
    x.initialize(ctx=[mx.cpu(0)], init='zeros')
    trainer = gluon.Trainer([x], 'sgd', {'learning_rate': 1.0, 'momentum': 0.5})
    _step(x, x.list_data(), trainer)
    assert trainer._kvstore is None and trainer._update_on_kvstore is None
    assert (x.data(mx.cpu(0)).asnumpy() == -1).all()


def test_trainer_sparse_weight_uses_a_store_and_lr_mult_after_load(tmp_path):
    # MXNet 1.9.1 test_trainer_sparse_save_load: a row_sparse weight on one context is updated
    # on a 'device' store; after load_states the optimizer still sees the parameters' lr_mult.
    # Weight after one step measured with MXNet 1.9.1: -0.1 in every row.
    x = gluon.Parameter('x', shape=(10, 1), lr_mult=1.0, stype='row_sparse',
                        grad_stype='row_sparse')
    x.initialize(ctx=[mx.cpu(0)], init='zeros')
    trainer = gluon.Trainer([x], 'sgd', {'learning_rate': 0.1})
    rows = mx.nd.arange(0, 10, ctx=mx.cpu(0))
    with mx.autograd.record():
        for w in x.list_row_sparse_data(rows):
            (w * 1).backward()
    trainer.step(1)
    assert trainer._kvstore.type == 'device' and trainer._update_on_kvstore is True
    assert trainer._kvstore._updater.optimizer._get_lr(0) == 0.1
    fname = str(tmp_path / 'sparse.states')
    trainer.save_states(fname)
    trainer.load_states(fname)
    x.lr_mult = 2.0
    assert trainer._kvstore._updater.optimizer._get_lr(0) == 0.2
    np.testing.assert_allclose(x.row_sparse_data(rows).asnumpy().ravel(), [-0.1] * 10)


# (stype, grad_stype, update_on_kvstore asked, update_on_kvstore decided) on a 'local'/'device'
# store over cpu(0), cpu(1); measured with MXNet 1.9.1 (test_trainer_sparse_kv's cases):
# every decided case gives weight -0.2 on both contexts (grad 1 per context, summed, lr 0.1).
_STORE_CASES_191 = [
    ('default', 'default', True, True), ('default', 'default', False, False),
    ('default', 'default', None, True), ('default', 'row_sparse', None, False),
    ('default', 'row_sparse', True, True), ('default', 'row_sparse', False, False),
    ('row_sparse', 'row_sparse', None, True),
]


@pytest.mark.parametrize("kv", ['local', 'device'])
@pytest.mark.parametrize("stype,grad_stype,asked,decided", _STORE_CASES_191)
def test_trainer_local_store_over_contexts_as_mxnet(monkeypatch, kv, stype, grad_stype, asked,
                                                    decided):
    monkeypatch.delenv("MXNET_UPDATE_ON_KVSTORE", raising=False)
    params = gluon.ParameterDict()
    x = params.get('x', shape=(10, 1), stype=stype, grad_stype=grad_stype)
    params.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init='zeros')
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1}, kvstore=kv,
                            update_on_kvstore=asked)
    rows = mx.nd.arange(0, 10, ctx=mx.cpu(0))
    _step(x, x.list_data() if stype == 'default' else x.list_row_sparse_data(rows), trainer)
    assert trainer._kvstore.type == kv and trainer._kv_initialized
    assert trainer._update_on_kvstore is decided
    got = x.list_data() if stype == 'default' else x.list_row_sparse_data(rows)
    for w in got:
        np.testing.assert_allclose(w.asnumpy().ravel(), [-0.2] * 10, rtol=1e-6)


@pytest.mark.parametrize("kv", ['local', 'device'])
def test_trainer_sparse_weight_refuses_update_on_workers(kv):
    # MXNet 1.9.1: ValueError "Cannot set update_on_kvstore=False when sparse weights are present."
    params = gluon.ParameterDict()
    x = params.get('x', shape=(10, 1), stype='row_sparse', grad_stype='row_sparse')
    params.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init='zeros')
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1}, kvstore=kv,
                            update_on_kvstore=False)
    with pytest.raises(ValueError, match="update_on_kvstore=False") as e:
        x.list_row_sparse_data(mx.nd.arange(0, 10))
    assert isinstance(e.value, mx.MXNetError)


def test_trainer_dense_default_follows_env(monkeypatch):
    # MXNet 1.9.1 _create_kvstore: update_on_kvstore = MXNET_UPDATE_ON_KVSTORE (default 1).
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "0")
    x = gluon.Parameter('x', shape=(3,))
    x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init='zeros')
    trainer = gluon.Trainer([x], 'sgd', {'learning_rate': 0.1})
    _step(x, x.list_data(), trainer)
    assert trainer._kvstore.type == 'device' and trainer._update_on_kvstore is False
    for w in x.list_data():
        np.testing.assert_allclose(w.asnumpy(), [-0.2] * 3, rtol=1e-6)


class _EmbedDense(mx.gluon.Block):
    """A row_sparse weight read through row_sparse_data, then a deferred-shape Dense."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.embed_weight = self.params.get("embed_weight", stype="row_sparse",
                                                shape=(4, 3), grad_stype="row_sparse")
            self.dense0 = mx.gluon.nn.Dense(2)

    def forward(self, x):
        w = self.embed_weight.row_sparse_data(x)
        return self.dense0(mx.nd.Embedding(data=x, weight=w, input_dim=4, output_dim=3,
                                           sparse_grad=True))


@pytest.mark.parametrize("ctxes", [[mx.cpu(1), mx.cpu(2)], [mx.cpu(1)]])
def test_two_context_forward_then_step_with_a_store(ctxes):
    # the store is set up by the first context's row_sparse_data; the Dense weights (deferred
    # until that forward) get their store keys during the second context's forward, and must
    # not be rewritten under the first context's recorded pass (ConcurrentModificationError)
    net = _EmbedDense(prefix="net_")
    net.initialize(mx.init.One(), ctx=ctxes)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1})
    xs = mx.gluon.utils.split_and_load(mx.nd.array([[0, 2], [1, 2]]), ctxes)
    with mx.autograd.record():
        ys = [net(x) for x in xs]
    for y in ys:
        y.backward()
    trainer.step(1)
    weight = net.embed_weight.row_sparse_data(mx.nd.arange(0, 4, ctx=mx.cpu(1))).asnumpy()
    # by hand: every embedding row reads ones, dense0's weight is ones (2 x 3), so each id's
    # gradient row is 2 (the sum over the 2 outputs); ids 0 and 1 once, id 2 twice, id 3 never;
    # SGD with lr 1 from 1: 1 - 2 = -1, 1 - 4 = -3, 1
    np.testing.assert_array_equal(weight, [[-1] * 3, [-1] * 3, [-3] * 3, [1] * 3])


def test_autograd_star_import_gives_ndarray_as_mxnets_does():
    # MXNet 1.9.1's test_autograd.py does `from mxnet.autograd import *` and then uses NDArray
    from sparsenet import autograd
    star = {name: getattr(autograd, name) for name in autograd.__all__}  # what `*` imports
    assert star["NDArray"] is mx.nd.NDArray
    assert star["record"] is mx.autograd.record

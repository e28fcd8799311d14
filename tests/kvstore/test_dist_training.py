"""Training through ``kvstore='dist_sync'`` on 2 and 3 gloo ranks equals the same training in
one process on the concatenated batch (float tolerance: sums are ordered differently), and the
replicas are bit-identical across ranks.

One spawn per world size runs every scenario (Gluon Trainer with dense, row_sparse-gradient and
row_sparse-weight parameters; Module with a table sharded over the ranks and a checkpoint; the
LibSVM iterator's default part), each rank returning what it trained.
"""
import os

import numpy as np
import pytest

import sparsenet as mx
from sparsenet import autograd, gluon
from tests.kvstore.dist_helpers import run_ranks, values

BATCH, FEATURES, ROWS, STEPS = 12, 6, 10, 3


# ---------------------------------------------------------------------- shared data
def gluon_batch(step):
    rs = np.random.RandomState(100 + step)
    x = rs.rand(BATCH, FEATURES).astype('f4')
    ids = rs.randint(0, ROWS, BATCH).astype('f4')
    y = rs.rand(BATCH, 1).astype('f4')
    return x, ids, y


def module_batch(step):
    rs = np.random.RandomState(200 + step)
    x = ((rs.rand(BATCH, ROWS) < 0.3) * rs.rand(BATCH, ROWS)).astype('f4')
    return x, rs.rand(BATCH, 1).astype('f4')


def part(world, rank):
    n = BATCH // world
    return slice(rank * n, (rank + 1) * n)


# ---------------------------------------------------------------------- Gluon
class Net(gluon.Block):
    def __init__(self):
        super().__init__()
        self.dense = gluon.nn.Dense(1, in_units=FEATURES)
        self.emb = gluon.nn.Embedding(ROWS, 1, sparse_grad=True)
        self.table = gluon.contrib.nn.SparseEmbedding(ROWS, 1)

    def forward(self, x, ids):
        return self.dense(x) + self.emb(ids) + self.table(ids)


def train_gluon(kvstore, rows=slice(None)):
    mx.random.seed(7)
    net = Net()
    net.initialize(mx.init.Uniform(0.5))
    trainer = gluon.Trainer(net.collect_params(), 'adam', {'learning_rate': 0.1},
                            kvstore=kvstore)
    loss = gluon.loss.L2Loss()
    for step in range(STEPS):
        x, ids, y = gluon_batch(step)
        with autograd.record():
            out = loss(net(mx.nd.array(x[rows]), mx.nd.array(ids[rows])), mx.nd.array(y[rows]))
        out.backward()
        trainer.step(BATCH)
    # in parameter order (the names' counters differ between processes)
    return [p._reduce().asnumpy() for p in net.collect_params().values()]


# ---------------------------------------------------------------------- Module
def sparse_symbol():
    x = mx.sym.var('data', stype='csr')
    w = mx.sym.var('w_weight', stype='row_sparse', shape=(ROWS, 1))
    b = mx.sym.var('b_bias', shape=(1,))
    return mx.sym.LinearRegressionOutput(mx.sym.broadcast_add(mx.sym.dot(x, w), b), name='lro')


def initial_table():
    return np.linspace(-0.5, 0.5, ROWS, dtype='f4').reshape(ROWS, 1)


def train_module(kv, world, rank):
    n = BATCH // world
    mod = mx.mod.Module(sparse_symbol(), data_names=['data'], label_names=['lro_label'])
    mod.bind(data_shapes=[('data', (n, ROWS))], label_shapes=[('lro_label', (n, 1))])
    mod.init_params(mx.init.Zero(), arg_params={'w_weight': mx.nd.array(initial_table())
                                                .tostype('row_sparse')}, allow_missing=True)
    mod.init_optimizer(kvstore=kv, optimizer='adam', optimizer_params={'learning_rate': 0.1})
    for step in range(STEPS):
        x, y = module_batch(step)
        rows = part(world, rank)
        batch = mx.io.DataBatch([mx.nd.array(x[rows]).tostype('csr')], [mx.nd.array(y[rows])])
        if kv is not None:  # the rows this batch needs, from their owners
            mod.prepare(batch, sparse_row_id_fn=lambda b: {'w_weight': b.data[0].indices})
        mod.forward_backward(batch)
        mod.update()
    return mod


def scenario_training(rank, world, workdir):
    out = {}
    out['gluon'] = train_gluon('dist_sync', part(world, rank))
    kv = mx.kv.create('dist_sync')
    kv.init('w_weight', mx.nd.array(initial_table()).tostype('row_sparse'), sharded=True)
    mod = train_module(kv, world, rank)
    args, _ = mod.get_params()  # gathers the sharded table (every rank calls it)
    out['module'] = {k: v.asnumpy() for k, v in args.items()}
    prefix = os.path.join(workdir, 'ckpt')
    mod.save_checkpoint(prefix, 1)  # every rank gathers, rank 0 writes
    kv.barrier()
    out['checkpoint'] = {k: v.asnumpy() for k, v in mx.nd.load(prefix + '-0001.params').items()}
    it = mx.io.LibSVMIter(data_libsvm=os.path.join(workdir, 'data.libsvm'), data_shape=(4,),
                          batch_size=1, round_batch=False)
    out['labels'] = [float(b.label[0].asscalar()) for b in it]
    return out


def _reference_module():
    """The same Module in one process on the whole batch, with no store."""
    mod = train_module(None, 1, 0)
    args, _ = mod.get_params()
    return {k: v.asnumpy() for k, v in args.items()}


@pytest.mark.parametrize("world", [2, 3])
def test_gluon_and_module_training_over_ranks_equal_one_process(world, tmp_path):
    with open(tmp_path / 'data.libsvm', 'w') as f:
        for i in range(9):
            f.write(f"{i} 0:1 3:{i}\n")
    outs = values(run_ranks("tests.kvstore.test_dist_training:scenario_training", world,
                            str(tmp_path), timeout=30, wall=150))
    ref = train_gluon(None)
    for i, want in enumerate(ref):
        for out in outs:
            np.testing.assert_allclose(out['gluon'][i], want, rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(out['gluon'][i], outs[0]['gluon'][i])
    ref_mod = _reference_module()
    for name, want in ref_mod.items():
        for out in outs:
            np.testing.assert_allclose(out['module'][name], want, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(out['checkpoint']['arg:' + name], want, rtol=1e-5,
                                       atol=1e-6)
    # the iterator reads this rank's part by default: together every line once
    labels = sorted(v for out in outs for v in out['labels'])
    assert labels == [float(i) for i in range(9)]
    assert all(0 < len(out['labels']) < 9 for out in outs)

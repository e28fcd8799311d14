"""Seed 000, "Sparse NDArrays with Gluon": LibSVM round trip and the three trained variants.

The tutorial's code, run with ``import sparsenet as mx``, at a reduced size
(200 samples, 100,000 features at density 1e-4, so rows keep the tutorial's ~10
values and the dense layers hold 51.2 MB instead of 512 MB). What differs from
the tutorial: these sizes, and each ``%%timeit`` cell runs once. Block names
are checked against the tutorial's printout, so the name counters start from
zero as in a fresh session.
"""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.gluon.block import _NAMES

pytestmark = pytest.mark.skipif(not hasattr(mx, "io"),
                                reason="needs mx.io.LibSVMIter (the io package)")

NUM_SAMPLES, NUM_FEATURES = 200, 100000


# ---------------------------------------------------------------------- the tutorial's code
def get_nbytes(array):
    fn = lambda a: a.size * np.dtype(a).itemsize  # noqa: E731 - the tutorial's code
    if isinstance(array, mx.ndarray.sparse.CSRNDArray):
        return fn(array.data) + fn(array.indices) + fn(array.indptr)
    elif isinstance(array, mx.ndarray.sparse.RowSparseNDArray):
        return fn(array.data) + fn(array.indices)
    elif isinstance(array, mx.ndarray.NDArray):
        return fn(array)
    else:
        TypeError('{} not supported'.format(type(array)))  # noqa: PLW0133 - tutorial's


def save_as_libsvm(filepath, data, label):
    with open(filepath, 'w') as openfile:
        for row_idx in range(data.shape[0]):
            data_sample = data[row_idx]
            label_sample = label[row_idx]
            col_idxs = data_sample.indices.asnumpy().tolist()
            values = data_sample.data.asnumpy().tolist()
            label_str = str(label_sample.asscalar())
            value_strs = ['{}:{}'.format(idx, value) for idx, value in zip(col_idxs, values)]
            value_str = " ".join(value_strs)
            sample_str = '{} {}\n'.format(label_str, value_str)
            openfile.write(sample_str)


class FullyConnected(mx.gluon.HybridBlock):
    def __init__(self, in_units, units):
        super(FullyConnected, self).__init__()
        with self.name_scope():
            self._units = units
            self.weight = self.params.get('weight', shape=(units, in_units),
                                          init=None, allow_deferred_init=True,
                                          dtype='float32', stype='default', grad_stype='default')
            self.bias = self.params.get('bias', shape=(units),
                                        init='zeros', allow_deferred_init=True,
                                        dtype='float32', stype='default', grad_stype='default')

    def hybrid_forward(self, F, x, weight, bias):
        return F.FullyConnected(x, weight, bias, num_hidden=self._units)


class FullyConnectedSparse(mx.gluon.HybridBlock):
    def __init__(self, in_units, units, weight_grad_stype='default'):
        super(FullyConnectedSparse, self).__init__()
        with self.name_scope():
            self._units = units
            self.weight = self.params.get('weight', shape=(in_units, units),
                                          init=None, allow_deferred_init=True,
                                          dtype='float32', stype='default',
                                          grad_stype=weight_grad_stype)
            self.bias = self.params.get('bias', shape=(units),
                                        init='zeros', allow_deferred_init=True,
                                        dtype='float32', stype='default', grad_stype='default')

    def hybrid_forward(self, F, x, weight, bias):
        return F.sparse.dot(x, weight) + bias


def print_memory_allocation(net, block_idxs):
    blocks = [net[block_idx] for block_idx in block_idxs]
    weight_nbytes = [get_nbytes(b.weight.data()) for b in blocks]
    weight_nbytes_pct = [b/sum(weight_nbytes) for b in weight_nbytes]
    weight_grad_nbytes = [get_nbytes(b.weight.grad()) for b in blocks]
    weight_grad_nbytes_pct = [b/sum(weight_grad_nbytes) for b in weight_grad_nbytes]
    print("Memory Allocation for Weight:")
    for i in range(len(block_idxs)):
        print('{:7.3f} MBs ({:7.3f}%) for {:<40}'.format(weight_nbytes[i]/1000000,
                                                         weight_nbytes_pct[i]*100,
                                                         blocks[i].name))
    print("Memory Allocation for Weight Gradient:")
    for i in range(len(block_idxs)):
        print('{:7.3f} MBs ({:7.3f}%) for {:<40}'.format(weight_grad_nbytes[i]/1000000,
                                                         weight_grad_nbytes_pct[i]*100,
                                                         blocks[i].name))


def train_one_epoch(net, data_iter, ctx):
    """The tutorial's %%timeit cell (run once)."""
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd')
    loss_fn = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss()
    data_iter.reset()
    last = None
    for batch in data_iter:
        data = batch.data[0]
        data = data.as_in_context(ctx)
        label = batch.label[0].as_in_context(ctx)
        with mx.autograd.record():
            pred = net(data)
            loss = loss_fn(pred, label)
        loss.backward()
        trainer.step(data.shape[0])
        loss.wait_to_read()
        last = data
    return last


# ---------------------------------------------------------------------- the test
@pytest.fixture(scope="module")
def tutorial(tmp_path_factory):
    np.random.seed(0)
    num_samples, num_features = NUM_SAMPLES, NUM_FEATURES
    data = mx.test_utils.rand_ndarray((num_samples, num_features), stype='csr',
                                      density=0.0001)
    label = data.sum(axis=1) > data.sum(axis=1).mean()
    filepath = str(tmp_path_factory.mktemp("seed000") / 'dataset.libsvm')
    save_as_libsvm(filepath, data, label)
    data_iter = mx.io.LibSVMIter(data_libsvm=filepath, data_shape=(num_features,),
                                 label_shape=(1,), batch_size=10)
    ctx = mx.gpu() if mx.test_utils.list_gpus() else mx.cpu()
    return data, label, filepath, data_iter, ctx


def test_libsvm_round_trip(tutorial):
    data, label, filepath, data_iter, _ = tutorial
    with open(filepath, 'r') as openfile:
        lines = [openfile.readline() for _ in range(10)]
    assert all(line.split()[0] in ('0.0', '1.0') for line in lines)
    data_iter.reset()
    rows, labels = [], []
    for batch in data_iter:
        assert batch.data[0].stype == 'csr' and batch.label[0].stype == 'default'
        rows.append(batch.data[0].asnumpy()[:10 - batch.pad])
        labels.append(batch.label[0].asnumpy()[:10 - batch.pad])
    np.testing.assert_array_equal(np.vstack(rows), data.asnumpy())
    np.testing.assert_array_equal(np.concatenate(labels), label.asnumpy())


def _variant(v, num_features):
    net = mx.gluon.nn.Sequential()
    if v == 1:
        net.add(
            mx.gluon.nn.Dense(in_units=num_features, units=128),
            mx.gluon.nn.Activation('sigmoid'),
            mx.gluon.nn.Dense(in_units=128, units=8),
            mx.gluon.nn.Activation('sigmoid'),
            mx.gluon.nn.Dense(in_units=8, units=1),
            mx.gluon.nn.Activation('sigmoid'),
        )
    else:
        net.add(
            FullyConnectedSparse(in_units=num_features, units=128,
                                 weight_grad_stype='row_sparse' if v == 3 else 'default'),
            mx.gluon.nn.Activation('sigmoid'),
            FullyConnected(in_units=128, units=8),
            mx.gluon.nn.Activation('sigmoid'),
            FullyConnected(in_units=8, units=1),
            mx.gluon.nn.Activation('sigmoid'),
        )
    return net


def test_three_variants_train_alike_with_documented_memory(tutorial, capsys):
    _, _, _, data_iter, ctx = tutorial
    _NAMES.counter.clear()
    names, final, start = {}, {}, {}
    for v in (1, 2, 3):
        net = _variant(v, NUM_FEATURES)
        mx.random.seed(42)
        net.initialize(ctx=ctx)
        if v == 1:  # one start for all three (Dense stores the first weight transposed)
            start = {0: net[0].weight.data().asnumpy().T.copy(),
                     2: net[2].weight.data().asnumpy(), 4: net[4].weight.data().asnumpy()}
        else:
            for i in (0, 2, 4):
                net[i].weight.set_data(mx.nd.array(start[i]))
        last = train_one_epoch(net, data_iter, ctx)
        print_memory_allocation(net, block_idxs=[0, 2, 4])
        out = capsys.readouterr().out.splitlines()
        names[v] = [line.split(" for ")[1].strip() for line in out[1:4]]
        first = net[0].weight.data().asnumpy()
        final[v] = first.T if v == 1 else first
        grad = net[0].weight.grad()
        assert grad.stype == ('row_sparse' if v == 3 else 'default')
        w_bytes = NUM_FEATURES * 128 * 4
        small = 8 * 128 * 4 + 8 * 4  # the two FullyConnected weights
        assert out[1] == '{:7.3f} MBs ({:7.3f}%) for {:<40}'.format(
            w_bytes / 1e6, w_bytes / (w_bytes + small) * 100, names[v][0])
        g_bytes = get_nbytes(grad)
        if v == 3:  # the gradient holds the rows of the last batch's features
            rows = np.unique(last.indices.asnumpy()).size
            assert g_bytes == rows * (128 * 4 + 8)
        else:
            assert g_bytes == w_bytes
        assert out[5] == '{:7.3f} MBs ({:7.3f}%) for {:<40}'.format(
            g_bytes / 1e6, g_bytes / (g_bytes + small) * 100, names[v][0])
    # the tutorial's printed names
    assert names[1] == ['dense0', 'dense1', 'dense2']
    assert names[2] == ['fullyconnectedsparse0', 'fullyconnected0', 'fullyconnected1']
    assert names[3] == ['fullyconnectedsparse1', 'fullyconnected2', 'fullyconnected3']
    # one start, one data order: the three layouts reach the same weights
    assert not np.array_equal(final[3], start[0])  # it trained
    np.testing.assert_allclose(final[2], final[1], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(final[3], final[1], rtol=1e-4, atol=1e-6)

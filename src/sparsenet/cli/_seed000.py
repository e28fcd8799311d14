"""Seed 000's networks, shared by ``sparsenet demo`` (:mod:`sparsenet.cli.demo`) and the
benchmarks (``benchmarks/bench_seed000.py`` imports them through ``examples/seed000_model.py``).

The tutorial's ``FullyConnected`` and ``FullyConnectedSparse`` blocks as written
in "Sparse NDArrays with Gluon", its three networks, its LibSVM writer, and the
same model in plain PyTorch (``EmbeddingBag(sparse=True)``) for comparison.

>>> net = build_net(3, 20)
>>> from sparsenet import nd
>>> x = nd.sparse.csr_matrix(([1.0, 2.0], [0, 19], [0, 1, 2]), shape=(2, 20))
>>> net(x).shape
(2, 1)
"""
import torch

from .. import gluon
from ..context import cpu

VARIANTS = {1: "nn.Dense on CSR (dense grad)", 2: "FullyConnectedSparse (dense grad)",
            3: "FullyConnectedSparse (row_sparse grad)"}


class FullyConnected(gluon.HybridBlock):
    def __init__(self, in_units, units):
        super(FullyConnected, self).__init__()
        with self.name_scope():
            self._units = units
            self.weight = self.params.get('weight', shape=(units, in_units),
                                          init=None, allow_deferred_init=True,
                                          dtype='float32', stype='default', grad_stype='default')
            self.bias = self.params.get('bias', shape=(units), init='zeros',
                                        allow_deferred_init=True, dtype='float32',
                                        stype='default', grad_stype='default')

    def hybrid_forward(self, F, x, weight, bias):
        return F.FullyConnected(x, weight, bias, num_hidden=self._units)


class FullyConnectedSparse(gluon.HybridBlock):
    def __init__(self, in_units, units, weight_grad_stype='default'):
        super(FullyConnectedSparse, self).__init__()
        with self.name_scope():
            self._units = units
            self.weight = self.params.get('weight', shape=(in_units, units),
                                          init=None, allow_deferred_init=True,
                                          dtype='float32', stype='default',
                                          grad_stype=weight_grad_stype)
            self.bias = self.params.get('bias', shape=(units), init='zeros',
                                        allow_deferred_init=True, dtype='float32',
                                        stype='default', grad_stype='default')

    def hybrid_forward(self, F, x, weight, bias):
        return F.sparse.dot(x, weight) + bias


def build_net(variant, num_features, ctx=None):
    """The tutorial's network ``variant`` (1, 2 or 3, see ``VARIANTS``), initialised."""
    net = gluon.nn.Sequential()
    if variant == 1:
        net.add(gluon.nn.Dense(in_units=num_features, units=128),
                gluon.nn.Activation('sigmoid'),
                gluon.nn.Dense(in_units=128, units=8), gluon.nn.Activation('sigmoid'),
                gluon.nn.Dense(in_units=8, units=1), gluon.nn.Activation('sigmoid'))
    else:
        grad_stype = 'row_sparse' if variant == 3 else 'default'
        net.add(FullyConnectedSparse(in_units=num_features, units=128,
                                     weight_grad_stype=grad_stype),
                gluon.nn.Activation('sigmoid'),
                FullyConnected(in_units=128, units=8), gluon.nn.Activation('sigmoid'),
                FullyConnected(in_units=8, units=1), gluon.nn.Activation('sigmoid'))
    net.initialize(ctx=ctx or cpu())
    return net


def save_as_libsvm(filepath, data, label):
    """The tutorial's writer (``sparsenet.io.save_libsvm`` is the vectorised built-in)."""
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


class TorchModel(torch.nn.Module):
    """The same network in plain PyTorch: ``EmbeddingBag(sparse=True)`` + bias, two Linear."""

    def __init__(self, num_features):
        super().__init__()
        self.emb = torch.nn.EmbeddingBag(num_features, 128, mode="sum", sparse=True)
        self.bias = torch.nn.Parameter(torch.zeros(128))
        self.fc1 = torch.nn.Linear(128, 8)
        self.fc2 = torch.nn.Linear(8, 1)

    def forward(self, indices, offsets, values):
        h = torch.sigmoid(self.emb(indices, offsets, per_sample_weights=values) + self.bias)
        h = torch.sigmoid(self.fc1(h))
        return torch.sigmoid(self.fc2(h))


def torch_batches(batches):
    """``(indices, offsets, values, label)`` views of sparsenet CSR batches (zero-copy)."""
    return [(d._indices, d._indptr[:-1], d._data, lab._t.reshape(-1, 1)) for d, lab in batches]


def torch_epoch(model, optim, batches, loss_fn):
    """One epoch of the PyTorch model over :func:`torch_batches`."""
    for indices, offsets, values, label in batches:
        optim.zero_grad()
        loss = loss_fn(model(indices, offsets, values), label)
        loss.backward()
        optim.step()

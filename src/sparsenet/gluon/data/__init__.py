"""Datasets, samplers and the DataLoader (``mx.gluon.data``); CSR samples batch into CSR.

>>> import sparsenet as mx
>>> x = mx.nd.sparse.csr_matrix(([1., 2., 3.], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 4))
>>> loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(x, mx.nd.arange(3)),
...                                   batch_size=2)
>>> [(d.stype, d.shape, y.asnumpy().tolist()) for d, y in loader]
[('csr', (2, 4), [0.0, 1.0]), ('csr', (1, 4), [2.0])]
"""
from .dataset import Dataset, SimpleDataset, ArrayDataset
from .sampler import Sampler, SequentialSampler, RandomSampler, BatchSampler, FilterSampler
from .batchify import default_batchify_fn
from .dataloader import DataLoader
from . import batchify

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "Sampler", "SequentialSampler",
           "RandomSampler", "BatchSampler", "FilterSampler", "DataLoader", "default_batchify_fn",
           "batchify"]

"""Concurrent containers: run every child on the same input and concatenate their outputs.

``Concurrent`` (Blocks) and ``HybridConcurrent`` (HybridBlocks) are MXNet
1.9.1's ``gluon.contrib.nn`` containers: ``concat(child(x) for child, dim=axis)``.
Children may take a CSR batch (e.g. several ``Dense`` layers on one sparse
input); the concatenation sees their dense outputs.

>>> import sparsenet as mx
>>> net = mx.gluon.contrib.nn.HybridConcurrent(axis=1)
>>> net.add(mx.gluon.nn.Dense(2), mx.gluon.nn.Dense(3))
>>> net.initialize()
>>> x = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 3], [0, 1, 2]), shape=(2, 4))
>>> net(x).shape
(2, 5)
"""
from .... import ndarray as nd
from ...nn.basic_layers import HybridSequential, Sequential

__all__ = ["Concurrent", "HybridConcurrent"]


class Concurrent(Sequential):
    """Run each child Block on the input; concatenate the outputs along ``axis``.

    Parameters
    ----------
    axis : int
        Axis of the concatenation (default -1).
    prefix, params
        As for any Block.

    Examples
    --------
    >>> import sparsenet as mx
    >>> net = mx.gluon.contrib.nn.Concurrent()
    >>> net.add(mx.gluon.nn.Dense(2, in_units=3), mx.gluon.contrib.nn.Identity())
    >>> net.initialize(init='ones')
    >>> net(mx.nd.ones((1, 3))).asnumpy()
    array([[3., 3., 1., 1., 1.]], dtype=float32)
    """

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        return nd.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(HybridSequential):
    """Run each child HybridBlock on the input; concatenate the outputs along ``axis``.

    Parameters
    ----------
    axis : int
        Axis of the concatenation (default -1).
    prefix, params
        As for any Block.

    Examples
    --------
    >>> import sparsenet as mx
    >>> net = mx.gluon.contrib.nn.HybridConcurrent(axis=1, prefix='cc_')
    >>> with net.name_scope():
    ...     net.add(mx.gluon.nn.Dense(2), mx.gluon.nn.Dense(1))
    >>> net.initialize(); net.hybridize()
    >>> net(mx.nd.ones((4, 3))).shape, net[1].name
    ((4, 3), 'cc_dense1')
    """

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)

"""Sparse layers: ``SparseEmbedding`` (row_sparse weight) and ``SparseDense`` (CSR input).

``SparseDense`` is the seed tutorial's hand-written ``FullyConnectedSparse`` as a
built-in: ``dot(x, weight) + bias`` with the weight stored ``(in_units, units)``
so that the gradient of a CSR batch touches whole rows, stored row_sparse.

>>> import sparsenet as mx
>>> layer = mx.gluon.contrib.nn.SparseDense(2, in_units=5)
>>> layer.initialize(init='ones')
>>> x = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 4], [0, 2]), shape=(1, 5))
>>> with mx.autograd.record():
...     y = layer(x)
>>> y.backward()
>>> y.asnumpy(), layer.weight.grad().stype, layer.weight.grad().indices.asnumpy()
(array([[3., 3.]], dtype=float32), 'row_sparse', array([0, 4]))
"""
from .... import ndarray as nd
from ...block import Block, HybridBlock
from ...nn.activations import Activation

__all__ = ["SparseEmbedding", "SparseDense", "Identity"]


class SparseEmbedding(Block):
    """Embedding whose weight and gradient are both row_sparse.

    Each forward reads only the rows of the batch's ids
    (:meth:`Parameter.row_sparse_data`); the gradient holds those rows. Use
    an optimizer with a lazy update so that only they change.

    >>> import sparsenet as mx
    >>> e = mx.gluon.contrib.nn.SparseEmbedding(1000, 4)
    >>> e
    SparseEmbedding(1000 -> 4, float32)
    >>> e.initialize()
    >>> with mx.autograd.record():
    ...     y = e(mx.nd.array([[7, 3], [7, 999]]))
    >>> y.backward()
    >>> y.shape, e.weight.grad().indices.asnumpy()
    ((2, 2, 4), array([  3,   7, 999]))
    """

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype="row_sparse", stype="row_sparse")

    def forward(self, x):
        weight = self.weight.row_sparse_data(x)
        return nd.Embedding(x, weight, **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class SparseDense(HybridBlock):
    """``activation(dot(x, weight) + bias)`` with weight ``(in_units, units)``, for CSR ``x``.

    Parameters
    ----------
    units : int
    in_units : int
        Input size; 0 infers it at the first forward pass.
    activation : str, optional
    use_bias : bool
    dtype : str
    weight_initializer, bias_initializer : Initializer or str
    weight_grad_stype : {'row_sparse', 'default'}
        Storage type of the weight gradient: row_sparse stores only the rows
        of the features present in the batch.
    """

    def __init__(self, units, in_units=0, activation=None, use_bias=True, dtype="float32",
                 weight_initializer=None, bias_initializer="zeros",
                 weight_grad_stype="row_sparse", **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self._units = units
            self.weight = self.params.get("weight", shape=(in_units, units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True,
                                          grad_stype=weight_grad_stype)
            if use_bias:
                self.bias = self.params.get("bias", shape=(units,), init=bias_initializer,
                                            dtype=dtype, allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def infer_shape(self, x, *args):
        self.weight.shape = (x.shape[1], self._units)

    def hybrid_forward(self, F, x, weight, bias=None):
        out = F.dot(x, weight)
        if bias is not None:
            out = F.broadcast_add(out, bias)
        if self.act is not None:
            out = self.act(out)
        return out

    def __repr__(self):
        shape = self.weight.shape
        return f"{type(self).__name__}({shape[0] if shape[0] else None} -> {shape[1]}, " \
               f"{self.act if self.act else 'linear'})"


class Identity(HybridBlock):
    """Return the input unchanged.

    >>> import sparsenet as mx
    >>> mx.gluon.contrib.nn.Identity()(mx.nd.ones((1,))).asnumpy()
    array([1.], dtype=float32)
    """

    def hybrid_forward(self, F, x):
        return x

"""``contrib.SparseEmbedding``: MXNet's embedding with a row_sparse weight and gradient.

The lookup is ``Embedding``'s (same kernels, same parameters); what differs is
the gradient: always row_sparse in MXNet's symbolic executor (see
:mod:`sparsenet.symbol.grad_stype`), whatever ``sparse_grad`` says. Eagerly,
the gradient lands in the weight's buffer, as for every operator: a row_sparse
buffer (``attach_grad(stype='row_sparse')``) holds only the looked-up rows.

>>> import sparsenet as mx
>>> w = mx.nd.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]).tostype('row_sparse')
>>> mx.nd.contrib.SparseEmbedding(mx.nd.array([2, 0]), w, input_dim=3, output_dim=2).asnumpy()
array([[4., 5.],
       [0., 1.]], dtype=float32)
"""
import torch.nn.functional as F

from .nn import _checked_ids, _embedding_dense_weight, _embedding_dtypes, \
    _embedding_input_shapes, _embedding_rsp_weight
from .registry import DEFAULT, ROW_SPARSE, defop, dtype_rule, input_shapes, rule

__all__ = ["SparseEmbedding"]


@defop(name="_contrib_SparseEmbedding")
def SparseEmbedding(data, weight, *, input_dim=0, output_dim=0, dtype="float32",  # noqa: N802
                    sparse_grad=False, deterministic=False):
    """Look up rows of ``weight`` (``input_dim x output_dim``) at the integer ids ``data``.

    MXNet's ``contrib.SparseEmbedding`` (deprecated there in favour of
    ``Embedding(sparse_grad=True)``): the weight is usually row_sparse and its
    gradient row_sparse. For an input of shape ``(d1, ..., dK)`` the output has
    shape ``(d1, ..., dK, output_dim)``; ids must lie in ``[0, input_dim)``.

    Parameters
    ----------
    data : NDArray
        Integer ids (any dtype holding integers).
    weight : NDArray or RowSparseNDArray
        The embedding matrix; rows a row_sparse weight does not store read as zeros.
    input_dim, output_dim : int
        Vocabulary size and embedding width.
    dtype : str
        Data type of the weight (kept for MXNet compatibility).
    sparse_grad : bool
        Accepted for compatibility; the gradient is row_sparse regardless.
        (MXNet 1.9.1's ``SparseEmbedding`` refuses this parameter; sparsenet accepts it.)
    deterministic : bool
        MXNet's switch for a deterministic order of gradient accumulation. The
        backward here always accumulates in one fixed order (repeated ids are
        summed by a sort-based coalesce), so both values give the same, repeatable
        gradient.

    >>> import sparsenet as mx
    >>> w = mx.nd.array([[0.0, 1.0], [2.0, 3.0]])
    >>> mx.nd.contrib.SparseEmbedding(mx.nd.array([[1, 1]]), w, input_dim=2,
    ...                               output_dim=2).shape
    (1, 2, 2)
    """
    ids = _checked_ids(data, weight.shape[0])
    return F.embedding(ids, weight, sparse=True)


@rule(SparseEmbedding, DEFAULT, DEFAULT, out=DEFAULT)
def _sparse_embedding_dense_weight(data, weight, *, deterministic=False, **params):
    return _embedding_dense_weight(data, weight, **params)


@rule(SparseEmbedding, DEFAULT, ROW_SPARSE, out=DEFAULT)
def _sparse_embedding_rsp_weight(data, weight, *, deterministic=False, **params):
    return _embedding_rsp_weight(data, weight, **params)
input_shapes(SparseEmbedding)(_embedding_input_shapes)
dtype_rule(SparseEmbedding)(_embedding_dtypes)

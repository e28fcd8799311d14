"""Torch layers over sparse input: :class:`SparseLinear` (CSR/COO input, row-sparse weight grad).

>>> import torch
>>> from sparsenet.torch.nn import SparseLinear
>>> layer = SparseLinear(4, 2)
>>> x = torch.tensor([[0.0, 1.0, 0.0, 0.0]]).to_sparse_csr()
>>> layer(x).sum().backward()
>>> layer.weight.grad.is_sparse, layer.weight.grad.coalesce().indices().tolist()
(True, [[1]])
"""
import math

import torch

from ..base import InvalidArgumentError
from ..ndarray.creation import from_torch
from ..ndarray.ndarray import NDArray
from ..ops.dot import dot

__all__ = ["SparseLinear", "rows_read"]


def _as_csr(x):
    if x.layout == torch.sparse_csr:
        return x
    if x.layout == torch.sparse_coo:
        if x.sparse_dim() != 2 or x.dim() != 2:
            raise InvalidArgumentError(f"SparseLinear expects a 2-D sparse input, got a COO "
                                       f"tensor of shape {tuple(x.shape)} with sparse_dim="
                                       f"{x.sparse_dim()}")
        return x.coalesce().to_sparse_csr()
    raise InvalidArgumentError(f"SparseLinear expects a torch sparse CSR or COO input "
                               f"(use nn.Linear on dense input), got layout {x.layout}")


class _SparseLinearFn(torch.autograd.Function):
    """``y = x @ weight (+ bias)`` with ``x`` CSR; d(weight) is sparse COO over x's columns."""

    @staticmethod
    def forward(ctx, values, crow, col, shape, weight):
        x = from_torch(torch.sparse_csr_tensor(crow, col, values, shape,
                                                check_invariants=False))
        ctx.save_for_backward(values, crow, col)
        ctx.shape = shape
        return dot(x, NDArray(weight)).to_torch()

    @staticmethod
    def backward(ctx, dy):
        values, crow, col = ctx.saved_tensors
        x = from_torch(torch.sparse_csr_tensor(crow, col, values, ctx.shape,
                                                check_invariants=False))
        grad = None
        if ctx.needs_input_grad[4]:  # dot(x^T, dy) is row_sparse: only x's columns
            grad = dot(x, NDArray(dy.contiguous()), transpose_a=True).to_torch()
        return None, None, None, None, grad


class SparseLinear(torch.nn.Module):
    """A linear layer on sparse CSR (or COO) input whose weight gradient is row-sparse.

    ``y = x @ weight + bias`` with ``weight`` of shape ``(in_features, out_features)``
    (the transpose of ``nn.Linear``'s, so that a feature is a row): the gradient of
    ``weight`` is a sparse COO tensor holding only the rows of the features present in
    the batch, ready for :mod:`sparsenet.torch.optim`. The input is never densified
    (sparsenet's CSR ``dot`` kernels do the products). No gradient flows to the input.

    Parameters
    ----------
    in_features, out_features : int
    bias : bool, default True

    Examples
    --------
    >>> import torch
    >>> layer = SparseLinear(3, 1, bias=False)
    >>> _ = torch.nn.init.ones_(layer.weight)
    >>> layer(torch.tensor([[1.0, 0.0, 2.0]]).to_sparse_csr())
    tensor([[3.]], grad_fn=<_SparseLinearFnBackward>)
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        kw = {"device": device, "dtype": dtype}
        self.weight = torch.nn.Parameter(torch.empty(in_features, out_features, **kw))
        self.bias = torch.nn.Parameter(torch.empty(out_features, **kw)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        """``nn.Linear``'s initialisation (uniform in ``±1/sqrt(in_features)``)."""
        bound = 1.0 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
        torch.nn.init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            torch.nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        x = _as_csr(x)
        if x.shape[1] != self.in_features:
            raise InvalidArgumentError(f"SparseLinear: input has {x.shape[1]} features, "
                                       f"expected in_features={self.in_features}")
        y = _SparseLinearFn.apply(x.values(), x.crow_indices().to(torch.int64),
                                  x.col_indices().to(torch.int64), tuple(x.shape), self.weight)
        return y if self.bias is None else y + self.bias

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


def rows_read(module, x):
    """The weight rows ``module``'s forward reads from input ``x`` (NotImplemented for
    layers that do not read rows; with ``x=None``, only whether the layer does).

    >>> import torch
    >>> rows_read(torch.nn.Embedding(5, 2), torch.tensor([[4, 1]])).tolist()
    [[4, 1]]
    >>> rows_read(torch.nn.ReLU(), None)
    NotImplemented
    """
    if isinstance(module, (torch.nn.Embedding, torch.nn.EmbeddingBag)):
        return x
    if isinstance(module, SparseLinear):
        if x is None:
            return None
        if x.layout == torch.sparse_csr:
            return x.col_indices()
        if x.layout == torch.sparse_coo:
            return x.coalesce().indices()[1]
        return None
    return NotImplemented

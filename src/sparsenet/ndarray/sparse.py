"""The ``mx.nd.sparse`` namespace: sparse containers, creation and the operators with sparse rules.

>>> import sparsenet as mx
>>> a = mx.nd.sparse.zeros('csr', (2, 3))
>>> isinstance(a, mx.nd.sparse.CSRNDArray)
True
"""
from ..base import (_STORAGE_TYPE_CSR, _STORAGE_TYPE_DEFAULT,  # noqa: F401 - MXNet names
                    _STORAGE_TYPE_ID_TO_STR, _STORAGE_TYPE_ROW_SPARSE,
                    _STORAGE_TYPE_STR_TO_ID, _STORAGE_TYPE_UNDEFINED)
from .base_sparse import BaseSparseNDArray
from .csr import CSRNDArray
from .row_sparse import RowSparseNDArray
from .creation import (csr_matrix, row_sparse_array, sparse_zeros as zeros,
                       sparse_empty as empty, sparse_array as array, from_scipy)
from ..ops.cast import cast_storage
from ..ops.unary import (abs, sign, round, rint, ceil, floor, trunc, fix, square, sqrt, cbrt,
                         expm1, log1p, sin, sinh, tan, tanh, arcsin, arcsinh, arctan, arctanh,
                         degrees, radians, relu, negative, erf, erfinv, stop_gradient, BlockGrad,
                         clip, exp, log, log10, log2, sigmoid, cos, cosh, arccos, arccosh, rsqrt,
                         reciprocal, gamma, gammaln, zeros_like, ones_like, cast)
from ..ops.binary import (elemwise_add, elemwise_sub, elemwise_mul, elemwise_div, broadcast_add,
                          broadcast_plus, broadcast_sub, broadcast_minus, broadcast_mul,
                          broadcast_div, add_n, ElementWiseSum, where)
from ..ops.arithmetic import add, subtract, multiply, divide
from ..ops.reduce import sum, mean, norm, square_sum
from ..ops.dot import dot
from ..ops.indexing import slice, slice_axis, take, retain, concat
from ..ops.nn import Embedding, FullyConnected
from ..ops.loss import (LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput,
                        make_loss)
from ..ops.update_rules import (sgd_update, sgd_mom_update, nag_mom_update, adam_update,
                                adagrad_update, ftrl_update, group_adagrad_update)

__all__ = [
    "BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "csr_matrix", "row_sparse_array",
    "zeros", "empty", "array", "from_scipy", "cast_storage",
    "abs", "sign", "round", "rint", "ceil", "floor", "trunc", "fix", "square", "sqrt", "cbrt",
    "expm1", "log1p", "sin", "sinh", "tan", "tanh", "arcsin", "arcsinh", "arctan", "arctanh",
    "degrees", "radians", "relu", "negative", "erf", "erfinv", "stop_gradient", "BlockGrad",
    "clip", "exp", "log", "log10", "log2", "sigmoid", "cos", "cosh", "arccos", "arccosh",
    "rsqrt", "reciprocal", "gamma", "gammaln", "zeros_like", "ones_like", "cast",
    "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "broadcast_add",
    "broadcast_plus", "broadcast_sub", "broadcast_minus", "broadcast_mul", "broadcast_div",
    "add_n", "ElementWiseSum", "where", "add", "subtract", "multiply", "divide",
    "sum", "mean", "norm", "square_sum", "dot", "slice", "slice_axis", "take", "retain",
    "concat", "Embedding", "FullyConnected", "LinearRegressionOutput",
    "LogisticRegressionOutput", "MAERegressionOutput", "make_loss", "sgd_update",
    "sgd_mom_update", "nag_mom_update", "adam_update", "adagrad_update", "ftrl_update",
    "group_adagrad_update",
]

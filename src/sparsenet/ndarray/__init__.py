"""The ``mx.nd`` namespace: arrays of every storage type and every eager operator.

Containers live in this package (``ndarray.py``, ``csr.py``, ``row_sparse.py``);
the math lives in :mod:`sparsenet.ops` and is re-exported here by name.

>>> import sparsenet as mx
>>> mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((3, 1))).asnumpy()
array([[3.],
       [3.]], dtype=float32)
"""
from .ndarray import NDArray
from .base_sparse import BaseSparseNDArray
from .csr import CSRNDArray
from .row_sparse import RowSparseNDArray
from .stype import DEFAULT, CSR, ROW_SPARSE
from .creation import (array, zeros, ones, full, empty, arange, linspace, eye, from_numpy,
                       from_torch, from_dlpack)
from .serialization import save, load, save_to_bytes, load_from_bytes
from . import sparse, contrib
from .ndarray import waitall
from ..ops.cast import cast_storage
from ..ops.unary import (abs, sign, round, rint, ceil, floor, trunc, fix, square, sqrt, cbrt,
                         expm1, log1p, sin, sinh, tan, tanh, arcsin, arcsinh, arctan, arctanh,
                         degrees, radians, relu, negative, erf, erfinv, stop_gradient, BlockGrad,
                         copy, identity, cast, Cast, clip, exp, log, log10, log2, sigmoid, cos,
                         cosh, arccos, arccosh, rsqrt, rcbrt, reciprocal, gamma, gammaln,
                         softsign, logical_not, isnan, isinf, isfinite, zeros_like, ones_like)
from ..ops.softmax import softmax, log_softmax, softmin
from ..ops.scalar import (plus_scalar, minus_scalar, rminus_scalar, mul_scalar, div_scalar,
                          rdiv_scalar, mod_scalar, rmod_scalar, power_scalar, rpower_scalar,
                          maximum_scalar, minimum_scalar, equal_scalar, not_equal_scalar,
                          greater_scalar, greater_equal_scalar, lesser_scalar,
                          lesser_equal_scalar)
from ..ops.binary import (elemwise_add, elemwise_sub, elemwise_mul, elemwise_div, broadcast_add,
                          broadcast_plus, broadcast_sub, broadcast_minus, broadcast_mul,
                          broadcast_div, broadcast_mod, broadcast_power, broadcast_maximum,
                          broadcast_minimum, broadcast_equal, broadcast_not_equal,
                          broadcast_greater, broadcast_greater_equal, broadcast_lesser,
                          broadcast_lesser_equal, broadcast_logical_and, broadcast_logical_or,
                          broadcast_logical_xor, broadcast_hypot, add_n, ElementWiseSum, where)
from ..ops.arithmetic import (add, subtract, multiply, divide, modulo, power, maximum, minimum,
                              equal, not_equal, greater, greater_equal, lesser, lesser_equal,
                              logical_and, logical_or, logical_xor, hypot)
from ..ops.shape import (reshape, Reshape, transpose, expand_dims, squeeze, swapaxes, SwapAxis,
                         broadcast_to, broadcast_axis, broadcast_axes, tile, repeat, flatten,
                         Flatten, flip, reverse, broadcast_like)
from ..ops.layout import (diag, depth_to_space, space_to_depth, split_v2, shape_array,
                          size_array)
from ..ops.reset import reset_arrays
from ..ops.reduce import (sum, sum_axis, mean, prod, nansum, nanprod, max, max_axis, min,
                          min_axis, norm, square_sum, argmax, argmin, argmax_channel, topk, sort,
                          argsort)
from ..ops.dot import dot, batch_dot
from ..ops.indexing import (slice, crop, slice_axis, slice_like, take, retain, concat, Concat,
                            stack, split, SliceChannel, one_hot, pick, gather_nd)
from ..ops.nn import FullyConnected, Embedding, Activation, Dropout, LeakyReLU
from ..ops.rnn import RNN
from ..ops.sequence import SequenceMask, SequenceLast, SequenceReverse
from ..ops.norm import BatchNorm, LayerNorm, InstanceNorm, GroupNorm
from ..ops.conv import Convolution, Deconvolution
from ..ops.pooling import Pooling, Pad
from ..ops.loss import (LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput,
                        SoftmaxOutput, Softmax, MakeLoss, make_loss)
from ..ops.update_rules import (sgd_update, sgd_mom_update, mp_sgd_update, mp_sgd_mom_update,
                                nag_mom_update, mp_nag_mom_update, signsgd_update, signum_update,
                                sgld_update, dcasgd_update, dcasgd_mom_update, adam_update,
                                adamw_update, adagrad_update, group_adagrad_update,
                                adadelta_update, adamax_update, nadam_update, rmsprop_update,
                                rmspropalex_update, ftrl_update, ftml_update, lamb_update_phase1,
                                lamb_update_phase2)
from ..ops.loss import (l2_loss, l1_loss, sigmoid_bce_loss, softmax_ce_loss, logistic_loss,
                        hinge_loss, squared_hinge_loss, huber_loss, kldiv_loss)
from ..operator.custom import Custom
from .. import random
from ..ops.sampling import shuffle
from ..random_ops import (random_uniform, random_normal, random_gamma, random_exponential,
                          random_poisson, random_negative_binomial,
                          random_generalized_negative_binomial, random_randint, sample_uniform,
                          sample_normal, sample_gamma, sample_exponential, sample_poisson,
                          sample_negative_binomial, sample_generalized_negative_binomial,
                          sample_multinomial, uniform, normal)
from . import _internal

_square_sum = square_sum
pad = Pad

__all__ = [
    "NDArray", "BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "sparse", "contrib",
    "random", "waitall", "_internal",
    "array", "zeros", "ones", "full", "empty", "arange", "linspace", "eye", "from_numpy",
    "from_torch", "from_dlpack", "save", "load", "save_to_bytes", "load_from_bytes",
    "cast_storage",
    "abs", "sign", "round", "rint", "ceil", "floor", "trunc", "fix", "square", "sqrt", "cbrt",
    "expm1", "log1p", "sin", "sinh", "tan", "tanh", "arcsin", "arcsinh", "arctan", "arctanh",
    "degrees", "radians", "relu", "negative", "erf", "erfinv", "stop_gradient", "BlockGrad",
    "copy", "identity", "cast", "Cast", "clip", "exp", "log", "log10", "log2", "sigmoid", "cos",
    "cosh", "arccos", "arccosh", "rsqrt", "rcbrt", "reciprocal", "gamma", "gammaln", "softsign",
    "softmax", "log_softmax", "logical_not", "isnan", "isinf", "isfinite", "zeros_like",
    "ones_like",
    "plus_scalar", "minus_scalar", "rminus_scalar", "mul_scalar", "div_scalar", "rdiv_scalar",
    "mod_scalar", "rmod_scalar", "power_scalar", "rpower_scalar", "maximum_scalar",
    "minimum_scalar", "equal_scalar", "not_equal_scalar", "greater_scalar",
    "greater_equal_scalar", "lesser_scalar", "lesser_equal_scalar",
    "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "broadcast_add",
    "broadcast_plus", "broadcast_sub", "broadcast_minus", "broadcast_mul", "broadcast_div",
    "broadcast_mod", "broadcast_power", "broadcast_maximum", "broadcast_minimum",
    "broadcast_equal", "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
    "broadcast_lesser", "broadcast_lesser_equal", "broadcast_logical_and",
    "broadcast_logical_or", "broadcast_logical_xor", "broadcast_hypot", "add_n",
    "ElementWiseSum", "where", "add", "subtract", "multiply", "divide", "modulo", "power",
    "maximum", "minimum", "equal", "not_equal", "greater", "greater_equal", "lesser",
    "lesser_equal", "logical_and", "logical_or", "logical_xor", "hypot",
    "reshape", "Reshape", "transpose", "expand_dims", "squeeze", "swapaxes", "SwapAxis",
    "broadcast_to", "broadcast_axis", "broadcast_axes", "tile", "repeat", "flatten", "Flatten",
    "flip", "reverse",
    "sum", "sum_axis", "mean", "prod", "nansum", "nanprod", "max", "max_axis", "min", "min_axis",
    "norm", "square_sum", "argmax", "argmin", "argmax_channel", "topk", "sort", "argsort",
    "dot", "batch_dot", "slice", "crop", "slice_axis", "slice_like", "take", "retain", "concat",
    "Concat", "stack", "split", "SliceChannel", "one_hot", "pick", "gather_nd",
    "FullyConnected", "Embedding", "Activation", "Dropout", "LeakyReLU", "RNN",
    "SequenceMask", "SequenceLast", "SequenceReverse",
    "BatchNorm", "LayerNorm", "InstanceNorm", "GroupNorm", "Convolution", "Deconvolution",
    "Pooling", "Pad", "pad",
    "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput", "SoftmaxOutput",
    "Softmax", "MakeLoss", "make_loss",
    "sgd_update", "sgd_mom_update", "mp_sgd_update", "mp_sgd_mom_update", "nag_mom_update",
    "mp_nag_mom_update", "signsgd_update", "signum_update", "sgld_update", "dcasgd_update",
    "dcasgd_mom_update", "adam_update", "adamw_update", "adagrad_update",
    "group_adagrad_update", "adadelta_update", "adamax_update", "nadam_update", "rmsprop_update",
    "rmspropalex_update", "ftrl_update", "ftml_update", "lamb_update_phase1",
    "lamb_update_phase2",
    "l2_loss", "l1_loss", "sigmoid_bce_loss", "softmax_ce_loss", "logistic_loss", "hinge_loss",
    "squared_hinge_loss", "huber_loss", "kldiv_loss",
    "random_uniform", "random_normal", "random_gamma", "random_exponential", "random_poisson",
    "random_negative_binomial", "random_generalized_negative_binomial", "random_randint",
    "sample_uniform", "sample_normal", "sample_gamma", "sample_exponential", "sample_poisson",
    "sample_negative_binomial", "sample_generalized_negative_binomial", "sample_multinomial",
    "uniform", "normal", "shuffle", "softmin", "broadcast_like", "diag", "depth_to_space",
    "space_to_depth", "split_v2", "shape_array", "size_array", "reset_arrays", "Custom",
]

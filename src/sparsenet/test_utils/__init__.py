"""``mx.test_utils``: MXNet 1.9.1's testing helpers, for arrays of every storage type.

Random data (:func:`rand_ndarray`, :func:`rand_sparse_ndarray`, ...), tolerant
comparisons with MXNet's per-dtype tolerances and failure reports
(:func:`assert_almost_equal`, ...), symbolic checks (:func:`check_symbolic_forward`,
:func:`check_symbolic_backward`, :func:`check_numeric_gradient`,
:func:`check_consistency`), devices, environment variables, statistics of
random generators and test-data downloads.

``from sparsenet.test_utils import *`` gives the names MXNet's gives,
including the modules its test files use unqualified (``mx``, ``np``, ``rnd``,
``os``, ...), with ``mx`` being sparsenet.

>>> import numpy as np, sparsenet as mx
>>> np.random.seed(0)
>>> a = mx.test_utils.rand_ndarray((100, 50), stype='csr', density=0.1)
>>> a.stype, a.nnz
('csr', 500)
>>> mx.test_utils.assert_almost_equal(a, a.tostype('default'))
"""
import bz2
import errno
import gzip
import json
import logging
import numbers
import os
import platform
import struct
import sys
import time
import traceback
import zipfile
from collections import OrderedDict
from contextlib import contextmanager

import numpy as np
import numpy.random as rnd
import numpy.testing as npt

from ..context import Context, current_context
from ..ndarray.creation import array
from ..runtime import Features
from ..symbol.symbol import Symbol
from ..util import use_np
from .compare import (almost_equal, almost_equal_ignore_nan, assert_allclose,
                      assert_almost_equal, assert_almost_equal_ignore_nan,
                      assert_almost_equal_with_err, assert_exception, checkShapes, locationError,
                      same)
from .consistency import check_consistency, check_speed
from .datasets import (DataFileError, download, download_model, get_bz2_data, get_cifar10,
                       get_im2rec_path, get_mnist, get_mnist_iterator, get_mnist_pkl,
                       get_mnist_ubyte, get_zip_data)
from .devices import (default_context, get_cuda_compute_capability, has_tvm_ops,
                      is_aarch64_run, is_cd_run, is_op_runnable, list_gpus, set_default_context)
from .dummy_iter import DummyIter
from .environment import discard_stderr, environment, getenv, retry, setenv
from .gluon_check import check_gluon_hybridize_consistency
from .identity import same_array, same_symbol_structure
from .matrices import (collapse_sum_like, create_2d_tensor, create_vector, get_identity_mat,
                       get_identity_mat_batch, new_matrix_with_real_eigvals_2d,
                       new_matrix_with_real_eigvals_nd, new_orthonormal_matrix_2d,
                       new_sym_matrix_with_real_eigvals_2d, new_sym_matrix_with_real_eigvals_nd,
                       np_reduce)
from .numeric_gradient import check_numeric_gradient, numeric_grad
from .optimizer_check import compare_ndarray_tuple, compare_optimizer
from .random_data import (assign_each, assign_each2, create_sparse_array, create_sparse_array_zd,
                          rand_coord_2d, rand_ndarray, rand_shape_2d, rand_shape_3d,
                          rand_shape_nd, rand_sparse_ndarray, random_arrays, random_sample,
                          random_uniform_arrays, shuffle_csr_column_indices)
from .statistics import (chi_square_check, gen_buckets_probs_with_ppf, mean_check, var_check,
                         verify_generator)
from .symbolic import check_symbolic_backward, check_symbolic_forward, simple_forward
from .tolerances import (default_atols, default_dtype, default_numeric_eps, default_rtols,
                         effective_dtype, get_atol, get_etol, get_rtol, get_tolerance, get_tols)

_STORAGE_TYPE_STR_TO_ID = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}


def __getattr__(name):
    """``ss`` (``scipy.stats``) and ``mx`` (the ``sparsenet`` package), MXNet's names, are
    looked up on first use: scipy.stats would add most of a second to ``import sparsenet``,
    and the ``sparsenet`` package imports this module."""
    if name == "ss":
        import scipy.stats  # on first use: it takes most of a second to import
        return scipy.stats
    if name == "mx":
        import sparsenet  # the package imports this module: looked up after it has loaded
        return sparsenet
    # builtin: module __getattr__ must raise AttributeError (hasattr, import machinery)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# MXNet's module has no __all__: a star import gives every public name, the modules it
# imports included. These are those names (minus np_symbol and requests, which belong to
# MXNet's NumPy interface and to an optional package; use_np is mx.util's, which refuses
# NumPy semantics when the decorated function is called).
__all__ = [
    # modules and objects MXNet's test_utils imports
    "bz2", "errno", "gzip", "json", "logging", "numbers", "os", "platform", "struct", "sys",
    "time", "traceback", "zipfile", "OrderedDict", "contextmanager", "np", "rnd", "npt", "ss",
    "mx", "Context", "current_context", "array", "Symbol", "Features", "getenv", "setenv",
    "get_cuda_compute_capability", "use_np",
    # devices and environment
    "default_context", "set_default_context", "list_gpus", "is_cd_run", "is_aarch64_run",
    "has_tvm_ops", "is_op_runnable", "environment", "discard_stderr", "retry",
    # tolerances
    "default_dtype", "default_rtols", "default_atols", "default_numeric_eps", "effective_dtype",
    "get_tolerance", "get_tols", "get_rtol", "get_atol", "get_etol",
    # random data
    "random_arrays", "random_uniform_arrays", "random_sample", "assign_each", "assign_each2",
    "shuffle_csr_column_indices", "rand_sparse_ndarray", "rand_ndarray", "create_sparse_array",
    "create_sparse_array_zd", "rand_shape_2d", "rand_shape_3d", "rand_shape_nd",
    "rand_coord_2d",
    # matrices and reductions
    "create_2d_tensor", "create_vector", "get_identity_mat", "get_identity_mat_batch",
    "new_matrix_with_real_eigvals_2d", "new_matrix_with_real_eigvals_nd",
    "new_orthonormal_matrix_2d", "new_sym_matrix_with_real_eigvals_2d",
    "new_sym_matrix_with_real_eigvals_nd", "np_reduce", "collapse_sum_like",
    # comparisons
    "same", "checkShapes", "almost_equal", "almost_equal_ignore_nan", "locationError",
    "assert_almost_equal", "assert_allclose", "assert_almost_equal_with_err",
    "assert_almost_equal_ignore_nan", "assert_exception", "same_array",
    "same_symbol_structure", "compare_ndarray_tuple", "compare_optimizer",
    # symbols and blocks
    "simple_forward", "check_symbolic_forward", "check_symbolic_backward", "numeric_grad",
    "check_numeric_gradient", "check_speed", "check_consistency",
    "check_gluon_hybridize_consistency",
    # statistics of generators
    "gen_buckets_probs_with_ppf", "mean_check", "var_check", "chi_square_check",
    "verify_generator",
    # data
    "DummyIter", "DataFileError", "download", "download_model", "get_mnist", "get_mnist_pkl",
    "get_mnist_ubyte", "get_cifar10", "get_mnist_iterator", "get_zip_data", "get_bz2_data",
    "get_im2rec_path",
]

"""``from sparsenet.test_utils import *`` gives the names MXNet 1.9.1's star import gives."""
import numpy as np

import sparsenet

# measured with MXNet 1.9.1: sorted(dir()) after `from mxnet.test_utils import *`
MXNET_NAMES = [
    'Context', 'DummyIter', 'Features', 'OrderedDict', 'Symbol', 'almost_equal', 'array',
    'assert_allclose', 'assert_almost_equal', 'assert_almost_equal_ignore_nan',
    'assert_almost_equal_with_err', 'assert_exception', 'assign_each', 'assign_each2', 'bz2',
    'checkShapes', 'check_consistency', 'check_gluon_hybridize_consistency',
    'check_numeric_gradient', 'check_speed', 'check_symbolic_backward', 'check_symbolic_forward',
    'chi_square_check', 'collapse_sum_like', 'compare_ndarray_tuple', 'compare_optimizer',
    'contextmanager', 'create_2d_tensor', 'create_sparse_array', 'create_sparse_array_zd',
    'create_vector', 'current_context', 'default_atols', 'default_context', 'default_dtype',
    'default_numeric_eps', 'default_rtols', 'discard_stderr', 'download', 'download_model',
    'effective_dtype', 'environment', 'errno', 'gen_buckets_probs_with_ppf', 'get_atol',
    'get_bz2_data', 'get_cifar10', 'get_cuda_compute_capability', 'get_etol',
    'get_identity_mat', 'get_identity_mat_batch', 'get_im2rec_path', 'get_mnist',
    'get_mnist_iterator', 'get_mnist_pkl', 'get_mnist_ubyte', 'get_rtol', 'get_tolerance',
    'get_tols', 'get_zip_data', 'getenv', 'gzip', 'has_tvm_ops', 'is_aarch64_run', 'is_cd_run',
    'is_op_runnable', 'json', 'list_gpus', 'locationError', 'logging', 'mean_check', 'mx',
    'new_matrix_with_real_eigvals_2d', 'new_matrix_with_real_eigvals_nd',
    'new_orthonormal_matrix_2d', 'new_sym_matrix_with_real_eigvals_2d',
    'new_sym_matrix_with_real_eigvals_nd', 'np', 'np_reduce', 'np_symbol', 'npt', 'numbers',
    'numeric_grad', 'os', 'platform', 'rand_coord_2d', 'rand_ndarray', 'rand_shape_2d',
    'rand_shape_3d', 'rand_shape_nd', 'rand_sparse_ndarray', 'random_arrays', 'random_sample',
    'random_uniform_arrays', 'requests', 'retry', 'rnd', 'same', 'same_array',
    'same_symbol_structure', 'set_default_context', 'setenv', 'shuffle_csr_column_indices',
    'simple_forward', 'ss', 'struct', 'sys', 'time', 'traceback', 'use_np', 'var_check',
    'verify_generator', 'zipfile']
# MXNet's NumPy-interface helper np_symbol and the optional `requests` package are not
# provided (use_np is: mx.util's, which refuses NumPy semantics when called)
LEFT_OUT = {"np_symbol", "requests"}
ADDED = {"almost_equal_ignore_nan", "DataFileError"}


def test_star_import_matches_mxnet():
    namespace = {}
    exec("from sparsenet.test_utils import *", namespace)  # noqa: S102 - what users write
    names = sorted(k for k in namespace if not k.startswith("_"))
    assert names == sorted(set(MXNET_NAMES) - LEFT_OUT | ADDED)
    assert namespace["mx"] is sparsenet and namespace["np"] is np
    assert namespace["rnd"] is np.random and namespace["Context"] is sparsenet.Context
    assert namespace["array"] is sparsenet.nd.array
    assert namespace["Symbol"] is sparsenet.sym.Symbol
    import scipy.stats
    assert namespace["ss"] is scipy.stats  # imported on first use


def test_every_exported_function_is_documented():
    from sparsenet import test_utils
    for name in test_utils.__all__:
        obj = getattr(test_utils, name)
        if callable(obj) and getattr(obj, "__module__", "").startswith("sparsenet.test_utils"):
            assert obj.__doc__, name

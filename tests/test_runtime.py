"""``mx.runtime``: MXNet 1.9.1's feature names and API, answered for the torch build."""
import pytest
import torch

import sparsenet as mx

# measured with MXNet 1.9.1: the feature names, in order
MXNET_FEATURES = [
    "CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
    "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE", "F16C",
    "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK", "MKLDNN",
    "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE",
    "SIGNAL_HANDLER", "DEBUG", "TVM_OP"]


def test_names_order_and_singleton():
    f = mx.runtime.Features()
    # MXNet 1.9.1's names in its order, then sparsenet's native kernels
    ours = ["SPARSENET_NATIVE_ROW_KERNELS", "SPARSENET_NATIVE_LIBSVM"]
    assert list(f) == MXNET_FEATURES + ours and f is mx.runtime.Features()
    assert f is mx.test_utils.Features()
    assert [x.name for x in mx.runtime.feature_list()] == MXNET_FEATURES + ours
    assert repr(f).startswith("[") and "TVM_OP" in repr(f)


def test_values_follow_torch():
    f = mx.runtime.Features()
    assert f.is_enabled("cuda") == torch.backends.cuda.is_built()
    assert f.is_enabled("MKLDNN") == torch.backends.mkldnn.is_available()
    assert f.is_enabled("OPENMP") == torch.backends.openmp.is_available()
    assert f.is_enabled("DIST_KVSTORE") == torch.distributed.is_available()
    assert f.is_enabled("INT64_TENSOR_SIZE") and not f.is_enabled("TVM_OP")
    assert repr(f["TVM_OP"]) == "✖ TVM_OP" and repr(f["CXX14"]) == "✔ CXX14"


def test_unknown_feature_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="Feature 'FOO' is unknown, known features are"):
        mx.runtime.Features().is_enabled("foo")
    with pytest.raises(mx.MXNetError):
        mx.runtime.Features().is_enabled("foo")

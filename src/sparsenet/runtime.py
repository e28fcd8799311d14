"""``mx.runtime``: which features the installed build offers, under MXNet's feature names.

MXNet reports the options its native library was compiled with; sparsenet
reports what its torch build and this machine offer under the same names
(``CUDA``: torch was built with CUDA, ``MKLDNN``: oneDNN is available,
``DIST_KVSTORE``: ``torch.distributed`` is available, ...). Names of MXNet
components sparsenet does not have (``TENSORRT``, ``OPENCV``, ``TVM_OP``,
...) are reported disabled. sparsenet's own native kernels are listed after
MXNet's names: ``SPARSENET_NATIVE_ROW_KERNELS`` (fused lazy optimizer steps) and
``SPARSENET_NATIVE_LIBSVM`` (the LibSVM parser), enabled when built and not
switched off (``SPARSENET_NATIVE_ROWS=0``, ``SPARSENET_LIBSVM_KERNEL=python``).
A kernel that is not built is also reported once, at import, by a
:class:`~sparsenet.base.NativeKernelWarning`.

>>> import sparsenet as mx
>>> features = mx.runtime.Features()
>>> features.is_enabled('INT64_TENSOR_SIZE'), features.is_enabled('TVM_OP')
(True, False)
>>> features['TVM_OP']
✖ TVM_OP
"""
import collections
import platform
import re

import torch

from .base import SparsenetError

__all__ = ["Feature", "Features", "feature_list", "UnknownFeatureError"]


class UnknownFeatureError(SparsenetError, RuntimeError):
    """A feature name MXNet does not know was asked for."""


class Feature:
    """One named feature and whether it is enabled.

    >>> Feature('CUDA', False)
    ✖ CUDA
    """

    __slots__ = ("name", "enabled")

    def __init__(self, name, enabled):
        self.name = name
        self.enabled = bool(enabled)

    def __repr__(self):
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def _config_text():
    try:
        return torch.__config__.show()
    except Exception:  # a torch build without the config report
        return ""


def _blas(config):
    match = re.search(r"BLAS_INFO=(\w+)", config)
    return match.group(1).lower() if match else ""


def _cpu_capability():
    try:
        return torch.backends.cpu.get_cpu_capability().upper()
    except Exception:  # older torch
        return "DEFAULT"


def _detect():
    """``[(name, enabled)]`` in MXNet 1.9.1's order."""
    config = _config_text()
    blas = _blas(config)
    cuda = torch.backends.cuda.is_built()
    dist = torch.distributed.is_available()
    x86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
    vector = _cpu_capability()
    avx2 = x86 and vector in ("AVX2", "AVX512")
    return [
        ("CUDA", cuda),
        ("CUDNN", cuda and torch.backends.cudnn.is_available()),
        ("NCCL", dist and torch.distributed.is_nccl_available()),
        ("CUDA_RTC", cuda),
        ("TENSORRT", False),
        ("CPU_SSE", x86), ("CPU_SSE2", x86), ("CPU_SSE3", avx2), ("CPU_SSE4_1", avx2),
        ("CPU_SSE4_2", avx2), ("CPU_SSE4A", False), ("CPU_AVX", avx2), ("CPU_AVX2", avx2),
        ("OPENMP", torch.backends.openmp.is_available()),
        ("SSE", x86),
        ("F16C", avx2),
        ("JEMALLOC", False),
        ("BLAS_OPEN", blas.startswith("open")),
        ("BLAS_ATLAS", blas == "atlas"),
        ("BLAS_MKL", torch.backends.mkl.is_available()),
        ("BLAS_APPLE", blas in ("accelerate", "veclib")),
        ("LAPACK", "LAPACK is enabled" in config),
        ("MKLDNN", torch.backends.mkldnn.is_available()),
        ("OPENCV", False),
        ("CAFFE", False),
        ("PROFILER", False),
        ("DIST_KVSTORE", dist),
        ("CXX14", True),
        ("INT64_TENSOR_SIZE", True),
        ("SIGNAL_HANDLER", False),
        ("DEBUG", bool(getattr(torch.version, "debug", False))),
        ("TVM_OP", False),
    ] + _native_kernels()


def _native_kernels():
    """sparsenet's own native kernels: built, and not switched off."""
    from .io.libsvm import kernel as libsvm_kernel  # the io layer sits above: read on demand
    from .ops import row_kernels  # the ops layer sits above: read on demand
    return [("SPARSENET_NATIVE_ROW_KERNELS", row_kernels.available()),
            ("SPARSENET_NATIVE_LIBSVM", libsvm_kernel.BACKEND == "native")]


def feature_list():
    """The features as a list of :class:`Feature`, in MXNet's order.

    >>> feature_list()[0].name
    'CUDA'
    """
    return [Feature(name, enabled) for name, enabled in _detect()]


class Features(collections.OrderedDict):
    """Ordered dict ``{name: Feature}`` (one shared instance), with :meth:`is_enabled`.

    >>> 'CUDA' in Features()
    True
    """

    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            collections.OrderedDict.__init__(cls.instance, [(f.name, f) for f in feature_list()])
        return cls.instance

    def __init__(self):  # filled once, in __new__
        pass

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether the feature ``feature_name`` (case-insensitive) is enabled.

        Raises
        ------
        UnknownFeatureError
            For a name MXNet does not know (a RuntimeError, as in MXNet).
        """
        name = feature_name.upper()
        if name not in self:
            raise UnknownFeatureError(f"Feature '{name}' is unknown, known features are: "
                                       f"{list(self.keys())}")
        return self[name].enabled

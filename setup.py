"""Build the optional native kernels (metadata lives in pyproject.toml).

``pip install -e .`` compiles ``sparsenet.io.libsvm._native`` (the LibSVM parser)
and ``sparsenet.ops._row_kernels`` (fused lazy optimizer steps on CPU); inside a
source checkout ``python setup.py build_ext --inplace`` does the same. Without a
C compiler the build skips them (``optional=True``): sparsenet.io parses with its
pure-Python reference kernel and the optimizers use their torch index-op kernels,
with the same results and errors, only slower.
"""
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "sparsenet.io.libsvm._native",
            sources=["src/sparsenet/io/libsvm/_native.c",  # the parser, the method table
                     "src/sparsenet/io/libsvm/_native_write.c"],  # the writer
            depends=["src/sparsenet/io/libsvm/errors.h", "src/sparsenet/io/libsvm/numbers.h",
                     "src/sparsenet/io/libsvm/buffers.h", "src/sparsenet/io/libsvm/format.h",
                     "src/sparsenet/io/libsvm/feature_scan.h",
                     "src/sparsenet/io/libsvm/write.h"],
            include_dirs=["src/sparsenet/io/libsvm"],
            extra_compile_args=["-O3", "-std=gnu11", "-Wall", "-Wno-unused-parameter"],
            optional=True,
        ),
        Extension(
            "sparsenet.ops._row_kernels",
            sources=["src/sparsenet/ops/_row_kernels.c"],
            depends=["src/sparsenet/ops/group_ids.h", "src/sparsenet/ops/column_sums.h"],
            include_dirs=["src/sparsenet/ops"],
            # no fused multiply-adds: every build (and CPU) gives the same bits
            extra_compile_args=["-O3", "-std=gnu11", "-fno-math-errno", "-ffp-contract=off",
                                "-fopenmp", "-Wall", "-Wno-unused-parameter"],
            extra_link_args=["-fopenmp"],
            optional=True,
        ),
    ]
)

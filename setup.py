"""Build the optional native LibSVM parsing kernel (metadata lives in pyproject.toml).

``pip install -e .`` compiles ``sparsenet.io._libsvm_native``; inside a source
checkout ``python setup.py build_ext --inplace`` does the same. Without a C
compiler the build skips the extension (``optional=True``) and sparsenet.io
parses with its pure-Python reference kernel, which gives the same results and
errors, only slower.
"""
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "sparsenet.io._libsvm_native",
            sources=["src/sparsenet/io/_libsvm_native.c"],
            depends=["src/sparsenet/io/libsvm_numbers.h", "src/sparsenet/io/libsvm_buffers.h",
                     "src/sparsenet/io/libsvm_format.h"],
            include_dirs=["src/sparsenet/io"],
            extra_compile_args=["-O3", "-std=gnu11", "-Wall", "-Wno-unused-parameter"],
            optional=True,
        )
    ]
)

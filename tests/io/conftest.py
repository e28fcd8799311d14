"""Fixtures for the io tests: kernel backends and small file writers."""
import bz2
import gzip

import pytest

from sparsenet.io.libsvm import kernel as libsvm_kernel

BACKENDS = ["python"] + (["native"] if libsvm_kernel.native_available() else [])


@pytest.fixture(params=["native", "python"])
def backend(request, monkeypatch):
    """Run the test with each kernel (the native one is skipped when it is not built)."""
    if request.param == "native" and not libsvm_kernel.native_available():
        pytest.skip("the native LibSVM kernel is not built (pip install -e .)")
    monkeypatch.setattr(libsvm_kernel, "BACKEND", request.param)
    return request.param


@pytest.fixture
def write(tmp_path):
    """write(text, name='data.svm') -> path of a file holding ``text`` (str or bytes)."""

    def _write(text, name="data.svm"):
        p = tmp_path / name
        data = text.encode() if isinstance(text, str) else text
        if name.endswith(".gz"):
            with gzip.open(p, "wb") as f:
                f.write(data)
        elif name.endswith(".bz2"):
            with bz2.open(p, "wb") as f:
                f.write(data)
        else:
            p.write_bytes(data)
        return str(p)

    return _write

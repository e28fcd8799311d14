"""Test-suite setup shared by tests/ and the doctests in src/.

The suite runs with the storage-fallback policy 'error', so an accidental
fallback fails CI; tests that exercise fallbacks switch the policy locally.
"""
import os

os.environ.setdefault("SPARSENET_STORAGE_FALLBACK", "error")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed_everything():
    np.random.seed(0)
    torch.manual_seed(0)
    yield


# the scripts that measured MXNet 1.9.1's figures run under MXNet, not in the suite
collect_ignore_glob = ["benchmarks/*", "examples/*", "tools/*", "tests/data/*",
                       "tests/*/mxnet_1_9_1_*/*.py", "tests/*/*/mxnet_1_9_1_*/*.py"]


@pytest.fixture(params=["native", "torch"])
def row_kernel_path(request, monkeypatch):
    """Run the test twice: with sparsenet's native row kernels (skipped where they are not
    built) and with them switched off (the torch kernels); the value is the path's name."""
    from sparsenet.ops import row_kernels

    if request.param == "native" and not row_kernels.available():
        pytest.skip("native row kernels not built")
    monkeypatch.setattr(row_kernels, "ENABLED", request.param == "native")
    return request.param

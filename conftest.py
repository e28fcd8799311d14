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


collect_ignore_glob = ["benchmarks/*", "examples/*", "tools/*", "tests/data/*"]

"""Large CPU arrays are advised onto transparent huge pages before first use; values unchanged."""
import sys

import pytest
import torch

import sparsenet as mx
from sparsenet.ndarray import memory

HUGE = 2 << 20


def _record(monkeypatch, name):
    """Replace the madvise binding ``name`` of the module with one that records its calls."""
    calls = []
    monkeypatch.setattr(memory, name, lambda start, length, how: calls.append(
        (start, length, how)) or 0)
    return calls


@pytest.fixture
def advice(monkeypatch):
    return _record(monkeypatch, "_MADVISE")


def test_large_array_is_advised_on_its_aligned_part(advice):
    t = memory.empty((3 * 1024 * 1024 + 7,), dtype=torch.float32)  # about 12 MiB
    assert len(advice) == 1
    start, length, how = advice[0]
    ptr, nbytes = t.data_ptr(), t.numel() * 4
    assert how == 14  # MADV_HUGEPAGE
    assert start % HUGE == 0 and length % HUGE == 0 and length > 0
    assert ptr <= start and start + length <= ptr + nbytes
    assert start - ptr < HUGE and ptr + nbytes - (start + length) < HUGE


def test_small_array_is_not_advised(advice):
    memory.empty((1000, 1000), dtype=torch.float32)  # 4 MB: under 4 MiB
    mx.nd.zeros((10, 10))
    assert advice == []


def test_creators_go_through_the_advice(advice):
    shape = (1024, 2048)  # 8 MiB of float32
    z, o, f, e = (mx.nd.zeros(shape), mx.nd.ones(shape), mx.nd.full(shape, 2.5),
                  mx.nd.empty(shape))
    assert len(advice) == 4
    assert torch.equal(z._t, torch.zeros(shape))
    assert torch.equal(o._t, torch.ones(shape))
    assert torch.equal(f._t, torch.full(shape, 2.5))
    assert e.shape == shape
    i = mx.nd.zeros(shape, dtype="int64")
    assert i._t.dtype == torch.int64 and int(i._t.abs().sum()) == 0


def test_switched_off_by_environment(monkeypatch):
    monkeypatch.setenv("SPARSENET_HUGE_PAGES", "0")
    assert memory._madvise() is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise is Linux's")
def test_real_advice_is_harmless():
    t = memory.zeros((1024, 1024, 4))  # 16 MiB through the real madvise
    assert float(t.sum()) == 0.0
    t.fill_(1.0)
    assert float(t.sum()) == 1024 * 1024 * 4


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_arrays_are_not_advised(advice):
    t = memory.zeros((1024, 4096), device="cuda")
    assert advice == [] and t.is_cuda


@pytest.fixture
def populated(monkeypatch):
    return _record(monkeypatch, "_POPULATE")


def test_populate_maps_the_whole_pages_inside_the_range(populated):
    import numpy as np
    a = np.empty(1 << 20, dtype=np.int64)  # 8 MiB
    memory.populate(a, 1000, 300_000)
    assert len(populated) == 1
    start, length, how = populated[0]
    assert how == 23  # MADV_POPULATE_WRITE
    lo, hi = a.ctypes.data + 1000 * 8, a.ctypes.data + 300_000 * 8
    assert start % 4096 == 0 and length % 4096 == 0
    assert lo <= start < lo + 4096 and hi - 4096 < start + length <= hi


def test_populate_skips_small_ranges(populated):
    import numpy as np
    a = np.empty(1 << 20, dtype=np.int64)
    memory.populate(a, 0, memory.POPULATE_MIN_BYTES // 8 - 1)
    memory.populate(a, 10, 10)
    assert populated == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise is Linux's")
def test_real_populate_keeps_values():
    import numpy as np
    a = np.arange(1 << 21, dtype=np.int64)  # 16 MiB, written before the call
    b = np.empty(1 << 21, dtype=np.float32)
    memory.populate(a, 0, a.shape[0])
    memory.populate(b, 5, b.shape[0] - 5)
    b[:] = 2.0
    assert np.array_equal(a, np.arange(1 << 21)) and float(b.sum()) == 2.0 * (1 << 21)


def test_populate_is_independent_of_the_huge_page_switch(monkeypatch):
    monkeypatch.setenv("SPARSENET_HUGE_PAGES", "0")
    assert memory._madvise() is None
    if sys.platform.startswith("linux"):
        assert memory._libc_madvise() is not None

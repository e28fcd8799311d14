"""Growable: the whole-file result arrays, filled chunk by chunk (the pages of each new piece
mapped before it is written), equal NumPy's concatenation of the pieces."""
import numpy as np
from hypothesis import given, settings, strategies as st

from sparsenet.io.libsvm.rows import Growable


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 40_000), min_size=1, max_size=8), st.integers(1, 50_000),
       st.sampled_from([np.int64, np.float32]))
def test_appends_equal_concatenation(sizes, capacity, dtype):
    rng = np.random.default_rng(sum(sizes) + capacity)
    pieces = [rng.integers(-1000, 1000, n).astype(dtype) for n in sizes]
    g = Growable(dtype, capacity)
    for p in pieces:
        g.append(p)
    assert np.array_equal(g.tensor().numpy(), np.concatenate(pieces))


def test_shifted_appends_rebase_indptr_pieces():
    g = Growable(np.int64, 4)
    g.append(np.zeros(1, np.int64))
    total = 0
    expect = [0]
    for n in (100_000, 3, 70_000):  # pieces of row ends, each from 0
        ends = np.arange(1, n + 1, dtype=np.int64) * 2
        g.append_shifted(ends, total)
        expect.extend((ends + total).tolist())
        total += int(ends[-1])
    assert g.tensor().tolist() == expect

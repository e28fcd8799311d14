"""The grouping of integer ids (``sparsenet.ops.row_kernels``: ``sort_ids``, ``unique_ids``,
``group_ids`` and ``coalesce_rows``), native radix argsort and torch fallback, against NumPy.

The native path (``_row_kernels.group_ids``) must equal a stable comparison sort
(``np.argsort(kind='stable')``) and ``np.unique(return_inverse=True)`` for every size, bound
and input shape (sorted, reversed, repeated, one ascending run per CSR row); ids outside
``[0, bound)`` are reported by the native call without being sorted (the Python functions
then give torch's results); inputs it does not take (int32, non-contiguous, disabled) give
the same results through torch.
"""
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparsenet.ops import row_kernels

native = pytest.mark.skipif(not row_kernels.available(),
                            reason="native row kernels not built (or disabled)")

_SETTINGS = settings(max_examples=60, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def id_arrays(draw):
    """``(ids, bound)``: int64 ids in ``[0, bound)`` of one of several shapes."""
    n = draw(st.sampled_from([0, 1, 2, 3, 15, 16, 17, 100, 255, 256, 1000, 2000, 20000, 50000])
             if draw(st.booleans()) else st.integers(0, 3000))
    bound = draw(st.one_of(st.integers(1, 64), st.integers(1, 2 ** 20),
                           st.integers(1, 2 ** 40), st.just(2 ** 40)))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    shape = draw(st.sampled_from(["random", "sorted", "reversed", "repeated", "csr", "const"]))
    if shape == "csr":  # one ascending run of distinct ids per row, as a CSR batch's columns
        per = draw(st.integers(1, 30))
        rows = [np.sort(rng.choice(bound, size=min(per, bound), replace=False))
                for _ in range(-(-n // per))]
        ids = np.concatenate(rows)[:n] if rows else np.zeros(0, np.int64)
    else:
        ids = rng.integers(0, bound, n, dtype=np.int64)
        if shape == "sorted":
            ids = np.sort(ids)
        elif shape == "reversed":
            ids = np.sort(ids)[::-1].copy()
        elif shape == "repeated":
            ids = rng.choice(ids[: max(1, n // 50)], n) if n else ids
        elif shape == "const":
            ids = np.full(n, rng.integers(0, bound), dtype=np.int64)
    return np.ascontiguousarray(ids, dtype=np.int64), bound


def _expected(a):
    order = np.argsort(a, kind="stable")
    uniq, inverse = np.unique(a, return_inverse=True)
    s = a[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]]) if a.size else np.zeros(0, np.int64)
    return s, order, uniq, starts, inverse.reshape(-1)


def _check_all(a, bound):
    s, order, uniq, starts, inverse = _expected(a)
    t = torch.from_numpy(a)
    got_s, got_o = row_kernels.sort_ids(t, bound)
    np.testing.assert_array_equal(got_s.numpy(), s)
    np.testing.assert_array_equal(got_o.numpy(), order)
    assert got_o.dtype == torch.int64
    np.testing.assert_array_equal(row_kernels.unique_ids(t, bound).numpy(), uniq)
    u, inv = row_kernels.unique_ids(t, bound, return_inverse=True)
    np.testing.assert_array_equal(u.numpy(), uniq)
    np.testing.assert_array_equal(inv.numpy(), inverse)
    u, st_, o, inv = row_kernels.group_ids(t, bound, return_inverse=True)
    for got, want in ((u, uniq), (st_, starts), (o, order), (inv, inverse)):
        np.testing.assert_array_equal(got.numpy(), want)
        assert got.dtype == torch.int64
    u, st_, o = row_kernels.group_ids(t, bound)
    np.testing.assert_array_equal(st_.numpy(), starts)
    assert a.tolist() == t.tolist()  # the input is never written


@_SETTINGS
@given(id_arrays())
def test_grouping_matches_numpy(case):
    _check_all(*case)


@_SETTINGS
@given(id_arrays())
def test_torch_fallback_matches_numpy(case):
    """The path taken with SPARSENET_NATIVE_ROWS=0 (the module's switch off)."""
    a, bound = case
    s, order, uniq, starts, inverse = _expected(a)
    t = torch.from_numpy(a)
    got_s, got_o = row_kernels._sort_ids_torch(t)
    np.testing.assert_array_equal(got_s.numpy(), s)
    np.testing.assert_array_equal(got_o.numpy(), order)
    u, inv = row_kernels._unique_ids_torch(t, return_inverse=True)
    np.testing.assert_array_equal(u.numpy(), uniq)
    np.testing.assert_array_equal(inv.numpy(), inverse)
    u, st_, o, inv = row_kernels._group_ids_torch(t, return_inverse=True)
    for got, want in ((u, uniq), (st_, starts), (o, order), (inv, inverse)):
        np.testing.assert_array_equal(got.numpy(), want)


def test_switched_off_gives_the_same(monkeypatch):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 10 ** 6, 5000)
    monkeypatch.setattr(row_kernels, "ENABLED", False)
    assert row_kernels._native_group(torch.from_numpy(a), 10 ** 6, True, True, True) is None
    _check_all(a, 10 ** 6)


@native
@pytest.mark.parametrize("n", [20, 20000])
def test_native_path_is_taken(n):
    """A contiguous CPU int64 tensor at or above the crossover goes to the native kernel."""
    t = torch.from_numpy(np.random.default_rng(0).integers(0, 1000, n))
    assert row_kernels._native_group(t, 1000, True, True, True) is not None


@native
@pytest.mark.parametrize("bad, where", [(-1, 0), (10, 7), (2 ** 62, 19), (-(2 ** 63), 5)])
def test_out_of_range_ids_are_reported(bad, where):
    """The native call names the first id outside [0, bound) (-1 - position) and writes
    nothing; the Python functions then give torch's results for the same ids."""
    a = np.arange(20, dtype=np.int64) % 10
    a[where] = bad
    t = torch.from_numpy(a)
    sentinel = -12345
    outs = [torch.full((20,), sentinel, dtype=torch.int64) for _ in range(5)]
    m = row_kernels._native.group_ids(t.data_ptr(), 20, 10, *[o.data_ptr() for o in outs])
    assert m == -1 - where
    assert all(bool((o == sentinel).all()) for o in outs)
    assert row_kernels._native_group(t, 10, True, True, True) is None
    _check_all(a, 10)  # the torch path: same as numpy, negative ids included


@native
def test_bound_zero_and_bad_arguments():
    t = torch.arange(20)
    assert row_kernels._native.group_ids(t.data_ptr(), 20, 0, t.data_ptr(), t.data_ptr(),
                                         0, 0, 0) == -1
    with pytest.raises(ValueError, match="negative"):
        row_kernels._native.group_ids(t.data_ptr(), -1, 10, 0, 0, 0, 0, 0)
    with pytest.raises(ValueError, match="null"):
        row_kernels._native.group_ids(0, 5, 10, 0, 0, 0, 0, 0)
    _check_all(t.numpy(), 0)  # no id is below 0: everything goes to torch


@pytest.mark.parametrize("make", [
    lambda a: torch.from_numpy(a).to(torch.int32),            # int32: torch
    lambda a: torch.from_numpy(np.repeat(a, 2))[::2],         # not contiguous: torch
    lambda a: torch.from_numpy(a)[:10],                       # below the crossover
])
def test_inputs_the_kernel_does_not_take(make):
    a = np.random.default_rng(1).integers(0, 500, 3000)
    t = make(a)
    assert row_kernels._native_group(t, 500, True, True, True) is None
    ref = t.numpy().astype(np.int64)
    s, order, uniq, starts, inverse = _expected(ref)
    got_s, got_o = row_kernels.sort_ids(t, 500)
    np.testing.assert_array_equal(got_s.numpy(), s)
    np.testing.assert_array_equal(got_o.numpy(), order)
    u, inv = row_kernels.unique_ids(t, 500, return_inverse=True)
    np.testing.assert_array_equal(u.numpy(), uniq)
    np.testing.assert_array_equal(inv.numpy(), inverse)
    u, st_, o = row_kernels.group_ids(t, 500)
    np.testing.assert_array_equal(st_.numpy(), starts)
    np.testing.assert_array_equal(o.numpy(), order)


def test_large_keys_and_many_ids():
    """Keys plus positions wider than 64 bits: the kernel's unpacked path."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2 ** 62, 50000)
    a[::3] = a[1::3][: a[::3].size]  # repeats
    _check_all(a, 2 ** 62)
    _check_all(a, None)


# ---------------------------------------------------------------------- coalesce_rows
@native
@_SETTINGS
@given(id_arrays(), st.booleans())
def test_coalesce_rows_matches_numpy(case, in_place):
    """Sorted distinct ids and each one's rows summed in their input order (float64, so the
    order of the additions shows), radix sorted from 256 ids; ids that already increase
    strictly come back as they are."""
    a, bound = case
    if a.size == 0 or a.size > row_kernels._COALESCE_MAX:
        return
    vals = np.random.default_rng(a.size).standard_normal((a.size, 3))
    s, order, uniq, starts, inverse = _expected(a)
    want = np.zeros((uniq.size, 3))
    for i in order:  # stable order: repeats in their input order
        want[inverse[i]] += vals[i]
    v = torch.from_numpy(vals.copy())
    got = row_kernels.coalesce_rows(torch.from_numpy(a), v, in_place=in_place)
    assert got is not None
    np.testing.assert_array_equal(got[0].numpy(), uniq)
    np.testing.assert_array_equal(got[1].numpy(), want)
    if uniq.size == a.size and (a.size < 2 or bool((np.diff(a) > 0).all())):
        assert got[1] is v  # already coalesced: nothing copied


@native
def test_coalesce_rows_radix_past_the_old_limit():
    """More than the old 1,024-id limit of the native coalescing (torch's coalesce before)."""
    rng = np.random.default_rng(11)
    a = rng.integers(0, 5000, 20000)
    vals = rng.standard_normal((a.size, 4))
    got = row_kernels.coalesce_rows(torch.from_numpy(a), torch.from_numpy(vals))
    assert got is not None
    uniq, inverse = np.unique(a, return_inverse=True)
    want = np.zeros((uniq.size, 4))
    for i in np.argsort(a, kind="stable"):
        want[inverse[i]] += vals[i]
    np.testing.assert_array_equal(got[0].numpy(), uniq)
    np.testing.assert_array_equal(got[1].numpy(), want)

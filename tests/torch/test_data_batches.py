"""``LibSVMBatches``: whole batches cut from the parser's chunks, checked against
scikit-learn's ``load_svmlight_file`` of the same file (plain and gzip), shuffled (as
multisets), across DataLoader workers and ranks (each row exactly once), and through an
EmbeddingBag against a dense torch product."""
import gzip

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from hypothesis import HealthCheck, given, settings, strategies as st
from sklearn.datasets import load_svmlight_file
from torch.utils.data import DataLoader

from sparsenet.io import LibSVMFormatError
from sparsenet.torch.data import COLLATES, LibSVMBatches

ROWS, FEATURES, BS = 157, 30, 7
CHUNK = 256  # bytes: many chunks, so batches straddle chunk boundaries


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``{'plain': path, 'gz': path}`` of one file; row ``i`` has label ``i`` (rows are
    told apart by their label), 0 to 6 features, some rows empty."""
    rng = np.random.default_rng(7)
    lines = []
    for i in range(ROWS):
        k = int(rng.integers(0, 7))
        cols = np.sort(rng.choice(FEATURES, size=k, replace=False))
        vals = np.round(rng.normal(size=k), 4)
        lines.append(" ".join([str(i)] + [f"{c}:{v}" for c, v in zip(cols, vals)]))
    text = ("\n".join(lines) + "\n").encode()
    d = tmp_path_factory.mktemp("batches")
    (d / "d.svm").write_bytes(text)
    (d / "d.svm.gz").write_bytes(gzip.compress(text))
    return {"plain": str(d / "d.svm"), "gz": str(d / "d.svm.gz")}


def _reference(path, dtype=np.float32):
    X, y = load_svmlight_file(path, n_features=FEATURES, zero_based=True, dtype=dtype)
    return X.toarray(), y.astype(dtype)


def _dense(batch, collate):
    """A batch as (dense rows, labels) in NumPy (written out here, not by the code under
    test)."""
    parts, labels = batch
    labels = labels.numpy()
    out = np.zeros((labels.shape[0], FEATURES), dtype=labels.dtype)
    if collate == "csr":
        assert parts.layout == torch.sparse_csr
        assert parts.shape == (labels.shape[0], FEATURES)
        crow, col, val = parts.crow_indices(), parts.col_indices(), parts.values()
    elif collate == "csr_parts":
        crow, col, val = parts
    else:
        col, offsets, val = parts
        assert offsets.dtype == torch.int64 and offsets.shape == labels.shape
        crow = torch.cat([offsets, torch.tensor([col.numel()])])
    assert col.dtype == torch.int64 and crow.dtype == torch.int64
    crow, col, val = crow.numpy(), col.numpy(), val.numpy()
    for r in range(labels.shape[0]):
        for j in range(crow[r], crow[r + 1]):
            out[r, col[j]] += val[j]
    return out, labels


def _collect(batches, collate):
    dense, labels, sizes = [], [], []
    for b in batches:
        d, y = _dense(b, collate)
        dense.append(d)
        labels.append(y)
        sizes.append(y.shape[0])
    return np.concatenate(dense), np.concatenate(labels), sizes


@pytest.mark.parametrize("kind", ["plain", "gz"])
@pytest.mark.parametrize("collate", COLLATES)
def test_batches_equal_sklearn(files, kind, collate):
    X, y = _reference(files[kind])
    ds = LibSVMBatches(files[kind], FEATURES, BS, collate=collate, chunk_size=CHUNK,
                       rank=0, world_size=1)
    dense, labels, sizes = _collect(DataLoader(ds, batch_size=None), collate)
    assert sizes == [BS] * (ROWS // BS) + [ROWS % BS]  # the last short batch kept
    np.testing.assert_array_equal(labels, y)  # file order
    np.testing.assert_array_equal(dense, X)
    again, _, _ = _collect(ds, collate)  # a second epoch, iterated directly
    np.testing.assert_array_equal(again, X)


@pytest.mark.parametrize("batch_size", [1, 3, 64, ROWS, 1000])
def test_batch_sizes_and_default_chunks(files, batch_size):
    X, y = _reference(files["plain"])
    for chunk_size in (CHUNK, 4 << 20):
        ds = LibSVMBatches(files["plain"], FEATURES, batch_size, chunk_size=chunk_size,
                           rank=0, world_size=1)
        dense, labels, sizes = _collect(ds, "embedding_bag")
        full, rest = divmod(ROWS, batch_size)
        assert sizes == [batch_size] * full + ([rest] if rest else [])
        np.testing.assert_array_equal(dense, X)
        np.testing.assert_array_equal(labels, y)


@pytest.mark.parametrize("collate", ["embedding_bag", "csr"])
def test_drop_last(files, collate):
    X, y = _reference(files["plain"])
    ds = LibSVMBatches(files["plain"], FEATURES, BS, collate=collate, drop_last=True,
                       chunk_size=CHUNK, rank=0, world_size=1)
    dense, labels, sizes = _collect(ds, collate)
    keep = ROWS // BS * BS
    assert sizes == [BS] * (ROWS // BS)
    np.testing.assert_array_equal(dense, X[:keep])
    np.testing.assert_array_equal(labels, y[:keep])


def _by_label(dense, labels):
    """Rows sorted by their (unique) label: a multiset compared as a sorted list."""
    order = np.argsort(labels, kind="stable")
    return dense[order], labels[order]


@pytest.mark.parametrize("kind", ["plain", "gz"])
@pytest.mark.parametrize("collate", COLLATES)
def test_shuffle_is_a_permutation(files, kind, collate):
    X, y = _reference(files[kind])
    ds = LibSVMBatches(files[kind], FEATURES, BS, collate=collate, shuffle=True,
                       shuffle_chunks=3, seed=11, chunk_size=CHUNK, rank=0, world_size=1)
    dense, labels, sizes = _collect(ds, collate)
    assert sizes == [BS] * (ROWS // BS) + [ROWS % BS]
    assert not np.array_equal(labels, y)  # shuffled
    d, lab = _by_label(dense, labels)
    np.testing.assert_array_equal(lab, y)  # every row exactly once
    np.testing.assert_array_equal(d, X)  # with its own features
    # the same seed and epoch give the same order; another epoch another one
    _, same, _ = _collect(ds, collate)
    np.testing.assert_array_equal(same, labels)
    ds.set_epoch(1)
    _, other, _ = _collect(ds, collate)
    assert not np.array_equal(other, labels)
    np.testing.assert_array_equal(np.sort(other), y)


def test_shuffle_without_seed_uses_torch_generator(files):
    _, y = _reference(files["plain"])
    ds = LibSVMBatches(files["plain"], FEATURES, BS, shuffle=True, chunk_size=CHUNK,
                       rank=0, world_size=1)
    torch.manual_seed(0)
    _, a, _ = _collect(ds, "embedding_bag")
    _, b, _ = _collect(ds, "embedding_bag")
    torch.manual_seed(0)
    _, c, _ = _collect(ds, "embedding_bag")
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(np.sort(b), y)


@pytest.mark.parametrize("kind", ["plain", "gz"])
@pytest.mark.parametrize("shuffle", [False, True])
def test_workers_read_each_row_once(files, kind, shuffle):
    X, y = _reference(files[kind])
    ds = LibSVMBatches(files[kind], FEATURES, BS, collate="csr", shuffle=shuffle, seed=1,
                       chunk_size=CHUNK, rank=0, world_size=1)
    loader = DataLoader(ds, batch_size=None, num_workers=2)
    dense, labels, sizes = _collect(loader, "csr")
    assert all(0 < s <= BS for s in sizes)
    d, lab = _by_label(dense, labels)
    np.testing.assert_array_equal(lab, y)
    np.testing.assert_array_equal(d, X)


def test_ranks_and_workers_read_each_row_once(files):
    X, y = _reference(files["plain"])
    seen, rows = [], []
    for rank in range(3):
        ds = LibSVMBatches(files["plain"], FEATURES, BS, chunk_size=CHUNK, rank=rank,
                           world_size=3)
        dense, labels, _ = _collect(DataLoader(ds, batch_size=None, num_workers=2),
                                    "embedding_bag")
        assert labels.size  # every rank got rows
        seen.append(labels)
        rows.append(dense)
    d, lab = _by_label(np.concatenate(rows), np.concatenate(seen))
    np.testing.assert_array_equal(lab, y)
    np.testing.assert_array_equal(d, X)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_bag_forward_equals_dense(files, dtype):
    X, _ = _reference(files["gz"], np.dtype(dtype))
    tdt = getattr(torch, dtype)
    torch.manual_seed(0)
    bag = torch.nn.EmbeddingBag(FEATURES, 5, mode="sum", dtype=tdt)
    ds = LibSVMBatches(files["gz"], FEATURES, BS, dtype=dtype, shuffle=True, seed=2,
                       chunk_size=CHUNK, rank=0, world_size=1)
    n = 0
    for (ids, offsets, w), labels in ds:
        assert w.dtype == tdt and labels.dtype == tdt
        rows = labels.long().numpy()
        expect = torch.from_numpy(X[rows]) @ bag.weight
        torch.testing.assert_close(bag(ids, offsets, per_sample_weights=w), expect)
        n += rows.size
    assert n == ROWS


def test_csr_batch_matmul_equals_dense(files):
    X, _ = _reference(files["plain"])
    W = torch.randn(FEATURES, 3, generator=torch.Generator().manual_seed(0))
    for x, labels in LibSVMBatches(files["plain"], FEATURES, 16, collate="csr",
                                   chunk_size=CHUNK, rank=0, world_size=1):
        rows = labels.long().numpy()
        torch.testing.assert_close(x @ W, torch.from_numpy(X[rows]) @ W)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(counts=st.lists(st.integers(0, 5), min_size=1, max_size=60),
       batch_size=st.integers(1, 20), chunk_size=st.integers(16, 400),
       shuffle=st.booleans(), shuffle_chunks=st.integers(1, 4),
       collate=st.sampled_from(COLLATES), drop_last=st.booleans())
def test_property_any_cut_equals_sklearn(tmp_path_factory, counts, batch_size, chunk_size,
                                         shuffle, shuffle_chunks, collate, drop_last):
    """Any row lengths, batch size, chunk size and shuffle buffer: the batches hold the
    file's rows (in order, or as a multiset when shuffled), full but for the last one."""
    lines = [" ".join([str(i)] + [f"{3 * j + i % 3}:{j + 1}.5" for j in range(k)])
             for i, k in enumerate(counts)]
    path = tmp_path_factory.mktemp("prop") / "p.svm"
    path.write_text("\n".join(lines) + "\n")
    X, y = _reference(str(path))
    ds = LibSVMBatches(str(path), FEATURES, batch_size, collate=collate, shuffle=shuffle,
                       shuffle_chunks=shuffle_chunks, seed=5, drop_last=drop_last,
                       chunk_size=chunk_size, rank=0, world_size=1)
    batches = list(ds)
    full, rest = divmod(len(counts), batch_size)
    keep = full * batch_size if drop_last else len(counts)
    if not batches:
        assert keep == 0
        return
    dense, labels, sizes = _collect(batches, collate)
    assert sizes == [batch_size] * full + ([rest] if rest and not drop_last else [])
    if not shuffle:
        np.testing.assert_array_equal(labels, y[:keep])
        np.testing.assert_array_equal(dense, X[:keep])
    else:
        d, lab = _by_label(dense, labels)
        assert len(set(lab.tolist())) == keep  # no row twice
        np.testing.assert_array_equal(d, X[lab.astype(np.int64)])


def test_empty_and_comment_only_files(tmp_path):
    p = tmp_path / "e.svm"
    p.write_text("# nothing here\n\n")
    assert list(LibSVMBatches(str(p), 4, 2, rank=0, world_size=1)) == []
    p.write_text("")
    assert list(LibSVMBatches(str(p), 4, 2, collate="csr", rank=0, world_size=1)) == []


def test_bad_arguments(files):
    p = files["plain"]
    with pytest.raises(ValueError, match="batch_size must be a positive int, got 0"):
        LibSVMBatches(p, FEATURES, 0)
    with pytest.raises(TypeError, match="batch_size must be a positive int, got '8'"):
        LibSVMBatches(p, FEATURES, "8")
    with pytest.raises(ValueError, match=r"collate must be one of \('embedding_bag', 'csr', "
                                         r"'csr_parts'\), got 'coo'"):
        LibSVMBatches(p, FEATURES, 8, collate="coo")
    with pytest.raises(ValueError, match="num_features must be a positive integer, got None"):
        LibSVMBatches(p, None, 8)
    with pytest.raises(ValueError, match="shuffle_chunks must be a positive int, got 0"):
        LibSVMBatches(p, FEATURES, 8, shuffle_chunks=0)
    with pytest.raises(TypeError, match="seed must be an int or None"):
        LibSVMBatches(p, FEATURES, 8, seed=1.5)
    with pytest.raises(ValueError, match=r"rank must be in \[0, world_size=2\)"):
        LibSVMBatches(p, FEATURES, 8, rank=2, world_size=2)
    with pytest.raises(FileNotFoundError, match="no such file"):
        LibSVMBatches(p + ".missing", FEATURES, 8)


def test_bad_file_names_path_line_and_token(tmp_path):
    p = tmp_path / "bad.svm"
    p.write_text("1 0:1\n0 1:x\n")
    with pytest.raises(LibSVMFormatError,
                       match=r"bad\.svm:2:3: invalid feature value 'x' in token '1:x'"):
        list(LibSVMBatches(str(p), 4, 1, rank=0, world_size=1))
    p.write_text("1 0:1\n0 9:1\n")  # index past num_features
    with pytest.raises(LibSVMFormatError, match=r"bad\.svm:2:"):
        list(LibSVMBatches(str(p), 4, 8, rank=0, world_size=1))


def test_batches_are_independent_of_later_edits(files):
    """Batches are views of the parser's chunk arrays: editing one leaves the others."""
    X, _ = _reference(files["plain"])
    batches = list(LibSVMBatches(files["plain"], FEATURES, BS, chunk_size=1 << 20,
                                 rank=0, world_size=1))
    (ids, off, w), _ = batches[0]
    w.zero_()
    ids.zero_()
    dense, _, _ = _collect(batches[1:], "embedding_bag")
    np.testing.assert_array_equal(dense, X[BS:])


def test_sklearn_reference_sanity(files):
    # the reference agrees with itself over the gzip and plain copies
    a, _ = _reference(files["plain"])
    b, _ = _reference(files["gz"])
    np.testing.assert_array_equal(a, b)
    assert sp.issparse(load_svmlight_file(files["plain"], n_features=FEATURES)[0])

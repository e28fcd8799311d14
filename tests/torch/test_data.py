"""LibSVM datasets: shards disjoint and covering across DataLoader workers and ranks;
collate functions against the dense rows (written here, read back)."""
import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, DistributedSampler

from sparsenet.torch.data import (IterableLibSVMDataset, LibSVMDataset, collate_csr,
                                  collate_embedding_bag, shard_of)

ROWS, FEATURES = 60, 12


@pytest.fixture(scope="module")
def libsvm_file(tmp_path_factory):
    """Row i has label i and a few features; returns (path, dense matrix)."""
    rng = np.random.default_rng(0)
    dense = np.zeros((ROWS, FEATURES), dtype=np.float32)
    lines = []
    for i in range(ROWS):
        cols = np.sort(rng.choice(FEATURES, size=1 + i % 4, replace=False))
        vals = np.round(rng.normal(size=cols.size), 3).astype(np.float32)
        dense[i, cols] = vals
        lines.append(f"{i} " + " ".join(f"{c}:{v}" for c, v in zip(cols, vals)))
    path = tmp_path_factory.mktemp("libsvm") / "d.svm"
    path.write_text("\n".join(lines) + "\n")
    return str(path), dense


def _labels(loader):
    return [int(y) for _, ys in loader for y in ys]


def test_map_style_rows_and_collate(libsvm_file):
    path, dense = libsvm_file
    ds = LibSVMDataset(path, num_features=FEATURES)
    assert len(ds) == ROWS
    x, y = collate_csr([ds[i] for i in (3, 0, 7)])
    assert x.layout == torch.sparse_csr
    np.testing.assert_array_equal(x.to_dense().numpy(), dense[[3, 0, 7]])
    assert y.tolist() == [3.0, 0.0, 7.0]
    (idx, off, w), _ = collate_embedding_bag([ds[i] for i in (3, 0, 7)])
    bag = torch.nn.EmbeddingBag(FEATURES, 2, mode="sum")
    torch.testing.assert_close(bag(idx, off, per_sample_weights=w),
                               torch.tensor(dense[[3, 0, 7]]) @ bag.weight)
    with pytest.raises(IndexError, match="out of range"):
        ds[ROWS]


def test_distributed_sampler_shards_map_style(libsvm_file):
    path, _ = libsvm_file
    ds = LibSVMDataset(path, num_features=FEATURES)
    seen = []
    for rank in range(3):
        sampler = DistributedSampler(ds, num_replicas=3, rank=rank, shuffle=True, seed=1)
        seen.append(_labels(DataLoader(ds, batch_size=7, sampler=sampler,
                                       collate_fn=collate_csr)))
    assert all(len(s) == ROWS // 3 for s in seen)
    assert sorted(sum(seen, [])) == list(range(ROWS))


def test_iterable_shards_across_workers(libsvm_file):
    path, dense = libsvm_file
    ds = IterableLibSVMDataset(path, FEATURES, rank=0, world_size=1, rows_per_read=8)
    loader = DataLoader(ds, batch_size=5, num_workers=2, collate_fn=collate_csr)
    batches = list(loader)
    labels = [int(y) for _, ys in batches for y in ys]
    assert sorted(labels) == list(range(ROWS))  # disjoint and covering
    for x, ys in batches:
        np.testing.assert_array_equal(x.to_dense().numpy(), dense[ys.long().numpy()])


def test_iterable_shards_across_ranks_and_workers(libsvm_file):
    path, _ = libsvm_file
    per_rank = []
    for rank in range(3):
        ds = IterableLibSVMDataset(path, FEATURES, rank=rank, world_size=3, rows_per_read=4)
        per_rank.append(_labels(DataLoader(ds, batch_size=4, num_workers=2,
                                           collate_fn=collate_embedding_bag)))
    assert all(per_rank)  # every rank got rows
    assert sorted(sum(per_rank, [])) == list(range(ROWS))


def test_iterable_in_main_process_by_rank(libsvm_file):
    path, _ = libsvm_file
    parts = [[int(y) for _, y in IterableLibSVMDataset(path, FEATURES, rank=r, world_size=4)]
             for r in range(4)]
    assert sorted(sum(parts, [])) == list(range(ROWS))


def test_shard_arguments():
    assert shard_of() == (1, 0)
    with pytest.raises(ValueError, match="both rank and world_size"):
        shard_of(rank=1)
    with pytest.raises(ValueError, match=r"rank must be in \[0, world_size=2\)"):
        shard_of(rank=2, world_size=2)

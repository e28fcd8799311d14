"""A model with an EmbeddingBag(sparse=True) and a dense head under torch.compile (inductor),
stepped by sparsenet.torch.optim outside the compiled graph, against eager torch.optim."""
import shutil

import pytest
import torch

from sparsenet.torch import optim

from .helpers import batches, train, twins


def _compiler_missing():
    return shutil.which("cc") is None and shutil.which("gcc") is None


@pytest.mark.skipif(_compiler_missing(), reason="torch.compile's inductor needs a C compiler")
def test_compiled_model_with_exact_adam_matches_eager_torch():
    sparse, dense = twins()
    opt = optim.Adam(sparse.parameters(), lr=0.05, lazy_update="exact")
    ref = torch.optim.Adam(dense.parameters(), lr=0.05)
    compiled = torch.compile(sparse)
    for ids, y in batches(6):
        # rows are caught up outside the graph (a forward pre-hook would break the graph)
        opt.catch_up(sparse.emb.weight, ids)
        opt.zero_grad()
        ((compiled(ids) - y) ** 2).mean().backward()
        assert sparse.emb.weight.grad.layout == torch.sparse_coo
        opt.step()
    train(dense, ref, batches(6))
    opt.sync()
    for p, q in zip(sparse.parameters(), dense.parameters()):
        torch.testing.assert_close(p.detach(), q.detach(), rtol=1e-5, atol=2e-6)

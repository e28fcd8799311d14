"""Shared pieces of the sparsenet.torch tests: a small model with an EmbeddingBag and a
dense head, run side by side with its dense twin under torch.optim."""
import copy

import torch

VOCAB, DIM = 30, 4


class Model(torch.nn.Module):
    """EmbeddingBag (sparse or dense gradient) followed by a dense linear head."""

    def __init__(self, sparse):
        super().__init__()
        self.emb = torch.nn.EmbeddingBag(VOCAB, DIM, mode="sum", sparse=sparse)
        self.head = torch.nn.Linear(DIM, 1)

    def forward(self, ids):
        return self.head(self.emb(ids)).squeeze(-1)


def twins(seed=0):
    """A sparse-gradient model and its dense-gradient copy with the same weights."""
    torch.manual_seed(seed)
    sparse = Model(True)
    dense = Model(False)
    dense.load_state_dict(copy.deepcopy(sparse.state_dict()))
    return sparse, dense


def groups(model, lr):
    """Two parameter groups: the embedding at ``lr``, the head at ``lr / 2``."""
    return [{"params": model.emb.parameters()},
            {"params": model.head.parameters(), "lr": lr / 2}]


def batches(steps, seed=1):
    """Batches of ids; odd steps use only ids 0..5, so most rows skip those steps."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for s in range(steps):
        high = 6 if s % 2 else VOCAB
        out.append((torch.randint(0, high, (4, 3), generator=gen),
                    torch.randn(4, generator=gen)))
    return out


def train(model, opt, data, scheduler=None):
    for ids, y in data:
        opt.zero_grad()
        loss = ((model(ids) - y) ** 2).mean()
        loss.backward()
        opt.step()
        if scheduler is not None:
            scheduler.step()

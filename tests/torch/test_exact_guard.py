"""lazy_update='exact' cannot silently go wrong: a forward that read a stale row raises, an
attached model trains as torch.optim does, and its state_dict() holds the trained weights.
The reference is torch.optim on the dense gradient of the same model."""
import copy
import io

import pytest
import torch

import sparsenet as mx
from sparsenet.torch import optim

CASES = [("SGD", dict(lr=0.01, momentum=0.9)),
         ("Adam", dict(lr=0.05)),
         ("SGD", dict(lr=0.1, weight_decay=0.1))]
IDS = ["sgd-momentum", "adam", "sgd-wd"]


class Net(torch.nn.Module):
    def __init__(self, sparse):
        super().__init__()
        self.emb = torch.nn.Embedding(50, 4, sparse=sparse)
        self.head = torch.nn.Linear(4, 1)

    def forward(self, ids):
        return self.head(self.emb(ids).sum(1)).squeeze(-1)


def _twins():
    torch.manual_seed(0)
    sparse = Net(True)
    dense = Net(False)
    dense.load_state_dict(copy.deepcopy(sparse.state_dict()))
    return sparse, dense


def _data(steps):
    gen = torch.Generator().manual_seed(1)
    # most steps read a few rows only, so most rows skip most steps
    return [(torch.randint(0, 50 if s % 5 == 0 else 8, (4, 3), generator=gen),
             torch.randn(4, generator=gen)) for s in range(steps)]


def _train(model, opt, data):
    for ids, y in data:
        opt.zero_grad()
        ((model(ids) - y) ** 2).mean().backward()
        opt.step()


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_attached_model_trains_as_torch_optim(name, kw):
    sparse, dense = _twins()
    opt = getattr(optim, name)(sparse.parameters(), lazy_update="exact", **kw)
    opt.attach(sparse)
    ref = getattr(torch.optim, name)(dense.parameters(), **kw)
    data = _data(60)
    _train(sparse, opt, data)
    _train(dense, ref, data)
    # no opt.sync(): the model's state_dict (what torch.save writes) is caught up itself
    buf = io.BytesIO()
    torch.save(sparse.state_dict(), buf)
    buf.seek(0)
    saved = torch.load(buf, weights_only=True)
    for key, value in dense.state_dict().items():
        torch.testing.assert_close(saved[key], value, rtol=1e-5, atol=2e-6, msg=key)
    for p, q in zip(sparse.parameters(), dense.parameters()):
        torch.testing.assert_close(p.detach(), q.detach(), rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_forward_reading_stale_rows_raises_instead_of_drifting(name, kw):
    sparse, _ = _twins()
    opt = getattr(optim, name)(sparse.parameters(), lazy_update="exact", **kw)
    data = _data(60)
    with pytest.raises(mx.MXNetError, match=r"attach\(model\).*catch_up") as info:
        _train(sparse, opt, data)
    assert isinstance(info.value, mx.base.StateError)
    assert "SGD" in str(info.value) or "Adam" in str(info.value)


def test_failed_step_changes_nothing():
    sparse, _ = _twins()
    opt = optim.SGD(sparse.parameters(), lr=0.1, momentum=0.9, lazy_update="exact")
    data = _data(60)
    before = None
    with pytest.raises(mx.MXNetError):
        for ids, y in data:
            opt.zero_grad()
            ((sparse(ids) - y) ** 2).mean().backward()
            before = [p.detach().clone() for p in sparse.parameters()]
            opt.step()
    for p, q in zip(sparse.parameters(), before):
        assert torch.equal(p.detach(), q)


def test_catch_up_by_hand_satisfies_the_guard():
    sparse, dense = _twins()
    opt = optim.Adam(sparse.parameters(), lr=0.05, lazy_update="exact")
    ref = torch.optim.Adam(dense.parameters(), lr=0.05)
    data = _data(30)
    for ids, y in data:
        opt.catch_up(sparse.emb.weight, ids)
        opt.zero_grad()
        ((sparse(ids) - y) ** 2).mean().backward()
        opt.step()
    _train(dense, ref, data)
    opt.sync()
    torch.testing.assert_close(sparse.emb.weight.detach(), dense.emb.weight.detach(),
                               rtol=1e-5, atol=2e-6)


def test_submodule_state_dict_is_caught_up_too():
    sparse, dense = _twins()
    opt = optim.SGD(sparse.parameters(), lr=0.1, weight_decay=0.1, lazy_update="exact")
    opt.attach(sparse)
    ref = torch.optim.SGD(dense.parameters(), lr=0.1, weight_decay=0.1)
    data = _data(20)
    _train(sparse, opt, data)
    _train(dense, ref, data)
    torch.testing.assert_close(sparse.emb.state_dict()["weight"], dense.emb.weight.detach(),
                               rtol=1e-5, atol=2e-6)

"""sparsenet.torch.optim on EmbeddingBag(sparse=True) gradients against torch.optim on the
dense gradients of the same model (the reference is torch's own optimizer)."""
import pytest
import torch

from sparsenet.torch import optim

from .helpers import VOCAB, batches, groups, train, twins

# (sparsenet.torch.optim class name, torch.optim class name, keyword arguments)
CASES = [
    ("SGD", "SGD", dict(lr=0.1)),
    ("SGD", "SGD", dict(lr=0.1, weight_decay=0.05)),
    ("SGD", "SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", "SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.05)),
    ("SGD", "SGD", dict(lr=0.1, momentum=0.8, weight_decay=0.05, nesterov=True)),
    ("Adam", "Adam", dict(lr=0.05)),
    ("Adam", "Adam", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("AdamW", "AdamW", dict(lr=0.05, weight_decay=0.1)),
    ("AdamW", "AdamW", dict(lr=0.05, weight_decay=0.0)),
    ("Adagrad", "Adagrad", dict(lr=0.1)),
    ("Adagrad", "Adagrad", dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.2,
                                weight_decay=0.1)),
    # RMSprop's rule puts eps inside the square root (sqrt(v + eps**2)), torch outside
    # (sqrt(v) + eps): they agree to eps / sqrt(v) relatively, so a tiny eps here (with
    # torch's default 1e-8, a gradient element of 4e-5 differs by 0.3%: docs/pytorch_users.md)
    ("RMSprop", "RMSprop", dict(lr=0.01, eps=1e-12)),
    ("RMSprop", "RMSprop", dict(lr=0.01, eps=1e-12, alpha=0.9, weight_decay=0.1)),
    ("RMSprop", "RMSprop", dict(lr=0.01, eps=1e-12, centered=True)),
    ("RMSprop", "RMSprop", dict(lr=0.01, eps=1e-12, centered=True, momentum=0.9)),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, _, kw in CASES]


def _run(name, ref_name, kw, lazy, steps=8):
    sparse, dense = twins()
    opt = getattr(optim, name)(groups(sparse, kw["lr"]), lazy_update=lazy, **kw)
    ref = getattr(torch.optim, ref_name)(groups(dense, kw["lr"]), **kw)
    if lazy == "exact":
        opt.attach(sparse)
    data = batches(steps)
    # a scheduler writing group['lr'] halfway: both must follow it
    train(sparse, opt, data, torch.optim.lr_scheduler.StepLR(opt, 4, gamma=0.5))
    train(dense, ref, data, torch.optim.lr_scheduler.StepLR(ref, 4, gamma=0.5))
    return sparse, dense, opt


@pytest.mark.parametrize("lazy", ["exact", False])
@pytest.mark.parametrize("name,ref_name,kw", CASES, ids=IDS)
def test_matches_torch_on_dense_gradients(name, ref_name, kw, lazy):
    sparse, dense, opt = _run(name, ref_name, kw, lazy)
    opt.sync()
    for (pname, p), q in zip(sparse.named_parameters(), dense.parameters()):
        torch.testing.assert_close(p.detach(), q.detach(), rtol=1e-5, atol=2e-6, msg=pname)


PENDING = [1, 2, 3, 4, 5, 7, 8, 14]  # settings with a closed-form catch-up


@pytest.mark.parametrize("name,ref_name,kw", [CASES[i] for i in PENDING],
                         ids=[IDS[i] for i in PENDING])
def test_exact_has_pending_rows_before_sync(name, ref_name, kw):
    """The exact mode really is lazy: rows unread since their last update lag until sync."""
    sparse, dense, opt = _run(name, ref_name, kw, "exact", steps=7)
    before = sparse.emb.weight.detach().clone()
    assert not torch.allclose(before, dense.emb.weight.detach(), atol=1e-5)
    opt.sync()
    assert not torch.equal(before, sparse.emb.weight.detach())
    torch.testing.assert_close(sparse.emb.weight.detach(), dense.emb.weight.detach(),
                               rtol=1e-5, atol=2e-6)


def _lazy_kwargs():
    for name, _, kw in CASES:
        yield name, kw
    yield "FTRL", dict(lr=0.1, weight_decay=0.1)


@pytest.mark.parametrize("name,kw", list(_lazy_kwargs()),
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(_lazy_kwargs())])
def test_lazy_leaves_untouched_rows_bit_identical(name, kw):
    sparse, _ = twins()
    start = sparse.emb.weight.detach().clone()
    opt = getattr(optim, name)(sparse.parameters(), lazy_update=True, **kw)
    data = batches(6)
    train(sparse, opt, data)
    seen = torch.zeros(VOCAB, dtype=torch.bool)
    seen[torch.cat([ids.reshape(-1) for ids, _ in data])] = True
    assert seen.sum() < VOCAB  # some rows never appear
    after = sparse.emb.weight.detach()
    assert torch.equal(after[~seen], start[~seen])
    assert not torch.equal(after[seen], start[seen])


def test_lazy_adam_is_torch_sparse_adam():
    """lazy Adam without weight decay is torch.optim.SparseAdam's rule, except that
    SparseAdam adds eps before the bias correction of sqrt(v) and torch.optim.Adam (and
    this Adam) after it: a tiny eps makes the two the same."""
    sparse, _ = twins()
    other, _ = twins()
    opt = optim.Adam(sparse.emb.parameters(), lr=0.05, eps=1e-12, lazy_update=True)
    ref = torch.optim.SparseAdam(other.emb.parameters(), lr=0.05, eps=1e-12)
    data = batches(6)
    train(sparse, opt, data)
    train(other, ref, data)
    torch.testing.assert_close(sparse.emb.weight, other.emb.weight, rtol=1e-5, atol=1e-6)


def test_rmsprop_and_adagrad_eps_inside_the_square_root():
    """The documented difference, by hand: w - lr * g / sqrt(v + eps**2)."""
    g, eps, lr = 4e-5, 1e-4, 0.01
    for cls, v in ((optim.RMSprop, 0.01 * g * g), (optim.Adagrad, g * g)):
        p = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
        kw = dict(alpha=0.99) if cls is optim.RMSprop else {}
        opt = cls([p], lr=lr, eps=eps, **kw)
        p.grad = torch.tensor([g], dtype=torch.float64)
        opt.step()
        assert p.item() == pytest.approx(-lr * g / (v + eps * eps) ** 0.5, rel=1e-6)

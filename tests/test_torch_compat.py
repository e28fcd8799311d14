"""The torch boundary: each private entry point and its public fallback give the same result.

The fallbacks serve torch releases that lack a private entry; here each one is
forced by hiding the private entry (``PRIVATE[name] = None``) and compared with
torch's public API on the same input.
"""
import pytest
import torch
import torch.nn.functional as F

from sparsenet import torch_compat


@pytest.fixture
def without(monkeypatch):
    def hide(*names):
        for name in names:
            monkeypatch.setitem(torch_compat.PRIVATE, name, None)
        monkeypatch.setattr(torch_compat, "_INCREMENT_LISTS", False)
    return hide


def test_public_set_grad_enabled_sets_the_mode():
    old = torch.is_grad_enabled()
    try:
        torch_compat._public_set_grad_enabled(False)
        assert not torch.is_grad_enabled()
        torch_compat._public_set_grad_enabled(True)
        assert torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(old)


@pytest.mark.parametrize("hidden", [(), ("engine",), ("engine", "engine_run_backward")])
def test_run_backward_paths_accumulate_like_torch(without, hidden):
    without(*hidden)
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    torch_compat.run_backward([y], [torch.ones_like(y)], retain_graph=True)
    torch_compat.run_backward([y], [torch.ones_like(y)], retain_graph=False)
    assert x.grad.tolist() == [4.0, 8.0, 12.0]  # d(x^2)/dx = 2x, accumulated twice


@pytest.mark.parametrize("hidden", [(), ("increment_version",)])
def test_increment_version_paths(without, hidden):
    without(*hidden)
    a, b = torch.zeros(3), torch.ones(2)
    va, vb = a._version, b._version
    torch_compat.increment_version([a, b])
    torch_compat.increment_version(a)
    torch_compat.increment_versions((b,))
    assert a._version >= va + 2 and b._version >= vb + 2
    assert a.tolist() == [0.0, 0.0, 0.0] and b.tolist() == [1.0, 1.0]


def test_increment_version_is_seen_by_autograd():
    w = torch.ones(3, requires_grad=True)
    y = w * 1
    z = y * y  # saves y
    with torch.no_grad():
        y.mul_(1)  # an in-place write: the version moves anyway
    torch_compat.increment_version([y])
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


@pytest.mark.parametrize("hidden", [(), ("embedding_bag",)])
@pytest.mark.parametrize("weights", [False, True])
def test_embedding_bag_matches_the_functional_form(without, hidden, weights):
    without(*hidden)
    w = torch.arange(12.0).reshape(4, 3)
    ids, offsets = torch.tensor([0, 3, 1, 1]), torch.tensor([0, 2])
    psw = torch.tensor([1.0, 2.0, 0.5, 4.0]) if weights else None
    got = torch_compat.embedding_bag(w, ids, offsets, psw, False)
    want = F.embedding_bag(ids, w, offsets, mode="sum", per_sample_weights=psw)
    assert torch.equal(got, want)


def test_coo_parts_of_an_uncoalesced_gradient():
    g = torch.sparse_coo_tensor([[2, 0, 2]], torch.tensor([[1.0], [2.0], [3.0]]), (3, 1))
    idx, vals = torch_compat.coo_parts(g)
    assert idx.tolist() == [[2, 0, 2]] and vals.reshape(-1).tolist() == [1.0, 2.0, 3.0]


def test_node_metadata_is_a_dict_per_node():
    t = torch.ones(1, requires_grad=True)
    a, b = (t * 2).grad_fn, (t * 3).grad_fn
    torch_compat.node_metadata(a)["k"] = 1
    assert torch_compat.node_metadata(a) == {"k": 1}
    assert "k" not in torch_compat.node_metadata(b)


@pytest.mark.parametrize("public", [False, True])
def test_foreach_kernels_and_their_fallbacks(public):
    mul = torch_compat._public_foreach_mul_ if public else torch_compat.foreach_mul_
    add = torch_compat._public_foreach_add_ if public else torch_compat.foreach_add_
    ws = [torch.ones(3), torch.full((2,), 2.0)]
    mul(ws, 0.5)
    add(ws, [torch.ones(3), torch.ones(2)], alpha=-2.0)
    assert ws[0].tolist() == [-1.5] * 3 and ws[1].tolist() == [-1.0] * 2  # x/2 - 2

"""SparseLinear against nn.Linear on the dense input (values and gradients), and trained with
sparsenet.torch.optim in exact mode against torch.optim on nn.Linear."""
import pytest
import torch

import sparsenet as mx
from sparsenet.torch import optim
from sparsenet.torch.nn import SparseLinear


def _batch(gen, rows=5, features=10, used=6):
    """Dense batch whose nonzeros lie in the first ``used`` features (the rest never appear)."""
    x = torch.randn(rows, features, generator=gen)
    mask = torch.rand(rows, features, generator=gen) < 0.4
    mask[:, used:] = False
    return x * mask


def _twins(bias=True):
    torch.manual_seed(0)
    layer = SparseLinear(10, 3, bias=bias)
    ref = torch.nn.Linear(10, 3, bias=bias)
    with torch.no_grad():
        ref.weight.copy_(layer.weight.T)
        if bias:
            ref.bias.copy_(layer.bias)
    return layer, ref


@pytest.mark.parametrize("layout", ["csr", "coo"])
@pytest.mark.parametrize("bias", [True, False])
def test_forward_and_gradients_match_linear(layout, bias):
    layer, ref = _twins(bias)
    x = _batch(torch.Generator().manual_seed(1))
    xs = x.to_sparse_csr() if layout == "csr" else x.to_sparse()
    dy = torch.randn(5, 3)
    out = layer(xs)
    torch.testing.assert_close(out, ref(x))
    (out * dy).sum().backward()
    (ref(x) * dy).sum().backward()
    grad = layer.weight.grad
    assert grad.layout == torch.sparse_coo and grad.sparse_dim() == 1
    rows = grad.coalesce().indices()[0]
    assert rows.tolist() == torch.nonzero(x.abs().sum(0)).view(-1).tolist()
    torch.testing.assert_close(grad.to_dense(), ref.weight.grad.T)
    if bias:
        torch.testing.assert_close(layer.bias.grad, ref.bias.grad)


def test_trains_like_linear_with_exact_adam():
    layer, ref = _twins()
    opt = optim.Adam(layer.parameters(), lr=0.05, lazy_update="exact")
    opt.attach(layer)
    ref_opt = torch.optim.Adam(ref.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(2)
    for step in range(6):
        x = _batch(gen, used=10 if step % 3 == 0 else 4)
        y = torch.randn(5, 3, generator=gen)
        for model, o, inp in ((layer, opt, x.to_sparse_csr()), (ref, ref_opt, x)):
            o.zero_grad()
            ((model(inp) - y) ** 2).mean().backward()
            o.step()
    opt.sync()
    torch.testing.assert_close(layer.weight.detach(), ref.weight.detach().T, rtol=1e-5,
                               atol=2e-6)
    torch.testing.assert_close(layer.bias.detach(), ref.bias.detach(), rtol=1e-5, atol=2e-6)


def test_input_errors():
    layer = SparseLinear(4, 2)
    with pytest.raises(mx.MXNetError, match="expects a torch sparse CSR or COO input"):
        layer(torch.zeros(2, 4))
    with pytest.raises(ValueError, match="input has 5 features, expected in_features=4"):
        layer(torch.zeros(2, 5).to_sparse_csr())

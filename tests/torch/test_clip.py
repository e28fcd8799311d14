"""clip_grad_norm_ / clip_grad_value_ with sparse COO gradients against torch's on dense ones."""
import pytest
import torch

import sparsenet as mx
from sparsenet.torch.optim import clip_grad_norm_, clip_grad_value_


def _params():
    """A sparse-gradient parameter (duplicate rows) and a dense one, plus dense twins."""
    gen = torch.Generator().manual_seed(0)
    sp = torch.nn.Parameter(torch.zeros(6, 3))
    de = torch.nn.Parameter(torch.zeros(4))
    sp.grad = torch.sparse_coo_tensor([[1, 4, 1]], torch.randn(3, 3, generator=gen), (6, 3))
    de.grad = torch.randn(4, generator=gen)
    twins = [torch.nn.Parameter(torch.zeros(6, 3)), torch.nn.Parameter(torch.zeros(4))]
    twins[0].grad = sp.grad.to_dense()
    twins[1].grad = de.grad.clone()
    return [sp, de], twins


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    ours, ref = _params()
    total = clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    expect = torch.nn.utils.clip_grad_norm_(ref, max_norm, norm_type=norm_type)
    torch.testing.assert_close(total, expect)
    assert ours[0].grad.is_sparse
    torch.testing.assert_close(ours[0].grad.to_dense(), ref[0].grad)
    torch.testing.assert_close(ours[1].grad, ref[1].grad)


@pytest.mark.parametrize("value", [0.3, 5.0])
def test_clip_grad_value_matches_torch(value):
    ours, ref = _params()
    clip_grad_value_(ours, value)
    torch.nn.utils.clip_grad_value_(ref, value)
    assert ours[0].grad.is_sparse
    torch.testing.assert_close(ours[0].grad.to_dense(), ref[0].grad)
    torch.testing.assert_close(ours[1].grad, ref[1].grad)


def test_nonfinite_norm_raises_when_asked():
    ours, _ = _params()
    ours[1].grad[0] = float("nan")
    with pytest.raises(mx.MXNetError, match="non-finite"):
        clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)

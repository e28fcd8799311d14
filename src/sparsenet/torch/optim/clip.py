"""Gradient clipping that accepts sparse COO gradients beside dense ones.

``torch.nn.utils.clip_grad_norm_`` fails on the sparse gradients of
``nn.Embedding(sparse=True)``; these functions give its results, treating a sparse
gradient as the dense tensor it stands for (duplicate entries are summed first).

>>> import torch
>>> p = torch.nn.Parameter(torch.zeros(3, 2))
>>> p.grad = torch.sparse_coo_tensor([[0, 0]], torch.full((2, 2), 1.5), (3, 2))
>>> round(float(clip_grad_norm_([p], max_norm=1.0)), 4)  # duplicates sum: row 0 is [3, 3]
4.2426
>>> p.grad.to_dense()[0].round(decimals=4)
tensor([0.7071, 0.7071])
"""
import torch

from ...base import SparsenetError

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


class NonFiniteNormError(SparsenetError):
    """The total gradient norm is nan or inf (``error_if_nonfinite=True``)."""


def _grads(parameters):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    out = []
    for p in parameters:
        if p.grad is None:
            continue
        if p.grad.layout == torch.sparse_coo:
            p.grad = p.grad.coalesce()
            out.append((p.grad.values(), True))
        else:
            out.append((p.grad, False))
    return out


@torch.no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scale the gradients so that their total norm is at most ``max_norm`` (in place).

    Same arguments and result as ``torch.nn.utils.clip_grad_norm_``; a sparse COO
    gradient is coalesced (``p.grad`` is replaced by its coalesced form) and its values
    are scaled, so it stays sparse.

    Parameters
    ----------
    parameters : tensor or iterable of tensors
    max_norm : float
    norm_type : float, default 2.0
        ``inf`` for the max norm.
    error_if_nonfinite : bool, default False

    Returns
    -------
    torch.Tensor
        The total norm of the gradients before clipping.

    Examples
    --------
    >>> import torch
    >>> p = torch.nn.Parameter(torch.zeros(2)); p.grad = torch.tensor([3.0, 4.0])
    >>> float(clip_grad_norm_(p, 1.0)), [round(v, 4) for v in p.grad.tolist()]
    (5.0, [0.6, 0.8])
    """
    grads = _grads(parameters)
    norm_type = float(norm_type)
    if not grads:
        return torch.tensor(0.0)
    norms = [torch.linalg.vector_norm(g, norm_type) for g, _ in grads]
    device = norms[0].device
    total = torch.linalg.vector_norm(torch.stack([n.to(device) for n in norms]), norm_type)
    if error_if_nonfinite and bool(torch.logical_or(total.isnan(), total.isinf())):
        raise NonFiniteNormError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            f"non-finite ({float(total)}), so it cannot be clipped; pass "
            f"error_if_nonfinite=False to clip anyway")
    coef = torch.clamp(float(max_norm) / (total + 1e-6), max=1.0)
    for g, _ in grads:
        g.mul_(coef.to(g.device, g.dtype))
    return total


@torch.no_grad()
def clip_grad_value_(parameters, clip_value):
    """Clamp every gradient element to ``[-clip_value, clip_value]`` (in place).

    As ``torch.nn.utils.clip_grad_value_``; a sparse COO gradient is coalesced first
    (duplicates summed, then clamped), and stays sparse.

    Examples
    --------
    >>> import torch
    >>> p = torch.nn.Parameter(torch.zeros(3, 1))
    >>> p.grad = torch.sparse_coo_tensor([[1, 1]], torch.tensor([[0.4], [0.4]]), (3, 1))
    >>> clip_grad_value_(p, 0.5); p.grad.to_dense().ravel().tolist()
    [0.0, 0.5, 0.0]
    """
    value = float(clip_value)
    for g, _ in _grads(parameters):
        g.clamp_(min=-value, max=value)

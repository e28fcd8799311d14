"""``contrib.SyncBatchNorm``: batch normalisation whose statistics span every rank of a job.

MXNet 1.9.1's ``_contrib_SyncBatchNorm`` normalises with the mean and variance of the
whole batch split over ``ndev`` devices. In sparsenet a device is a rank (one process
per device, ``sparsenet launch -n N``, the layout torch's DistributedDataParallel uses):
with ``ndev > 1`` the per-channel sums of the forward pass and of the backward pass are
summed over the ranks of the default ``torch.distributed`` process group (which
``mx.kv.create('dist_sync')`` starts), so every rank normalises with the global batch
statistics and gets the gradient of the global batch normalisation for its slice.
With ``ndev=1`` it is :func:`~sparsenet.ops.norm.BatchNorm` on the local batch.
Parameters, defaults and outputs are BatchNorm's (``eps=1e-3``, ``fix_gamma=True``,
moving statistics updated in place during backward with the biased variance).

>>> import sparsenet as mx
>>> x = mx.nd.array([[1.0, 2.0], [3.0, 6.0]])
>>> mm, mv = mx.nd.zeros((2,)), mx.nd.ones((2,))
>>> with mx.autograd.record():
...     y = mx.nd.contrib.SyncBatchNorm(x, mx.nd.ones((2,)), mx.nd.zeros((2,)), mm, mv, ndev=1)
>>> y.asnumpy().round(4)
array([[-0.9995, -0.9998],
       [ 0.9995,  0.9998]], dtype=float32)
"""
import torch
import torch.distributed as dist

from .. import recording
from ..base import InvalidArgumentError
from .layer_common import LayerParameterError, channel_axis
from .norm import _FixedOnes, _affine, _batchnorm_input_shapes, _check_vector, _moving_update
from .registry import defop, input_shapes

__all__ = ["SyncBatchNorm"]


def _group_size(ndev):
    """The ranks the statistics span: 1, or the default process group of exactly ``ndev``."""
    if ndev == 1:
        return 1
    world = dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
    if world != ndev:
        raise InvalidArgumentError(
            f"SyncBatchNorm: ndev={ndev} synchronises the statistics of {ndev} ranks (one "
            f"process per device), but this process is in a group of {world}: run it with "
            f"`sparsenet launch -n {ndev}` and create the 'dist_sync' kvstore before the first "
            f"forward pass, or pass num_devices=1 for local batch statistics")
    return world


def _global_sum(t, world):
    if world > 1:
        dist.all_reduce(t)
    return t


class _SyncNorm(torch.autograd.Function):
    """``(x - mean) * rsqrt(var + eps)`` with the mean and variance of every rank's batch.

    ``x`` has its channels on axis 1. The backward pass sums, over the ranks, the two
    per-channel reductions the input gradient needs.
    """

    @staticmethod
    def forward(ctx, x, eps, world):
        dims = [d for d in range(x.dim()) if d != 1]
        acc = torch.float64 if x.dtype == torch.float64 else torch.float32
        xa = x.to(acc)
        local = torch.cat([xa.sum(dims), torch.tensor([x.numel() / x.shape[1]], dtype=acc,
                                                       device=x.device)])
        total = _global_sum(local, world)
        count = total[-1]
        mean = total[:-1] / count
        shape = [1] * x.dim()
        shape[1] = x.shape[1]
        centred = xa - mean.reshape(shape)
        var = _global_sum((centred * centred).sum(dims), world) / count
        invstd = torch.rsqrt(var + eps)
        xhat = centred * invstd.reshape(shape)
        ctx.save_for_backward(xhat, invstd, count)
        ctx.dims, ctx.world, ctx.shape = dims, world, shape
        mean_out, var_out = mean.to(x.dtype), var.to(x.dtype)
        ctx.mark_non_differentiable(mean_out, var_out)
        return xhat.to(x.dtype), mean_out, var_out

    @staticmethod
    def backward(ctx, grad, _grad_mean, _grad_var):
        xhat, invstd, count = ctx.saved_tensors
        g = grad.to(xhat.dtype)
        sums = torch.cat([g.sum(ctx.dims), (g * xhat).sum(ctx.dims)])
        sums = _global_sum(sums, ctx.world) / count
        c = xhat.shape[1]
        mean_g = sums[:c].reshape(ctx.shape)
        mean_gx = sums[c:].reshape(ctx.shape)
        dx = (g - mean_g - xhat * mean_gx) * invstd.reshape(ctx.shape)
        return dx.to(grad.dtype), None, None


@defop(name="_contrib_SyncBatchNorm", num_outputs=lambda p: 3 if p["output_mean_var"] else 1,
       aux=("moving_mean", "moving_var"), output_names=("output", "mean", "var"),
       input_inits={"moving_mean": '["zero", {}]', "moving_var": '["one", {}]'})
def SyncBatchNorm(data, gamma, beta, moving_mean, moving_var, *, eps=1e-3,  # noqa: N802
                  momentum=0.9, fix_gamma=True, use_global_stats=False, output_mean_var=False,
                  ndev=1, key=""):
    """Batch normalisation over the batch of every rank (see the module docstring).

    Parameters
    ----------
    data : NDArray
        Channels on axis 1.
    gamma, beta : NDArray
        Scale and shift, shape ``(channels,)``.
    moving_mean, moving_var : NDArray
        Moving statistics (auxiliary states), updated in place by the backward pass of a
        training step with the global batch statistics.
    eps, momentum : float
    fix_gamma : bool
        Use ones instead of gamma (gamma's gradient is zero).
    use_global_stats : bool
        Normalise with the moving statistics even while training.
    output_mean_var : bool
        Also return the mean and the inverse standard deviation used.
    ndev : int
        Number of ranks the statistics span: 1 (local), or the size of the default
        ``torch.distributed`` process group.
    key : str
        MXNet's name of the synchronisation group; accepted, unused (the process group is).

    Examples
    --------
    >>> import sparsenet as mx
    >>> x = mx.nd.array([[0.0], [2.0]])
    >>> mx.nd.contrib.SyncBatchNorm(x, mx.nd.ones((1,)), mx.nd.zeros((1,)),  # moving stats
    ...                             mx.nd.zeros((1,)), mx.nd.ones((1,))).asnumpy().round(3)
    array([[0.   ],
           [1.999]], dtype=float32)
    """
    if data.dim() < 2:
        raise LayerParameterError(f"SyncBatchNorm: data must have at least 2 dimensions, got "
                                  f"shape {tuple(data.shape)}")
    if isinstance(ndev, bool) or not isinstance(ndev, int) or ndev < 1:
        raise InvalidArgumentError(f"SyncBatchNorm: ndev must be a positive integer, got {ndev!r}")
    c = data.shape[channel_axis(1, data.dim(), "SyncBatchNorm")]
    for name, t in (("gamma", gamma), ("beta", beta), ("moving_mean", moving_mean),
                    ("moving_var", moving_var)):
        _check_vector("SyncBatchNorm", name, t, c)
    g = _FixedOnes.apply(gamma) if fix_gamma else gamma
    shape = [1] * data.dim()
    shape[1] = c
    if recording.is_training() and not use_global_stats:
        xhat, mean, var = _SyncNorm.apply(data, eps, _group_size(ndev))
        out = xhat * g.reshape(shape) + beta.reshape(shape)
        if out.requires_grad:
            out.register_hook(_moving_update(moving_mean, moving_var, mean, var, momentum))
    else:
        mean, var = moving_mean.detach(), moving_var.detach()
        out = _affine(data, mean, var, g, beta, eps)
    if output_mean_var:
        return out, mean.detach(), torch.rsqrt(var.detach() + eps)
    return out


@input_shapes(SyncBatchNorm)
def _syncbatchnorm_input_shapes(shapes, params):
    return _batchnorm_input_shapes(shapes, dict(params, axis=1))

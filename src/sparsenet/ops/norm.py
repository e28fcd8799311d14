"""Normalisation layers as operators: BatchNorm, LayerNorm, InstanceNorm, GroupNorm.

All four are dense operators: a sparse input falls back (densified, with the
storage-fallback policy's warning or error). Parameter names, defaults and
outputs are MXNet 1.9.1's, among them:

* ``BatchNorm``: ``eps=1e-3``, ``fix_gamma=True`` (gamma is taken as ones and
  gets a zero gradient), and in training (``autograd.is_training()``) the batch
  statistics normalise while the moving statistics are updated **in place
  during the backward pass**, with the biased batch variance:
  ``moving = moving * momentum + batch * (1 - momentum)``. ``output_mean_var``
  adds the mean and the *inverse standard deviation* as outputs.
* ``LayerNorm``: ``axis=-1``, ``eps=1e-5``; ``output_mean_var`` adds the mean and
  the standard deviation (with eps), keeping the reduced axis.
* ``InstanceNorm``: ``eps=1e-3``, per sample and channel over the spatial axes.
* ``GroupNorm``: gamma and beta hold one value **per group** (MXNet 1.x), not per
  channel.

>>> import sparsenet as mx
>>> x = mx.nd.array([[1.0, 2.0, 3.0, 4.0]])
>>> mx.nd.LayerNorm(x, mx.nd.ones((4,)), mx.nd.zeros((4,))).asnumpy().round(4)
array([[-1.3416, -0.4472,  0.4472,  1.3416]], dtype=float32)
"""
import torch
import torch.nn.functional as F

from .. import recording
from .layer_common import LayerParameterError, channel_axis
from .registry import defop, input_shapes

__all__ = ["BatchNorm", "LayerNorm", "InstanceNorm", "GroupNorm"]


class _FixedOnes(torch.autograd.Function):
    """Ones shaped like gamma, whose gradient to gamma is zero (``fix_gamma=True``)."""

    @staticmethod
    def forward(ctx, gamma):
        return torch.ones_like(gamma)

    @staticmethod
    def backward(ctx, grad):
        return torch.zeros_like(grad)


def _check_vector(opname, name, t, n):
    if t.dim() != 1 or t.shape[0] != n:
        raise LayerParameterError(f"{opname}: {name} must have shape ({n},), got "
                                  f"{tuple(t.shape)}")


def _moving_update(moving_mean, moving_var, mean, var, momentum):
    """A gradient hook that updates the moving statistics in place (MXNet does it in backward)."""
    mean, var = mean.detach(), var.detach()

    def update(grad):
        with torch.no_grad():
            moving_mean.mul_(momentum).add_(mean.to(moving_mean.dtype), alpha=1 - momentum)
            moving_var.mul_(momentum).add_(var.to(moving_var.dtype), alpha=1 - momentum)
        return None
    return update


# the moving statistics are auxiliary states, initialised to zeros and ones; the outputs are
# named (measured with MXNet 1.9.1)
@defop(num_outputs=lambda p: 3 if p["output_mean_var"] else 1,
       aux=("moving_mean", "moving_var"), output_names=("output", "mean", "var"),
       input_inits={"moving_mean": '["zero", {}]', "moving_var": '["one", {}]'})
def BatchNorm(data, gamma, beta, moving_mean, moving_var, *, eps=1e-3,  # noqa: N802
              momentum=0.9, fix_gamma=True, use_global_stats=False, output_mean_var=False,
              axis=1, cudnn_off=False, min_calib_range=None, max_calib_range=None):
    """Batch normalisation over every axis but ``axis`` (the channels).

    Parameters
    ----------
    data : NDArray
    gamma, beta : NDArray
        Scale and shift, shape ``(channels,)``.
    moving_mean, moving_var : NDArray
        Moving statistics, shape ``(channels,)``; used outside training (or with
        ``use_global_stats``), updated in place by the backward pass of a
        training step. In a symbol they are auxiliary states
        (``list_auxiliary_states()``), not arguments.
    eps : float
    momentum : float
    fix_gamma : bool
        Use ones instead of gamma (gamma's gradient is zero).
    use_global_stats : bool
        Normalise with the moving statistics even while training.
    output_mean_var : bool
        Also return the mean and the inverse standard deviation used.
    axis : int
        The channel axis.
    cudnn_off, min_calib_range, max_calib_range
        Accepted for compatibility; no effect.

    Examples
    --------
    >>> import sparsenet as mx
    >>> x = mx.nd.array([[1.0, 2.0], [3.0, 6.0]])
    >>> mm, mv = mx.nd.zeros((2,)), mx.nd.ones((2,))
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = mx.nd.BatchNorm(x, mx.nd.ones((2,)), mx.nd.zeros((2,)), mm, mv)
    >>> y.asnumpy().round(4)
    array([[-0.9995, -0.9998],
           [ 0.9995,  0.9998]], dtype=float32)
    >>> y.backward()
    >>> mm.asnumpy(), mv.asnumpy()
    (array([0.2, 0.4], dtype=float32), array([1. , 1.3], dtype=float32))
    """
    if data.dim() < 2:
        raise LayerParameterError(f"BatchNorm: data must have at least 2 dimensions, got shape "
                                  f"{tuple(data.shape)}")
    ax = channel_axis(axis, data.dim(), "BatchNorm")
    c = data.shape[ax]
    for name, t in (("gamma", gamma), ("beta", beta), ("moving_mean", moving_mean),
                    ("moving_var", moving_var)):
        _check_vector("BatchNorm", name, t, c)
    g = _FixedOnes.apply(gamma) if fix_gamma else gamma
    x = data.movedim(ax, 1) if ax != 1 else data
    if recording.is_training() and not use_global_stats:
        var, mean = torch.var_mean(x, dim=[d for d in range(x.dim()) if d != 1],
                                   unbiased=False)
        if x.numel() > c:  # torch's fused kernel wants more than one value per channel
            out = F.batch_norm(x, None, None, g, beta, training=True, momentum=0.0, eps=eps)
        else:
            out = _affine(x, mean, var, g, beta, eps)
        if out.requires_grad:
            out.register_hook(_moving_update(moving_mean, moving_var, mean, var, momentum))
    else:
        mean, var = moving_mean.detach(), moving_var.detach()
        out = _affine(x, mean, var, g, beta, eps)
    if ax != 1:
        out = out.movedim(1, ax)
    if output_mean_var:
        return out, mean, torch.rsqrt(var + eps)
    return out


def _affine(x, mean, var, gamma, beta, eps):
    shape = [1] * x.dim()
    shape[1] = x.shape[1]
    scale = (torch.rsqrt(var + eps) * gamma).reshape(shape)
    return (x - mean.reshape(shape)) * scale + beta.reshape(shape)




@input_shapes(BatchNorm)
def _batchnorm_input_shapes(shapes, params):
    shapes = list(shapes) + [None] * (5 - len(shapes))
    data = shapes[0]
    if data is not None:
        c = (data[channel_axis(params["axis"], len(data), "BatchNorm")],)
        shapes = [data] + [s if s is not None else c for s in shapes[1:]]
    return shapes


@defop(num_outputs=lambda p: 3 if p["output_mean_var"] else 1,
       output_names=("output", "mean", "std"))
def LayerNorm(data, gamma, beta, *, axis=-1, eps=1e-5, output_mean_var=False):  # noqa: N802
    """Layer normalisation along ``axis``: ``(x - mean) / sqrt(var + eps) * gamma + beta``.

    ``gamma`` and ``beta`` have shape ``(data.shape[axis],)``. With
    ``output_mean_var`` the mean and the standard deviation (``sqrt(var + eps)``)
    are returned too, with the reduced axis kept as 1.

    >>> import sparsenet as mx
    >>> y, mean, std = mx.nd.LayerNorm(mx.nd.array([[0.0, 2.0]]), mx.nd.ones((2,)),
    ...                                mx.nd.zeros((2,)), output_mean_var=True)
    >>> mean.asnumpy(), std.shape
    (array([[1.]], dtype=float32), (1, 1))
    """
    ax = channel_axis(axis, data.dim(), "LayerNorm")
    n = data.shape[ax]
    _check_vector("LayerNorm", "gamma", gamma, n)
    _check_vector("LayerNorm", "beta", beta, n)
    x = data.movedim(ax, -1)
    out = F.layer_norm(x, (n,), gamma, beta, eps).movedim(-1, ax)
    if output_mean_var:
        var, mean = torch.var_mean(data, dim=ax, keepdim=True, unbiased=False)
        return out, mean, torch.sqrt(var + eps)
    return out




@input_shapes(LayerNorm)
def _layernorm_input_shapes(shapes, params):
    shapes = list(shapes) + [None] * (3 - len(shapes))
    data = shapes[0]
    if data is not None:
        c = (data[channel_axis(params["axis"], len(data), "LayerNorm")],)
        shapes = [data] + [s if s is not None else c for s in shapes[1:]]
    return shapes


@defop
def InstanceNorm(data, gamma, beta, *, eps=1e-3):  # noqa: N802
    """Instance normalisation: each sample's channel over its spatial axes (``data`` is N, C, ...).

    >>> import sparsenet as mx
    >>> x = mx.nd.array([[[1.0, 3.0]]])
    >>> mx.nd.InstanceNorm(x, mx.nd.ones((1,)), mx.nd.zeros((1,))).asnumpy().round(4)
    array([[[-0.9995,  0.9995]]], dtype=float32)
    """
    if data.dim() < 3:
        raise LayerParameterError(f"InstanceNorm: data must have at least 3 dimensions "
                                  f"(batch, channel, spatial...), got shape {tuple(data.shape)}")
    c = data.shape[1]
    _check_vector("InstanceNorm", "gamma", gamma, c)
    _check_vector("InstanceNorm", "beta", beta, c)
    return F.instance_norm(data, weight=gamma, bias=beta, eps=eps)


@input_shapes(InstanceNorm)
def _instancenorm_input_shapes(shapes, params):
    shapes = list(shapes) + [None] * (3 - len(shapes))
    data = shapes[0]
    if data is not None and len(data) >= 2:
        shapes = [data] + [s if s is not None else (data[1],) for s in shapes[1:]]
    return shapes


@defop(num_outputs=lambda p: 3 if p["output_mean_var"] else 1,
       output_names=("output", "mean", "std"))
def GroupNorm(data, gamma, beta, *, num_groups=1, eps=1e-5,  # noqa: N802
              output_mean_var=False):
    """Group normalisation: the channels (axis 1) split into ``num_groups`` groups.

    As in MXNet 1.x, ``gamma`` and ``beta`` have shape ``(num_groups,)``: one
    scale and shift per group. With ``output_mean_var`` the mean and standard
    deviation (``sqrt(var + eps)``) of each ``(sample, group)`` are returned too.

    >>> import sparsenet as mx
    >>> x = mx.nd.array([[[1.0], [3.0], [5.0], [9.0]]])
    >>> mx.nd.GroupNorm(x, mx.nd.ones((2,)), mx.nd.zeros((2,)),
    ...                 num_groups=2).asnumpy().ravel().round(4)
    array([-1.,  1., -1.,  1.], dtype=float32)
    """
    if data.dim() < 2:
        raise LayerParameterError(f"GroupNorm: data must have at least 2 dimensions (batch, "
                                  f"channel, ...), got shape {tuple(data.shape)}")
    c = data.shape[1]
    if num_groups < 1 or c % num_groups:
        raise LayerParameterError(f"GroupNorm: the {c} channels must split evenly into "
                                  f"num_groups={num_groups} groups")
    _check_vector("GroupNorm", "gamma", gamma, num_groups)
    _check_vector("GroupNorm", "beta", beta, num_groups)
    per = c // num_groups
    out = F.group_norm(data, num_groups, gamma.repeat_interleave(per),
                       beta.repeat_interleave(per), eps)
    if output_mean_var:
        grouped = data.reshape(data.shape[0], num_groups, -1)
        var, mean = torch.var_mean(grouped, dim=-1, unbiased=False)
        return out, mean, torch.sqrt(var + eps)
    return out




@input_shapes(GroupNorm)
def _groupnorm_input_shapes(shapes, params):
    shapes = list(shapes) + [None] * (3 - len(shapes))
    g = (params["num_groups"],)
    return [shapes[0]] + [s if s is not None else g for s in shapes[1:]]

"""``SyncBatchNorm``: Gluon's batch normalisation with statistics over every rank's batch.

MXNet 1.9.1's layer synchronises the devices of one process; sparsenet runs one
process per device (``sparsenet launch -n N``) and synchronises the ranks of the
default ``torch.distributed`` group (see :mod:`sparsenet.ops.sync_batch_norm`).

>>> import sparsenet as mx
>>> bn = mx.gluon.contrib.nn.SyncBatchNorm(in_channels=2, num_devices=1)
>>> bn.initialize()
>>> with mx.autograd.record():
...     y = bn(mx.nd.array([[1.0, 2.0], [3.0, 6.0]]))
>>> y.backward()
>>> bn.running_mean.data().asnumpy()
array([0.2, 0.4], dtype=float32)
"""
import torch.distributed as dist

from ....base import InvalidArgumentError
from ...nn.norm_layers import _BatchNorm

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation whose batch statistics span ``num_devices`` ranks.

    Parameters
    ----------
    in_channels : int
        Number of channels (axis 1); 0 infers it at the first forward pass.
    num_devices : int or None
        Ranks whose batches share the statistics: 1 for this process's batch alone, or
        the size of the distributed job (every rank must call the layer in step).
        None takes the job's size at construction (1 outside a distributed job).
    momentum, epsilon, center, scale, use_global_stats : see :class:`~sparsenet.gluon.nn.BatchNorm`
    beta_initializer, gamma_initializer : str or Initializer
    running_mean_initializer, running_variance_initializer : str or Initializer

    Examples
    --------
    >>> import sparsenet as mx
    >>> bn = mx.gluon.contrib.nn.SyncBatchNorm(in_channels=3, num_devices=1)
    >>> bn.gamma.shape, bn.running_var.shape
    ((3,), (3,))
    """

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5,
                 center=True, scale=True, use_global_stats=False, beta_initializer="zeros",
                 gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", **kwargs):
        super().__init__(axis=1, momentum=momentum, epsilon=epsilon, center=center,
                         scale=scale, use_global_stats=use_global_stats, fuse_relu=False,
                         beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)
        if num_devices is None:
            num_devices = dist.get_world_size() if dist.is_available() and \
                dist.is_initialized() else 1
        if isinstance(num_devices, bool) or not isinstance(num_devices, int) or num_devices < 1:
            raise InvalidArgumentError(f"SyncBatchNorm: num_devices must be a positive integer "
                                       f"or None, got {num_devices!r}")
        self._kwargs.pop("axis")
        self._kwargs.update(ndev=num_devices, key=self.prefix)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var,
                                       **self._kwargs)

"""``mx.kv`` / ``mx.kvstore``: key-value stores that sum gradients and keep weights.

:func:`create` makes an in-process store (``'local'``, ``'device'``:
:class:`KVStore`) or a distributed one on ``torch.distributed`` (``'dist_sync'``,
``'dist_async'``, ``'dist_device_sync'``: :class:`sparsenet.kvstore.dist.DistKVStore`).

>>> import sparsenet as mx
>>> kv = mx.kv.create('local')
>>> kv.type, kv.rank, kv.num_workers
('local', 0, 1)
"""
from ..base import InvalidArgumentError, InvalidArgumentTypeError
from .kvstore import LOCAL_TYPES, KVStore

__all__ = ["create", "KVStore"]


def create(name="local"):
    """Create a key-value store.

    Parameters
    ----------
    name : str
        ``'local'`` or ``'device'`` (or MXNet's aliases ``'local_update_cpu'``,
        ``'local_allreduce_cpu'``, ``'local_allreduce_device'``) for a store in this
        process; a name starting with ``'dist'`` (``'dist_sync'``, ``'dist_async'``,
        ``'dist_device_sync'``) for one over ``torch.distributed``.

    Returns
    -------
    KVStore

    Raises
    ------
    InvalidArgumentTypeError
        ``name`` is not a str.
    InvalidArgumentError
        An unknown name.

    Examples
    --------
    >>> import sparsenet as mx
    >>> mx.kv.create('device').type
    'device'
    >>> mx.kv.create('nccl')
    Traceback (most recent call last):
    ...
    sparsenet.base.InvalidArgumentError: kvstore create: unknown name 'nccl'; expected one of ...
    """
    if not isinstance(name, str):
        raise InvalidArgumentTypeError(f"kvstore create: name must be a str, got "
                                       f"{type(name).__name__} {name!r}")
    if name in LOCAL_TYPES:
        return KVStore(name)
    if name.startswith("dist"):
        # dist.py sits on torch.distributed; importing it only for a 'dist*' name keeps
        # `import sparsenet` from loading torch.distributed for in-process stores
        from .dist import DistKVStore
        return DistKVStore(name)
    valid = ", ".join(repr(n) for n in LOCAL_TYPES)
    raise InvalidArgumentError(
        f"kvstore create: unknown name {name!r}; expected one of {valid}, or a name starting "
        f"with 'dist' ('dist_sync', 'dist_async', 'dist_device_sync')")

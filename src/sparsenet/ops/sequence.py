"""Variable-length sequence operators: ``SequenceMask``, ``SequenceLast``, ``SequenceReverse``.

They take a batch of padded sequences ``data`` whose time axis is ``axis`` (0:
``(T, N, ...)``; 1: ``(N, T, ...)``) and, when ``use_sequence_length`` is set,
the length of each sequence ``sequence_length`` (shape ``(N,)``, any numeric
dtype). Without it every sequence is ``T`` long. They are differentiable in
``data`` (``sequence_length`` gets no gradient), as MXNet 1.9.1's.

>>> import sparsenet as mx
>>> x = mx.nd.array([[1., 2.], [3., 4.], [5., 6.]])        # (T=3, N=2)
>>> mx.nd.SequenceMask(x, mx.nd.array([1, 3]), use_sequence_length=True).asnumpy()
array([[1., 2.],
       [0., 4.],
       [0., 6.]], dtype=float32)
>>> mx.nd.SequenceLast(x, mx.nd.array([1, 3]), use_sequence_length=True).asnumpy()
array([1., 6.], dtype=float32)
>>> mx.nd.SequenceReverse(x, mx.nd.array([2, 3]), use_sequence_length=True).asnumpy()
array([[3., 6.],
       [1., 4.],
       [5., 2.]], dtype=float32)
"""
import torch

from ..base import InvalidArgumentError
from .registry import defop

__all__ = ["SequenceMask", "SequenceLast", "SequenceReverse"]


def _needs_length(params):
    return ("sequence_length",) if params["use_sequence_length"] else ()


def _lengths(op, data, sequence_length, use_sequence_length, axis):
    """The ``(N,)`` int64 lengths, checked: every length in ``[0, T]`` (``[1, T]`` when
    ``at_least_one``); ``None`` when every sequence is full length."""
    if axis not in (0, 1):
        raise InvalidArgumentError(f"{op}: axis must be 0 (data (T, N, ...)) or 1 (data "
                                   f"(N, T, ...)), got {axis}")
    if data.dim() < 2:
        raise InvalidArgumentError(f"{op}: data needs a time and a batch axis, got shape "
                                   f"{tuple(data.shape)}")
    if not use_sequence_length:
        return None
    if sequence_length is None:
        raise InvalidArgumentError(f"{op}: use_sequence_length=True needs the input "
                                   f"sequence_length (one length per sequence)")
    batch = data.shape[1 - axis]
    if tuple(sequence_length.shape) != (batch,):
        raise InvalidArgumentError(f"{op}: sequence_length must have shape ({batch},) (the "
                                   f"batch axis of data {tuple(data.shape)}), got "
                                   f"{tuple(sequence_length.shape)}")
    lengths = sequence_length.detach().to(device=data.device, dtype=torch.int64)
    steps = data.shape[axis]
    if lengths.numel() and (int(lengths.min()) < 0 or int(lengths.max()) > steps):
        raise InvalidArgumentError(f"{op}: every sequence_length must lie in [0, {steps}] (the "
                                   f"time axis {axis} of data), got {lengths.tolist()}")
    return lengths


def _time_index(data, axis):
    """``(T, N)`` (axis 0) or ``(N, T)`` (axis 1) step numbers, broadcastable over data."""
    steps = torch.arange(data.shape[axis], device=data.device)
    shape = [1] * data.dim()
    shape[axis] = data.shape[axis]
    return steps.reshape(shape)


def _batch_view(lengths, data, axis):
    shape = [1] * data.dim()
    shape[1 - axis] = data.shape[1 - axis]
    return lengths.reshape(shape)


@defop(required_inputs=_needs_length)
def SequenceMask(data, sequence_length=None, *, use_sequence_length=False,  # noqa: N802
                 value=0.0, axis=0):
    """Set the steps of each sequence past its length to ``value``.

    Parameters
    ----------
    data : NDArray
        ``(T, N, ...)`` for ``axis=0``, ``(N, T, ...)`` for ``axis=1``.
    sequence_length : NDArray, optional
        ``(N,)`` lengths, read when ``use_sequence_length`` is set.
    use_sequence_length : bool
    value : float
        What padded steps become.
    axis : int
        The time axis, 0 or 1.

    >>> import sparsenet as mx
    >>> mx.nd.SequenceMask(mx.nd.ones((2, 3)), mx.nd.array([1, 2]), use_sequence_length=True,
    ...                    axis=1, value=-1).asnumpy()
    array([[ 1., -1., -1.],
           [ 1.,  1., -1.]], dtype=float32)
    """
    lengths = _lengths("SequenceMask", data, sequence_length, use_sequence_length, axis)
    if lengths is None:
        return data.clone()
    keep = _time_index(data, axis) < _batch_view(lengths, data, axis)
    return torch.where(keep, data, torch.full((), float(value), dtype=data.dtype,
                                              device=data.device))


@defop(required_inputs=_needs_length)
def SequenceLast(data, sequence_length=None, *, use_sequence_length=False,  # noqa: N802
                 axis=0):
    """The last valid step of each sequence: ``data`` without its time axis.

    A sequence of length 0 gives its step 0 (as MXNet 1.9.1 reads index ``-1``
    clipped to 0).

    >>> import sparsenet as mx
    >>> mx.nd.SequenceLast(mx.nd.array([[1., 2., 3.], [4., 5., 6.]]), axis=1).asnumpy()
    array([3., 6.], dtype=float32)
    """
    lengths = _lengths("SequenceLast", data, sequence_length, use_sequence_length, axis)
    if lengths is None:
        return data.select(axis, data.shape[axis] - 1).clone()
    last = (lengths - 1).clamp_min(0)
    batch = torch.arange(data.shape[1 - axis], device=data.device)
    return data[last, batch] if axis == 0 else data[batch, last]


@defop(required_inputs=_needs_length)
def SequenceReverse(data, sequence_length=None, *, use_sequence_length=False,  # noqa: N802
                    axis=0):
    """Reverse the first ``length`` steps of each sequence; padded steps stay in place.

    Only ``axis=0`` (data ``(T, N, ...)``), as in MXNet 1.9.1.

    >>> import sparsenet as mx
    >>> mx.nd.SequenceReverse(mx.nd.array([[1.], [2.], [3.]])).asnumpy()
    array([[3.],
           [2.],
           [1.]], dtype=float32)
    """
    if axis != 0:
        raise InvalidArgumentError(f"SequenceReverse: only axis=0 (data (T, N, ...)) is "
                                   f"supported, as in MXNet 1.9.1; got axis={axis}")
    lengths = _lengths("SequenceReverse", data, sequence_length, use_sequence_length, axis)
    steps = data.shape[0]
    if lengths is None:
        return torch.flip(data, dims=(0,))
    t = torch.arange(steps, device=data.device).unsqueeze(1)          # (T, 1)
    n = lengths.unsqueeze(0)                                           # (1, N)
    src = torch.where(t < n, n - 1 - t, t)                             # (T, N)
    batch = torch.arange(data.shape[1], device=data.device).unsqueeze(0)
    return data[src, batch]

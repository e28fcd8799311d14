"""Parameter checks shared by the dense layer operators (norm, convolution, pooling).

MXNet's layer operators take shape parameters as tuples that may be empty
(``stride=()`` means ones), and a ``layout`` string that may be ``None`` (the
channel-first layout of the data's rank). These helpers turn them into what
torch's kernels take, and raise :class:`LayerParameterError` naming the
operator and the parameter when they do not fit.

>>> expand_tuple((), 2, 1, 'stride', 'Convolution')
(1, 1)
>>> expand_tuple(3, 2, 1, 'kernel', 'Convolution')
(3, 3)
>>> channel_last('NHWC', 2, 'Convolution'), channel_last(None, 2, 'Convolution')
(True, False)
"""
from ..base import InvalidArgumentError

__all__ = ["LayerParameterError", "expand_tuple", "channel_last", "to_channel_first",
           "from_channel_first", "channel_axis"]

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


class LayerParameterError(InvalidArgumentError):
    """A layer operator got a parameter, or an input shape, it cannot work with.

    >>> import sparsenet as mx
    >>> try:
    ...     mx.nd.Convolution(mx.nd.ones((1, 2, 4, 4)), mx.nd.ones((3, 2, 2, 2)),
    ...                       kernel=(2, 2), num_filter=4, no_bias=True)
    ... except mx.base.MXNetError as e:
    ...     print(type(e).__name__, isinstance(e, ValueError))
    LayerParameterError True
    """


def expand_tuple(value, n, default, name, opname):
    """``value`` as a tuple of ``n`` ints: ``()``/None gives ``default``, an int repeats.

    >>> expand_tuple((2, 3), 2, 1, 'stride', 'Pooling')
    (2, 3)
    """
    if value is None or (isinstance(value, (tuple, list)) and len(value) == 0):
        return (default,) * n
    if isinstance(value, int):
        return (value,) * n
    try:
        out = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise LayerParameterError(f"{opname}: {name} must be a tuple of {n} ints, got "
                                  f"{value!r}") from None
    if len(out) == 1 and n > 1:
        return out * n
    if len(out) != n:
        raise LayerParameterError(f"{opname}: {name} must have {n} entries (one per spatial "
                                  f"dimension), got {value!r}")
    return out


def channel_last(layout, n, opname):
    """Whether ``layout`` puts the channels last, for ``n`` spatial dimensions.

    ``None`` is the channel-first layout (``NCW``, ``NCHW`` or ``NCDHW``).
    """
    if layout is None:
        return False
    names = _LAYOUTS.get(n)
    if names is None or layout not in names:
        expected = " or ".join(names) if names else "a 1-D, 2-D or 3-D layout"
        raise LayerParameterError(f"{opname}: layout {layout!r} does not fit {n} spatial "
                                  f"dimension(s); expected {expected}")
    return layout == names[1]


def to_channel_first(x):
    """``(N, *spatial, C)`` to ``(N, C, *spatial)``."""
    return x.movedim(-1, 1)


def from_channel_first(x):
    """``(N, C, *spatial)`` to ``(N, *spatial, C)``."""
    return x.movedim(1, -1)


def channel_axis(axis, ndim, opname):
    """``axis`` as a non-negative index into ``ndim`` dimensions.

    >>> channel_axis(-1, 4, 'LayerNorm')
    3
    """
    if not -ndim <= axis < ndim:
        raise LayerParameterError(f"{opname}: axis {axis} is out of range for a {ndim}-D "
                                  f"input (expected -{ndim} <= axis < {ndim})")
    return axis % ndim

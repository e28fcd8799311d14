"""Pixel-shuffle layers (``PixelShuffle1D/2D/3D``): sub-pixel upsampling, as MXNet 1.9.1.

An input ``(N, C * f1 * ... * fk, S1, ..., Sk)`` becomes ``(N, C, S1 * f1, ..., Sk * fk)``:
output element ``[n, c, s1 * f1 + i1, ..., sk * fk + ik]`` is input element
``[n, c * (f1 * ... * fk) + (i1 * f2 * ... * fk + ... + ik), s1, ..., sk]`` (for 2-D this
is ``torch.nn.functional.pixel_shuffle``). The layers are hybridizable: the shuffle is a
chain of ``reshape`` and ``transpose``.

>>> import sparsenet as mx
>>> x = mx.nd.arange(8).reshape((1, 4, 1, 2))
>>> mx.gluon.contrib.nn.PixelShuffle2D(2)(x).asnumpy()
array([[[[0., 2., 1., 3.],
         [4., 6., 5., 7.]]]], dtype=float32)
"""
from ....base import InvalidArgumentError
from ...block import HybridBlock

__all__ = ["PixelShuffle1D", "PixelShuffle2D", "PixelShuffle3D"]


def _factors(factor, ndim, layer):
    """``factor`` (an int or a tuple of ``ndim`` ints, each >= 1) as a tuple of ints."""
    if isinstance(factor, (list, tuple)):
        factors = tuple(int(f) for f in factor)
    else:
        factors = (int(factor),) * ndim
    if len(factors) != ndim or any(f < 1 for f in factors):
        raise InvalidArgumentError(f"{layer}: factor must be a positive int or a tuple of "
                                   f"{ndim} positive ints, got {factor!r}")
    return factors


def _shuffle(F, x, factors):
    """Move the channel blocks of ``factors`` into the trailing spatial axes of ``x``."""
    k = len(factors)
    total = 1
    for f in factors:
        total *= f
    x = F.reshape(x, (0, -4, -1, total, -2))             # (N, C, f1...fk, S1..Sk)
    for i, f in enumerate(factors[:-1]):                  # (N, C, f1, ..., fk, S1..Sk)
        x = F.reshape(x, (0,) * (2 + i) + (-4, f, -1, -2))
    # interleave: (N, C, S1, f1, S2, f2, ..., Sk, fk)
    axes = [0, 1]
    for i in range(k):
        axes += [2 + k + i, 2 + i]
    x = F.transpose(x, tuple(axes))
    return F.reshape(x, (0, 0) + (-3,) * k)              # (N, C, S1*f1, ..., Sk*fk)


class _PixelShuffle(HybridBlock):
    """Shared body of the 1-, 2- and 3-D pixel-shuffle layers."""

    _ndim = 0

    def __init__(self, factor, **kwargs):
        super().__init__(**kwargs)
        self._factors = _factors(factor, self._ndim, type(self).__name__)

    def hybrid_forward(self, F, x):
        return _shuffle(F, x, self._factors)

    def __repr__(self):
        shown = self._factors[0] if self._ndim == 1 else self._factors
        return f"{type(self).__name__}({shown})"


class PixelShuffle1D(_PixelShuffle):
    """Pixel-shuffle upsampling along the ``W`` axis: ``(N, f*C, W) -> (N, C, W*f)``.

    Parameters
    ----------
    factor : int or 1-tuple of int
        Upsampling factor, applied to ``W``.

    Examples
    --------
    >>> import sparsenet as mx
    >>> x = mx.nd.arange(6).reshape((1, 2, 3))
    >>> mx.gluon.contrib.nn.PixelShuffle1D(2)(x).asnumpy()
    array([[[0., 3., 1., 4., 2., 5.]]], dtype=float32)
    """

    _ndim = 1


class PixelShuffle2D(_PixelShuffle):
    """Pixel-shuffle upsampling of ``H`` and ``W``: ``(N, f1*f2*C, H, W) -> (N, C, H*f1, W*f2)``.

    Parameters
    ----------
    factor : int or 2-tuple of int
        Upsampling factors, applied to ``H`` and ``W``.

    Examples
    --------
    >>> import sparsenet as mx
    >>> mx.gluon.contrib.nn.PixelShuffle2D((2, 3))(mx.nd.ones((1, 12, 3, 5))).shape
    (1, 2, 6, 15)
    """

    _ndim = 2


class PixelShuffle3D(_PixelShuffle):
    """Pixel-shuffle upsampling of ``D``, ``H`` and ``W``:
    ``(N, f1*f2*f3*C, D, H, W) -> (N, C, D*f1, H*f2, W*f3)``.

    Parameters
    ----------
    factor : int or 3-tuple of int
        Upsampling factors, applied to ``D``, ``H`` and ``W``.

    Examples
    --------
    >>> import sparsenet as mx
    >>> mx.gluon.contrib.nn.PixelShuffle3D((2, 3, 4))(mx.nd.ones((1, 48, 3, 5, 7))).shape
    (1, 2, 6, 15, 28)
    """

    _ndim = 3

"""Pooling and padding layers: Max/Avg/GlobalMax/GlobalAvg Pool 1D-3D, ReflectionPad2D.

Same constructor arguments, defaults and naming (``pool0``, ``pool1``, ...) as
MXNet 1.9.1's Gluon; they run the ``Pooling`` and ``pad`` operators.
``ceil_mode=True`` is MXNet's ``pooling_convention='full'``.

>>> import sparsenet as mx
>>> pool = mx.gluon.nn.MaxPool2D()
>>> pool
MaxPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), ceil_mode=False, global_pool=False, \
pool_type=max, layout=NCHW)
>>> pool(mx.nd.ones((1, 3, 5, 5))).shape
(1, 3, 2, 2)
"""
from numbers import Integral

from ...base import InvalidArgumentError
from ..block import HybridBlock

__all__ = ["MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D", "AvgPool3D",
           "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D", "GlobalAvgPool1D",
           "GlobalAvgPool2D", "GlobalAvgPool3D", "ReflectionPad2D"]

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


class _Pooling(HybridBlock):
    """Pooling with MXNet's ``Pooling`` parameters (shared by the pooling layers)."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        if strides is None:
            strides = pool_size
        if isinstance(strides, Integral):
            strides = (strides,) * len(pool_size)
        if isinstance(padding, Integral):
            padding = (padding,) * len(pool_size)
        self._kwargs = {"kernel": pool_size, "stride": strides, "pad": padding,
                        "global_pool": global_pool, "pool_type": pool_type, "layout": layout,
                        "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self):
        return "pool"

    def hybrid_forward(self, F, x):
        return F.Pooling(x, **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return (f"{type(self).__name__}(size={k['kernel']}, stride={k['stride']}, "
                f"padding={k['pad']}, ceil_mode={k['pooling_convention'] == 'full'}, "
                f"global_pool={k['global_pool']}, pool_type={k['pool_type']}, "
                f"layout={k['layout']})")


def _pool_args(cls, n, pool_size, layout):
    if layout not in _LAYOUTS[n]:
        raise InvalidArgumentError(f"{cls}: layout must be one of {_LAYOUTS[n]}, got {layout!r}")
    if isinstance(pool_size, Integral):
        pool_size = (pool_size,) * n
    pool_size = tuple(pool_size)
    if len(pool_size) != n:
        raise InvalidArgumentError(f"{cls}: pool_size must be an int or a tuple of {n} ints, got "
                                   f"{pool_size!r}")
    return pool_size


class MaxPool1D(_Pooling):
    """Max pooling over the width of ``(batch, channels, width)`` data.

    Parameters
    ----------
    pool_size : int or tuple of 1 int
    strides : int, optional
        Defaults to ``pool_size``.
    padding : int
    layout : {'NCW', 'NWC'}
    ceil_mode : bool
        Round the output size up (MXNet's ``'full'`` convention).

    Examples
    --------
    >>> import sparsenet as mx
    >>> mx.gluon.nn.MaxPool1D(ceil_mode=True)(mx.nd.array([[[1.0, 5.0, 2.0]]])).asnumpy()
    array([[[5., 2.]]], dtype=float32)
    """

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False,
                 **kwargs):
        pool_size = _pool_args("MaxPool1D", 1, pool_size, layout)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "max", layout,
                         **kwargs)


class MaxPool2D(_Pooling):
    """Max pooling over height and width; arguments as :class:`MaxPool1D` (2-tuples).

    >>> import sparsenet as mx
    >>> mx.gluon.nn.MaxPool2D(3, 2, 1)(mx.nd.ones((1, 1, 6, 6))).shape
    (1, 1, 3, 3)
    """

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout="NCHW",
                 ceil_mode=False, **kwargs):
        pool_size = _pool_args("MaxPool2D", 2, pool_size, layout)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "max", layout,
                         **kwargs)


class MaxPool3D(_Pooling):
    """Max pooling over depth, height and width; arguments as :class:`MaxPool1D` (3-tuples).

    >>> import sparsenet as mx
    >>> mx.gluon.nn.MaxPool3D()(mx.nd.ones((1, 1, 4, 4, 4))).shape
    (1, 1, 2, 2, 2)
    """

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout="NCDHW", **kwargs):
        pool_size = _pool_args("MaxPool3D", 3, pool_size, layout)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "max", layout,
                         **kwargs)


class AvgPool1D(_Pooling):
    """Average pooling over the width; ``count_include_pad`` counts padded elements.

    >>> import sparsenet as mx
    >>> x = mx.nd.array([[[1.0, 3.0, 5.0]]])
    >>> mx.gluon.nn.AvgPool1D(2, 2, 1, count_include_pad=False)(x).asnumpy()
    array([[[1., 4.]]], dtype=float32)
    """

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False,
                 count_include_pad=True, **kwargs):
        pool_size = _pool_args("AvgPool1D", 1, pool_size, layout)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


class AvgPool2D(_Pooling):
    """Average pooling over height and width; arguments as :class:`AvgPool1D` (2-tuples).

    >>> import sparsenet as mx
    >>> mx.gluon.nn.AvgPool2D(3, 2, 1, ceil_mode=True)(mx.nd.ones((1, 1, 4, 4))).shape
    (1, 1, 3, 3)
    """

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 layout="NCHW", count_include_pad=True, **kwargs):
        pool_size = _pool_args("AvgPool2D", 2, pool_size, layout)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


class AvgPool3D(_Pooling):
    """Average pooling over depth, height and width; as :class:`AvgPool1D` (3-tuples).

    >>> import sparsenet as mx
    >>> mx.gluon.nn.AvgPool3D()(mx.nd.ones((1, 1, 2, 2, 2))).asnumpy().ravel()
    array([1.], dtype=float32)
    """

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout="NCDHW", count_include_pad=True, **kwargs):
        pool_size = _pool_args("AvgPool3D", 3, pool_size, layout)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


def _global_init(self, cls, n, pool_type, layout, kwargs):
    _pool_args(cls, n, 1, layout)
    _Pooling.__init__(self, (1,) * n, None, 0, True, True, pool_type, layout, **kwargs)


class GlobalMaxPool1D(_Pooling):
    """Max over the whole width: ``(batch, channels, 1)``.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.GlobalMaxPool1D()(mx.nd.array([[[1.0, 5.0, 2.0]]])).asnumpy()
    array([[[5.]]], dtype=float32)
    """

    def __init__(self, layout="NCW", **kwargs):
        _global_init(self, "GlobalMaxPool1D", 1, "max", layout, kwargs)


class GlobalMaxPool2D(_Pooling):
    """Max over height and width: ``(batch, channels, 1, 1)``.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.GlobalMaxPool2D()(mx.nd.ones((2, 3, 4, 4))).shape
    (2, 3, 1, 1)
    """

    def __init__(self, layout="NCHW", **kwargs):
        _global_init(self, "GlobalMaxPool2D", 2, "max", layout, kwargs)


class GlobalMaxPool3D(_Pooling):
    """Max over depth, height and width: ``(batch, channels, 1, 1, 1)``.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.GlobalMaxPool3D()(mx.nd.ones((1, 2, 3, 3, 3))).shape
    (1, 2, 1, 1, 1)
    """

    def __init__(self, layout="NCDHW", **kwargs):
        _global_init(self, "GlobalMaxPool3D", 3, "max", layout, kwargs)


class GlobalAvgPool1D(_Pooling):
    """Mean over the whole width: ``(batch, channels, 1)``.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.GlobalAvgPool1D()(mx.nd.array([[[1.0, 5.0, 3.0]]])).asnumpy()
    array([[[3.]]], dtype=float32)
    """

    def __init__(self, layout="NCW", **kwargs):
        _global_init(self, "GlobalAvgPool1D", 1, "avg", layout, kwargs)


class GlobalAvgPool2D(_Pooling):
    """Mean over height and width: ``(batch, channels, 1, 1)``.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.GlobalAvgPool2D()
    GlobalAvgPool2D(size=(1, 1), stride=(1, 1), padding=(0, 0), ceil_mode=True, \
global_pool=True, pool_type=avg, layout=NCHW)
    """

    def __init__(self, layout="NCHW", **kwargs):
        _global_init(self, "GlobalAvgPool2D", 2, "avg", layout, kwargs)


class GlobalAvgPool3D(_Pooling):
    """Mean over depth, height and width: ``(batch, channels, 1, 1, 1)``.

    >>> import sparsenet as mx
    >>> mx.gluon.nn.GlobalAvgPool3D()(mx.nd.ones((1, 2, 3, 3, 3))).shape
    (1, 2, 1, 1, 1)
    """

    def __init__(self, layout="NCDHW", **kwargs):
        _global_init(self, "GlobalAvgPool3D", 3, "avg", layout, kwargs)


class ReflectionPad2D(HybridBlock):
    """Pad the height and width of NCHW data by reflection (the edge is not repeated).

    Parameters
    ----------
    padding : int or tuple of 8 ints
        An int pads each side of height and width by that much; a tuple is
        the ``pad_width`` of the ``pad`` operator.

    Examples
    --------
    >>> import sparsenet as mx
    >>> x = mx.nd.arange(3).reshape((1, 1, 1, 3))
    >>> mx.gluon.nn.ReflectionPad2D((0, 0, 0, 0, 0, 0, 1, 1))(x).asnumpy()
    array([[[[1., 0., 1., 2., 1.]]]], dtype=float32)
    """

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, Integral):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        padding = tuple(padding)
        if len(padding) != 8:
            raise InvalidArgumentError(
                f"ReflectionPad2D: padding must be an int or a tuple of 8 ints, "
                f"got {padding!r}")
        self._padding = padding

    def hybrid_forward(self, F, x):
        return F.pad(x, mode="reflect", pad_width=self._padding)

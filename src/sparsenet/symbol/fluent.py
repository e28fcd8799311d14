"""Symbol's fluent methods: ``x.take(i, axis=1)`` is ``mx.sym.take(x, i, axis=1)``.

Each method hands its arguments to the operator of the same name unchanged, as
MXNet's do, so the node records exactly the parameters given (``list_attr()``
and the JSON match MXNet's). The NDArray-only methods (``asnumpy``,
``wait_to_read``, ``backward``, ...) and the in-place operators raise
:class:`~sparsenet.base.NotImplementedForSymbol`, as in MXNet.

>>> import sparsenet as mx
>>> x = mx.sym.var('x')
>>> x.take(mx.sym.var('i'), axis=1, name='t').list_attr()
{'axis': '1'}
>>> x.sum(1).list_attr()
{'axis': '1'}
"""
from ..base import NotImplementedForSymbol, numpy_dtype

__all__ = ["FluentMethods"]


class FluentMethods:
    """The fluent methods mixed into :class:`~sparsenet.symbol.Symbol`."""

    __slots__ = ()

    def _fluent(self, opname, /, *args, **kwargs):
        from . import op  # why here: op imports symbol, which mixes this class in
        return op.SYMBOL_OPS[opname](self, *args, **kwargs)

    # ------------------------------------------------------------------ with special arguments
    def reshape(self, *shape, **kwargs):
        """``mx.sym.reshape(self, shape=...)``; also ``x.reshape(2, 3)``.

        >>> import sparsenet as mx
        >>> mx.sym.var('x').reshape((2, 3)).list_attr()
        {'shape': '(2, 3)'}
        """
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        if shape:
            kwargs["shape"] = tuple(shape)
        return self._fluent("reshape", **kwargs)

    def astype(self, dtype, **kwargs):
        """``mx.sym.cast(self, dtype=...)``."""
        return self._fluent("cast", dtype=numpy_dtype(dtype).name, **kwargs)

    def tostype(self, stype):
        """``mx.sym.cast_storage(self, stype=...)``."""
        return self._fluent("cast_storage", stype=stype)

    def flatten(self, inplace=False, **kwargs):  # noqa: ARG002 - MXNet's signature
        """``mx.sym.flatten(self)``."""
        return self._fluent("flatten", **kwargs)

    def expand_dims(self, axis, inplace=False, **kwargs):  # noqa: ARG002 - MXNet's signature
        """``mx.sym.expand_dims(self, axis=axis)``."""
        return self._fluent("expand_dims", axis=axis, **kwargs)

    def squeeze(self, axis=None, inplace=False, **kwargs):  # noqa: ARG002 - MXNet's signature
        """``mx.sym.squeeze(self, axis=axis)``."""
        return self._fluent("squeeze", axis=axis, **kwargs)

    def dot(self, other, transpose_a=False, transpose_b=False):
        """``mx.sym.dot(self, other, ...)`` (sparsenet addition)."""
        return self._fluent("dot", other, transpose_a=transpose_a, transpose_b=transpose_b)

    @property
    def T(self):  # noqa: N802
        """``mx.sym.transpose(self)`` (sparsenet addition)."""
        return self._fluent("transpose")

    def as_nd_ndarray(self):
        """This Symbol (the legacy ``mx.sym`` interface is the only one)."""
        return self

    # ------------------------------------------------------------------ NDArray only
    def wait_to_read(self):
        """NDArray only: raises :class:`NotImplementedForSymbol`."""
        raise NotImplementedForSymbol(self.wait_to_read, None)

    def asnumpy(self):
        """NDArray only: raises :class:`NotImplementedForSymbol`.

        >>> import sparsenet as mx
        >>> mx.sym.var('x').asnumpy()
        Traceback (most recent call last):
        ...
        sparsenet.base.NotImplementedForSymbol: Function asnumpy is not implemented for Symbol...
        """
        raise NotImplementedForSymbol(self.asnumpy, None)

    def asscalar(self):
        """NDArray only: raises :class:`NotImplementedForSymbol`."""
        raise NotImplementedForSymbol(self.asscalar, None)

    def copy(self):
        """NDArray only: raises :class:`NotImplementedForSymbol` (``copy.copy(sym)`` works)."""
        raise NotImplementedForSymbol(self.copy, None)

    def as_in_context(self):
        """NDArray only: raises :class:`NotImplementedForSymbol`."""
        raise NotImplementedForSymbol(self.as_in_context, None)

    def detach(self):
        """NDArray only: raises :class:`NotImplementedForSymbol`."""
        raise NotImplementedForSymbol(self.detach, None)

    def backward(self):
        """NDArray only: raises :class:`NotImplementedForSymbol`."""
        raise NotImplementedForSymbol(self.backward, None)

    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, "bool")

    def __iadd__(self, other):
        raise NotImplementedForSymbol(self.__iadd__, "+=", other, 1)

    def __isub__(self, other):
        raise NotImplementedForSymbol(self.__isub__, "-=", other)

    def __imul__(self, other):
        raise NotImplementedForSymbol(self.__imul__, "*=", other)

    def __idiv__(self, other):
        raise NotImplementedForSymbol(self.__idiv__, "/=", other)

    def __itruediv__(self, other):
        raise NotImplementedForSymbol(self.__itruediv__, "/=", other)

    # ------------------------------------------------------------------ arguments passed as given
    def zeros_like(self, *args, **kwargs):
        """``mx.sym.zeros_like(self, *args, **kwargs)``."""
        return self._fluent("zeros_like", *args, **kwargs)

    def ones_like(self, *args, **kwargs):
        """``mx.sym.ones_like(self, *args, **kwargs)``."""
        return self._fluent("ones_like", *args, **kwargs)

    def broadcast_axes(self, *args, **kwargs):
        """``mx.sym.broadcast_axes(self, *args, **kwargs)``."""
        return self._fluent("broadcast_axes", *args, **kwargs)

    def repeat(self, *args, **kwargs):
        """``mx.sym.repeat(self, *args, **kwargs)``."""
        return self._fluent("repeat", *args, **kwargs)

    def swapaxes(self, *args, **kwargs):
        """``mx.sym.swapaxes(self, *args, **kwargs)``."""
        return self._fluent("swapaxes", *args, **kwargs)

    def split(self, *args, **kwargs):
        """``mx.sym.split(self, *args, **kwargs)``."""
        return self._fluent("split", *args, **kwargs)

    def slice(self, *args, **kwargs):
        """``mx.sym.slice(self, *args, **kwargs)``."""
        return self._fluent("slice", *args, **kwargs)

    def slice_axis(self, *args, **kwargs):
        """``mx.sym.slice_axis(self, *args, **kwargs)``."""
        return self._fluent("slice_axis", *args, **kwargs)

    def slice_like(self, *args, **kwargs):
        """``mx.sym.slice_like(self, *args, **kwargs)``."""
        return self._fluent("slice_like", *args, **kwargs)

    def take(self, *args, **kwargs):
        """``mx.sym.take(self, *args, **kwargs)``."""
        return self._fluent("take", *args, **kwargs)

    def one_hot(self, *args, **kwargs):
        """``mx.sym.one_hot(self, *args, **kwargs)``."""
        return self._fluent("one_hot", *args, **kwargs)

    def pick(self, *args, **kwargs):
        """``mx.sym.pick(self, *args, **kwargs)``."""
        return self._fluent("pick", *args, **kwargs)

    def sort(self, *args, **kwargs):
        """``mx.sym.sort(self, *args, **kwargs)``."""
        return self._fluent("sort", *args, **kwargs)

    def topk(self, *args, **kwargs):
        """``mx.sym.topk(self, *args, **kwargs)``."""
        return self._fluent("topk", *args, **kwargs)

    def argsort(self, *args, **kwargs):
        """``mx.sym.argsort(self, *args, **kwargs)``."""
        return self._fluent("argsort", *args, **kwargs)

    def argmax(self, *args, **kwargs):
        """``mx.sym.argmax(self, *args, **kwargs)``."""
        return self._fluent("argmax", *args, **kwargs)

    def argmax_channel(self, *args, **kwargs):
        """``mx.sym.argmax_channel(self, *args, **kwargs)``."""
        return self._fluent("argmax_channel", *args, **kwargs)

    def argmin(self, *args, **kwargs):
        """``mx.sym.argmin(self, *args, **kwargs)``."""
        return self._fluent("argmin", *args, **kwargs)

    def clip(self, *args, **kwargs):
        """``mx.sym.clip(self, *args, **kwargs)``."""
        return self._fluent("clip", *args, **kwargs)

    def abs(self, *args, **kwargs):
        """``mx.sym.abs(self, *args, **kwargs)``."""
        return self._fluent("abs", *args, **kwargs)

    def sign(self, *args, **kwargs):
        """``mx.sym.sign(self, *args, **kwargs)``."""
        return self._fluent("sign", *args, **kwargs)

    def broadcast_to(self, *args, **kwargs):
        """``mx.sym.broadcast_to(self, *args, **kwargs)``."""
        return self._fluent("broadcast_to", *args, **kwargs)

    def tile(self, *args, **kwargs):
        """``mx.sym.tile(self, *args, **kwargs)``."""
        return self._fluent("tile", *args, **kwargs)

    def transpose(self, *args, **kwargs):
        """``mx.sym.transpose(self, *args, **kwargs)``."""
        return self._fluent("transpose", *args, **kwargs)

    def flip(self, *args, **kwargs):
        """``mx.sym.flip(self, *args, **kwargs)``."""
        return self._fluent("flip", *args, **kwargs)

    def sum(self, *args, **kwargs):
        """``mx.sym.sum(self, *args, **kwargs)``."""
        return self._fluent("sum", *args, **kwargs)

    def nansum(self, *args, **kwargs):
        """``mx.sym.nansum(self, *args, **kwargs)``."""
        return self._fluent("nansum", *args, **kwargs)

    def prod(self, *args, **kwargs):
        """``mx.sym.prod(self, *args, **kwargs)``."""
        return self._fluent("prod", *args, **kwargs)

    def nanprod(self, *args, **kwargs):
        """``mx.sym.nanprod(self, *args, **kwargs)``."""
        return self._fluent("nanprod", *args, **kwargs)

    def mean(self, *args, **kwargs):
        """``mx.sym.mean(self, *args, **kwargs)``."""
        return self._fluent("mean", *args, **kwargs)

    def max(self, *args, **kwargs):
        """``mx.sym.max(self, *args, **kwargs)``."""
        return self._fluent("max", *args, **kwargs)

    def min(self, *args, **kwargs):
        """``mx.sym.min(self, *args, **kwargs)``."""
        return self._fluent("min", *args, **kwargs)

    def norm(self, *args, **kwargs):
        """``mx.sym.norm(self, *args, **kwargs)``."""
        return self._fluent("norm", *args, **kwargs)

    def round(self, *args, **kwargs):
        """``mx.sym.round(self, *args, **kwargs)``."""
        return self._fluent("round", *args, **kwargs)

    def rint(self, *args, **kwargs):
        """``mx.sym.rint(self, *args, **kwargs)``."""
        return self._fluent("rint", *args, **kwargs)

    def fix(self, *args, **kwargs):
        """``mx.sym.fix(self, *args, **kwargs)``."""
        return self._fluent("fix", *args, **kwargs)

    def floor(self, *args, **kwargs):
        """``mx.sym.floor(self, *args, **kwargs)``."""
        return self._fluent("floor", *args, **kwargs)

    def ceil(self, *args, **kwargs):
        """``mx.sym.ceil(self, *args, **kwargs)``."""
        return self._fluent("ceil", *args, **kwargs)

    def trunc(self, *args, **kwargs):
        """``mx.sym.trunc(self, *args, **kwargs)``."""
        return self._fluent("trunc", *args, **kwargs)

    def sin(self, *args, **kwargs):
        """``mx.sym.sin(self, *args, **kwargs)``."""
        return self._fluent("sin", *args, **kwargs)

    def cos(self, *args, **kwargs):
        """``mx.sym.cos(self, *args, **kwargs)``."""
        return self._fluent("cos", *args, **kwargs)

    def tan(self, *args, **kwargs):
        """``mx.sym.tan(self, *args, **kwargs)``."""
        return self._fluent("tan", *args, **kwargs)

    def arcsin(self, *args, **kwargs):
        """``mx.sym.arcsin(self, *args, **kwargs)``."""
        return self._fluent("arcsin", *args, **kwargs)

    def arccos(self, *args, **kwargs):
        """``mx.sym.arccos(self, *args, **kwargs)``."""
        return self._fluent("arccos", *args, **kwargs)

    def arctan(self, *args, **kwargs):
        """``mx.sym.arctan(self, *args, **kwargs)``."""
        return self._fluent("arctan", *args, **kwargs)

    def degrees(self, *args, **kwargs):
        """``mx.sym.degrees(self, *args, **kwargs)``."""
        return self._fluent("degrees", *args, **kwargs)

    def radians(self, *args, **kwargs):
        """``mx.sym.radians(self, *args, **kwargs)``."""
        return self._fluent("radians", *args, **kwargs)

    def sinh(self, *args, **kwargs):
        """``mx.sym.sinh(self, *args, **kwargs)``."""
        return self._fluent("sinh", *args, **kwargs)

    def cosh(self, *args, **kwargs):
        """``mx.sym.cosh(self, *args, **kwargs)``."""
        return self._fluent("cosh", *args, **kwargs)

    def tanh(self, *args, **kwargs):
        """``mx.sym.tanh(self, *args, **kwargs)``."""
        return self._fluent("tanh", *args, **kwargs)

    def arcsinh(self, *args, **kwargs):
        """``mx.sym.arcsinh(self, *args, **kwargs)``."""
        return self._fluent("arcsinh", *args, **kwargs)

    def arccosh(self, *args, **kwargs):
        """``mx.sym.arccosh(self, *args, **kwargs)``."""
        return self._fluent("arccosh", *args, **kwargs)

    def arctanh(self, *args, **kwargs):
        """``mx.sym.arctanh(self, *args, **kwargs)``."""
        return self._fluent("arctanh", *args, **kwargs)

    def exp(self, *args, **kwargs):
        """``mx.sym.exp(self, *args, **kwargs)``."""
        return self._fluent("exp", *args, **kwargs)

    def expm1(self, *args, **kwargs):
        """``mx.sym.expm1(self, *args, **kwargs)``."""
        return self._fluent("expm1", *args, **kwargs)

    def log(self, *args, **kwargs):
        """``mx.sym.log(self, *args, **kwargs)``."""
        return self._fluent("log", *args, **kwargs)

    def log10(self, *args, **kwargs):
        """``mx.sym.log10(self, *args, **kwargs)``."""
        return self._fluent("log10", *args, **kwargs)

    def log2(self, *args, **kwargs):
        """``mx.sym.log2(self, *args, **kwargs)``."""
        return self._fluent("log2", *args, **kwargs)

    def log1p(self, *args, **kwargs):
        """``mx.sym.log1p(self, *args, **kwargs)``."""
        return self._fluent("log1p", *args, **kwargs)

    def sqrt(self, *args, **kwargs):
        """``mx.sym.sqrt(self, *args, **kwargs)``."""
        return self._fluent("sqrt", *args, **kwargs)

    def rsqrt(self, *args, **kwargs):
        """``mx.sym.rsqrt(self, *args, **kwargs)``."""
        return self._fluent("rsqrt", *args, **kwargs)

    def cbrt(self, *args, **kwargs):
        """``mx.sym.cbrt(self, *args, **kwargs)``."""
        return self._fluent("cbrt", *args, **kwargs)

    def rcbrt(self, *args, **kwargs):
        """``mx.sym.rcbrt(self, *args, **kwargs)``."""
        return self._fluent("rcbrt", *args, **kwargs)

    def square(self, *args, **kwargs):
        """``mx.sym.square(self, *args, **kwargs)``."""
        return self._fluent("square", *args, **kwargs)

    def reciprocal(self, *args, **kwargs):
        """``mx.sym.reciprocal(self, *args, **kwargs)``."""
        return self._fluent("reciprocal", *args, **kwargs)

    def relu(self, *args, **kwargs):
        """``mx.sym.relu(self, *args, **kwargs)``."""
        return self._fluent("relu", *args, **kwargs)

    def sigmoid(self, *args, **kwargs):
        """``mx.sym.sigmoid(self, *args, **kwargs)``."""
        return self._fluent("sigmoid", *args, **kwargs)

    def softmax(self, *args, **kwargs):
        """``mx.sym.softmax(self, *args, **kwargs)``."""
        return self._fluent("softmax", *args, **kwargs)

    def log_softmax(self, *args, **kwargs):
        """``mx.sym.log_softmax(self, *args, **kwargs)``."""
        return self._fluent("log_softmax", *args, **kwargs)

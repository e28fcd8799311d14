"""Python operators on Symbols: ``a + b``, ``a * 2``, ``-a``, ``a < b``, ... add graph nodes.

Symbol-Symbol operators are the elementwise (``+ - * /``) or broadcasting
(``% ** == < ...``) registry operators; a Python number on either side selects
the ``*_scalar`` operator, as in MXNet. Node names follow MXNet's hints
(``_plus0``, ``_mulscalar0``, ...).

>>> import sparsenet as mx
>>> with mx.name.NameManager():
...     (mx.sym.var('a') + mx.sym.var('b')).name, (mx.sym.var('a') * 2).name
('_plus0', '_mulscalar0')
"""
import numpy as np

__all__ = ["PythonOperators"]


class PythonOperators:
    """The Python operators mixed into :class:`~sparsenet.symbol.Symbol`."""

    __slots__ = ()

    def _binary(self, other, name, scalar_name, hint, scalar_hint, reverse=False):
        from . import op  # why here: op imports symbol, which mixes this class in
        if isinstance(other, PythonOperators):  # a Symbol
            lhs, rhs = (other, self) if reverse else (self, other)
            return op.apply(name, [lhs, rhs], {}, hint=hint)
        if isinstance(other, (int, float, np.number, bool)):
            return op.apply(scalar_name, [self], {"scalar": float(other)}, hint=scalar_hint)
        return NotImplemented

    def __add__(self, other):
        return self._binary(other, "elemwise_add", "_plus_scalar", "_plus", "_plusscalar")

    __radd__ = __add__

    def __sub__(self, other):
        return self._binary(other, "elemwise_sub", "_minus_scalar", "_minus", "_minusscalar")

    def __rsub__(self, other):
        return self._binary(other, "elemwise_sub", "_rminus_scalar", "_minus", "_rminusscalar",
                            reverse=True)

    def __mul__(self, other):
        return self._binary(other, "elemwise_mul", "_mul_scalar", "_mul", "_mulscalar")

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self._binary(other, "elemwise_div", "_div_scalar", "_div", "_divscalar")

    def __rtruediv__(self, other):
        return self._binary(other, "elemwise_div", "_rdiv_scalar", "_div", "_rdivscalar",
                            reverse=True)

    __div__, __rdiv__ = __truediv__, __rtruediv__

    def __mod__(self, other):
        return self._binary(other, "broadcast_mod", "_mod_scalar", "_mod", "_modscalar")

    def __rmod__(self, other):
        return self._binary(other, "broadcast_mod", "_rmod_scalar", "_mod", "_rmodscalar",
                            reverse=True)

    def __pow__(self, other):
        return self._binary(other, "broadcast_power", "_power_scalar", "_power",
                            "_powerscalar")

    def __rpow__(self, other):
        return self._binary(other, "broadcast_power", "_rpower_scalar", "_power",
                            "_rpowerscalar", reverse=True)

    def __neg__(self):
        from . import op  # why here: op imports symbol, which mixes this class in
        return op.apply("negative", [self], {}, hint="negative")

    def __pos__(self):
        return self

    def __abs__(self):
        from . import op  # why here: op imports symbol, which mixes this class in
        return op.apply("abs", [self], {}, hint="abs")

    def __eq__(self, other):
        return self._binary(other, "broadcast_equal", "_equal_scalar", "_equal",
                            "_equalscalar")

    def __ne__(self, other):
        return self._binary(other, "broadcast_not_equal", "_not_equal_scalar", "_not_equal",
                            "_notequalscalar")

    def __gt__(self, other):
        return self._binary(other, "broadcast_greater", "_greater_scalar", "_greater",
                            "_greaterscalar")

    def __ge__(self, other):
        return self._binary(other, "broadcast_greater_equal", "_greater_equal_scalar",
                            "_greater_equal", "_greaterequalscalar")

    def __lt__(self, other):
        return self._binary(other, "broadcast_lesser", "_lesser_scalar", "_lesser",
                            "_lesserscalar")

    def __le__(self, other):
        return self._binary(other, "broadcast_lesser_equal", "_lesser_equal_scalar",
                            "_lesser_equal", "_lesserequalscalar")

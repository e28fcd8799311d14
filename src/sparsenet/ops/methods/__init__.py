"""The array methods that run an operator, set on the array classes when ``sparsenet.ops`` loads.

``a + b``, ``a.sum()``, ``a.reshape(...)``, ``a.tan()``, ``a.tostype('csr')``: each is
an operator call, so it lives here, in the operator layer. The containers
(:mod:`sparsenet.ndarray`) sit below the operators and never import them; instead,
importing :mod:`sparsenet.ops` (which ``import sparsenet`` does) runs this module,
which sets every method below on its class, as JAX's ``_set_array_base_attributes``
does. Each method is a hand-written function, with its docstring, in one of this
package's modules; the tables name the attribute each becomes.

A subclass keeps its own definition of a name: ``BaseSparseNDArray.reshape`` (which
raises) wins over the ``reshape`` set on ``NDArray`` here.

>>> import sparsenet as mx
>>> mx.nd.NDArray.sum is NDARRAY_METHODS["sum"]
True
>>> (mx.nd.ones((2,)) * 3).sum().asnumpy()
array([6.], dtype=float32)
"""
from ...ndarray.ndarray import NDArray
from ...ndarray.row_sparse import RowSparseNDArray
from . import conversion, elementwise, operators, reductions, selection, shaping

__all__ = ["NDARRAY_METHODS", "ROW_SPARSE_METHODS", "set_array_attributes"]

#: Attributes of every array class (``NDArray`` and, through it, the sparse arrays).
NDARRAY_METHODS = {
    # Python operators
    "__add__": operators.__add__, "__radd__": operators.__radd__,
    "__sub__": operators.__sub__, "__rsub__": operators.__rsub__,
    "__mul__": operators.__mul__, "__rmul__": operators.__rmul__,
    "__truediv__": operators.__truediv__, "__rtruediv__": operators.__rtruediv__,
    "__div__": operators.__truediv__, "__rdiv__": operators.__rtruediv__,
    "__mod__": operators.__mod__, "__rmod__": operators.__rmod__,
    "__pow__": operators.__pow__, "__rpow__": operators.__rpow__,
    "__neg__": operators.__neg__, "__abs__": operators.__abs__,
    "__eq__": operators.__eq__, "__ne__": operators.__ne__,
    "__gt__": operators.__gt__, "__ge__": operators.__ge__,
    "__lt__": operators.__lt__, "__le__": operators.__le__,
    "__iadd__": operators.__iadd__, "__isub__": operators.__isub__,
    "__imul__": operators.__imul__, "__itruediv__": operators.__itruediv__,
    "__idiv__": operators.__itruediv__, "__imod__": operators.__imod__,
    # conversion
    "astype": conversion.astype, "tostype": conversion.tostype,
    # elementwise
    "abs": elementwise.abs, "sign": elementwise.sign, "sqrt": elementwise.sqrt,
    "rsqrt": elementwise.rsqrt, "square": elementwise.square, "exp": elementwise.exp,
    "expm1": elementwise.expm1, "log": elementwise.log, "log1p": elementwise.log1p,
    "log10": elementwise.log10, "log2": elementwise.log2, "sin": elementwise.sin,
    "cos": elementwise.cos, "tan": elementwise.tan, "arcsin": elementwise.arcsin,
    "arccos": elementwise.arccos, "arctan": elementwise.arctan, "sinh": elementwise.sinh,
    "cosh": elementwise.cosh, "tanh": elementwise.tanh, "arcsinh": elementwise.arcsinh,
    "arccosh": elementwise.arccosh, "arctanh": elementwise.arctanh,
    "degrees": elementwise.degrees, "radians": elementwise.radians,
    "sigmoid": elementwise.sigmoid, "relu": elementwise.relu, "round": elementwise.round,
    "rint": elementwise.rint, "fix": elementwise.fix, "floor": elementwise.floor,
    "ceil": elementwise.ceil, "trunc": elementwise.trunc, "cbrt": elementwise.cbrt,
    "rcbrt": elementwise.rcbrt, "reciprocal": elementwise.reciprocal,
    "zeros_like": elementwise.zeros_like, "ones_like": elementwise.ones_like,
    "clip": elementwise.clip, "softmax": elementwise.softmax,
    "log_softmax": elementwise.log_softmax, "softmin": elementwise.softmin,
    # reductions, sorting and search
    "sum": reductions.sum, "mean": reductions.mean, "prod": reductions.prod,
    "nansum": reductions.nansum, "nanprod": reductions.nanprod, "max": reductions.max,
    "min": reductions.min, "norm": reductions.norm, "argmax": reductions.argmax,
    "argmin": reductions.argmin, "argmax_channel": reductions.argmax_channel,
    "topk": reductions.topk, "sort": reductions.sort, "argsort": reductions.argsort,
    # shape and layout
    "T": property(shaping.T), "reshape": shaping.reshape, "reshape_like": shaping.reshape_like,
    "transpose": shaping.transpose, "swapaxes": shaping.swapaxes, "tile": shaping.tile,
    "repeat": shaping.repeat, "broadcast_to": shaping.broadcast_to,
    "broadcast_like": shaping.broadcast_like, "broadcast_axes": shaping.broadcast_axes,
    "flip": shaping.flip, "squeeze": shaping.squeeze, "expand_dims": shaping.expand_dims,
    "flatten": shaping.flatten, "depth_to_space": shaping.depth_to_space,
    "space_to_depth": shaping.space_to_depth, "diag": shaping.diag,
    "shape_array": shaping.shape_array, "size_array": shaping.size_array,
    "split_v2": shaping.split_v2, "pad": shaping.pad,
    # selection
    "slice": selection.slice, "slice_like": selection.slice_like,
    "slice_axis": selection.slice_axis, "take": selection.take, "pick": selection.pick,
    "one_hot": selection.one_hot, "split": selection.split,
}

#: Attributes of row_sparse arrays only.
ROW_SPARSE_METHODS = {
    "retain": selection.retain,
}


def set_array_attributes(cls, table):
    """Set each ``name: value`` of ``table`` as an attribute of class ``cls``."""
    for name, value in table.items():
        setattr(cls, name, value)


set_array_attributes(NDArray, NDARRAY_METHODS)
set_array_attributes(RowSparseNDArray, ROW_SPARSE_METHODS)

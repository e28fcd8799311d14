"""``mx.nd._internal``: the operator names MXNet code reaches through ``_internal``.

MXNet registers its scalar, elementwise and sampling operators under
underscore names (``_plus_scalar``, ``_maximum``, ``_square_sum``,
``_scatter_plus_scalar``, ``_random_uniform``, ...) and CamelCase aliases
(``_PlusScalar``, ``_Maximum``); optimizers and examples call them directly.
Each name here is the registry operator (or sampler) of the same meaning, so
storage types follow the same rule rows (``docs/stype_table.md``): the
``_scatter_*`` operators keep a sparse input's structure, ``_square_sum`` of a
row_sparse array along axis 1 with ``keepdims`` stays row_sparse, and
``_maximum``/``_minimum``/``_hypot`` of two CSR (row_sparse) arrays give CSR
(row_sparse).

``mx.sym._internal`` holds the symbolic form of every operator listed here.

>>> import sparsenet as mx
>>> r = mx.nd.sparse.row_sparse_array(([[3.0, 4.0]], [1]), shape=(3, 2))
>>> s = mx.nd._internal._square_sum(r, axis=1, keepdims=True)
>>> s.stype, s.asnumpy().ravel()
('row_sparse', array([ 0., 25.,  0.], dtype=float32))
>>> mx.nd._internal._plus_scalar(mx.nd.ones((2,)), scalar=1.0).asnumpy()
array([2., 2.], dtype=float32)
"""
from .. import random_ops as _ro
from ..ops import binary as _b
from ..ops import scalar as _s
from ..ops.indexing import slice_assign as _slice_assign
from ..ops.indexing import slice_assign_scalar as _slice_assign_scalar
from ..ops.layout import split_v2 as _split_v2
from ..ops.minmax import hypot as _hypot
from ..ops.minmax import maximum as _maximum
from ..ops.minmax import minimum as _minimum
from ..ops.quadratic import quadratic as _contrib_quadratic
from ..ops.reduce import square_sum as _square_sum
from ..ops.sampling import shuffle as _shuffle
from ..ops.scatter import scatter_elemwise_div as _scatter_elemwise_div
from ..ops.scatter import scatter_minus_scalar as _scatter_minus_scalar
from ..ops.scatter import scatter_plus_scalar as _scatter_plus_scalar
from ..ops.unary import copy as _copy
from .creation import arange as _arange
from .creation import eye as _eye
from .creation import full as _creation_full
from .creation import linspace as _linspace
from .creation import ones as _ones
from .creation import zeros as _zeros

# ---------------------------------------------------------------------- array with scalar
_plus_scalar = _PlusScalar = _s.plus_scalar
_minus_scalar = _MinusScalar = _s.minus_scalar
_rminus_scalar = _RMinusScalar = _s.rminus_scalar
_mul_scalar = _MulScalar = _s.mul_scalar
_div_scalar = _DivScalar = _s.div_scalar
_rdiv_scalar = _RDivScalar = _s.rdiv_scalar
_mod_scalar = _ModScalar = _s.mod_scalar
_rmod_scalar = _RModScalar = _s.rmod_scalar
_power_scalar = _PowerScalar = _s.power_scalar
_rpower_scalar = _RPowerScalar = _s.rpower_scalar
_maximum_scalar = _MaximumScalar = _s.maximum_scalar
_minimum_scalar = _MinimumScalar = _s.minimum_scalar
_hypot_scalar = _HypotScalar = _s.hypot_scalar
_equal_scalar = _EqualScalar = _s.equal_scalar
_not_equal_scalar = _NotEqualScalar = _s.not_equal_scalar
_greater_scalar = _GreaterScalar = _s.greater_scalar
_greater_equal_scalar = _GreaterEqualScalar = _s.greater_equal_scalar
_lesser_scalar = _LesserScalar = _s.lesser_scalar
_lesser_equal_scalar = _LesserEqualScalar = _s.lesser_equal_scalar
_logical_and_scalar = _LogicalAndScalar = _s.logical_and_scalar
_logical_or_scalar = _LogicalOrScalar = _s.logical_or_scalar
_logical_xor_scalar = _LogicalXorScalar = _s.logical_xor_scalar

# ---------------------------------------------------------------------- two arrays of one shape
_plus = _add = _Plus = _grad_add = _b.elemwise_add
_minus = _sub = _Minus = _b.elemwise_sub
_mul = _Mul = _b.elemwise_mul
_div = _Div = _b.elemwise_div
_mod = _Mod = _b.broadcast_mod
_power = _Power = _b.broadcast_power
_Maximum, _Minimum, _Hypot = _maximum, _minimum, _hypot
_equal = _Equal = _b.broadcast_equal
_not_equal = _Not_Equal = _b.broadcast_not_equal
_greater = _Greater = _b.broadcast_greater
_greater_equal = _Greater_Equal = _b.broadcast_greater_equal
_lesser = _Lesser = _b.broadcast_lesser
_lesser_equal = _Lesser_Equal = _b.broadcast_lesser_equal
_logical_and = _Logical_And = _b.broadcast_logical_and
_logical_or = _Logical_Or = _b.broadcast_logical_or
_logical_xor = _Logical_Xor = _b.broadcast_logical_xor

# ---------------------------------------------------------------------- assignment, copies
_crop_assign = _slice_assign
_crop_assign_scalar = _slice_assign_scalar

# ---------------------------------------------------------------------- samplers
_random_uniform = _ro.random_uniform
_random_normal = _ro.random_normal
_random_gamma = _ro.random_gamma
_random_exponential = _ro.random_exponential
_random_poisson = _ro.random_poisson
_random_negative_binomial = _ro.random_negative_binomial
_random_generalized_negative_binomial = _ro.random_generalized_negative_binomial
_random_randint = _ro.random_randint
_sample_uniform = _ro.sample_uniform
_sample_normal = _ro.sample_normal
_sample_gamma = _ro.sample_gamma
_sample_exponential = _ro.sample_exponential
_sample_poisson = _ro.sample_poisson
_sample_negative_binomial = _ro.sample_negative_binomial
_sample_generalized_negative_binomial = _ro.sample_generalized_negative_binomial
_sample_multinomial = _ro.sample_multinomial


# ---------------------------------------------------------------------- creation
def _full(shape, ctx=None, dtype=None, value=0.0, **kwargs):
    """An array of ``shape`` filled with ``value`` (MXNet's ``_full`` operator).

    >>> _full((2,), value=3.0).asnumpy()
    array([3., 3.], dtype=float32)
    """
    return _creation_full(shape, value, ctx=ctx, dtype=dtype)


__all__ = sorted(name for name in dir() if name.startswith("_") and not name.startswith("__")
                 and name not in ("_ro", "_b", "_s", "_creation_full"))

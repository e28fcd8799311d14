"""MXNet's ``_scatter_*`` operators: arithmetic on the stored values of a sparse array only.

Where ``x + 1`` of a sparse ``x`` is dense (every zero becomes 1), the scatter
forms change only the stored values and keep the structure, so the result
stays sparse (MXNet 1.9.1's optimizers and its factorization-machine example
use them):

- ``_scatter_plus_scalar(x, scalar)``, ``_scatter_minus_scalar(x, scalar)``:
  CSR -> CSR, row_sparse -> row_sparse, dense -> dense (plain ``x ± s``).
- ``_scatter_elemwise_div(lhs, rhs)``: a row_sparse ``lhs`` gives row_sparse,
  its stored rows divided by the same rows of ``rhs`` (any storage type); rows
  ``lhs`` does not store stay zero (where ``lhs / rhs`` would be NaN for
  ``0 / 0``). Other storage types divide everywhere (a sparse operand falls back
  to dense, as in MXNet).

>>> import sparsenet as mx
>>> r = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2))
>>> s = mx.nd._internal._scatter_plus_scalar(r, scalar=1.0)
>>> s.stype, s.asnumpy()
('row_sparse', array([[0., 0.],
       [2., 3.],
       [0., 0.]], dtype=float32))
"""
from ..base import InvalidArgumentError
from .binary import _div
from .kernels import dense_rows, values_map
from .registry import CSR, DEFAULT, ROW_SPARSE, defop, rule
from .scalar import _keep

__all__ = ["scatter_plus_scalar", "scatter_minus_scalar", "scatter_elemwise_div"]


@defop(name="_scatter_plus_scalar")
def scatter_plus_scalar(data, *, scalar=0.0):
    """``data + scalar`` on the stored values of a sparse array (everywhere when dense).

    >>> import sparsenet as mx
    >>> mx.nd._internal._scatter_plus_scalar(mx.nd.array([1.0, 2.0]), scalar=1.0).asnumpy()
    array([2., 3.], dtype=float32)
    """
    return _keep(data, data + scalar)


@defop(name="_scatter_minus_scalar")
def scatter_minus_scalar(data, *, scalar=0.0):
    """``data - scalar`` on the stored values of a sparse array (everywhere when dense).

    >>> import sparsenet as mx
    >>> a = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 1], [0, 1, 2]), shape=(2, 2))
    >>> mx.nd._internal._scatter_minus_scalar(a, scalar=1.0).asnumpy()
    array([[0., 0.],
           [0., 1.]], dtype=float32)
    """
    return _keep(data, data - scalar)


@defop(name="_scatter_elemwise_div")
def scatter_elemwise_div(lhs, rhs):
    """``lhs / rhs`` for arrays of one shape; a row_sparse ``lhs`` divides its stored rows only.

    >>> import sparsenet as mx
    >>> r = mx.nd.sparse.row_sparse_array(([[2.0, 4.0]], [0]), shape=(2, 2))
    >>> mx.nd._internal._scatter_elemwise_div(r, mx.nd.full((2, 2), 2.0)).asnumpy()
    array([[1., 2.],
           [0., 0.]], dtype=float32)
    """
    _check_shapes(lhs, rhs)
    return _div(lhs, rhs)


def _check_shapes(lhs, rhs):
    if tuple(lhs.shape) != tuple(rhs.shape):
        raise InvalidArgumentError(f"_scatter_elemwise_div: lhs and rhs must have one shape, "
                                   f"got {tuple(lhs.shape)} and {tuple(rhs.shape)}")


# ---------------------------------------------------------------------- rule rows
def _on_values(op):
    def kernel(data, *, scalar=0.0):
        return values_map(data, lambda v: op.fn(v, scalar=scalar))
    kernel.__name__ = f"_{op.name}_on_values"
    return kernel


for _op in (scatter_plus_scalar, scatter_minus_scalar):
    rule(_op, CSR, out=CSR)(_on_values(_op))
    rule(_op, ROW_SPARSE, out=ROW_SPARSE)(_on_values(_op))


@rule(scatter_elemwise_div, ROW_SPARSE, DEFAULT, out=ROW_SPARSE)
@rule(scatter_elemwise_div, ROW_SPARSE, CSR, out=ROW_SPARSE)
@rule(scatter_elemwise_div, ROW_SPARSE, ROW_SPARSE, out=ROW_SPARSE)
def _scatter_div_rsp(lhs, rhs):
    _check_shapes(lhs, rhs)
    return lhs._with_data(_div(lhs._data, dense_rows(rhs, lhs._indices)))

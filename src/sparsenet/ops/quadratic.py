"""``contrib.quadratic``: ``a * x**2 + b * x + c``, elementwise.

With ``c == 0`` the polynomial maps zero to zero, so a CSR input gives CSR (as
MXNet 1.9.1) and a row_sparse input gives row_sparse (MXNet densifies it), the
polynomial applied to the stored values. With ``c != 0`` a sparse input falls
back to dense.

>>> import sparsenet as mx
>>> x = mx.nd.sparse.csr_matrix(([1.0, -2.0], [0, 1], [0, 1, 2]), shape=(2, 2))
>>> y = mx.nd.contrib.quadratic(x, a=1, b=2)
>>> y.stype, y.asnumpy()
('csr', array([[3., 0.],
       [0., 0.]], dtype=float32))
"""
from .kernels import values_map
from .registry import CSR, ROW_SPARSE, defop, rule

__all__ = ["quadratic"]


@defop(name="_contrib_quadratic")
def quadratic(data, *, a=0.0, b=0.0, c=0.0):
    """``a * data**2 + b * data + c``, elementwise (gradient ``2 a x + b``).

    >>> import sparsenet as mx
    >>> mx.nd.contrib.quadratic(mx.nd.array([1.0, 2.0]), a=1, b=2, c=3).asnumpy()
    array([ 6., 11.], dtype=float32)
    """
    out = data * data * a + data * b + c
    return out if out.dtype == data.dtype else out.to(data.dtype)


def _zero_constant(p):
    """c == 0"""
    return p["c"] == 0


@rule(quadratic, CSR, out=CSR, when=_zero_constant)
@rule(quadratic, ROW_SPARSE, out=ROW_SPARSE, when=_zero_constant)
def _quadratic_on_values(data, *, a=0.0, b=0.0, c=0.0):
    return values_map(data, lambda v: quadratic.fn(v, a=a, b=b, c=c))

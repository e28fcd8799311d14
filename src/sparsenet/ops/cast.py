"""``cast_storage``: conversion between storage types, one rule row per direction."""
from ..ndarray import cast_storage as k
from ..ndarray.ndarray import NDArray
from .registry import CSR, DEFAULT, ROW_SPARSE, defop, rule

__all__ = ["cast_storage"]


@defop
def cast_storage(data, *, stype="default"):
    """Return ``data`` in storage type ``stype`` (a new array).

    From dense the result is compact: zero values (CSR) or all-zero rows
    (row_sparse) are not stored. Between CSR and row_sparse every stored value
    is kept; CSR is 2-D only.

    Parameters
    ----------
    data : NDArray
    stype : {'default', 'csr', 'row_sparse'}

    Examples
    --------
    >>> import sparsenet as mx
    >>> d = mx.nd.array([[1, 0], [0, 0]])
    >>> r = mx.nd.sparse.cast_storage(d, 'row_sparse')
    >>> r.stype, r.indices.asnumpy()
    ('row_sparse', array([0]))
    >>> mx.nd.sparse.cast_storage(r, 'default').asnumpy()
    array([[1., 0.],
           [0., 0.]], dtype=float32)
    """
    return data.clone()


@rule(cast_storage, DEFAULT, out=CSR, when={"stype": CSR})
def _dns_to_csr(data, **p):
    return k.dense_to_csr(data._t)


@rule(cast_storage, DEFAULT, out=ROW_SPARSE, when={"stype": ROW_SPARSE})
def _dns_to_rsp(data, **p):
    return k.dense_to_row_sparse(data._t)


@rule(cast_storage, CSR, out=DEFAULT, when={"stype": DEFAULT})
@rule(cast_storage, ROW_SPARSE, out=DEFAULT, when={"stype": DEFAULT})
def _sparse_to_dns(data, **p):
    return NDArray(k.to_dense_tensor(data))


@rule(cast_storage, CSR, out=CSR, when={"stype": CSR})
@rule(cast_storage, ROW_SPARSE, out=ROW_SPARSE, when={"stype": ROW_SPARSE})
def _same_sparse(data, **p):
    return type(data)._from_parts(*[t.clone() for t in data._parts()], data.shape)


@rule(cast_storage, CSR, out=ROW_SPARSE, when={"stype": ROW_SPARSE})
def _csr_to_rsp(data, **p):
    return k.csr_to_row_sparse(data)


@rule(cast_storage, ROW_SPARSE, out=CSR, when={"stype": CSR})
def _rsp_to_csr(data, **p):
    return k.row_sparse_to_csr(data)

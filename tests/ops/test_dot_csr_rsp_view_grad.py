"""``dot(csr, v)`` for a row_sparse variable ``v`` that does not store every row: the kernel
sends its gradient as sparse rows through ``v``'s values view. Checked against NumPy
(``X.T @ G``) for stored and unstored rows, repeated columns and several steps."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.ndarray.row_sparse import sends_sparse_rows


@pytest.mark.parametrize("stored", [[0, 2, 5], [0, 1, 2, 3, 4], [5]])
def test_gradient_equals_numpy(stored):
    rng = np.random.default_rng(1)
    X = np.zeros((4, 6), np.float32)
    X[0, [0, 2]] = [1.5, -2.0]
    X[1, [2, 5]] = [0.5, 3.0]
    X[3, [0, 1, 5]] = [2.0, 1.0, -1.0]
    vals = rng.standard_normal((len(stored), 3)).astype(np.float32)
    G = rng.standard_normal((4, 3)).astype(np.float32)
    dense_v = np.zeros((6, 3), np.float32)
    dense_v[stored] = vals
    v = mx.nd.sparse.row_sparse_array((vals, stored), shape=(6, 3))
    v.attach_grad(stype="row_sparse")
    x = mx.nd.sparse.csr_matrix(X)
    for _ in range(2):  # grad_req 'write': the same gradient each time
        with mx.autograd.record():
            out = mx.nd.sparse.dot(x, v)
            loss = (out * mx.nd.array(G)).sum()
        loss.backward()
        np.testing.assert_allclose(out.asnumpy(), X @ dense_v, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(v.grad.asnumpy(), X.T @ G, rtol=1e-5, atol=1e-6)


def test_only_a_values_view_takes_sparse_rows():
    v = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2))
    v.attach_grad()
    with mx.autograd.record():
        view = v._values_view()
    assert sends_sparse_rows(view._data)
    assert not sends_sparse_rows(view._data + 1)
    assert not sends_sparse_rows(mx.nd.ones((2, 2))._t)

"""Property tests (hypothesis): sparse kernels equal the dense computation on random inputs.

Random shapes (including empty rows, no stored values and zero-size dimensions) and
densities; each kernel's result and storage type are compared with NumPy.
"""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sparsenet as mx

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def sparse_pair(draw, stypes=("csr", "row_sparse")):
    rows, cols = draw(st.integers(0, 6)), draw(st.integers(0, 6))
    density = draw(st.sampled_from([0.0, 0.2, 0.6, 1.0]))
    stype = draw(st.sampled_from(stypes))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)

    def one():
        x = rng.uniform(-2, 2, size=(rows, cols)).astype(np.float32)
        if stype == "csr":
            x[rng.random((rows, cols)) >= density] = 0
        else:
            x[rng.random(rows) >= density] = 0
        return x
    return stype, one(), one()


def _arr(x, stype):
    return mx.nd.array(x).tostype(stype)


@SETTINGS
@given(sparse_pair())
def test_add_sub_mul_keep_stype(case):
    stype, x, y = case
    a, b = _arr(x, stype), _arr(y, stype)
    for got, exp in ((a + b, x + y), (a - b, x - y), (a * b, x * y)):
        assert got.stype == stype
        got.check_format()
        np.testing.assert_allclose(got.asnumpy(), exp, rtol=1e-6, atol=1e-6)
    d = mx.nd.array(y)
    for got, exp, st_ in ((a + d, x + y, "default"), (d - a, y - x, "default"),
                          (a * d, x * y, stype), (d * a, x * y, stype)):
        assert got.stype == st_
        np.testing.assert_allclose(got.asnumpy(), exp, rtol=1e-6, atol=1e-6)


@SETTINGS
@given(sparse_pair(), st.integers(1, 4))
def test_dot_both_ways(case, n):
    stype, x, _ = case
    rows, cols = x.shape
    rng = np.random.default_rng(rows * 7 + cols)
    w = rng.standard_normal((cols, n)).astype(np.float32)
    g = rng.standard_normal((rows, n)).astype(np.float32)
    a = _arr(x, "csr")
    np.testing.assert_allclose(mx.nd.dot(a, mx.nd.array(w)).asnumpy(), x @ w, rtol=1e-5,
                               atol=1e-5)
    r = mx.nd.dot(a, mx.nd.array(g), transpose_a=True)
    assert r.stype == "row_sparse"
    r.check_format()
    np.testing.assert_allclose(r.asnumpy(), x.T @ g, rtol=1e-5, atol=1e-5)
    stored_cols = np.unique(np.nonzero(x)[1])
    np.testing.assert_array_equal(r.indices.asnumpy(), stored_cols)


@SETTINGS
@given(sparse_pair(), st.data())
def test_reductions(case, data):
    stype, x, _ = case
    a = _arr(x, stype)
    axis = data.draw(st.sampled_from([None, 0, 1]))
    keep = data.draw(st.booleans())
    for name in ("sum", "mean"):
        if name == "mean" and x.size == 0:
            continue
        got = getattr(mx.nd, name)(a, axis=axis, keepdims=keep)
        exp = np.asarray(getattr(np, name)(x, axis=axis, keepdims=keep))
        np.testing.assert_allclose(got.asnumpy(), exp.reshape(got.shape), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mx.nd.norm(a).asnumpy(), [np.linalg.norm(x)], rtol=1e-5,
                               atol=1e-6)


@SETTINGS
@given(sparse_pair(stypes=("csr",)), st.data())
def test_csr_slicing_take_concat(case, data):
    _, x, y = case
    a = _arr(x, "csr")
    rows, cols = x.shape
    r0 = data.draw(st.integers(0, rows))
    r1 = data.draw(st.integers(r0, rows))
    c0 = data.draw(st.integers(0, cols))
    c1 = data.draw(st.integers(c0, cols))
    s = mx.nd.slice(a, begin=(r0, c0), end=(r1, c1))
    assert s.stype == "csr"
    s.check_format()
    np.testing.assert_array_equal(s.asnumpy(), x[r0:r1, c0:c1])
    np.testing.assert_array_equal(a[r0:r1].asnumpy(), x[r0:r1])
    if rows:
        ids = data.draw(st.lists(st.integers(0, rows - 1), max_size=5))
        t = mx.nd.take(a, mx.nd.array(ids))
        t.check_format()
        np.testing.assert_array_equal(t.asnumpy(), x[ids].reshape(len(ids), cols))
    b = _arr(y, "csr")
    for dim in (0, 1):
        c = mx.nd.concat(a, b, dim=dim)
        assert c.stype == "csr"
        c.check_format()
        np.testing.assert_array_equal(c.asnumpy(), np.concatenate([x, y], axis=dim))

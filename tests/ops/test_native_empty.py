"""The native row kernels on empty and tiny inputs.

Every native kernel (``sparsenet.ops._row_kernels`` through :mod:`sparsenet.ops.row_kernels`)
takes zero rows, zero stored values and zero-size tensors (whose ``data_ptr()`` is often 0)
and gives what its torch path gives (``row_kernels.ENABLED = False``, as
``SPARSENET_NATIVE_ROWS=0``) and what a NumPy statement of the update rule gives. The kernels
are driven through their public update operators; ``coalesce_rows`` (a gradient's rows) is
checked against NumPy directly.

Before: a dense SGD step on a zero-size weight, and Gluon ``nn.Dense`` on a CSR batch without
stored values trained with SGD (``sparsenet demo --rows 200 --features 20000``), raised
``ValueError: sgd_dense: null pointer or negative size`` from the kernel.
"""
import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import sparsenet as mx
from sparsenet.ops import row_kernels

pytestmark = pytest.mark.skipif(not row_kernels.available(),
                                reason="native row kernels not built")

TAILS = [(), (0,), (1,), (3,), (2, 0)]
LR = 0.1


# ---------------------------------------------------------------------- NumPy rules
def _clip(x, c):
    return x if c < 0 else np.clip(x, -c, c)


def ref_sgd(w, g, states, p):
    return (1 - p["lr"] * p["wd"]) * w - p["lr"] * _clip(p["rescale_grad"] * g,
                                                         p["clip_gradient"]), []


def ref_sgd_mom(w, g, states, p):
    m = (p["momentum"] * states[0] - p["lr"] * p["wd"] * w
         - p["lr"] * _clip(p["rescale_grad"] * g, p["clip_gradient"]))
    return w + m, [m]


def ref_adam(w, g, states, p):
    gg = _clip(p["rescale_grad"] * g + p["wd"] * w, p["clip_gradient"])
    m = p["beta1"] * states[0] + (1 - p["beta1"]) * gg
    v = p["beta2"] * states[1] + (1 - p["beta2"]) * gg * gg
    return w - p["lr"] * m / (np.sqrt(v) + p["epsilon"]), [m, v]


def ref_adagrad(w, g, states, p):
    gg = _clip(p["rescale_grad"] * g, p["clip_gradient"])
    h = states[0] + gg * gg
    return w - p["lr"] * (gg / np.sqrt(h + p["epsilon"]) + p["wd"] * w), [h]


# kernel -> (operator, number of states, extra parameters, NumPy rule)
KERNELS = {
    "sgd": (mx.nd.sgd_update, 0, {}, ref_sgd),
    "sgd_mom": (mx.nd.sgd_mom_update, 1, {"momentum": 0.9}, ref_sgd_mom),
    "adam": (mx.nd.adam_update, 2, {"beta1": 0.8, "beta2": 0.95, "epsilon": 1e-6}, ref_adam),
    "adagrad": (mx.nd.sparse.adagrad_update, 1, {"epsilon": 1e-7}, ref_adagrad),
}


def _reference_lazy(kernel, w0, states0, rows, grad_rows, params):
    """The rule applied to the gradient's rows only, in float64."""
    _, _, extra, rule = KERNELS[kernel]
    w = w0.astype(np.float64)
    states = [s.astype(np.float64) for s in states0]
    if len(rows):
        nw, ns = rule(w[rows], grad_rows.astype(np.float64), [s[rows] for s in states],
                      dict(params, **extra))
        w[rows] = nw
        for s, n in zip(states, ns):
            s[rows] = n
    return w, states


def _run_op(kernel, native, w0, states0, grad, params, monkeypatch):
    op, _, extra, _ = KERNELS[kernel]
    monkeypatch.setattr(row_kernels, "ENABLED", native)
    w = mx.nd.array(w0, dtype=w0.dtype)
    states = [mx.nd.array(s, dtype=s.dtype) for s in states0]
    op(w, grad(), *states, out=w, **params, **extra)
    return w.asnumpy(), [s.asnumpy() for s in states]


def _check(got, torch_path, ref, dtype, same_bits=True):
    """Native against NumPy (within rounding) and against the torch path: the same bits for
    the lazy kernels (written to match), within one rounding for plain dense SGD (torch's
    multi-tensor add fuses the multiply)."""
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got[0], ref[0], rtol=tol, atol=tol, err_msg="weight vs NumPy")
    for a, b in zip(got[1], ref[1]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg="state vs NumPy")
    ulp = 0 if same_bits else (2e-7 if dtype == np.float32 else 1e-15)
    for a, b in zip([got[0]] + got[1], [torch_path[0]] + torch_path[1]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=ulp, atol=ulp, err_msg="native vs torch")


@settings(max_examples=80, deadline=None)
@given(kernel=st.sampled_from(sorted(KERNELS)), f64=st.booleans(), nrows=st.integers(0, 3),
       tail=st.sampled_from(TAILS), data=st.data(), wd=st.sampled_from([0.0, 0.1]),
       rescale=st.sampled_from([1.0, 0.5]), clip=st.sampled_from([-1.0, 0.3]))
def test_lazy_kernels_on_empty_and_tiny_row_sparse_gradients(kernel, f64, nrows, tail, data,
                                                               wd, rescale, clip):
    dtype = np.float64 if f64 else np.float32
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, max(nrows - 1, 0)))
                                     if nrows else st.just(set()))), dtype=np.int64)
    rng = np.random.default_rng(nrows * 11 + len(rows))
    shape = (nrows,) + tail
    w0 = rng.standard_normal(shape).astype(dtype)
    states0 = [np.abs(rng.standard_normal(shape)).astype(dtype)
               for _ in range(KERNELS[kernel][1])]
    grad_rows = rng.standard_normal((len(rows),) + tail).astype(dtype)
    params = dict(lr=LR, wd=wd, rescale_grad=rescale, clip_gradient=clip, lazy_update=True)

    def grad():
        return mx.nd.sparse.row_sparse_array((grad_rows, rows), shape=shape, dtype=dtype)

    with pytest.MonkeyPatch.context() as mp:
        got = _run_op(kernel, True, w0, states0, grad, params, mp)
        torch_path = _run_op(kernel, False, w0, states0, grad, params, mp)
    ref = _reference_lazy(kernel, w0, states0, rows,  grad_rows,
                          {k: v for k, v in params.items() if k != "lazy_update"})
    _check(got, torch_path, ref, dtype)


@settings(max_examples=60, deadline=None)
@given(kernel=st.sampled_from(["sgd", "sgd_mom"]), f64=st.booleans(),
       shape=st.sampled_from([(0,), (0, 3), (4, 0), (1,), (2, 3), (0, 0)]),
       wd=st.sampled_from([0.0, 0.1]), clip=st.sampled_from([-1.0, 0.3]))
def test_dense_kernels_on_zero_size_and_tiny_tensors(kernel, f64, shape, wd, clip):
    # plain SGD without weight decay or clipping takes sgd_dense; SGD with momentum
    # sgd_mom_dense: both on small dense CPU tensors
    dtype = np.float64 if f64 else np.float32
    rng = np.random.default_rng(sum(shape) + 3)
    w0 = rng.standard_normal(shape).astype(dtype)
    g0 = rng.standard_normal(shape).astype(dtype)
    states0 = [rng.standard_normal(shape).astype(dtype) for _ in range(KERNELS[kernel][1])]
    params = dict(lr=LR, wd=wd, rescale_grad=1.0, clip_gradient=clip)
    with pytest.MonkeyPatch.context() as mp:
        got = _run_op(kernel, True, w0, states0, lambda: mx.nd.array(g0, dtype=dtype), params,
                      mp)
        torch_path = _run_op(kernel, False, w0, states0, lambda: mx.nd.array(g0, dtype=dtype),
                             params, mp)
    rule = KERNELS[kernel][3]
    w, states = rule(w0.astype(np.float64), g0.astype(np.float64),
                     [s.astype(np.float64) for s in states0], dict(params, **KERNELS[kernel][2]))
    _check(got, torch_path, (w, states), dtype, same_bits=kernel != "sgd")


@pytest.mark.parametrize("shape", [(0,), (0, 3), (4, 0)])
def test_sgd_dense_list_with_an_empty_tensor_updates_the_others(shape, monkeypatch):
    import torch
    monkeypatch.setattr(row_kernels, "ENABLED", True)
    empty, other = torch.ones(shape), torch.ones(3)
    rest = row_kernels.sgd_dense([empty, other], [torch.ones(shape), torch.full((3,), 2.0)],
                                 lr=0.5, rescale_grad=1.0)
    assert rest == []
    np.testing.assert_array_equal(other.numpy(), [0.0, 0.0, 0.0])
    assert tuple(empty.shape) == shape


@settings(max_examples=60, deadline=None)
@given(ids=st.lists(st.integers(0, 5), max_size=6), cols=st.sampled_from([0, 1, 3]),
       f64=st.booleans(), in_place=st.booleans())
def test_coalesce_rows_on_empty_and_tiny_inputs(ids, cols, f64, in_place):
    import torch
    dtype = torch.float64 if f64 else torch.float32
    rows = torch.tensor(ids, dtype=torch.int64)
    values = torch.arange(len(ids) * cols, dtype=dtype).reshape(len(ids), cols)
    expected_rows = np.unique(np.array(ids, dtype=np.int64))
    expected = np.zeros((len(expected_rows), cols))
    np.add.at(expected, np.searchsorted(expected_rows, np.array(ids, dtype=np.int64)),
              values.numpy().astype(np.float64))
    got = row_kernels.coalesce_rows(rows, values.clone(), in_place=in_place)
    assert got is not None
    np.testing.assert_array_equal(got[0].numpy(), expected_rows)
    np.testing.assert_allclose(got[1].numpy(), expected)
    assert tuple(got[1].shape) == (len(expected_rows), cols)


def test_an_out_of_range_row_is_an_index_out_of_range_error(monkeypatch):
    monkeypatch.setattr(row_kernels, "ENABLED", True)
    import torch
    w = torch.ones(3, 2)
    with pytest.raises(mx.base.IndexOutOfRangeError, match=r"row index 5 at position 1 .* "
                                                           r"with 3 rows"):
        row_kernels.lazy_step("sgd", w, (), torch.ones(2, 2), torch.tensor([0, 5]), lr=0.1)
    np.testing.assert_array_equal(w.numpy(), np.ones((3, 2)))  # nothing written


# ---------------------------------------------------------------------- the reported crash
@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("batches", [["empty"], ["full", "empty", "full"]])
def test_dense_layer_on_a_csr_batch_without_stored_values_trains_with_sgd(native, batches,
                                                                          monkeypatch):
    monkeypatch.setattr(row_kernels, "ENABLED", native)
    features, rows, lr = 50, 4, 0.1
    rng = np.random.default_rng(0)
    full = scipy.sparse.random(rows, features, density=0.1, format="csr", dtype=np.float32,
                               random_state=rng)
    data = {"empty": scipy.sparse.csr_matrix((rows, features), dtype=np.float32),
            "full": full}
    label = np.ones(rows, dtype=np.float32)
    net = mx.gluon.nn.Dense(1, in_units=features)
    net.initialize(mx.init.Constant(0.5))
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr})
    loss_fn = mx.gluon.loss.L2Loss()
    w = np.full((1, features), 0.5)
    b = np.zeros(1)
    for name in batches:
        x = data[name]
        with mx.autograd.record():
            loss = loss_fn(net(mx.nd.sparse.csr_matrix(x)), mx.nd.array(label))
        loss.backward()
        trainer.step(rows)
        # NumPy: L2Loss = (pred - y)^2 / 2; its gradient (pred - y), averaged over the batch
        err = (x @ w.T).ravel() + b - label
        gw = (x.T @ err).reshape(1, -1) / rows
        gb = np.array([err.sum()]) / rows
        w, b = w - lr * gw, b - lr * gb
    np.testing.assert_allclose(net.weight.data().asnumpy(), w, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(net.bias.data().asnumpy(), b, rtol=1e-6, atol=1e-7)


def test_the_c_entry_points_take_null_pointers_of_empty_tensors():
    # an empty tensor's data_ptr() is often 0: size 0 is a no-op in C too (not only in the
    # Python wrappers above it)
    native = row_kernels._native
    assert native.sgd_dense((0,), (0,), (0,), 0.1, 1.0, False) is None
    assert native.sgd_mom_dense((0,), (0,), (0,), (0,), 0.1, 0.9, 0.0, 1.0, -1.0, True) is None
    for kernel in ("sgd", "sgd_mom", "adam", "adagrad"):
        assert getattr(native, kernel)(0, 0, 0, 0, 0, 0, 4, 3, False, 1, 0.1, 0.0, 1.0, -1.0,
                                       0.9, 0.99, 1e-8) == 0
    import torch
    ids, out = torch.tensor([3, 1, 3]), torch.empty(3, dtype=torch.int64)
    # rows of zero columns: values may sit at address 0, only the ids are sorted
    assert native.coalesce_rows(ids.data_ptr(), 0, 3, 0, False, out.data_ptr(), 0) == 2
    assert out[:2].tolist() == [1, 3]

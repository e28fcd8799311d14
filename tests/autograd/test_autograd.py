"""mx.autograd: scopes, backward/grad, grad_req semantics, variables, Function."""
import numpy as np
import pytest
import torch

import sparsenet as mx
from sparsenet.base import SparsenetError


def test_scopes_nest_and_restore():
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()
    with mx.autograd.record():
        assert mx.autograd.is_recording() and mx.autograd.is_training()
        with mx.autograd.pause():
            assert not mx.autograd.is_recording() and not mx.autograd.is_training()
            with mx.autograd.train_mode():
                assert mx.autograd.is_training() and not mx.autograd.is_recording()
        with mx.autograd.predict_mode():
            assert mx.autograd.is_recording() and not mx.autograd.is_training()
        assert mx.autograd.is_recording() and mx.autograd.is_training()
    with mx.autograd.record(train_mode=False):
        assert mx.autograd.is_recording() and not mx.autograd.is_training()
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()
    assert torch.is_grad_enabled()


def test_scope_restores_state_after_exception():
    with pytest.raises(RuntimeError, match="boom"):
        with mx.autograd.record():
            raise RuntimeError("boom")
    assert not mx.autograd.is_recording()
    assert torch.is_grad_enabled()


def test_set_recording_and_training_return_previous():
    assert mx.autograd.set_recording(True) is False
    assert mx.autograd.set_recording(False) is True
    assert mx.autograd.set_training(True) is False
    assert mx.autograd.set_training(False) is True


def test_ops_outside_record_are_not_recorded():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    y = x * 2
    with pytest.raises(SparsenetError, match="not computed inside autograd.record"):
        y.backward()


def test_backward_writes_and_overwrites():
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    for scale in (2.0, 5.0):
        with mx.autograd.record():
            y = (x * scale).sum()
        y.backward()
        np.testing.assert_allclose(x.grad.asnumpy(), [scale] * 3)


def test_grad_req_add_accumulates_dense():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad(grad_req="add")
    for _ in range(3):
        with mx.autograd.record():
            y = (x * x).sum()
        y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 3 * 2 * np.array([1.0, 2.0]))


def test_grad_req_null_leaves_no_gradient():
    x = mx.nd.array([1.0])
    w = mx.nd.array([2.0])
    x.attach_grad(grad_req="null")
    w.attach_grad()
    with mx.autograd.record():
        y = x * w
    y.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), [1.0])
    np.testing.assert_allclose(x.grad.asnumpy(), [0.0])


def test_head_grads_scale_gradient():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = x * x
    y.backward(mx.nd.array([10.0, 100.0]))
    np.testing.assert_allclose(x.grad.asnumpy(), [20.0, 400.0])


def test_backward_list_of_heads():
    x = mx.nd.array([3.0])
    x.attach_grad()
    with mx.autograd.record():
        a = x * 2
        b = x * x
    mx.autograd.backward([a, b])
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0 + 6.0])


def test_backward_head_count_mismatch():
    x = mx.nd.array([3.0])
    x.attach_grad()
    with mx.autograd.record():
        a = x * 2
    with pytest.raises(ValueError, match="1 heads but 2 head gradients"):
        mx.autograd.backward([a], [mx.nd.ones((1,)), mx.nd.ones((1,))])


def test_variables_outside_the_graph_keep_their_gradient():
    x = mx.nd.array([1.0])
    z = mx.nd.array([1.0])
    x.attach_grad()
    z.attach_grad()
    with mx.autograd.record():
        (z * 7).backward()
    with mx.autograd.record():
        y = x * 3
    y.backward()
    np.testing.assert_allclose(z.grad.asnumpy(), [7.0])
    np.testing.assert_allclose(x.grad.asnumpy(), [3.0])


def test_attach_grad_twice_and_reattach_stype():
    x = mx.nd.ones((3, 2))
    x.attach_grad()
    x.attach_grad(stype="row_sparse")
    assert x.grad.stype == "row_sparse"
    with mx.autograd.record():
        y = mx.nd.take(x, mx.nd.array([2]))
    y.backward()
    assert x.grad.indices.asnumpy().tolist() == [2]


def test_retain_graph_allows_second_backward():
    x = mx.nd.array([2.0])
    x.attach_grad(grad_req="add")
    with mx.autograd.record():
        y = x * x
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [8.0])


def test_grad_function_returns_without_storing():
    x = mx.nd.array([2.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        y = (x * x * x).sum()
    g, = mx.autograd.grad(y, [x])
    np.testing.assert_allclose(g.asnumpy(), 3 * np.array([4.0, 9.0]))
    np.testing.assert_allclose(x.grad.asnumpy(), [0.0, 0.0])


def test_grad_create_graph_second_order():
    x = mx.nd.array([2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = x * x * x
        g, = mx.autograd.grad(y, [x], create_graph=True)
    g.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [12.0])  # d(3x^2)/dx = 6x


def test_grad_requires_attached_variables():
    x = mx.nd.array([2.0])
    w = mx.nd.array([1.0])
    w.attach_grad()
    with mx.autograd.record():
        y = x * w
    with pytest.raises(SparsenetError, match="every variable needs attach_grad"):
        mx.autograd.grad(y, [x])


def test_mark_variables_keeps_buffer_stype():
    w = mx.nd.ones((5, 2))
    buf = mx.nd.zeros((5, 2), stype="row_sparse")
    mx.autograd.mark_variables([w], [buf], "write")
    with mx.autograd.record():
        y = mx.nd.Embedding(mx.nd.array([3, 1]), w, input_dim=5, output_dim=2)
    y.backward()
    assert buf.stype == "row_sparse"
    assert buf.indices.asnumpy().tolist() == [1, 3]


def test_mark_variables_length_mismatch():
    with pytest.raises(ValueError, match="lengths must match"):
        mx.autograd.mark_variables([mx.nd.ones((1,))], [], "write")


def test_attach_grad_rejects_bad_req():
    with pytest.raises(ValueError, match="grad_req must be one of"):
        mx.nd.ones((2,)).attach_grad(grad_req="sum")


def test_detach_cuts_graph():
    x = mx.nd.array([2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = x.detach() * x
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0])


def test_custom_function():
    class Sigmoid(mx.autograd.Function):
        def forward(self, x):
            y = 1 / (1 + mx.nd.exp(-x))
            self.save_for_backward(y)
            return y

        def backward(self, dy):
            y, = self.saved_tensors
            return dy * y * (1 - y)

    x = mx.nd.array([0.0, 1.0])
    x.attach_grad()
    with mx.autograd.record():
        z = Sigmoid()(x)
    z.backward()
    s = 1 / (1 + np.exp(-np.array([0.0, 1.0])))
    np.testing.assert_allclose(x.grad.asnumpy(), s * (1 - s), rtol=1e-6)


def test_dropout_follows_training_mode():
    x = mx.nd.ones((1000,))
    with mx.autograd.record():
        y = mx.nd.Dropout(x, p=0.5)
    kept = y.asnumpy()
    assert set(np.unique(kept)).issubset({0.0, 2.0}) and 300 < (kept == 0).sum() < 700
    with mx.autograd.record(train_mode=False):
        np.testing.assert_array_equal(mx.nd.Dropout(x, p=0.5).asnumpy(), x.asnumpy())

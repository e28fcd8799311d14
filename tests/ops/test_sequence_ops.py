"""SequenceMask, SequenceLast, SequenceReverse: MXNet 1.9.1's figures, a NumPy reference over
random lengths (hypothesis), gradients, symbolic shapes and bad input."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import sparsenet as mx

X0 = np.arange(24, dtype="float32").reshape(4, 3, 2)   # (T, N, C)
X1 = np.arange(24, dtype="float32").reshape(3, 4, 2)   # (N, T, C)
LENGTHS = [2, 4, 0]


def test_matches_mxnet_measured():
    """Measured with MXNet 1.9.1 (mx.nd.Sequence*(x, L, use_sequence_length=True, ...)) on the
    arrays above; MXNet's SequenceLast of a length-0 sequence reads outside the array, so those
    rows are left out here."""
    L = mx.nd.array(LENGTHS)
    np.testing.assert_array_equal(
        mx.nd.SequenceMask(mx.nd.array(X0), L, use_sequence_length=True, value=-1).asnumpy(),
        [[[0, 1], [2, 3], [-1, -1]], [[6, 7], [8, 9], [-1, -1]],
         [[-1, -1], [14, 15], [-1, -1]], [[-1, -1], [20, 21], [-1, -1]]])
    np.testing.assert_array_equal(
        mx.nd.SequenceLast(mx.nd.array(X0), L, use_sequence_length=True).asnumpy()[:2],
        [[6, 7], [20, 21]])
    np.testing.assert_array_equal(
        mx.nd.SequenceReverse(mx.nd.array(X0), L, use_sequence_length=True).asnumpy(),
        [[[6, 7], [20, 21], [4, 5]], [[0, 1], [14, 15], [10, 11]],
         [[12, 13], [8, 9], [16, 17]], [[18, 19], [2, 3], [22, 23]]])
    np.testing.assert_array_equal(
        mx.nd.SequenceMask(mx.nd.array(X1), L, use_sequence_length=True, axis=1).asnumpy(),
        [[[0, 1], [2, 3], [0, 0], [0, 0]], [[8, 9], [10, 11], [12, 13], [14, 15]],
         [[0, 0], [0, 0], [0, 0], [0, 0]]])
    np.testing.assert_array_equal(
        mx.nd.SequenceLast(mx.nd.array(X1), L, use_sequence_length=True, axis=1).asnumpy()[:2],
        [[2, 3], [14, 15]])


def _reference(x, lengths, axis):
    """NumPy mask, last and reverse (reverse for axis 0) of x with the time axis ``axis``."""
    xt = x if axis == 0 else x.swapaxes(0, 1)
    mask, last, rev = xt.copy(), [], xt.copy()
    for n, ln in enumerate(lengths):
        mask[ln:, n] = 0
        last.append(xt[max(ln - 1, 0), n])
        rev[:ln, n] = xt[:ln, n][::-1]
    if axis == 1:
        mask = mask.swapaxes(0, 1)
    return mask, np.stack(last), rev


@settings(max_examples=40, deadline=None)
@given(steps=st.integers(1, 6), batch=st.integers(1, 5), axis=st.sampled_from([0, 1]),
       data=st.data())
def test_against_numpy(steps, batch, axis, data):
    lengths = data.draw(st.lists(st.integers(0, steps), min_size=batch, max_size=batch))
    shape = (steps, batch, 3) if axis == 0 else (batch, steps, 3)
    x = np.random.RandomState(steps * 7 + batch).uniform(-1, 1, shape).astype("float32")
    mask, last, rev = _reference(x, lengths, axis)
    L = mx.nd.array(lengths)
    nx = mx.nd.array(x)
    np.testing.assert_array_equal(
        mx.nd.SequenceMask(nx, L, use_sequence_length=True, axis=axis).asnumpy(), mask)
    np.testing.assert_array_equal(
        mx.nd.SequenceLast(nx, L, use_sequence_length=True, axis=axis).asnumpy(), last)
    if axis == 0:
        np.testing.assert_array_equal(
            mx.nd.SequenceReverse(nx, L, use_sequence_length=True).asnumpy(), rev)
    # without lengths: every sequence is full
    full = [steps] * batch
    mask, last, rev = _reference(x, full, axis)
    np.testing.assert_array_equal(mx.nd.SequenceMask(nx, axis=axis).asnumpy(), mask)
    np.testing.assert_array_equal(mx.nd.SequenceLast(nx, axis=axis).asnumpy(), last)
    if axis == 0:
        np.testing.assert_array_equal(mx.nd.SequenceReverse(nx).asnumpy(), rev)


@pytest.mark.parametrize("opname", ["SequenceMask", "SequenceLast", "SequenceReverse"])
def test_gradient_reaches_data_only(opname):
    x_np = np.random.RandomState(0).uniform(-1, 1, (4, 3, 2)).astype("float32")
    head_shape = (3, 2) if opname == "SequenceLast" else (4, 3, 2)
    head = np.random.RandomState(1).uniform(-1, 1, head_shape).astype("float32")
    x, L = mx.nd.array(x_np), mx.nd.array([1, 4, 2])
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, opname)(x, L, use_sequence_length=True)
    y.backward(mx.nd.array(head))
    xt = torch.tensor(x_np, requires_grad=True)
    lengths = [1, 4, 2]
    if opname == "SequenceMask":
        keep = torch.tensor([[t < ln for ln in lengths] for t in range(4)]).unsqueeze(-1)
        ref = torch.where(keep, xt, torch.zeros(()))
    elif opname == "SequenceLast":
        ref = torch.stack([xt[ln - 1, n] for n, ln in enumerate(lengths)])
    else:
        idx = [[(ln - 1 - t) if t < ln else t for ln in lengths] for t in range(4)]
        ref = torch.stack([torch.stack([xt[idx[t][n], n] for n in range(3)]) for t in range(4)])
    (ref * torch.tensor(head)).sum().backward()
    np.testing.assert_allclose(x.grad.asnumpy(), xt.grad.numpy(), rtol=1e-6)


def test_symbolic_inputs_and_shapes():
    data = mx.sym.var("data")
    assert mx.sym.SequenceMask(data).list_arguments() == ["data"]
    last = mx.sym.SequenceLast(data, use_sequence_length=True, axis=1, name="last")
    assert last.list_arguments() == ["data", "last_sequence_length"]
    _, outs, _ = last.infer_shape(data=(5, 7, 3), last_sequence_length=(5,))
    assert outs == [(5, 3)]


@pytest.mark.parametrize("call, match", [
    (lambda: mx.nd.SequenceMask(mx.nd.ones((3, 2)), mx.nd.array([1, 2, 3]),
                                use_sequence_length=True), r"shape \(2,\)"),
    (lambda: mx.nd.SequenceMask(mx.nd.ones((3, 2)), mx.nd.array([1, 4]),
                                use_sequence_length=True), r"\[0, 3\]"),
    (lambda: mx.nd.SequenceLast(mx.nd.ones((3, 2)), axis=2), "axis must be 0"),
    (lambda: mx.nd.SequenceReverse(mx.nd.ones((3, 2)), axis=1), "only axis=0"),
    (lambda: mx.nd.SequenceMask(mx.nd.ones((3, 2)), use_sequence_length=True),
     "needs the input sequence_length"),
    (lambda: mx.nd.SequenceMask(mx.nd.ones((3,))), "time and a batch axis"),
])
def test_bad_input_is_a_value_error(call, match):
    with pytest.raises(mx.MXNetError, match=match) as info:
        call()
    assert isinstance(info.value, ValueError)


def test_symbol_zeros_and_ones():
    out = (mx.sym.zeros((2, 3)) + mx.sym.ones((2, 3))).eval()[0]
    np.testing.assert_array_equal(out.asnumpy(), np.ones((2, 3)))
    with pytest.raises(mx.MXNetError, match="must be known and positive"):
        mx.sym.zeros((0, 3)).eval()

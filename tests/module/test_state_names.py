"""Module ``state_names``: the recurrent-state inputs of MXNet's large_word_lm example.

The example keeps LSTM states between batches: ``set_states(value=0)`` at an epoch's start,
``get_states(merge_multi_context=False)``, the next states from
``get_outputs(merge_multi_context=False)[:-1]`` fed back with ``set_states(states=...)``,
on one or several devices. A state is an input that is neither data nor a parameter: it is
not initialised, saved or given a gradient. Expected values are NumPy recurrences.

``set_states`` used to index a single array given for several devices by device number
(writing row ``k`` into device ``k``'s whole state) and to accept ``states`` and ``value``
both or neither only with a plain ``ValueError``.
"""
import numpy as np
import pytest

import sparsenet as mx

S = mx.sym
RNG = np.random.RandomState(7)
W = RNG.normal(size=(3, 4)).astype(np.float32)
B = RNG.normal(size=(3,)).astype(np.float32)


def _module(ndev, per_dev=2):
    st = S.var('st', shape=(per_dev, 3))
    h = S.FullyConnected(S.var('data'), num_hidden=3, name='fc') + st
    net = S.Group([S.stop_gradient(S.tanh(h)), S.make_loss(S.mean(h * h))])
    mod = mx.mod.Module(net, data_names=['data'], label_names=None, state_names=['st'],
                        context=[mx.cpu(i) for i in range(ndev)])
    mod.bind(data_shapes=[('data', (per_dev * ndev, 4))])
    mod.init_params()
    mod.set_params({'fc_weight': mx.nd.array(W), 'fc_bias': mx.nd.array(B)}, {})
    return mod


def _states(mod):
    return [[a.asnumpy() for a in per_dev] for per_dev in mod.get_states(merge_multi_context=False)]


def test_a_state_is_not_a_parameter_and_gets_no_gradient():
    mod = _module(1)
    assert sorted(mod.get_params()[0]) == ['fc_bias', 'fc_weight']
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1})
    mod.forward(mx.io.DataBatch(data=[mx.nd.ones((2, 4))], label=None), is_train=True)
    mod.backward()
    assert mod._exec_group.param_names == ['fc_weight', 'fc_bias']
    assert mod._exec_group.execs[0].grad_dict.get('st') is None


def test_value_and_per_device_lists_on_two_devices():
    mod = _module(2)
    mod.set_states(value=1.5)
    got = _states(mod)
    assert len(got) == 1 and len(got[0]) == 2
    for a in got[0]:
        np.testing.assert_array_equal(a, np.full((2, 3), 1.5, np.float32))
    a0, a1 = np.arange(6.0).reshape(2, 3), -np.arange(6.0).reshape(2, 3)
    mod.set_states(states=[[mx.nd.array(a0), mx.nd.array(a1, ctx=mx.cpu(1))]])
    got = _states(mod)
    np.testing.assert_array_equal(got[0][0], a0)
    np.testing.assert_array_equal(got[0][1], a1)
    assert mod.get_states(merge_multi_context=False)[0][1].context == mx.cpu(1)


def test_one_array_for_several_devices_is_split_by_rows():
    # what get_states() (merged) returns goes back in unchanged
    mod = _module(2)
    merged = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    mod.set_states(states=[mx.nd.array(merged)])
    got = _states(mod)
    np.testing.assert_array_equal(got[0][0], merged[:2])
    np.testing.assert_array_equal(got[0][1], merged[2:])
    np.testing.assert_array_equal(mod.get_states()[0].asnumpy(), merged)


def test_one_device_takes_a_list_or_an_array():
    mod = _module(1)
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    mod.set_states(states=[[mx.nd.array(a)]])  # the example's form on one device
    np.testing.assert_array_equal(_states(mod)[0][0], a)
    mod.set_states(states=[mx.nd.array(a + 1)])
    np.testing.assert_array_equal(_states(mod)[0][0], a + 1)


def test_states_are_copied_not_kept():
    mod = _module(1)
    src = mx.nd.ones((2, 3))
    mod.set_states(states=[[src]])
    src[:] = 5
    np.testing.assert_array_equal(_states(mod)[0][0], np.ones((2, 3)))


def test_outputs_fed_back_as_states_follow_the_recurrence():
    mod = _module(2)
    mod.set_states(value=0)
    x = [RNG.normal(size=(4, 4)).astype(np.float32) for _ in range(3)]
    st = np.zeros((4, 3), np.float32)
    for xb in x:
        mod.forward(mx.io.DataBatch(data=[mx.nd.array(xb)], label=None), is_train=False)
        outs = mod.get_outputs(merge_multi_context=False)
        assert len(outs) == 2 and all(len(o) == 2 for o in outs)
        h = xb @ W.T + B + st
        want_loss = [np.mean(h[:2] ** 2), np.mean(h[2:] ** 2)]
        np.testing.assert_allclose([o.asnumpy()[0] for o in outs[-1]], want_loss, rtol=1e-5)
        st = np.tanh(h)
        np.testing.assert_allclose(np.concatenate([o.asnumpy() for o in outs[0]]), st,
                                   rtol=1e-5, atol=1e-6)
        mod.set_states(states=outs[:-1])
    np.testing.assert_allclose(mod.get_states()[0].asnumpy(), st, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs, message", [
    ({'states': [[mx.nd.ones((2, 3))]], 'value': 1}, "only one of states & value"),
    ({}, "at least one of states & value"),
])
def test_exactly_one_of_states_and_value(kwargs, message):
    mod = _module(1)
    with pytest.raises(AssertionError, match=message) as err:
        mod.set_states(**kwargs)
    assert isinstance(err.value, mx.MXNetError)


def test_bad_states_are_named():
    mod = _module(2)
    with pytest.raises(mx.MXNetError, match=r"expected a list of 1 states"):
        mod.set_states(states=[[mx.nd.ones((2, 3))] * 2] * 2)
    with pytest.raises(ValueError, match=r"state 'st' must be one NDArray per device \(2\)"):
        mod.set_states(states=[[mx.nd.ones((2, 3))]])
    with pytest.raises(mx.MXNetError, match=r"state 'st' on cpu\(1\) has shape \(2, 3\), got "
                                             r"an array of shape \(3, 3\)"):
        mod.set_states(states=[[mx.nd.ones((2, 3)), mx.nd.ones((3, 3))]])
    with pytest.raises(ValueError, match=r"devices' 4 rows \(\[2, 2\]\) on axis 0, got shape "
                                         r"\(3, 3\)"):
        mod.set_states(states=[mx.nd.ones((3, 3))])
    np.testing.assert_array_equal(mod.get_states()[0].asnumpy(), np.zeros((4, 3)))

"""MXNet 1.x .states files through the allow-list unpickler: MXNet's values, hostile pickles refused."""
import os
import pickle

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import FileFormatError
from sparsenet.optimizer import mxnet_states

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "mxnet_1_9_1")


def _read(name):
    with open(os.path.join(DATA, name), "rb") as f:
        return f.read()


def test_adam_states_and_optimizer():
    states, opt = mxnet_states.loads(_read("adam.states"), "adam.states")
    assert isinstance(opt, mx.optimizer.Adam)
    assert (opt.lr, opt.beta1, opt.beta2, opt.num_update) == (0.1, 0.9, 0.999, 1)
    mean, var = states[0]
    g = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)  # the first step's gradient
    np.testing.assert_allclose(mean.asnumpy(), 0.1 * g, rtol=1e-6)
    one_minus_b2 = np.float32(1) - np.float32(0.999)  # MXNet computes (1 - beta2) in float32
    np.testing.assert_allclose(var.asnumpy(), one_minus_b2 * g * g, rtol=1e-6)


def test_sgd_momentum_states_and_optimizer():
    states, opt = mxnet_states.loads(_read("sgd.states"))
    assert isinstance(opt, mx.optimizer.SGD) and (opt.momentum, opt.wd) == (0.9, 0.01)
    g = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    np.testing.assert_allclose(states[0].asnumpy(), -0.1 * (g + 0.01), rtol=1e-6)


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > /tmp/sparsenet_pwned",))


@pytest.mark.parametrize("payload", [
    _Evil(),
    {0: _Evil()},
    (pickle.loads, (b"",)),
    [np.ones(2)],  # numpy's reconstructors are not on the list either
])
def test_other_globals_are_refused_and_nothing_runs(payload, tmp_path):
    blob = pickle.dumps(payload)
    with pytest.raises(FileFormatError, match=r"x\.states: the pickle asks for the global '\S+'"
                                              r", .* refused, nothing in the file was run") as e:
        mxnet_states.loads(blob, "x.states")
    assert "weights_only" not in str(e.value)
    assert not os.path.exists("/tmp/sparsenet_pwned")


def test_mxnet_class_with_a_hostile_neighbour_is_refused():
    blob = _read("sgd.states")
    evil = blob.replace(b"\x8c\x07NDArray", b"\x8c\x07NDArrax")
    with pytest.raises(FileFormatError, match="global 'mxnet.ndarray.ndarray.NDArrax'"):
        mxnet_states.loads(evil, "x.states")
    with pytest.raises(FileFormatError, match="not a readable MXNet .states pickle"):
        mxnet_states.loads(blob[:100], "x.states")


def test_corrupt_array_bytes_inside_states():
    blob = _read("sgd.states")
    at = blob.index(bytes.fromhex("c9fa93f9"))
    bad = blob[:at] + bytes.fromhex("00fa93f9") + blob[at + 4:]
    with pytest.raises(FileFormatError, match=r"array magic 0xF993FA00"):
        mxnet_states.loads(bad, "x.states")


def test_updater_set_states_uses_the_allow_list():
    upd = mx.optimizer.get_updater(mx.optimizer.SGD())
    upd.set_states(_read("sgd.states"))
    assert isinstance(upd.optimizer, mx.optimizer.SGD) and upd.optimizer.momentum == 0.9
    evil = pickle.dumps((_Evil(), "mxnet.optimizer"))  # names MXNet, carries os.system
    with pytest.raises(FileFormatError, match="refused"):
        mxnet_states.loads(evil)

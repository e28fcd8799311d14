"""sparsenet's own optimizer-state files load through an allow-list: nothing in them runs."""
import os
import pickle

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import FileFormatError
from sparsenet.optimizer import states_file


def _trained(opt, **kw):
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Constant(0.5))
    tr = mx.gluon.Trainer(net.collect_params(), opt, kw)
    with mx.autograd.record():
        loss = net(mx.nd.ones((4, 3))).sum()
    loss.backward()
    tr.step(4)
    return net, tr


@pytest.mark.parametrize("opt, kw", [
    ("adam", {}),
    ("sgd", {"momentum": 0.9, "lr_scheduler": mx.lr_scheduler.FactorScheduler(step=2)}),
])
def test_save_and_load_states_round_trip(tmp_path, opt, kw):
    net, tr = _trained(opt, **kw)
    path = str(tmp_path / "t.states")
    tr.save_states(path)
    before = {k: [None if s is None else s.asnumpy() for s in
                  (v if isinstance(v, tuple) else (v,))]
              for k, v in tr._updaters[0].states.items()}
    net2, tr2 = _trained(opt, **kw)
    tr2.load_states(path)
    after = tr2._updaters[0].states
    assert set(after) == set(before)
    for k, arrays in before.items():
        got = after[k] if isinstance(after[k], tuple) else (after[k],)
        for a, b in zip(arrays, got):
            if a is not None:
                np.testing.assert_array_equal(b.asnumpy(), a)
    assert type(tr2._optimizer).__name__.lower() == opt


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def test_a_states_file_naming_any_other_global_is_refused(tmp_path):
    net, tr = _trained("sgd", momentum=0.9)
    path = tmp_path / "evil.states"
    path.write_bytes(pickle.dumps(({0: _Evil()}, tr._optimizer)))
    with pytest.raises(FileFormatError, match=r"refers to (posix|os)\.system.*no code"):
        tr.load_states(str(path))
    with pytest.raises(FileFormatError, match="refers to builtins.eval"):
        states_file.loads(pickle.dumps(eval), "f")


def test_a_truncated_states_file_is_a_clear_error(tmp_path):
    net, tr = _trained("adam")
    path = tmp_path / "t.states"
    tr.save_states(str(path))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(FileFormatError, match="not a readable optimizer-states file"):
        tr.load_states(str(path))

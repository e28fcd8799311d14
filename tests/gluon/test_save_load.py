"""save_parameters / load_parameters: exact round trips (row_sparse included), atomic writes."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.gluon import contrib, nn
from sparsenet.ndarray import mxnet_format


def _model():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(3, in_units=4))
        net.add(nn.Embedding(10, 3, sparse_grad=True))
    emb = contrib.nn.SparseEmbedding(20, 3)
    outer = nn.Sequential()
    outer.add(net, emb)
    return outer


def _state(block):
    out = {}
    for key, p in block._collect_params_with_prefix().items():
        arr = p._data[0]
        out[key] = (arr.stype, arr.asnumpy(), arr.indices.asnumpy() if arr.stype != "default"
                    else None)
    return out


def test_roundtrip_is_exact_and_keeps_stypes(tmp_path):
    a = _model()
    a.initialize(init=mx.init.Normal(1.0))
    path = str(tmp_path / "m.params")
    a.save_parameters(path)
    saved = mx.nd.load(path)
    assert sorted(saved) == ["0.0.bias", "0.0.weight", "0.1.weight", "1.weight"]
    assert saved["1.weight"].stype == "row_sparse"
    b = _model()  # other block names, same structure
    b.load_parameters(path)
    sa, sb = _state(a), _state(b)
    assert sa.keys() == sb.keys()
    for key in sa:
        assert sa[key][0] == sb[key][0]
        np.testing.assert_array_equal(sa[key][1], sb[key][1])
        if sa[key][2] is not None:
            np.testing.assert_array_equal(sa[key][2], sb[key][2])
    # loaded parameters train: row_sparse gradient on the loaded row_sparse weight
    with mx.autograd.record():
        y = b[1](mx.nd.array([3, 3, 17]))
    y.backward()
    assert b[1].weight.grad().indices.asnumpy().tolist() == [3, 17]


def test_load_into_initialized_block_overwrites_values(tmp_path):
    a, b = nn.Dense(2, in_units=2), nn.Dense(2, in_units=2)
    a.initialize(init="ones")
    b.initialize(init="zeros")
    path = str(tmp_path / "d.params")
    a.save_parameters(path)
    b.load_parameters(path)
    np.testing.assert_array_equal(b.weight.data().asnumpy(), np.ones((2, 2)))


def test_deduplicate_saves_shared_parameters_once(tmp_path):
    net = nn.Sequential()
    d0 = nn.Dense(2, in_units=2)
    net.add(d0, nn.Dense(2, in_units=2, params=d0.collect_params()))
    net.initialize()
    path = str(tmp_path / "s.params")
    net.save_parameters(path, deduplicate=True)
    assert sorted(mx.nd.load(path)) == ["0.bias", "0.weight"]
    other = nn.Sequential()
    e0 = nn.Dense(2, in_units=2)
    other.add(e0, nn.Dense(2, in_units=2, params=e0.collect_params()))
    other.load_parameters(path)
    np.testing.assert_array_equal(other[1].weight.data().asnumpy(),
                                  net[0].weight.data().asnumpy())


def test_load_errors_name_the_parameter_and_file(tmp_path):
    a = nn.Sequential()
    a.add(nn.Dense(2, in_units=2))
    a.initialize()
    path = str(tmp_path / "one.params")
    a.save_parameters(path)
    bigger = nn.Sequential()
    bigger.add(nn.Dense(2, in_units=2), nn.Dense(1, in_units=2))
    with pytest.raises(ValueError, match=r"Parameter '1.weight' is missing in file '.*one.params'"):
        bigger.load_parameters(path)
    bigger.load_parameters(path, allow_missing=True)
    np.testing.assert_array_equal(bigger[0].weight.data().asnumpy(), a[0].weight.data().asnumpy())
    smaller = nn.Sequential()
    with pytest.raises(ValueError, match="Parameter '0.weight' loaded from file .* is not "
                                         "present"):
        smaller.add(nn.Activation("relu"))
        smaller.load_parameters(path)
    smaller.load_parameters(path, ignore_extra=True)


def test_load_legacy_full_name_files(tmp_path):
    net = nn.Dense(2, in_units=3, prefix="legacy_")
    net.initialize()
    path = str(tmp_path / "legacy.params")
    net.collect_params().save(path, strip_prefix="legacy_")
    other = nn.Dense(2, in_units=3, prefix="legacy_")
    other.load_parameters(path)
    np.testing.assert_array_equal(other.weight.data().asnumpy(), net.weight.data().asnumpy())


def test_save_crash_keeps_old_file(tmp_path, monkeypatch):
    net = nn.Dense(3, in_units=5)
    net.initialize(init="ones")
    path = str(tmp_path / "c.params")
    net.save_parameters(path)
    before = open(path, "rb").read()
    net.weight.set_data(mx.nd.full((3, 5), 7.0))

    def failing_save(f, *args, **kwargs):
        f.write(b"\x00" * 10)  # a partial write, then the crash
        raise OSError("disk full")

    monkeypatch.setattr(mxnet_format, "write_arrays", failing_save)
    with pytest.raises(OSError, match="disk full"):
        net.save_parameters(path)
    monkeypatch.undo()
    assert open(path, "rb").read() == before
    assert os.listdir(tmp_path) == ["c.params"]  # the temporary file was removed
    fresh = nn.Dense(3, in_units=5)
    fresh.load_parameters(path)
    np.testing.assert_array_equal(fresh.weight.data().asnumpy(), np.ones((3, 5)))


def test_killed_process_during_save_leaves_old_file(tmp_path):
    path = str(tmp_path / "k.params")
    started = str(tmp_path / "started")
    net = nn.Dense(64, in_units=256)
    net.initialize(init="ones")
    net.save_parameters(path)
    child = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {os.path.abspath('src')!r})
        import sparsenet as mx
        from sparsenet.ndarray import mxnet_format
        real_save = mxnet_format.write_arrays
        def slow_save(f, *a, **k):
            f.write(b"partial")
            f.flush()
            open({started!r}, "w").close()
            time.sleep(60)
            real_save(f, *a, **k)
        mxnet_format.write_arrays = slow_save
        net = mx.gluon.nn.Dense(64, in_units=256)
        net.initialize(init="zeros")
        net.save_parameters({path!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", child])
    try:
        deadline = time.time() + 60
        while not os.path.exists(started):
            assert proc.poll() is None, "the child exited before it started saving"
            assert time.time() < deadline, "the child never started saving"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    fresh = nn.Dense(64, in_units=256)
    fresh.load_parameters(path)
    np.testing.assert_array_equal(fresh.weight.data().asnumpy(), np.ones((64, 256)))

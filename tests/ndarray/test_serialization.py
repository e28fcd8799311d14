"""mx.nd.save / load: every storage type, atomic writes, clear errors on bad files."""
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import sparsenet as mx
from sparsenet.base import FileFormatError
from sparsenet.ndarray import mxnet_format


def _arrays():
    dense = mx.nd.array(np.arange(6, dtype=np.float64).reshape(2, 3), dtype="float64")
    csr = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 2], [0, 1, 2]), shape=(2, 3))
    rsp = mx.nd.sparse.row_sparse_array(([[1, 2]], [3]), shape=(5, 2), dtype="float16")
    return {"dense": dense, "csr": csr, "rsp": rsp, "empty": mx.nd.sparse.zeros("csr", (3, 4))}


def _same(a, b):
    assert a.stype == b.stype and a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_dict_and_list_round_trip(tmp_path):
    arrays = _arrays()
    p = tmp_path / "a.nd"
    mx.nd.save(p, arrays)
    back = mx.nd.load(p)
    assert list(back) == list(arrays)
    for k in arrays:
        _same(arrays[k], back[k])
    mx.nd.save(str(p), list(arrays.values()))
    for a, b in zip(arrays.values(), mx.nd.load(str(p))):
        _same(a, b)
    mx.nd.save(p, arrays["rsp"])
    _same(mx.nd.load(p)[0], arrays["rsp"])


def test_pickle_keeps_stype():
    for a in _arrays().values():
        _same(pickle.loads(pickle.dumps(a)), a)


def test_bytes_round_trip():
    arrays = _arrays()
    back = mx.nd.load_from_bytes(mx.nd.save_to_bytes(arrays))
    for k in arrays:
        _same(arrays[k], back[k])


def test_bad_files_name_the_path_and_key(tmp_path):
    p = tmp_path / "a.nd"
    with pytest.raises(FileNotFoundError, match="a.nd"):
        mx.nd.load(p)
    p.write_bytes(b"")
    with pytest.raises(FileFormatError, match=r"a.nd: the file is empty"):
        mx.nd.load(p)
    mx.nd.save(p, _arrays())
    raw = p.read_bytes()
    p.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(FileFormatError, match=r"a.nd: array \d.*at byte offset \d+"):
        mx.nd.load(p)
    mx.nd.save(p, _arrays(), format="sparsenet")
    raw = p.read_bytes()
    p.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(FileFormatError, match=r"a.nd: cannot read the file") as e:
        mx.nd.load(p)
    assert "weights_only" not in str(e.value)
    torch.save({"format": "other"}, p)
    with pytest.raises(FileFormatError, match="not a sparsenet array file"):
        mx.nd.load(p)
    payload = {"format": "sparsenet.ndarray", "version": 1, "kind": "dict", "keys": ["w"],
               "arrays": [{"stype": "row_sparse", "shape": [4, 1],
                           "parts": [torch.ones(2, 1), torch.tensor([3, 0])]}]}
    torch.save(payload, p)
    with pytest.raises(FileFormatError, match=r"key 'w': invalid row_sparse array: unsorted"):
        mx.nd.load(p)


def test_flipped_byte_is_detected(tmp_path):
    p = tmp_path / "a.nd"
    mx.nd.save(p, {"w": mx.nd.array(np.arange(1000, dtype=np.float32))}, format="sparsenet")
    payload = torch.load(p, weights_only=True)
    payload["arrays"][0]["parts"][0][10] += 1  # corrupt a value, keep the old checksum
    torch.save(payload, p)
    with pytest.raises(FileFormatError, match=r"key 'w': checksum mismatch"):
        mx.nd.load(p)


def test_crash_during_save_keeps_the_old_file(tmp_path):
    p = tmp_path / "a.nd"
    mx.nd.save(p, {"w": mx.nd.ones((3,))})
    script = textwrap.dedent(f"""
        import os, sparsenet as mx
        from sparsenet.ndarray import mxnet_format
        def dying(f, *a, **k):
            f.write(b"partial garbage")
            f.flush()
            os._exit(9)  # the process dies in the middle of the write
        mxnet_format.write_arrays = dying
        mx.nd.save({str(p)!r}, {{"w": mx.nd.zeros((3,))}})
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    rc = subprocess.run([sys.executable, "-c", script], env=env).returncode
    assert rc == 9
    np.testing.assert_array_equal(mx.nd.load(p)["w"].asnumpy(), np.ones(3))
    leftovers = [f for f in os.listdir(tmp_path) if f != "a.nd"]
    assert all(f.endswith(".tmp") for f in leftovers)  # never in place of the real file


def test_exception_during_save_cleans_up(tmp_path, monkeypatch):
    p = tmp_path / "a.nd"
    mx.nd.save(p, {"w": mx.nd.ones((3,))})

    def boom(f, *a, **k):
        f.write(b"half")
        raise OSError("disk full")
    monkeypatch.setattr(mxnet_format, "write_arrays", boom)
    with pytest.raises(OSError, match="disk full"):
        mx.nd.save(p, {"w": mx.nd.zeros((3,))})
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["a.nd"]
    np.testing.assert_array_equal(mx.nd.load(p)["w"].asnumpy(), np.ones(3))


def test_save_keeps_file_mode(tmp_path):
    p = tmp_path / "a.nd"
    mx.nd.save(p, [mx.nd.ones((1,))])
    os.chmod(p, 0o640)
    mx.nd.save(p, [mx.nd.ones((1,))])
    assert os.stat(p).st_mode & 0o777 == 0o640


def test_save_rejects_bad_input(tmp_path):
    with pytest.raises(TypeError, match="dict keys must be str"):
        mx.nd.save(tmp_path / "x", {1: mx.nd.ones((1,))})
    with pytest.raises(TypeError, match="expected NDArray values"):
        mx.nd.save(tmp_path / "x", [np.ones(2)])

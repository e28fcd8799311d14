"""mx.test_utils downloads and data files, offline: file:// URLs and files made here."""
import bz2
import gzip
import os
import struct
import zipfile

import numpy as np
import pytest

import sparsenet as mx
from sparsenet import test_utils as tu


def _url(path):
    return "file://" + os.path.abspath(path)


def test_download_file_url_skip_and_overwrite(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"payload")
    dest = tu.download(_url(src), dirname=str(tmp_path / "out"))
    assert dest == str(tmp_path / "out" / "src.bin") and open(dest, "rb").read() == b"payload"
    src.write_bytes(b"changed")
    assert open(tu.download(_url(src), dirname=str(tmp_path / "out")), "rb").read() == b"payload"
    tu.download(_url(src), dirname=str(tmp_path / "out"), overwrite=True)
    assert open(dest, "rb").read() == b"changed"
    named = tu.download(_url(src), fname=str(tmp_path / "named.bin"))
    assert named == str(tmp_path / "named.bin") and os.path.exists(named)


def test_download_failure_is_clear_and_leaves_nothing(tmp_path, capsys):
    missing = tmp_path / "missing.bin"
    with pytest.raises(tu.DataFileError, match=r"failed after 2 attempt\(s\).*put the file at"):
        tu.download(_url(missing), dirname=str(tmp_path / "o"), retries=2)
    assert "download failed, retrying, 1 attempt left" in capsys.readouterr().out
    assert os.listdir(tmp_path / "o") == []
    with pytest.raises(OSError):  # DataFileError is an OSError
        tu.download("http://127.0.0.1:9/nothing.bin", dirname=str(tmp_path / "o"), retries=0)
    with pytest.raises(mx.MXNetError, match="retries must be >= 0"):
        tu.download(_url(missing), retries=-1)


def test_get_zip_and_bz2_data(tmp_path):
    archive = tmp_path / "src.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("a/b.txt", "hello")
    out = tmp_path / "data"
    tu.get_zip_data(str(out), _url(archive), "local.zip")
    assert (out / "a" / "b.txt").read_text() == "hello" and (out / "local.zip").exists()
    (out / "a" / "b.txt").write_text("kept")
    tu.get_zip_data(str(out), _url(archive), "local.zip")  # present: nothing is redone
    assert (out / "a" / "b.txt").read_text() == "kept"
    compressed = tmp_path / "x.bz2"
    compressed.write_bytes(bz2.compress(b"1 0:1\n0 3:2\n"))
    tu.get_bz2_data(str(out), "x.txt", _url(compressed), "x.txt.bz2")
    assert (out / "x.txt").read_bytes() == b"1 0:1\n0 3:2\n"
    assert not (out / "x.txt.bz2").exists()


def _idx(path, header, payload, compress):
    raw = struct.pack(">" + "I" * len(header), *header) + bytes(payload)
    with (gzip.open if compress else open)(path, "wb") as f:
        f.write(raw)


def _fake_mnist(folder, compress, n=4):
    suffix = ".gz" if compress else ""
    for split in ("train", "t10k"):
        _idx(os.path.join(folder, f"{split}-labels-idx1-ubyte{suffix}"), (2049, n),
             np.arange(n, dtype=np.uint8), compress)
        _idx(os.path.join(folder, f"{split}-images-idx3-ubyte{suffix}"), (2051, n, 28, 28),
             np.full(n * 784, 51, dtype=np.uint8), compress)


def test_get_mnist_reads_files_in_place(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _fake_mnist(str(tmp_path), compress=True)
    data = tu.get_mnist()
    assert data["train_data"].shape == (4, 1, 28, 28) and data["train_data"].dtype == np.float32
    assert np.allclose(data["test_data"], 0.2) and data["train_label"].tolist() == [0, 1, 2, 3]
    assert data["test_label"].dtype == np.int8


def test_get_mnist_iterator_serves_parts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.makedirs("data")
    _fake_mnist("data", compress=False)
    train, val = tu.get_mnist_iterator(2, (1, 28, 28), num_parts=2, part_index=1)
    batches = list(val)
    assert len(batches) == 1 and batches[0].data[0].shape == (2, 1, 28, 28)
    assert batches[0].label[0].asnumpy().tolist() == [2.0, 3.0]
    assert np.allclose(batches[0].data[0].asnumpy(), 0.2)
    train, _ = tu.get_mnist_iterator(2, (784,))
    assert next(train).data[0].shape == (2, 784)
    with pytest.raises(tu.DataFileError, match=r"part_index must be in \[0, 2\)"):
        tu.get_mnist_iterator(2, (784,), num_parts=2, part_index=2)


def test_download_model_with_local_meta_info(tmp_path):
    (tmp_path / "m-symbol.json").write_text("{}")
    (tmp_path / "m.params").write_bytes(b"\0")
    meta = {"m": {"symbol": _url(tmp_path / "m-symbol.json"),
                  "params": _url(tmp_path / "m.params")}}
    prefix, epoch = tu.download_model("m", str(tmp_path / "zoo"), meta_info=meta)
    assert (prefix, epoch) == (str(tmp_path / "zoo" / "m"), 0)
    assert os.path.exists(prefix + "-symbol.json") and os.path.exists(prefix + "-0000.params")
    assert tu.download_model("unknown", str(tmp_path / "zoo")) == (None, 0)


def test_get_im2rec_path(tmp_path, monkeypatch):
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    with pytest.raises(tu.DataFileError, match="Could not find path to tools/im2rec.py"):
        tu.get_im2rec_path()
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "im2rec.py").write_text("")
    assert tu.get_im2rec_path() == str(tmp_path / "tools" / "im2rec.py")

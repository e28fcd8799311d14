"""sparsenet convert for model files: MXNet 1.9.1's own .params files to
plain PyTorch .pt and back, with the values MXNet wrote (fixtures of tests/data/mxnet_1_9_1,
whose contents make_fixtures.py defines), byte-equal round trips, and the one-line errors."""
import os
import shutil
import warnings

import numpy as np
import pytest
import torch

from sparsenet.cli.main import main

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "mxnet_1_9_1")


def _torch_load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's beta note on sparse CSR
        return torch.load(path, weights_only=True)


def test_mxnet_dtypes_file_to_torch(tmp_path, capsys):
    out = str(tmp_path / "dtypes.pt")
    assert main(["convert", os.path.join(DATA, "dtypes.params"), out]) == 0
    assert "8 arrays (default)" in capsys.readouterr().out
    tensors = _torch_load(out)
    base = np.arange(6).reshape(2, 3)  # make_fixtures.py: (base - 2), bool: base % 2
    for dt in ["float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool"]:
        want = (base % 2).astype(dt) if dt == "bool" else (base - 2).astype(dt)
        assert tensors[dt].dtype == torch.from_numpy(want).dtype
        np.testing.assert_array_equal(tensors[dt].numpy(), want)


def test_mxnet_sparse_file_to_torch_layouts(tmp_path):
    out = str(tmp_path / "sparse.pt")
    assert main(["convert", os.path.join(DATA, "sparse.params"), out]) == 0
    t = _torch_load(out)
    csr, rsp = t["csr"], t["rsp"]
    assert csr.layout == torch.sparse_csr  # make_fixtures.py's csr: rows [1.5 at 1], [], [-2 at 0, 3 at 3]
    assert csr.crow_indices().tolist() == [0, 1, 1, 3]
    assert csr.col_indices().tolist() == [1, 0, 3]
    assert csr.values().tolist() == [1.5, -2.0, 3.0]
    assert rsp.layout == torch.sparse_coo and rsp.sparse_dim() == 1
    np.testing.assert_array_equal(rsp.to_dense().numpy()[[1, 4]], [[1, 2], [3, 4]])
    assert rsp.to_dense().numpy()[[0, 2, 3, 5]].sum() == 0


@pytest.mark.parametrize("fixture", ["sparse.params", "dtypes.params", "mod-0007.params",
                                     "list.nd"])
def test_mxnet_to_torch_and_back_is_byte_equal(tmp_path, fixture):
    # MXNet wrote the fixture; sparsenet writes MXNet's bytes for the same arrays
    pt, back = str(tmp_path / "x.pt"), str(tmp_path / ("back" + os.path.splitext(fixture)[1]))
    assert main(["convert", os.path.join(DATA, fixture), pt]) == 0
    assert main(["convert", pt, back]) == 0
    if fixture == "list.nd":  # a list comes back named "0", "1"...: compare the values
        import sparsenet as mx
        got, want = mx.nd.load(back), mx.nd.load(os.path.join(DATA, fixture))
        assert [str(i) for i in range(len(want))] == list(got)
        for g, w in zip(got.values(), want):
            np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())
        return
    with open(os.path.join(DATA, fixture), "rb") as a, open(back, "rb") as b:
        assert a.read() == b.read()


def test_a_torch_state_dict_becomes_an_mxnet_file(tmp_path):
    import sparsenet as mx
    state = {"emb.weight": torch.arange(6.0).reshape(3, 2), "fc.bias": torch.tensor([0.5])}
    pt, out = str(tmp_path / "m.pt"), str(tmp_path / "m.params")
    torch.save(state, pt)
    assert main(["convert", pt, out]) == 0
    loaded = mx.nd.load(out)
    np.testing.assert_array_equal(loaded["emb.weight"].asnumpy(), [[0, 1], [2, 3], [4, 5]])
    np.testing.assert_array_equal(loaded["fc.bias"].asnumpy(), [0.5])


def test_model_file_errors_are_one_line(tmp_path, capsys):
    src = os.path.join(DATA, "sparse.params")
    assert main(["convert", src, str(tmp_path / "x.svm")]) == 1
    assert "a model file" in capsys.readouterr().err
    data = tmp_path / "d.svm"
    data.write_text("1 0:1\n")
    assert main(["convert", str(data), str(tmp_path / "x.params")]) == 1
    assert "not to a model file" in capsys.readouterr().err
    bad = tmp_path / "bad.params"
    bad.write_bytes(b"\x12\x01" + b"\x00" * 10)
    assert main(["convert", str(bad), str(tmp_path / "y.pt")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("sparsenet: error: ") and str(bad) in err and err.count("\n") == 1
    # a .pt that would run code on a plain torch.load is refused (weights_only), named
    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned",))
    evil = tmp_path / "evil.pt"
    torch.save({"w": Evil()}, evil)
    assert main(["convert", str(evil), str(tmp_path / "z.params")]) == 1
    err = capsys.readouterr().err
    assert str(evil) in err and "pwned" not in err and "weights_only=False" not in err
    assert not (tmp_path / "z.params").exists()
    shutil.rmtree(tmp_path)

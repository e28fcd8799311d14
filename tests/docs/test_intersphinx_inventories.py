"""The intersphinx inventories shipped in docs/_intersphinx/ and tools/refresh_intersphinx.py.

The documentation build links to Python, NumPy, SciPy and PyTorch through these files, never
through the network (an offline build used to print four connection errors). The inventories
are read here with zlib, as the Sphinx inventory format (version 2) defines them, not with the
code that wrote them.
"""
import importlib.util
import pathlib
import re
import zlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FOLDER = ROOT / "docs" / "_intersphinx"


_LINE = re.compile(r"(.+?)\s+(\S+:\S+)\s+(-?\d+)\s+(\S*)\s+(.*)")


def _read(path):
    """``{(name, role): uri}`` of a version-2 inventory (``$`` at the end of a uri is the name)."""
    data = path.read_bytes()
    lines = data.split(b"\n", 4)
    assert lines[0] == b"# Sphinx inventory version 2", path
    assert b"compressed using zlib" in lines[3]
    entries = {}
    for line in zlib.decompress(lines[4]).decode().splitlines():
        name, role, _priority, uri, _display = _LINE.match(line).groups()
        entries[name, role] = uri[:-1] + name if uri.endswith("$") else uri
    return entries


def _tool():
    spec = importlib.util.spec_from_file_location(
        "refresh_intersphinx", ROOT / "tools" / "refresh_intersphinx.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _conf_mapping():
    text = (ROOT / "docs" / "conf.py").read_text()
    start = text.index("intersphinx_mapping = {")
    block = text[start:text.index("}", start) + 1]
    namespace = {}
    exec(block, namespace)  # noqa: S102 -- the literal dict of conf.py
    return namespace["intersphinx_mapping"]


def test_the_build_reads_the_shipped_files_only():
    mapping = _conf_mapping()
    assert sorted(mapping) == ["numpy", "python", "scipy", "torch"]
    for name, (site, inventory) in mapping.items():
        assert site.startswith("https://")
        assert inventory == f"_intersphinx/{name}.inv"  # a local file, no fetch
        assert (ROOT / "docs" / inventory).stat().st_size < 200_000


@pytest.mark.parametrize("name, entries", [
    # addresses as each project's site has them (docs.python.org, numpy.org, docs.scipy.org,
    # docs.pytorch.org)
    ("python", {"list": ("py:class", "library/stdtypes.html#list"),
                "collections.abc.Iterable":
                    ("py:class", "library/collections.abc.html#collections.abc.Iterable"),
                "contextlib.contextmanager":
                    ("py:function", "library/contextlib.html#contextlib.contextmanager")}),
    ("scipy", {"scipy.sparse.csr_matrix":
               ("py:class", "reference/generated/scipy.sparse.csr_matrix.html"
                            "#scipy.sparse.csr_matrix")}),
    ("numpy", {"numpy.ndarray": ("py:class", "reference/generated/numpy.ndarray.html"
                                             "#numpy.ndarray"),
               "numpy.dot": ("py:function", "reference/generated/numpy.dot.html#numpy.dot"),
               "numpy.typing.ArrayLike": ("py:data", "reference/typing.html"
                                                     "#numpy.typing.ArrayLike")}),
    ("torch", {"torch.Tensor": ("py:class", "tensors.html#torch.Tensor"),
               "torch.nn.Embedding": ("py:class", "generated/torch.nn.Embedding.html"
                                                  "#torch.nn.Embedding"),
               "torch.optim.Optimizer": ("py:class", "optim.html#torch.optim.Optimizer"),
               "torch.utils.data.DataLoader": ("py:class", "data.html"
                                                           "#torch.utils.data.DataLoader")}),
])
def test_each_inventory_holds_the_names_the_docs_link_to(name, entries):
    found = _read(FOLDER / f"{name}.inv")
    for key, (role, uri) in entries.items():
        assert found[key, role] == uri, key


def test_generate_writes_a_stand_in_with_the_sites_addresses(tmp_path, monkeypatch):
    tool = _tool()
    monkeypatch.setattr(tool, "FOLDER", tmp_path)
    path = tool.generate("numpy")
    found = _read(path)
    assert found["numpy.dot", "py:function"] == "reference/generated/numpy.dot.html#numpy.dot"
    assert found["numpy.float32", "py:class"] == "reference/arrays.scalars.html#numpy.float32"
    assert found["numpy.ndarray.astype", "py:method"] == (
        "reference/generated/numpy.ndarray.astype.html#numpy.ndarray.astype")
    assert "$" not in "".join(found.values())


def test_a_failed_download_keeps_the_shipped_file(tmp_path, monkeypatch, capsys):
    tool = _tool()
    shipped = tmp_path / "numpy.inv"
    shipped.write_bytes(b"# Sphinx inventory version 2\nshipped")
    monkeypatch.setattr(tool, "FOLDER", tmp_path)

    def offline(url, timeout):
        raise OSError("[Errno -2] Name or service not known")

    monkeypatch.setattr(tool.urllib.request, "urlopen", offline)
    assert tool.main(["numpy"]) == 1
    assert shipped.read_bytes() == b"# Sphinx inventory version 2\nshipped"
    assert "numpy: kept the shipped file" in capsys.readouterr().err


def test_copy_local_refuses_a_file_that_is_not_an_inventory(tmp_path, monkeypatch):
    tool = _tool()
    monkeypatch.setattr(tool, "FOLDER", tmp_path)
    bad = tmp_path / "page.html"
    bad.write_text("<html>")
    with pytest.raises(ValueError, match="is not a Sphinx inventory"):
        tool.copy_local("python", bad)
    assert not (tmp_path / "python.inv").exists()

"""The documentation site (docs/, `make docs`) builds warning-free and lists the public API.

The build needs the ``docs`` extra (sphinx, numpydoc, myst-parser); without it the build test is
skipped. It runs offline: ``SPARSENET_DOCS_INTERSPHINX=0`` skips the intersphinx inventories.
"""
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import types

import pytest

import sparsenet as mx

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
DOCS_EXTRA = ("sphinx", "numpydoc", "myst_parser")

# The namespaces the site must cover, as users reach them, with the dotted path the pages use.
NAMESPACES = {
    "sparsenet.ndarray": mx.nd,
    "sparsenet.gluon": mx.gluon,
    "sparsenet.optimizer": mx.optimizer,
    "sparsenet.io": mx.io,
    "sparsenet.symbol": mx.sym,
    "sparsenet.module": mx.mod,
}


def _public(namespace):
    names = getattr(namespace, "__all__", None) or dir(namespace)
    return [name for name in names if not name.startswith("_")]


def _expected_ids():
    """HTML anchor ids the site must contain: one per public name, recursing into submodules."""
    ids, todo = set(), list(NAMESPACES.items())
    while todo:
        path, namespace = todo.pop()
        ids.add(f"module-{path}")
        for name in _public(namespace):
            obj = getattr(namespace, name)
            if isinstance(obj, types.ModuleType):
                todo.append((f"{path}.{name}", obj))
            else:
                ids.add(f"{path}.{name}")
    return ids


def _load_ext(name):
    spec = importlib.util.spec_from_file_location(name, DOCS / "_ext" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_expected_ids_cover_the_namespaces_of_the_issue():
    ids = _expected_ids()
    for must in ("sparsenet.ndarray.dot", "sparsenet.ndarray.sparse.csr_matrix",
                 "sparsenet.gluon.nn.Dense", "sparsenet.gluon.loss.L2Loss",
                 "sparsenet.gluon.data.DataLoader", "sparsenet.gluon.contrib.nn.SparseEmbedding",
                 "sparsenet.optimizer.SGD", "sparsenet.io.LibSVMIter",
                 "sparsenet.symbol.sparse.dot", "sparsenet.module.Module",
                 "module-sparsenet.ndarray.sparse"):
        assert must in ids
    assert len(ids) > 700


def test_storage_types_section_moves_into_the_summary_as_a_table():
    ext = _load_ext("storage_types_section")
    lines = ["Dot product.", "", "Parameters", "----------", "lhs : NDArray", "",
             "Storage types", "-------------", "| inputs | output | when |", "|---|---|---|",
             "| csr, dns | rsp | transpose_a=True |", "| dns|csr|rsp, ... | dns | always |",
             "| any other | dns | |", ""]
    ext.move_storage_types(None, "function", "dot", None, {}, lines)
    assert lines == [
        "Dot product.", "", "", ".. rubric:: Storage types", "",
        ".. list-table::", "   :header-rows: 1", "",
        "   * - inputs", "     - output", "     - when",
        "   * - csr, dns", "     - rsp", "     - transpose_a=True",
        "   * - dns\\|csr\\|rsp, ...", "     - dns", "     - always",
        "   * - any other", "     - dns", "     -",
        "", "", "",
        "Parameters", "----------", "lhs : NDArray", ""]


def test_storage_types_prose_section_is_kept_and_a_docstring_without_one_is_unchanged():
    ext = _load_ext("storage_types_section")
    lines = ["CSR array.", "", "Storage types", "-------------", "``x[i]`` gives a CSR row.", "",
             "Examples", "--------", ">>> 1", "1"]
    ext.move_storage_types(None, "class", "CSRNDArray", None, {}, lines)
    assert lines == ["CSR array.", "", "", ".. rubric:: Storage types", "",
                     "``x[i]`` gives a CSR row.", "", "",
                     "Examples", "--------", ">>> 1", "1"]
    plain = ["Add.", "", "Returns", "-------", "NDArray"]
    ext.move_storage_types(None, "function", "add", None, {}, plain)
    assert plain == ["Add.", "", "Returns", "-------", "NDArray"]


@pytest.mark.slow
def test_site_builds_without_warnings_and_lists_every_public_name(tmp_path):
    for module in DOCS_EXTRA:
        pytest.importorskip(module, reason="the docs extra is not installed: pip install -e .[docs]")
    env = dict(os.environ, SPARSENET_DOCS_INTERSPHINX="0")
    out = tmp_path / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-j", "2", "-q",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    assert "WARNING" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr[-6000:]

    html = {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8")
            for p in out.rglob("*.html")}
    found = set()
    for text in html.values():
        found.update(re.findall(r'id="([^"]+)"', text))
    missing = sorted(_expected_ids() - found)
    assert not missing, f"{len(missing)} public names have no entry in the site: {missing[:20]}"

    for page in ("index.html", "differences.html", "stype_table.html", "user_guide.html",
                 "migrating_from_mxnet.html", "errors_and_limits.html", "cli.html",
                 "api/index.html", "api/sparsenet.ndarray.sparse.html"):
        assert page in html, page
    # the registry's storage-type rules of dot survive numpydoc, as a table in dot's entry
    nd_page = html["api/sparsenet.ndarray.html"]
    dot = nd_page[nd_page.index('id="sparsenet.ndarray.dot"'):]
    dot = dot[:dot.index("</dd>")]
    assert "Storage types" in dot and "<table" in dot and "transpose_a=True" in dot

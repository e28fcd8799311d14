"""The documentation site (docs/, `make docs`) builds warning-free and lists the public API.

The build needs the ``docs`` extra (sphinx, numpydoc, myst-parser, pydata-sphinx-theme,
sphinx-copybutton, sphinx-argparse, sphinx-gallery); without it the build test is skipped. It
builds a copy of docs/ and examples/gallery/ in a temporary folder (the gallery's generated
pages stay out of the working tree) with ``-D plot_gallery=0``: the gallery's pages are built
but its examples are not run (``make docs`` runs them, a CI step of its own). Intersphinx reads
the inventories shipped in docs/_intersphinx/, so the build needs no network.
"""
import argparse
import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys
import types

import pytest

import sparsenet as mx
import sparsenet.profiler
import sparsenet.torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
DOCS_EXTRA = ("sphinx", "numpydoc", "myst_parser", "pydata_sphinx_theme", "sphinx_copybutton",
              "sphinxarg", "sphinx_gallery")

# The roots of the public API as users reach them: everything public under ``sparsenet``
# (``mx.nd``, ``mx.gluon.rnn``, ``mx.kv``, ...), the PyTorch API, and ``mx.profiler`` (public
# through ``mx.profiler`` though not in ``sparsenet.__all__``).
ROOTS = {
    "sparsenet": mx,
    "sparsenet.torch": sparsenet.torch,
    "sparsenet.profiler": sparsenet.profiler,
}


def _public(namespace):
    names = getattr(namespace, "__all__", None) or dir(namespace)
    return [name for name in names if not name.startswith("_")]


def _ours(obj):
    module = getattr(obj, "__module__", None) or ""
    return module == "sparsenet" or module.startswith("sparsenet.")


def public_api():
    """Map each public sparsenet module to the dotted paths that reach it.

    ``mx.nd`` and ``mx.ndarray`` both reach ``sparsenet.ndarray``.

    The walk starts at :data:`ROOTS` and follows every public attribute that is a sparsenet
    module; a module reached under several paths is documented under (at least) one of them.
    """
    modules, todo = {}, list(ROOTS.items())
    while todo:
        path, namespace = todo.pop(0)
        first = namespace not in modules
        modules.setdefault(namespace, []).append(path)
        if first:
            todo += [(f"{path}.{name}", getattr(namespace, name)) for name in _public(namespace)
                     if isinstance(getattr(namespace, name), types.ModuleType)
                     and getattr(namespace, name).__name__.startswith("sparsenet")]
    return modules


def names_of(module, path):
    """The public names of ``module`` spelled under ``path``, without its submodules."""
    return {f"{path}.{name}": getattr(module, name) for name in _public(module)
            if not isinstance(getattr(module, name), types.ModuleType)}


def _load_ext(name):
    spec = importlib.util.spec_from_file_location(name, DOCS / "_ext" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_public_api_covers_the_namespaces_of_the_issue():
    modules = public_api()
    reached = {path for paths in modules.values() for path in paths}
    names = {}
    for module, paths in modules.items():
        names.update(names_of(module, paths[0]))
    for must in ("sparsenet.torch.optim", "sparsenet.torch.data", "sparsenet.torch.nn",
                 "sparsenet.kv", "sparsenet.autograd", "sparsenet.metric",
                 "sparsenet.lr_scheduler", "sparsenet.initializer", "sparsenet.config",
                 "sparsenet.test_utils", "sparsenet.callback", "sparsenet.runtime",
                 "sparsenet.operator", "sparsenet.models", "sparsenet.profiler",
                 "sparsenet.util", "sparsenet.random", "sparsenet.context", "sparsenet.nd",
                 "sparsenet.gluon.trainer", "sparsenet.gluon.rnn", "sparsenet.symbol.sparse",
                 "sparsenet.rnn", "sparsenet.gluon.contrib.rnn", "sparsenet.gluon.contrib.cnn"):
        assert must in reached, must
    for must in ("sparsenet.ndarray.dot", "sparsenet.ndarray.sparse.csr_matrix",
                 "sparsenet.gluon.nn.Dense", "sparsenet.gluon.trainer.Trainer",
                 "sparsenet.torch.optim.SGD", "sparsenet.kvstore.create",
                 "sparsenet.metric.Accuracy", "sparsenet.autograd.record",
                 "sparsenet.io.LibSVMIter", "sparsenet.module.Module"):
        assert must in names, must
    assert len(names) > 1200


def test_cli_signatures_are_the_ones_help_prints():
    pytest.importorskip("sphinxarg", reason="the docs extra is not installed")
    ext = _load_ext("cli_options")
    parser = argparse.ArgumentParser(prog="tool")
    flag = parser.add_argument("--verbose", action="store_true", help="say more")
    count = parser.add_argument("-n", "--nproc", metavar="N", type=int, help="workers")
    base = parser.add_argument("--index-base", choices=["0", "1", "auto"])
    data = parser.add_argument("data", metavar="DATA")
    rest = parser.add_argument("rest", nargs=argparse.REMAINDER, metavar="...")
    assert ext.option_signature(parser, flag) == "--verbose"
    assert ext.option_signature(parser, count) == "-n N, --nproc N"
    assert ext.option_signature(parser, base) == "--index-base {0,1,auto}"
    assert ext.option_signature(parser, data) == "DATA"
    assert ext.option_signature(parser, rest) == "..."
    # every line of --help's usage names the options the same way
    usage = parser.format_usage()
    assert "-n N" in usage and "--index-base {0,1,auto}" in usage


def test_cli_terminal_text_keeps_paragraphs_and_example_lines():
    pytest.importorskip("sphinxarg", reason="the docs extra is not installed")
    ext = _load_ext("cli_options")
    text = ("Train a model.\nSecond line.\n\nexamples:\n  tool train a.libsvm\n"
            "    --epochs 3  # a comment\n")
    result = ext.terminal_text(text)
    assert [node.tagname for node in result] == ["paragraph", "paragraph", "literal_block"]
    assert result[0].astext() == "Train a model.\nSecond line."
    assert result[1].astext() == "examples:"
    assert result[2].astext() == "tool train a.libsvm\n  --epochs 3  # a comment"


def test_bases_line_names_public_ancestors_in_place_of_private_ones():
    ext = _load_ext("sparsenet_apidoc")

    class Base:
        pass

    class Mixin:
        pass

    class _Private(Base, Mixin):
        pass

    class _Bare:
        pass

    bases = [_Private, Mixin]
    ext.public_bases(None, "Layer", None, {}, bases)
    assert bases == [Base, Mixin]
    bare = [_Bare]
    ext.public_bases(None, "Other", None, {}, bare)
    assert bare == []


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


def _copy_sources(tmp_path):
    """docs/ and examples/gallery/ in tmp_path, without anything a build generated."""
    generated = shutil.ignore_patterns("_build", "auto_examples", "generated",
                                       "sg_execution_times.rst", "__pycache__")
    shutil.copytree(DOCS, tmp_path / "docs", ignore=generated)
    shutil.copytree(ROOT / "examples" / "gallery", tmp_path / "examples" / "gallery",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "docs"


def _ids(html):
    found = set()
    for text in html.values():
        found.update(re.findall(r'id="([^"]+)"', text))
    return found


def _entries(html):
    """Ids of full entries: the ``<dt>`` of an autodoc or option description."""
    found = set()
    for text in html.values():
        found.update(re.findall(r'<dt class="sig sig-object [^"]*"\s+id="([^"]+)"', text))
    return found


@pytest.mark.slow
def test_site_builds_without_warnings_and_lists_every_public_name(tmp_path):
    for module in DOCS_EXTRA:
        pytest.importorskip(module, reason="the docs extra is not installed: pip install .[docs]")
    docs = _copy_sources(tmp_path)
    out = tmp_path / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-j", "2", "-q",
         "-D", "plot_gallery=0", "-d", str(tmp_path / "doctrees"), str(docs), str(out)],
        cwd=ROOT, env=dict(os.environ, MPLBACKEND="Agg"), capture_output=True, text=True,
        timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    # nothing printed at all: no warning, no error, no intersphinx connection error
    assert not proc.stderr.strip(), proc.stderr[-6000:]

    html = {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8")
            for p in out.rglob("*.html")}
    ids, entries = _ids(html), _entries(html)

    # every namespace has its page, under one of its spellings, with an anchor for every
    # public name (a class, a function, data) ...
    modules = public_api()
    names = {}
    for module, paths in modules.items():
        documented = [path for path in paths if f"module-{path}" in ids]
        assert documented, f"no page for the namespace {paths}"
        for path in documented:
            names.update(names_of(module, path))
    missing = sorted(name for name in names if name not in ids)
    assert not missing, f"{len(missing)} public names have no entry in the site: {missing[:20]}"
    # ... and every class and function of sparsenet a full entry under one of its spellings
    spellings = {}
    for name, obj in names.items():
        if isinstance(obj, type) or callable(obj):
            spellings.setdefault(id(obj), (obj, []))[1].append(name)
    no_entry = sorted(paths[0] for obj, paths in spellings.values()
                      if _ours(obj) and not entries.intersection(paths))
    assert not no_entry, f"{len(no_entry)} classes or functions have no full entry: {no_entry[:20]}"
    # a class has a page of its own, holding its entry
    for obj, paths in spellings.values():
        if isinstance(obj, type) and _ours(obj):
            home = sorted(entries.intersection(paths))[0]
            page = html.get(f"api/generated/{home}.html", "")
            assert f'id="{home}"' in page, f"{home} has no page of its own"
    # a summary row of a name documented elsewhere links to the full entry
    alias_rows = 0
    for page, text in html.items():
        if not page.startswith("api/"):
            continue
        for anchor, row in re.findall(r'<tr class="[^"]*" id="(sparsenet[^"]+)">(.*?)</tr>',
                                      text, re.S):
            alias_rows += 1
            targets = re.findall(r'href="[^"#]*#([^"]+)"', row)
            assert targets and (set(targets) & entries or "http" in row), (anchor, row[:300])
    assert alias_rows > 100

    # the namespace page of mx.gluon.trainer links to the full Trainer entry (no stub)
    trainer = html["api/sparsenet.gluon.trainer.html"]
    assert 'href="generated/sparsenet.gluon.Trainer.html#sparsenet.gluon.Trainer"' in trainer
    assert "documented on that page" not in trainer

    for page in ("index.html", "differences.html", "stype_table.html", "user_guide.html",
                 "migrating_from_mxnet.html", "errors_and_limits.html", "cli.html",
                 "api/index.html", "api/sparsenet.ndarray.sparse.html",
                 "api/sparsenet.torch.optim.html", "auto_examples/index.html"):
        assert page in html, page
    # the theme: an "on this page" table of contents, the footer's version, the copy button
    nd_page = html["api/sparsenet.ndarray.html"]
    assert 'class="page-toc' in nd_page or "bd-toc" in nd_page
    assert f"sparsenet {mx.__version__}" in html["index.html"]
    assert (out / "_static" / "copybutton.js").exists()
    assert (out / "_static" / "sparsenet.css").exists()
    # the registry's storage-type rules of dot survive numpydoc, as a table in dot's entry
    dot = nd_page[nd_page.index('id="sparsenet.ndarray.dot"'):]
    dot = dot[:dot.index("</dd>")]
    assert "Storage types" in dot and "<table" in dot and "transpose_a=True" in dot
    # intersphinx links to the shipped inventories' sites
    assert "https://numpy.org/doc/stable/" in "".join(html.values())

    # the command-line reference: an anchored option entry for every option of every command
    from sparsenet.cli.main import build_parser
    cli = html["cli.html"]
    todo = [("sparsenet", build_parser())]
    while todo:
        prog, parser = todo.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{prog} {name}", sub) for name, sub in action.choices.items()]
            if isinstance(action, argparse._HelpAction):
                continue
            for option in action.option_strings:
                anchor = f"cmdoption-{prog.replace(' ', '-')}-{option.lstrip('-')}"
                assert f'id="{anchor}"' in cli, anchor
    assert ":class:" not in cli and ":func:" not in cli

"""Sphinx configuration of sparsenet's documentation site.

Build it with ``make docs`` (HTML in ``docs/_build/html``, warnings are errors; the gallery's
examples run). The guide pages are the Markdown files in this folder (read through
myst-parser); the API reference is ``docs/api/``: the ``api-namespace`` directive of
``docs/_ext/sparsenet_apidoc.py`` lists each namespace's public names from its ``__all__``,
with a page per namespace and a page per class. The command-line reference (``cli.md``) is
generated from the ``sparsenet`` argparse parser by sphinx-argparse, each option an
``.. option::`` entry (``docs/_ext/cli_options.py``). The gallery (``auto_examples/``) is
sphinx-gallery's rendering of ``examples/gallery/``, each example executed at build time with
its output and figures (``-D plot_gallery=0`` builds the pages without running them, as the
test suite does).

Theme: pydata-sphinx-theme, the theme of the NumPy, SciPy, pandas and scikit-learn sites, so
the site reads as the references its users know: a content column that uses the window's width
(``_static/sparsenet.css`` widens it, and wraps long code lines inside the column instead of
cutting them), an "on this page" table of contents on the right (a namespace page lists each
function there), a searchable left navigation, and a footer with the version and what the
project is (``_templates/version-about.html``). sphinx-copybutton adds a copy button to each
code block; it copies only the input lines of an interactive example, without the ``>>> `` and
``... `` prompts and without the printed output (``copybutton_prompt_text`` below; a shell
``$ `` prompt is stripped as well), so a copied doctest pastes and runs as it is.

Intersphinx links to Python, NumPy, SciPy and PyTorch through the inventories shipped in
``_intersphinx/`` (no network access at build time: an offline build links to them and prints
nothing). ``python tools/refresh_intersphinx.py`` downloads the current ones where the network
allows; ``_intersphinx/README.md`` says where each shipped file came from.
"""
import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent / "src"))

import sparsenet  # noqa: E402

project = "sparsenet"
author = "The sparsenet authors"
copyright = "the sparsenet authors"  # noqa: A001 - Sphinx's configuration name
release = sparsenet.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_copybutton",
    "sphinx_gallery.gen_gallery",
    "sparsenet_apidoc",
    "storage_types_section",
    "cli_options",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_intersphinx", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

# --- Markdown pages (myst-parser) ---
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# --- API pages: one page per namespace (docs/api/<namespace>.rst), one per class ---
# A class or function public in several namespaces is documented in full in the first one of
# this list that exports it (its home); the others link there.
api_namespaces = [
    "sparsenet.ndarray", "sparsenet.ndarray.sparse", "sparsenet.ndarray.contrib",
    "sparsenet.ndarray.random", "sparsenet.autograd", "sparsenet.random",
    "sparsenet.gluon", "sparsenet.gluon.block", "sparsenet.gluon.parameter", "sparsenet.gluon.nn",
    "sparsenet.gluon.rnn", "sparsenet.gluon.loss", "sparsenet.gluon.trainer",
    "sparsenet.gluon.utils", "sparsenet.gluon.data", "sparsenet.gluon.data.batchify",
    "sparsenet.gluon.contrib", "sparsenet.gluon.contrib.cnn", "sparsenet.gluon.contrib.nn",
    "sparsenet.gluon.contrib.rnn",
    "sparsenet.gluon.symbol_block", "sparsenet.rnn", "sparsenet.rnn.io", "sparsenet.rnn.rnn_cell",
    "sparsenet.optimizer", "sparsenet.lr_scheduler", "sparsenet.initializer",
    "sparsenet.kvstore", "sparsenet.io", "sparsenet.metric", "sparsenet.callback",
    "sparsenet.module", "sparsenet.model", "sparsenet.models", "sparsenet.models.tasks",
    "sparsenet.torch", "sparsenet.torch.optim", "sparsenet.torch.data", "sparsenet.torch.nn",
    "sparsenet.symbol", "sparsenet.symbol.sparse", "sparsenet.symbol.contrib",
    "sparsenet.symbol.name", "sparsenet.symbol.op",
    "sparsenet.context", "sparsenet.base", "sparsenet.operator", "sparsenet.attribute",
    "sparsenet.config", "sparsenet.runtime", "sparsenet.profiler", "sparsenet.util",
    "sparsenet.test_utils", "sparsenet.contrib", "sparsenet.contrib.amp",
    "sparsenet",
]
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"           # the numpydoc Parameters sections carry the types
autosummary_generate = False         # api-namespace writes the pages itself
numpydoc_show_class_members = False  # autodoc's :members: documents them
numpydoc_class_members_toctree = False
# parameter types link to their entries (ours, or Python/NumPy/SciPy/PyTorch through intersphinx)
numpydoc_xref_param_type = True
numpydoc_xref_aliases = {
    "NDArray": "sparsenet.ndarray.NDArray",
    "CSRNDArray": "sparsenet.ndarray.CSRNDArray",
    "RowSparseNDArray": "sparsenet.ndarray.RowSparseNDArray",
    "BaseSparseNDArray": "sparsenet.ndarray.BaseSparseNDArray",
    "Symbol": "sparsenet.symbol.Symbol",
    "Executor": "sparsenet.symbol.Executor",
    "Block": "sparsenet.gluon.Block",
    "HybridBlock": "sparsenet.gluon.HybridBlock",
    "Parameter": "sparsenet.gluon.Parameter",
    "ParameterDict": "sparsenet.gluon.ParameterDict",
    "Optimizer": "sparsenet.optimizer.Optimizer",
    "DataIter": "sparsenet.io.DataIter",
    "DataBatch": "sparsenet.io.DataBatch",
    "DataDesc": "sparsenet.io.DataDesc",
    "Context": "sparsenet.context.Context",
    "Initializer": "sparsenet.initializer.Initializer",
    "RecurrentCell": "sparsenet.gluon.rnn.RecurrentCell",
    "LeakyReLU": "sparsenet.gluon.nn.LeakyReLU",
    "NDArrayIter": "sparsenet.io.NDArrayIter",
    "EvalMetric": "sparsenet.metric.EvalMetric",
    "Module": "sparsenet.module.Module",
    "KVStore": "sparsenet.kvstore.KVStore",
    "LRScheduler": "sparsenet.lr_scheduler.LRScheduler",
    "InvalidArgumentError": "sparsenet.base.InvalidArgumentError",
    "InvalidArgumentTypeError": "sparsenet.base.InvalidArgumentTypeError",
    "StorageTypeError": "sparsenet.base.StorageTypeError",
    "StateError": "sparsenet.base.StateError",
    "ParameterAssertionError": "sparsenet.base.ParameterAssertionError",
    "IndexOutOfRangeError": "sparsenet.base.IndexOutOfRangeError",
    "float16": "numpy.float16", "float32": "numpy.float32", "float64": "numpy.float64",
    "Tensor": "torch.Tensor",
    "ndarray": "numpy.ndarray",
    "dtype": "numpy.dtype",
    # numpydoc's defaults for these name the inventory (``:class:`python:list```, ``:term:``...);
    # as plain :obj: targets they link through the shipped Python inventory
    "None": "None", "True": "True", "False": "False", "bool": "bool", "boolean": "bool",
    "list": "list", "tuple": "tuple", "str": "str", "string": "str", "dict": "dict",
    "float": "float", "int": "int", "callable": "callable",
    "iterable": "collections.abc.Iterable", "sequence": "collections.abc.Sequence",
    "generator": "collections.abc.Generator", "contextmanager": "contextlib.contextmanager",
    "namedtuple": "collections.namedtuple",
    "array_like": "numpy.typing.ArrayLike", "array-like": "numpy.typing.ArrayLike",
    "scalar": "numpy.generic", "np.inf": "numpy.inf", "np.nan": "numpy.nan", "numpy": "numpy",
}
numpydoc_xref_ignore = {"optional", "default", "or", "of", "and", "shape", "like", "a", "an",
                        "the", "one", "each", "same", "as", "in", "any", "to", "with",
                        # English words of type descriptions ("list of arrays", "dict per key")
                        "arrays", "them", "such", "per", "matrix", "key", "entries", "tensor",
                        "tensors", "automatic", "name", "storage", "see", "parts", "outputs",
                        "number", "lists", "length", "ints", "file", "dicts", "datasets"}
add_module_names = False
toc_object_entries_show_parents = "hide"  # "on this page": check_format(), not Class.check_format()

# --- intersphinx: the inventories shipped in _intersphinx/ (tools/refresh_intersphinx.py) ---
intersphinx_mapping = {
    "python": ("https://docs.python.org/3/", "_intersphinx/python.inv"),
    "numpy": ("https://numpy.org/doc/stable/", "_intersphinx/numpy.inv"),
    "scipy": ("https://docs.scipy.org/doc/scipy/", "_intersphinx/scipy.inv"),
    "torch": ("https://docs.pytorch.org/docs/stable/", "_intersphinx/torch.inv"),
}

# --- copy button: copy the input of ">>> " / "... " (and "$ ") lines, never the output ---
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True
copybutton_remove_prompts = True

# --- command-line reference (sphinx-argparse, docs/_ext/cli_options.py) ---
sphinxarg_full_subcommand_name = True

# --- gallery (sphinx-gallery): examples/gallery/*.py, every one executed ---
sphinx_gallery_conf = {
    "examples_dirs": "../examples/gallery",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",          # run every example, not only plot_*.py
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
}
os.environ.setdefault("MPLBACKEND", "Agg")

# --- HTML ---
html_theme = "pydata_sphinx_theme"
html_title = f"sparsenet {release}"
html_static_path = ["_static"]
html_css_files = ["sparsenet.css"]
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["version-about"],
    "footer_center": [],
    "footer_end": ["sphinx-version", "theme-version"],
    "navbar_align": "left",
    "header_links_before_dropdown": 6,
    "show_prev_next": False,
}
html_context = {"default_mode": "light"}
# no navigation column where the content needs the width and the column would list nothing:
# the top-level pages (landing page, guides, CLI reference) and the gallery (its examples are
# scripts of up to 100 columns); the API pages keep theirs (the namespaces and classes)
html_sidebars = {"*": [], "auto_examples/*": []}


def _drop_stale_gallery_pages(app):
    """Remove auto_examples/ pages whose example is gone from examples/gallery/ (a renamed or
    deleted example): sphinx-gallery keeps them, and each would be a page in no toctree."""
    source = HERE.parent / "examples" / "gallery"
    output = HERE / sphinx_gallery_conf["gallery_dirs"]
    if not output.is_dir():
        return
    examples = {path.stem for path in source.glob("*.py")}
    for path in output.iterdir():
        stem = path.name.split(".", 1)[0]
        if path.is_file() and stem.startswith("plot_") and stem not in examples:
            path.unlink()


def setup(app):
    # before sphinx-gallery's own builder-inited handler (priority 500) writes the pages
    app.connect("builder-inited", _drop_stale_gallery_pages, priority=100)

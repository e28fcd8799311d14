"""Sphinx configuration of sparsenet's documentation site.

Build it with ``make docs`` (HTML in ``docs/_build/html``, warnings are errors). The guide pages
are the Markdown files in this folder (read through myst-parser); the API reference is
``docs/api/``, whose pages list each namespace's public names from its ``__all__`` through the
``api-namespace`` directive of ``docs/_ext/sparsenet_apidoc.py``.

Intersphinx links to Python, NumPy, SciPy and PyTorch. Each inventory is fetched from its site
and falls back to an empty local inventory (``_intersphinx/offline.inv``), so a build without
network access is warning-free (references to those projects then render as plain text).
``SPARSENET_DOCS_INTERSPHINX=0`` skips the fetch altogether (the test suite sets it).
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
    "sparsenet_apidoc",
    "storage_types_section",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_intersphinx", "Thumbs.db", ".DS_Store"]
templates_path = []

# --- Markdown pages (myst-parser) ---
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# --- API pages: one page per namespace, in this order (docs/api/<namespace>.rst) ---
# A class public in several namespaces is documented in full on the first page that lists it.
api_namespaces = [
    "sparsenet.ndarray", "sparsenet.ndarray.sparse", "sparsenet.ndarray.contrib",
    "sparsenet.ndarray.random",
    "sparsenet.gluon", "sparsenet.gluon.block", "sparsenet.gluon.parameter", "sparsenet.gluon.nn",
    "sparsenet.gluon.loss", "sparsenet.gluon.trainer", "sparsenet.gluon.utils",
    "sparsenet.gluon.data", "sparsenet.gluon.data.batchify", "sparsenet.gluon.contrib",
    "sparsenet.gluon.contrib.nn", "sparsenet.gluon.symbol_block",
    "sparsenet.optimizer", "sparsenet.io", "sparsenet.module",
    "sparsenet.symbol", "sparsenet.symbol.sparse", "sparsenet.symbol.contrib",
    "sparsenet.symbol.name", "sparsenet.symbol.op",
]
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"           # the numpydoc Parameters sections carry the types
autosummary_generate = False         # api-namespace writes the entries itself, no stub files
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
    "Context": "sparsenet.Context",
    "Tensor": "torch.Tensor",
    "ndarray": "numpy.ndarray",
    "dtype": "numpy.dtype",
    # numpydoc's defaults for these name the inventory (``:class:`python:list```, ``:term:``...):
    # offline they show as "python:list" or warn; as plain :obj: targets they link online (through
    # intersphinx) and read "list" offline
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
                        "the", "one", "each", "same", "as", "in", "any", "to", "with"}
add_module_names = False

# --- intersphinx: the site's inventory, else an empty local one (offline builds stay quiet) ---
_OFFLINE_INV = "_intersphinx/offline.inv"
_INVENTORIES = {
    "python": "https://docs.python.org/3/",
    "numpy": "https://numpy.org/doc/stable/",
    "scipy": "https://docs.scipy.org/doc/scipy/",
    "torch": "https://docs.pytorch.org/docs/stable/",
}
if os.environ.get("SPARSENET_DOCS_INTERSPHINX", "1") == "0":
    intersphinx_mapping = {}
else:
    intersphinx_mapping = {name: (url, (None, _OFFLINE_INV)) for name, url in _INVENTORIES.items()}
intersphinx_timeout = 10

# --- HTML ---
html_theme = "alabaster"
html_title = "sparsenet"
html_static_path = []
html_show_sourcelink = False

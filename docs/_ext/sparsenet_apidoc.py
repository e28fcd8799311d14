"""The ``api-namespace`` directive: one API page entry per public name of a sparsenet namespace.

``.. api-namespace:: sparsenet.ndarray.sparse`` resolves the dotted path attribute by attribute
from the ``sparsenet`` package (so ``sparsenet.ndarray.random``, an attribute holding the
``sparsenet.random`` module, is documented under the name users type), reads the namespace's
public names (``__all__`` without ``_``-prefixed names, else ``dir()`` without them), and writes
the first paragraph of its docstring, a summary table followed by an autodoc entry for each name: classes with their members,
functions, data, and links to submodules (each submodule has a page of its own).

The list therefore follows the code: a name added to ``__all__`` appears on the next build, and
``tests/test_docs_build.py`` checks that every public name of the documented namespaces has an
entry in the built HTML.
"""
import importlib
import inspect
import types

from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.parsing import nested_parse_to_nodes


def resolve(path):
    """Return the object at dotted ``path``, importing its first component and walking attributes.

    Parameters
    ----------
    path : str
        A dotted name such as ``"sparsenet.ndarray.sparse"``.

    Returns
    -------
    object
        The object the path names.
    """
    head, *rest = path.split(".")
    obj = importlib.import_module(head)
    for part in rest:
        obj = getattr(obj, part)
    return obj


def public_names(namespace):
    """Return the public names of ``namespace`` in their ``__all__`` order.

    Parameters
    ----------
    namespace : module
        The namespace to list.

    Returns
    -------
    list of str
        ``__all__`` (or ``dir()``) without the names that start with an underscore.
    """
    names = getattr(namespace, "__all__", None)
    if names is None:
        names = sorted(dir(namespace))
    return [name for name in names if not name.startswith("_")]


def _first_paragraph(namespace):
    doc = inspect.getdoc(namespace) or ""
    return doc.split("\n\n", 1)[0].splitlines()


def _kind(obj):
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "data"


_SECTIONS = (
    ("class", "Classes", ".. autoclass:: {path}\n   :members:\n   :show-inheritance:\n"),
    ("alias", "Classes documented on another page", ".. py:class:: {name}\n\n"
     "   The same class as :class:`{home}`, documented on that page.\n"),
    ("function", "Functions", ".. autofunction:: {path}\n"),
    ("data", "Data", ".. autodata:: {path}\n   :no-value:\n"),
)


def class_home(cls, namespaces):
    """Return the dotted path of the first namespace in ``namespaces`` that exports ``cls``.

    A class public in several namespaces (``CSRNDArray`` in ``mx.nd`` and ``mx.nd.sparse``) is
    documented in full once, on its home page, and listed with a link on the others: two full
    entries would declare its canonical name twice.

    Parameters
    ----------
    cls : type
        The class.
    namespaces : list of str
        The documented namespaces in site order (``api_namespaces`` in ``conf.py``).

    Returns
    -------
    str or None
        The home's full name of the class (``"sparsenet.ndarray.CSRNDArray"``), or None when
        no listed namespace exports it.
    """
    for path in namespaces:
        namespace = resolve(path)
        for name in public_names(namespace):
            if getattr(namespace, name) is cls:
                return f"{path}.{name}"
    return None


class ApiNamespaceDirective(SphinxDirective):
    """Document every public name of the namespace given as the argument."""

    required_arguments = 1
    has_content = False

    def run(self):
        path = self.arguments[0]
        namespace = resolve(path)
        names = public_names(namespace)
        kinds = {name: _kind(getattr(namespace, name)) for name in names}
        homes = {}
        for name in names:
            if kinds[name] == "class":
                home = class_home(getattr(namespace, name), self.config.api_namespaces)
                if home not in (None, f"{path}.{name}"):
                    kinds[name], homes[name] = "alias", home
        lines = [f".. py:module:: {path}", "", f".. currentmodule:: {path}", ""]
        lines += _first_paragraph(namespace) + [""]
        lines += [".. rubric:: Summary", "", ".. autosummary::", "   :nosignatures:", ""]
        lines += [f"   {name}" for name in names]
        lines.append("")
        submodules = [name for name in names if kinds[name] == "module"]
        if submodules:
            lines += [".. rubric:: Submodules", ""]
            lines += [f"* :mod:`{path}.{name}`" for name in submodules]
            lines.append("")
        for kind, title, template in _SECTIONS:
            members = [name for name in names if kinds[name] == kind]
            if not members:
                continue
            lines += [f".. rubric:: {title}", ""]
            for name in members:
                entry = template.format(path=f"{path}.{name}", name=name, home=homes.get(name))
                lines += entry.splitlines()
                lines.append("")
        content = StringList(lines, source=f"<api-namespace {path}>")
        return nested_parse_to_nodes(self.state, content, allow_section_headings=False)


def setup(app):
    app.add_config_value("api_namespaces", [], "env", types=frozenset({list}))
    app.add_directive("api-namespace", ApiNamespaceDirective)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

"""The API reference: one page per namespace, one page per class.

``.. api-namespace:: sparsenet.ndarray.sparse`` resolves the dotted path attribute by attribute
from the ``sparsenet`` package (so ``sparsenet.ndarray.random``, an attribute holding the
``sparsenet.random`` module, is documented under the name users type), reads the namespace's
public names (``__all__`` without ``_``-prefixed names, else ``dir()`` without them), and writes
the first paragraph of its docstring, a summary table of every name, and then:

* each class whose *home* is this namespace on a page of its own
  (``docs/api/generated/<namespace>.<Class>.rst``, written when the builder starts, as
  autosummary's stub pages are, and listed in a hidden toctree under the namespace page);
* the functions and data whose home is this namespace, in full, on the namespace page (the
  page is the namespace's function group);
* the namespaces it holds, as links to their pages.

The home of an object is the first namespace in ``api_namespaces`` (``conf.py``) that exports
it: ``CSRNDArray`` is public in ``mx.nd`` and ``mx.nd.sparse`` and is documented once, on its
``mx.nd`` page. On every other namespace that exports it, its summary row carries the anchor
and the Python-domain entry of that spelling (``sparsenet.ndarray.sparse.CSRNDArray`` is a
valid cross-reference target and appears in the search) and links to the full entry. A class
or function another library defines (``mx.test_utils`` re-exports ``contextlib.contextmanager``
as MXNet's does) is listed the same way, its link going to that library's documentation. Data
(numbers, strings) has no identity worth following and is documented wherever it is public.

The list therefore follows the code: a name added to ``__all__`` appears on the next build, and
``tests/test_docs_build.py`` checks that every public name of every public namespace has an
entry in the built HTML.
"""
import importlib
import inspect
import pathlib
import types

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.addnodes import pending_xref
from sphinx.ext.autosummary import autosummary_table
from sphinx.util.docutils import SphinxDirective
from sphinx.util.parsing import nested_parse_to_nodes

#: Folder, relative to the source folder, of the generated class pages.
GENERATED = "api/generated"


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
        try:
            obj = getattr(obj, part)
        except AttributeError:  # a subpackage its parent does not import eagerly
            obj = importlib.import_module(f"{obj.__name__}.{part}")
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


def kind(obj):
    """Return ``"module"``, ``"class"``, ``"function"`` or ``"data"`` for ``obj``.

    Parameters
    ----------
    obj : object
        A public object of a namespace.

    Returns
    -------
    str
        How the reference documents it.
    """
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "data"


def defined_outside(obj):
    """Return the full name of a class or function that another library defines, else None.

    ``mx.test_utils`` re-exports ``contextlib.contextmanager``, as MXNet's does; such a name is
    listed with a link to its own library's documentation (through intersphinx), not
    documented again.

    Parameters
    ----------
    obj : object
        A public class or function of a namespace.

    Returns
    -------
    str or None
        ``"contextlib.contextmanager"``, or None when sparsenet defines ``obj``.
    """
    module = getattr(obj, "__module__", None) or ""
    if module == "sparsenet" or module.startswith("sparsenet."):
        return None
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", "")
    return f"{module}.{qualname}" if module else qualname


def homes(namespaces):
    """Map ``id()`` of every class and function to the full name of its documented entry.

    A class public in several namespaces (``CSRNDArray`` in ``mx.nd`` and ``mx.nd.sparse``) is
    documented in full once, in the first of ``namespaces`` that exports it: two full entries
    would declare its canonical name twice.

    Parameters
    ----------
    namespaces : list of str
        The documented namespaces in site order (``api_namespaces`` in ``conf.py``).

    Returns
    -------
    dict
        ``id(obj)`` to the dotted name of its home entry (``"sparsenet.ndarray.CSRNDArray"``).
    """
    found = {}
    for path in namespaces:
        namespace = resolve(path)
        for name in public_names(namespace):
            obj = getattr(namespace, name)
            if kind(obj) in ("class", "function"):
                found.setdefault(id(obj), defined_outside(obj) or f"{path}.{name}")
    return found


def class_page(home):
    """Return the docname of the page of the class whose entry is ``home``.

    Parameters
    ----------
    home : str
        The class's full documented name (``"sparsenet.gluon.Trainer"``).

    Returns
    -------
    str
        ``"api/generated/sparsenet.gluon.Trainer"``.
    """
    return f"{GENERATED}/{home}"


def class_page_source(home):
    """Return the reStructuredText of the page of the class documented as ``home``.

    Parameters
    ----------
    home : str
        The class's full documented name (``"sparsenet.gluon.Trainer"``).

    Returns
    -------
    str
        The page: its title (the class name), ``currentmodule`` and the ``autoclass`` entry.
    """
    module, name = home.rsplit(".", 1)
    return (f".. This page is written by docs/_ext/sparsenet_apidoc.py at each build.\n\n"
            f"{name}\n{'=' * len(name)}\n\n"
            f".. currentmodule:: {module}\n\n"
            f".. autoclass:: {name}\n   :members:\n   :show-inheritance:\n")


def write_class_pages(app):
    """Write the page of every class homed in a documented namespace; drop stale pages.

    A page is rewritten only when its text changes, so an unchanged class is not read again
    by an incremental build.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application (``builder-inited``).
    """
    folder = pathlib.Path(app.srcdir) / GENERATED
    folder.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for home in sorted(set(homes(app.config.api_namespaces).values())):
        if not home.startswith("sparsenet.") or kind(resolve(home)) != "class":
            continue
        target = folder / f"{home}.rst"
        wanted.add(target.name)
        text = class_page_source(home)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    for stale in folder.glob("*.rst"):
        if stale.name not in wanted:
            stale.unlink()


def public_bases(app, name, obj, options, bases):
    """Show a class's public ancestors in its "Bases:" line instead of private helpers.

    ``_Pooling`` (the shared base of the pooling layers) has no entry to link to; the line lists
    the bases of such a private class in its place, recursively (``autodoc-process-bases``).
    """
    result = []
    todo = list(bases)
    while todo:
        base = todo.pop(0)
        if getattr(base, "__name__", "").startswith("_") and getattr(base, "__bases__", ()):
            todo[:0] = [b for b in base.__bases__ if b is not object]
        elif base not in result:
            result.append(base)
    bases[:] = result


def _first_paragraph(namespace):
    doc = inspect.getdoc(namespace) or ""
    return doc.split("\n\n", 1)[0].splitlines()


class ApiNamespaceDirective(SphinxDirective):
    """Document every public name of the namespace given as the argument."""

    required_arguments = 1
    has_content = False

    def run(self):
        path = self.arguments[0]
        namespace = resolve(path)
        names = public_names(namespace)
        objects = {name: getattr(namespace, name) for name in names}
        kinds = {name: kind(obj) for name, obj in objects.items()}
        home_of = homes(self.config.api_namespaces)
        home = {name: home_of.get(id(objects[name]), f"{path}.{name}") for name in names}
        aliases = {name for name in names
                   if kinds[name] in ("class", "function") and home[name] != f"{path}.{name}"}
        listed = [name for name in names if kinds[name] != "module"]
        lines = [f".. py:module:: {path}", "", f".. currentmodule:: {path}", ""]
        lines += _first_paragraph(namespace) + [""]
        lines += self._namespaces(path, names, objects, kinds)
        if listed:
            lines += [".. rubric:: Summary", "", ".. autosummary::", "   :nosignatures:", ""]
            lines += [f"   {name}" for name in listed]
            lines.append("")
        own_classes = [name for name in listed if kinds[name] == "class" and name not in aliases]
        if own_classes:
            lines += [".. toctree::", "   :hidden:", ""]
            lines += [f"   /{class_page(home[name])}" for name in own_classes]
            lines.append("")
        for kind_name, title, template in (
                ("function", "Functions", ".. autofunction:: {name}"),
                ("data", "Data", ".. autodata:: {name}\n   :no-value:")):
            members = [name for name in listed if kinds[name] == kind_name and name not in aliases]
            if members:
                lines += [f".. rubric:: {title}", ""]
                for name in members:
                    lines += template.format(name=name).splitlines() + [""]
        content = StringList(lines, source=f"<api-namespace {path}>")
        result = nested_parse_to_nodes(self.state, content, allow_section_headings=False)
        self._anchor_aliases(result, path, listed, {name: home[name] for name in aliases}, kinds)
        return result

    @staticmethod
    def _namespaces(path, names, objects, kinds):
        """Bullet lists of the namespaces ``path`` holds: sparsenet's, then re-exported ones."""
        ours = [name for name in names
                if kinds[name] == "module" and objects[name].__name__.startswith("sparsenet")]
        others = [name for name in names
                  if kinds[name] == "module" and name not in ours]
        lines = []
        if ours:
            lines += [".. rubric:: Namespaces", ""]
            for name in ours:
                target = objects[name].__name__
                if name == target.rsplit(".", 1)[-1] or f"{path}.{name}" == target:
                    lines.append(f"* :mod:`{name} <{path}.{name}>`")
                else:
                    lines.append(f"* ``{name}``: the namespace :mod:`{target}`")
            lines.append("")
        if others:
            lines += [".. rubric:: Modules it re-exports", "",
                      "Other libraries' modules, public here as in MXNet's namespace:", ""]
            lines += [f"* ``{name}``: :mod:`{objects[name].__name__}`" for name in others]
            lines.append("")
        return lines

    def _anchor_aliases(self, result, path, listed, aliases, kinds):
        """Give each alias's summary row the anchor and Python-domain entry of its own spelling,
        and point its link at the full entry (its home).

        The summary table's rows are the ``listed`` names in order.
        """
        tables = [n for node in result for n in node.findall(autosummary_table)]
        if not tables:
            return
        rows = list(tables[0].findall(nodes.row))
        domain = self.env.get_domain("py")
        for name, row in zip(listed, rows):
            if name in aliases:
                anchor = f"{path}.{name}"
                row["ids"].append(anchor)
                for ref in row.findall(pending_xref):
                    ref["reftarget"] = aliases[name]
                domain.note_object(anchor, kinds[name], anchor, location=self.get_location())


def setup(app):
    app.add_config_value("api_namespaces", [], "env", types=frozenset({list}))
    app.add_directive("api-namespace", ApiNamespaceDirective)
    app.connect("builder-inited", write_class_pages)
    app.connect("autodoc-process-bases", public_bases)
    return {"version": "2.0", "parallel_read_safe": True, "parallel_write_safe": True}

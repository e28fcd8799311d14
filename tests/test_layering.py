"""Imports flow one way: the module-level import graph of ``src/sparsenet`` has no cycle,
every import goes to the same or a lower layer, and every function-level import says why.

The graph is read from the source with ``ast`` (relative imports resolved), without
importing anything. An edge is a module-level import (one inside a class body, ``if``
or ``try`` at module level counts too) of another sparsenet module; ``from pkg import
name`` is an edge to the submodule ``pkg.name`` when there is one, else to ``pkg``.
A package's ``__init__`` is its own node: running a package's ``__init__`` before its
submodules is Python's import mechanics, not an import the code makes (``mx.nd``, the
``sparsenet.ndarray`` package, re-exports the operators above its containers; see the
"nd namespace" layer).
"""
import ast
import io
import pathlib
import tokenize

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "sparsenet"

# Layers, bottom to top (DESIGN.md, "One operator registry"). A module imports, at module
# level, only from its own layer or lower ones. "x.*" matches every submodule of x; a
# plain name matches that module only and wins over a "x.*" pattern.
LAYERS = [
    ("base", ["sparsenet.base", "sparsenet.atomic", "sparsenet.dtypes"]),
    ("context/config", ["sparsenet.context", "sparsenet.config", "sparsenet.attribute",
                        "sparsenet.runtime", "sparsenet.util", "sparsenet.numpy",
                        "sparsenet.profiler"]),
    ("torch_compat", ["sparsenet.torch_compat"]),
    ("recording", ["sparsenet.recording"]),
    ("ndarray containers", ["sparsenet.ndarray.*"]),
    ("ops", ["sparsenet.ops", "sparsenet.ops.*", "sparsenet.random", "sparsenet.random_ops",
             "sparsenet.operator", "sparsenet.operator.*"]),
    # mx.nd and its sub-namespaces: the containers plus the operators, by name
    ("nd namespace", ["sparsenet.ndarray", "sparsenet.ndarray.sparse",
                      "sparsenet.ndarray.contrib", "sparsenet.ndarray._internal"]),
    ("grad_store/autograd", ["sparsenet.grad_store", "sparsenet.autograd"]),
    ("optimizer/symbol", ["sparsenet.optimizer", "sparsenet.optimizer.*", "sparsenet.symbol",
                          "sparsenet.symbol.*", "sparsenet.initializer", "sparsenet.lr_scheduler",
                          "sparsenet.metric", "sparsenet.metric.*"]),
    ("gluon/module/io/kvstore", ["sparsenet.gluon", "sparsenet.gluon.*", "sparsenet.module",
                                 "sparsenet.module.*", "sparsenet.io", "sparsenet.io.*",
                                 "sparsenet.kvstore", "sparsenet.kvstore.*", "sparsenet.model",
                                 "sparsenet.callback", "sparsenet.cli", "sparsenet.cli.*",
                                 "sparsenet.torch", "sparsenet.torch.*",
                                 "sparsenet.models", "sparsenet.models.*",
                                 "sparsenet.contrib", "sparsenet.contrib.*",
                                 "sparsenet.rnn", "sparsenet.rnn.*"]),
    ("test_utils", ["sparsenet.test_utils", "sparsenet.test_utils.*"]),
    ("package", ["sparsenet", "sparsenet.__main__"]),
]

# Module-level imports that go up a layer on purpose: (importer, imported) -> reason.
UPWARD_EXCEPTIONS = {}


def _module_name(path):
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _extension_modules():
    """The C extension modules (``Extension("sparsenet....", ...)`` in setup.py)."""
    names = set()
    for node in ast.walk(ast.parse((ROOT / "setup.py").read_text())):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Extension"
                and node.args and isinstance(node.args[0], ast.Constant)):
            names.add(node.args[0].value)
    return names


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
EXTENSIONS = _extension_modules()


def _is_package(name):
    return MODULES[name].name == "__init__.py"


def _targets(importer, node):
    """The sparsenet modules an import statement in module ``importer`` loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "sparsenet"]
    if node.level:
        base = importer.split(".")
        if not _is_package(importer):
            base = base[:-1]
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
        if target.split(".")[0] != "sparsenet":
            return []
    out = []
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        out.append(sub if sub in MODULES or sub in EXTENSIONS else target)
    return out


def _module_level_imports(body):
    """Import statements that run when the module loads (not inside a function)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                yield from _module_level_imports(getattr(node, field, []) or [])


def _function_level_imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    yield inner


def _graph():
    graph = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        deps = set()
        for node in _module_level_imports(tree.body):
            deps.update(t for t in _targets(name, node) if t in MODULES and t != name)
        graph[name] = deps
    return graph


GRAPH = _graph()


def _layer_of(name):
    for index, (_, patterns) in enumerate(LAYERS):
        if name in patterns:
            return index
    best = None
    for index, (_, patterns) in enumerate(LAYERS):
        for p in patterns:
            if p.endswith(".*") and name.startswith(p[:-1]):
                if best is None or len(p) > best[0]:
                    best = (len(p), index)
    return None if best is None else best[1]


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_is_read():
    """The reader sees the imports it must see (a broken reader would pass everything)."""
    assert len(MODULES) > 100
    assert {"sparsenet.ndarray.ndarray", "sparsenet.ops.registry"} <= GRAPH["sparsenet.ops.dot"]
    assert "sparsenet.ops.methods" in GRAPH["sparsenet.ops"]
    assert "sparsenet.ops._row_kernels" in EXTENSIONS
    assert "sparsenet.ops" not in GRAPH["sparsenet.ops.row_kernels"]  # _row_kernels is C


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert _cycles(GRAPH) == []


def test_every_module_has_a_layer():
    assert [m for m in MODULES if _layer_of(m) is None] == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_down(module):
    mine = _layer_of(module)
    upward = []
    for dep in sorted(GRAPH[module]):
        theirs = _layer_of(dep)
        if theirs is not None and mine is not None and theirs > mine \
                and (module, dep) not in UPWARD_EXCEPTIONS:
            upward.append(f"{module} ({LAYERS[mine][0]}) imports {dep} ({LAYERS[theirs][0]})")
    assert upward == []


def _comment_lines(source):
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            lines.add(tok.start[0])
    return lines


@pytest.mark.parametrize("module", sorted(MODULES))
def test_function_level_imports_say_why(module):
    """An import inside a function carries a comment, on its lines or the line above."""
    source = MODULES[module].read_text()
    comments = _comment_lines(source)
    silent = []
    for node in _function_level_imports(ast.parse(source)):
        lines = set(range(node.lineno - 1, node.end_lineno + 1))
        if not lines & comments:
            silent.append(f"{MODULES[module].relative_to(ROOT)}:{node.lineno}: "
                          f"{ast.unparse(node)}")
    assert silent == []

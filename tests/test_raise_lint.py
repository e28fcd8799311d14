"""Lint: every error sparsenet raises on a caller's mistake is a ``SparsenetError``.

An AST walk of every module under ``src/sparsenet`` fails when a ``raise`` instantiates
(or names) a bare builtin error class. Such a raise escapes ``except mx.MXNetError``;
use the class of ``sparsenet.base`` that also derives from that builtin (see
``docs/errors_and_limits.md``). A site may stay builtin only where a Python protocol
requires it or where a caller cannot reach it (an internal invariant, an abstract hook,
an assertion helper of ``test_utils``), and says why with a ``# builtin: <reason>``
comment on the raise line or the line above. ``OSError`` and its subclasses are the
documented file errors and are allowed; re-raising a caught exception (``raise``,
``raise e``) is allowed.
"""
import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "src" / "sparsenet"

BUILTINS = frozenset({
    "ValueError", "TypeError", "IndexError", "KeyError", "RuntimeError", "NotImplementedError",
    "AttributeError", "OverflowError", "ZeroDivisionError", "AssertionError", "LookupError",
    "ArithmeticError",
})
MARK = "# builtin:"


def _raised_name(node):
    """The bare name a ``raise`` statement instantiates or names, else None."""
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return exc.id if isinstance(exc, ast.Name) else None


def _documented(lines, lineno):
    """True when the raise line or the line above carries ``# builtin: <reason>``."""
    for k in (lineno, lineno - 1):
        if k >= 1:
            _, sep, reason = lines[k - 1].partition(MARK)
            if sep and reason.strip():
                return True
    return False


def bare_builtin_raises(source):
    """``(line, class name)`` of each undocumented raise of a builtin error class."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Raise) and node.exc is not None:
            name = _raised_name(node)
            if name in BUILTINS and not _documented(lines, node.lineno):
                found.append((node.lineno, name))
    return sorted(found)


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_walks_the_package():
    assert len(MODULES) > 100
    assert PACKAGE / "base.py" in MODULES


@pytest.mark.parametrize("source, expected", [
    ("raise ValueError('x')", [(1, "ValueError")]),
    ("raise TypeError", [(1, "TypeError")]),
    ("if x:\n    raise KeyError(k) from None", [(2, "KeyError")]),
    ("# builtin: protocol\nraise AttributeError(name)", []),
    ("raise StopIteration  # builtin: iterator protocol", []),
    ("raise IndexError(i)  # builtin:", [(1, "IndexError")]),  # a reason is required
    ("raise InvalidArgumentError('x')", []),
    ("raise OSError(2, 'gone')", []),
    ("try:\n    f()\nexcept ValueError as e:\n    raise e", []),
    ("try:\n    f()\nexcept ValueError:\n    raise", []),
], ids=["call", "bare-name", "nested", "comment-above", "comment-same-line", "empty-reason",
        "sparsenet-class", "oserror", "reraise-name", "reraise"])
def test_lint_rule(source, expected):
    assert bare_builtin_raises(source) == expected


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_bare_builtin_raise(path):
    found = bare_builtin_raises(path.read_text())
    assert not found, (
        f"{path.relative_to(PACKAGE.parent)} raises bare builtin errors at "
        + ", ".join(f"line {ln} ({name})" for ln, name in found)
        + ": use the sparsenet.base class that also derives from the builtin, or add "
          "'# builtin: <reason>' where a Python protocol requires the builtin")

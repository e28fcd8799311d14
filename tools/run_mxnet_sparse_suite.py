"""Run MXNet 1.9.1's sparse unit tests against sparsenet through the import alias.

The suite is taken unchanged from a git mirror of Apache MXNet (``git show``), with
only its imports rewritten (``import mxnet as mx`` -> ``import sparsenet as mx``,
``import mxnet.X`` -> ``import sparsenet.X``, ``from mxnet...`` -> ``from sparsenet...``).
Selected are the tests whose name contains ``sparse`` plus every test of the files
whose name contains ``sparse`` (``test_sparse_ndarray.py``, ``test_sparse_operator.py``),
as pytest collects them (one id per parametrization).  Each file runs in its own
pytest process; each test gets a wall-clock limit (default 120 s).  A table of
outcomes is printed, and ``--json`` writes it for tooling.

MXNet 1.9.1's helpers import ``nose.tools``, which no longer installs on Python
3.11; the harness writes a small stand-in (``raises``, ``assert_raises``,
``make_decorator``, ``SkipTest``) next to the extracted files.

Usage
-----
::

    python tools/run_mxnet_sparse_suite.py                # all selected tests
    python tools/run_mxnet_sparse_suite.py --files test_sparse_operator.py -k dot
    python tools/run_mxnet_sparse_suite.py --python /work/mxnet-venv/bin/python --no-rewrite
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

DEFAULT_REPO = "/work/.mirror/apache+mxnet/repo"
DEFAULT_REF = "v1.9.1"
# Directories of MXNet's python tests the unit tests import from (common.py adds
# ../common to sys.path; test_module.py adds ../train).
TREES = ("tests/python/unittest", "tests/python/common", "tests/python/train")
SELECT_FILES = ("test_autograd.py", "test_gluon.py", "test_gluon_contrib.py",
                "test_gluon_trainer.py", "test_kvstore.py", "test_module.py",
                "test_multi_device_exec.py", "test_optimizer.py",
                "test_sparse_ndarray.py", "test_sparse_operator.py")

_IMPORT_RULES = (
    (re.compile(r"^(\s*)import mxnet as mx\b", re.M), r"\1import sparsenet as mx"),
    (re.compile(r"^(\s*)import mxnet\.([\w.]+)", re.M), r"\1import sparsenet.\2"),
    (re.compile(r"^(\s*)from mxnet(\.[\w.]+)? import", re.M), r"\1from sparsenet\2 import"),
)

_NOSE_TOOLS = '''"""Stand-in for nose.tools (nose does not install on Python 3.11)."""
import functools
import unittest

SkipTest = unittest.SkipTest
_case = unittest.TestCase()
assert_raises = _case.assertRaises
assert_equal = _case.assertEqual
assert_true = _case.assertTrue
assert_false = _case.assertFalse


def make_decorator(func):
    def decorate(newfunc):
        return functools.wraps(func)(newfunc)
    return decorate


def raises(*exceptions):
    def decorate(func):
        @functools.wraps(func)
        def newfunc(*args, **kwargs):
            try:
                func(*args, **kwargs)
            except exceptions:
                return
            raise AssertionError("%s did not raise %s" % (func.__name__, exceptions))
        return newfunc
    return decorate
'''

# Per-test wall-clock limit without pytest-timeout: SIGALRM in a conftest.
_CONFTEST = '''import os, signal, faulthandler, pytest

_LIMIT = int(os.environ.get("MXSUITE_TIMEOUT", "120"))


class _TestTimeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _TestTimeout("test exceeded %d s" % _LIMIT)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(_LIMIT)
    try:
        outcome = yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    exc = outcome.excinfo
    if exc is not None and exc[0] is _TestTimeout:
        outcome.force_exception(pytest.fail.Exception("TIMEOUT: test exceeded %d s" % _LIMIT))
'''


def rewrite_imports(source: str) -> str:
    """Return *source* with MXNet imports pointed at sparsenet (imports only)."""
    for pattern, repl in _IMPORT_RULES:
        source = pattern.sub(repl, source)
    return source


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def extract(repo: str, ref: str, dest: Path, rewrite: bool) -> Path:
    """Write the python files of TREES at *ref* under *dest*; return the unittest dir."""
    for tree in TREES:
        for name in git(repo, "ls-tree", "--name-only", ref, tree + "/").split():
            if not name.endswith(".py"):
                continue
            text = git(repo, "show", "%s:%s" % (ref, name))
            if rewrite:
                text = rewrite_imports(text)
            out = dest / name
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text)
    unit = dest / TREES[0]
    nose = unit / "nose"
    nose.mkdir(exist_ok=True)
    (nose / "__init__.py").write_text("")
    (nose / "tools.py").write_text(_NOSE_TOOLS)
    (unit / "conftest.py").write_text(_CONFTEST)
    return unit


def _static_tests(path: Path) -> dict:
    """Test functions of *path*, name -> source, found without importing it."""
    import ast
    text = path.read_text()
    tree = ast.parse(text)
    return {n.name: ast.get_source_segment(text, n) for n in tree.body
            if isinstance(n, ast.FunctionDef) and n.name.startswith("test")}


def selected(nodeid: str, sources: dict, mode: str) -> bool:
    """``name``: the test's or file's name contains "sparse" (pytest's ``-k sparse``);
    ``source``: its name or its body mentions sparse."""
    fname, _, test = nodeid.partition("::")
    test = test.split("[")[0]
    if "sparse" in test or "sparse" in fname:
        return True
    return mode == "source" and "sparse" in (sources.get(test) or "").lower()


def collect(python: str, unit: Path, fname: str, env: dict, mode: str) -> tuple:
    sources = _static_tests(unit / fname)
    proc = subprocess.run([python, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           fname], cwd=unit, env=env, capture_output=True, text=True, timeout=600)
    ids = [line.strip() for line in proc.stdout.splitlines() if "::" in line]
    if proc.returncode not in (0, 5) or not ids:
        err = (proc.stdout + proc.stderr).strip().splitlines()
        reason = next((line for line in reversed(err) if "Error" in line), err[-1] if err else "")
        ids = ["%s::%s" % (fname, name) for name in sources]
        return [i for i in ids if selected(i, sources, mode)], reason
    return [i for i in ids if selected(i, sources, mode)], None


def run_file(python: str, unit: Path, ids: list, env: dict, timeout: int) -> dict:
    results = {}
    with tempfile.NamedTemporaryFile(suffix=".xml", delete=False) as fh:
        xml = fh.name
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", xml,
           "-o", "junit_family=xunit1", *ids]
    try:
        subprocess.run(cmd, cwd=unit, env=env, capture_output=True, text=True,
                       timeout=timeout * len(ids) + 300)
    except subprocess.TimeoutExpired:
        return {i: ("ERROR", "file run exceeded its overall limit") for i in ids}
    try:
        root = ET.parse(xml).getroot()
    except (ET.ParseError, FileNotFoundError):
        return {i: ("ERROR", "no junit report (crash?)") for i in ids}
    finally:
        if os.path.exists(xml):
            os.unlink(xml)
    for case in root.iter("testcase"):
        file_ = case.get("file") or ""
        nodeid = "%s::%s" % (os.path.basename(file_) or case.get("classname", "").split(".")[-1] + ".py",
                             case.get("name"))
        status, reason = "PASS", ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                status = {"failure": "FAIL", "error": "ERROR", "skipped": "SKIP"}[tag]
                reason = (node.get("message") or "").strip().splitlines()[:1]
                reason = reason[0] if reason else ""
                if "TIMEOUT" in (node.get("message") or "") + (node.text or ""):
                    status, reason = "TIMEOUT", "exceeded %d s" % timeout
                break
        results[nodeid] = (status, reason[:160])
    for i in ids:
        results.setdefault(i, ("ERROR", "not reported"))
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=DEFAULT_REPO, help="bare git mirror of apache/mxnet")
    ap.add_argument("--ref", default=DEFAULT_REF, help="git ref of the suite (default v1.9.1)")
    ap.add_argument("--python", default=sys.executable, help="interpreter with sparsenet installed")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per test")
    ap.add_argument("--files", nargs="*", default=list(SELECT_FILES), help="test files to run")
    ap.add_argument("-k", default=None, help="only run selected ids containing this substring")
    ap.add_argument("--workdir", default=None, help="where to extract (default: a temp dir)")
    ap.add_argument("--no-rewrite", action="store_true", help="keep `import mxnet` (reference run)")
    ap.add_argument("--json", default=None, help="also write the results to this file")
    ap.add_argument("--list", action="store_true", help="only list the selected tests")
    ap.add_argument("--select", choices=("name", "source"), default="name",
                    help="name: names containing 'sparse' (default); source: also bodies mentioning it")
    args = ap.parse_args(argv)

    work = Path(args.workdir or tempfile.mkdtemp(prefix="mxsuite-"))
    unit = extract(args.repo, args.ref, work, rewrite=not args.no_rewrite)
    env = dict(os.environ, MXSUITE_TIMEOUT=str(args.timeout), OMP_NUM_THREADS=os.environ.get(
        "OMP_NUM_THREADS", "1"), PYTHONDONTWRITEBYTECODE="1")

    table = {}
    for fname in args.files:
        ids, err = collect(args.python, unit, fname, env, args.select)
        if args.k:
            ids = [i for i in ids if args.k in i]
        if args.list:
            for i in ids:
                print(i)
            continue
        if err is not None:
            for i in ids:
                table[i] = ("ERROR", "collection: " + err[:150])
            continue
        if ids:
            table.update(run_file(args.python, unit, ids, env, args.timeout))
    if args.list:
        return 0
    width = max((len(i) for i in table), default=10)
    for nodeid, (status, reason) in table.items():
        print("%-*s  %-7s  %s" % (width, nodeid, status, reason))
    counts = {}
    for status, _ in table.values():
        counts[status] = counts.get(status, 0) + 1
    print("\n%d selected: %s" % (len(table), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    if args.json:
        Path(args.json).write_text(json.dumps({k: list(v) for k, v in table.items()}, indent=1))
    return 0 if counts.get("PASS", 0) == len(table) else 1


if __name__ == "__main__":
    sys.exit(main())

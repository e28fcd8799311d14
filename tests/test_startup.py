"""Start-up: ``sparsenet --help``, usage errors, ``sparsenet inspect`` and a missing input
path of ``train``, ``eval``, ``predict`` or ``convert`` do not import torch,
``import sparsenet`` loads its namespaces on first use, and a lazily loaded name is the
very object an explicit import gives.

Behavioural, not timed: each case runs in a fresh interpreter and reads ``sys.modules``
(benchmarks/bench_startup.py measures the times).
"""
import json
import os
import subprocess
import sys

import pytest

import sparsenet

HEAVY = ("torch", "numpy", "scipy")


def _child(code, *argv, env_extra=None):
    """Run ``code`` in a fresh interpreter; return its last stdout line as JSON."""
    env = dict(os.environ)
    env.update(env_extra or {})
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


# Runs sparsenet's console-script entry (sparsenet.cli.main:main) on argv, then reports
# its exit status and which heavy modules it loaded.
_RUN_MAIN = """
import contextlib, io, json, sys
import sparsenet.cli.main as m
err = io.StringIO()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
    try:
        code = m.main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "stderr": err.getvalue(),
                  "loaded": [n for n in %r if n in sys.modules]}))
""" % (HEAVY,)


@pytest.mark.parametrize("argv, code", [
    (["--help"], 0),
    (["train", "--help"], 0),
    (["inspect", "--help"], 0),
    ([], 2),                                   # no subcommand
    (["nosuch"], 2),                           # unknown subcommand
    (["train", "d.svm"], 2),                   # --out missing
    (["train", "d.svm", "--out", "m", "--features", "0"], 2),
    (["train", "d.svm", "--out", "m", "--hidden", "x"], 2),
    (["eval", "m", "d.svm", "--threads", "0"], 2),
    (["launch", "-n", "0", "t.py"], 2),
    (["convert", "a.svm"], 2),
])
def test_help_and_usage_errors_do_not_import_torch(argv, code):
    got = _child(_RUN_MAIN, *argv)
    assert got["code"] == code, got["stderr"]
    assert "torch" not in got["loaded"] and "scipy" not in got["loaded"], argv


def test_console_script_help_does_not_import_torch():
    """The installed ``sparsenet`` script itself (its entry point is cli.main:main)."""
    code = ("import json, runpy, sys\nsys.argv = ['sparsenet', '--help']\n"
            "try:\n    runpy.run_module('sparsenet', run_name='__main__')\n"
            "except SystemExit as exc:\n    status = exc.code\n"
            "print(json.dumps({'status': status, 'torch': 'torch' in sys.modules}))")
    got = _child(code)
    assert got == {"status": 0, "torch": False}


def test_inspect_does_not_import_torch(tmp_path):
    path = tmp_path / "d.svm"
    path.write_text("1 0:1 3:2\n0 2:1\n")
    got = _child(_RUN_MAIN, "inspect", str(path))
    assert got["code"] == 0 and "torch" not in got["loaded"], got


def test_inspect_error_does_not_import_torch(tmp_path):
    path = tmp_path / "bad.svm"
    path.write_text("1 0:1\n1 2:x\n")
    got = _child(_RUN_MAIN, "inspect", str(path))
    assert "torch" not in got["loaded"], got


def test_missing_file_error_does_not_import_torch(tmp_path):
    """A SparsenetError/OSError from a subcommand is reported without loading torch."""
    got = _child(_RUN_MAIN, "inspect", str(tmp_path / "missing.svm"))
    assert got["code"] == 1 and "sparsenet: error:" in got["stderr"]
    assert "torch" not in got["loaded"]


# (argv, the missing path, its wording) with {d} the test's directory, which holds an empty
# d.svm and an empty folder "empty"
MISSING_INPUTS = [
    (["train", "{d}/nope.svm", "--out", "{d}/o"], "{d}/nope.svm", "no such file or directory"),
    (["train", "{d}/d.svm", "--val", "{d}/nope.svm", "--out", "{d}/o"], "{d}/nope.svm",
     "no such file or directory"),
    (["train", "{d}/nope.svm", "--val", "{d}/nope2.svm", "--out", "{d}/o"], "{d}/nope.svm",
     "no such file or directory"),                        # DATA before VAL
    (["train", "{d}/d.svm", "--out", "{d}/o", "--resume"], "{d}/o", "no such model directory"),
    (["train", "{d}/nope.svm", "--out", "{d}/o", "--resume"], "{d}/nope.svm",
     "no such file or directory"),                        # DATA before --out
    (["eval", "{d}/nope", "{d}/d.svm"], "{d}/nope", "no such model directory"),
    (["eval", "{d}/nope", "{d}/nope.svm"], "{d}/nope", "no such model directory"),
    (["eval", "{d}/d.svm", "{d}/d.svm"], "{d}/d.svm", "no such model directory"),  # a file
    (["eval", "{d}/empty", "{d}/nope.svm"], "{d}/nope.svm", "no such file or directory"),
    (["predict", "{d}/nope", "{d}/d.svm"], "{d}/nope", "no such model directory"),
    (["predict", "{d}/empty", "{d}/nope.svm"], "{d}/nope.svm", "no such file or directory"),
    (["convert", "{d}/nope.svm", "{d}/out.npz"], "{d}/nope.svm", "no such file or directory"),
]


@pytest.mark.parametrize("argv, path, wording", MISSING_INPUTS)
def test_missing_input_path_is_reported_without_torch(tmp_path, argv, path, wording):
    (tmp_path / "d.svm").write_text("")
    (tmp_path / "empty").mkdir()
    got = _child(_RUN_MAIN, *(arg.format(d=tmp_path) for arg in argv))
    assert got["code"] == 1, got
    assert got["stderr"] == f"sparsenet: error: {path.format(d=tmp_path)}: {wording}\n"
    assert "torch" not in got["loaded"], argv
    assert not (tmp_path / "o").exists() and not (tmp_path / "out.npz").exists()


def test_import_sparsenet_loads_no_namespace():
    # only the storage-fallback switch (read at import, so a bad environment value fails
    # there) and the error classes it raises; no torch, NumPy or SciPy
    code = ("import json, sys\nimport sparsenet as mx\n"
            "print(json.dumps([n for n in sys.modules if n.split('.')[0] in "
            "('torch', 'numpy', 'scipy') or n.startswith('sparsenet.')]))")
    assert sorted(_child(code)) == ["sparsenet.base", "sparsenet.config"]


def test_first_use_loads_the_namespace():
    code = ("import json, sys\nimport sparsenet as mx\na = mx.nd.ones((2, 3))\n"
            "print(json.dumps(['torch' in sys.modules, a.shape, a.asnumpy().sum().item()]))")
    assert _child(code) == [True, [2, 3], 6.0]


# the names of sparsenet.__all__ against the explicit import of where each comes from
EXPLICIT = {
    "nd": "sparsenet.ndarray", "ndarray": "sparsenet.ndarray", "sym": "sparsenet.symbol",
    "symbol": "sparsenet.symbol", "kv": "sparsenet.kvstore", "kvstore": "sparsenet.kvstore",
    "mod": "sparsenet.module", "module": "sparsenet.module", "init": "sparsenet.initializer",
    "initializer": "sparsenet.initializer", "gluon": "sparsenet.gluon", "io": "sparsenet.io",
    "optimizer": "sparsenet.optimizer", "autograd": "sparsenet.autograd",
    "random": "sparsenet.random", "metric": "sparsenet.metric", "base": "sparsenet.base",
    "context": "sparsenet.context", "config": "sparsenet.config",
    "test_utils": "sparsenet.test_utils", "models": "sparsenet.models",
    "lr_scheduler": "sparsenet.lr_scheduler", "operator": "sparsenet.operator",
    "model": "sparsenet.model", "callback": "sparsenet.callback",
    "runtime": "sparsenet.runtime", "attribute": "sparsenet.attribute",
}


@pytest.mark.parametrize("name", sorted(EXPLICIT))
def test_lazy_namespace_is_the_module(name):
    import importlib
    assert getattr(sparsenet, name) is importlib.import_module(EXPLICIT[name])


def test_lazy_names_are_the_objects_of_their_modules():
    from sparsenet import base, context, symbol, attribute
    assert sparsenet.MXNetError is base.MXNetError is base.SparsenetError
    assert sparsenet.SparsenetError is base.SparsenetError
    assert (sparsenet.Context, sparsenet.cpu, sparsenet.gpu, sparsenet.cpu_pinned,
            sparsenet.current_context, sparsenet.num_gpus) == \
        (context.Context, context.cpu, context.gpu, context.cpu_pinned,
         context.current_context, context.num_gpus)
    assert sparsenet.name is symbol.name and sparsenet.AttrScope is attribute.AttrScope


def test_every_public_name_resolves_and_is_listed():
    listed = dir(sparsenet)
    for name in sparsenet.__all__:
        assert name in listed
        assert getattr(sparsenet, name) is not None
    from sparsenet import nd, gluon, MXNetError  # noqa: F401 - `from sparsenet import X`
    assert nd.array([1.0, 2.0]).shape == (2,)


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        sparsenet.no_such_name  # noqa: B018
    assert not hasattr(sparsenet, "no_such_name")


def test_base_dtype_names_resolve_lazily():
    code = ("import json, sys\nimport sparsenet.base as b\nbefore = 'torch' in sys.modules\n"
            "from sparsenet.base import torch_dtype\n"
            "print(json.dumps([before, str(torch_dtype('float16')), b.mx_real_t.__name__]))")
    assert _child(code) == [False, "torch.float16", "float32"]


def test_restated_cli_constants_agree_with_their_sources():
    """The parsers restate a few constants so as not to import torch; they must agree."""
    from sparsenet.cli import launch, model_schema
    from sparsenet.kvstore import collective
    from sparsenet.models import tasks
    assert launch.MAX_TIMEOUT == collective.MAX_TIMEOUT
    assert model_schema.TASKS == tasks.TASKS
    assert model_schema.LOSS_TASKS == {k: v[0] for k, v in tasks.LOSSES.items()}

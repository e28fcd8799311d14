"""Which native kernels are built: listed by mx.runtime.Features, and reported once when missing."""
import os
import subprocess
import sys
import textwrap

import pytest

import sparsenet as mx
from sparsenet.io.libsvm import kernel as libsvm_kernel
from sparsenet.ops import row_kernels

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_features_list_the_native_kernels():
    f = mx.runtime.Features()
    assert f.is_enabled("SPARSENET_NATIVE_ROW_KERNELS") == row_kernels.available()
    assert f.is_enabled("SPARSENET_NATIVE_LIBSVM") == (libsvm_kernel.BACKEND == "native")


def _run(code, **env):
    """Run ``code`` in a fresh interpreter with the C extensions hidden; return its stderr."""
    hide = textwrap.dedent("""
        import importlib.abc, sys, warnings
        warnings.simplefilter('default')
        class Hide(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name in ('sparsenet.ops._row_kernels', 'sparsenet.io.libsvm._native'):
                    raise ImportError('hidden for the test: ' + name)
        sys.meta_path.insert(0, Hide())
    """)
    full_env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src"), **env}
    out = subprocess.run([sys.executable, "-c", hide + code], capture_output=True, text=True,
                         env=full_env, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout, out.stderr


def test_missing_kernels_are_reported_once_and_the_fallbacks_work():
    code = textwrap.dedent("""
        import sparsenet as mx
        import sparsenet.ops.row_kernels, sparsenet.io.libsvm.kernel
        f = mx.runtime.Features()
        print(f.is_enabled('SPARSENET_NATIVE_ROW_KERNELS'), f.is_enabled('SPARSENET_NATIVE_LIBSVM'))
        w = mx.nd.ones((4, 2)); g = mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [2]), shape=(4, 2))
        mx.optimizer.SGD(learning_rate=0.5).update(0, w, g, None)
        print(w.asnumpy()[2].tolist())
    """)
    stdout, stderr = _run(code, SPARSENET_NATIVE_ROWS="1", SPARSENET_LIBSVM_KERNEL="")
    assert stdout.split() == ["False", "False", "[0.5,", "0.5]"]  # 1 - 0.5 * 1
    assert stderr.count("NativeKernelWarning") == 2
    assert stderr.count("native row kernels") == 1 and stderr.count("native LibSVM parser") == 1


@pytest.mark.parametrize("env", [{"SPARSENET_NATIVE_ROWS": "0",
                                  "SPARSENET_LIBSVM_KERNEL": "python"}])
def test_switching_the_kernels_off_is_silent(env):
    _, stderr = _run("import sparsenet, sparsenet.ops.row_kernels", **env)
    assert "NativeKernelWarning" not in stderr

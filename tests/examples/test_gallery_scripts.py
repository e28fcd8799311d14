"""The gallery's examples (``examples/gallery/plot_*.py``) run as plain Python scripts.

The docs build executes them through sphinx-gallery; this test runs each one in a child
process (no Sphinx needed), with matplotlib's non-interactive backend, the project's
storage-fallback policy ``error`` (an example falls back only where it says so, inside
``config.storage_fallback``), and a time limit, so CI checks them without building the site.
"""
import ast
import glob
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GALLERY = os.path.join(ROOT, "examples", "gallery")
SCRIPTS = sorted(glob.glob(os.path.join(GALLERY, "plot_*.py")))
TIMEOUT_S = 240


def test_gallery_has_its_header_and_at_least_eight_examples():
    # sphinx-gallery >= 0.16 reads GALLERY_HEADER.rst (README.rst is the old name)
    with open(os.path.join(GALLERY, "GALLERY_HEADER.rst")) as f:
        title, underline = f.read().splitlines()[:2]
    assert title and underline == "=" * len(title)
    assert len(SCRIPTS) >= 8


@pytest.mark.parametrize("path", SCRIPTS, ids=os.path.basename)
def test_example_has_a_gallery_header(path):
    """A module docstring opening with a title underlined with '=', then a description."""
    with open(path) as f:
        source = f.read()
    doc = ast.get_docstring(ast.parse(source), clean=False)
    assert doc is not None, f"{path}: no module docstring"
    lines = doc.strip("\n").splitlines()
    assert re.fullmatch(r"=+", lines[1]) and len(lines[1]) == len(lines[0]), lines[:2]
    assert any(line.strip() for line in lines[2:]), f"{path}: no description"
    assert "# %%" in source, f"{path}: no '# %%' cells"
    assert "plt.show()" in source, f"{path}: draws no figure"


@pytest.mark.slow
@pytest.mark.parametrize("path", SCRIPTS, ids=os.path.basename)
def test_example_runs(path, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg", SPARSENET_STORAGE_FALLBACK="error",
               OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "src"),
                                           os.environ.get("PYTHONPATH", "")]))
    try:
        proc = subprocess.run([sys.executable, path], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{os.path.basename(path)} ran past {TIMEOUT_S} s")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert proc.stdout.strip(), "the example printed nothing"
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]

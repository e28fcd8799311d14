"""``make demo`` (``examples/demo.py`` -> ``sparsenet demo``) ends with where to go next, and
its one storage-fallback warning is attributed to the demo's line that causes it and is
called the demonstration (issue: the warning pointed at ``examples/demo.py``'s
``sys.exit(main(...))`` and read like a problem in the user's setup)."""
import os
import re
import subprocess
import sys
import warnings

import sparsenet as mx
from sparsenet.cli import demo
from sparsenet.cli.main import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMALL = ["--rows", "40", "--features", "3000", "--density", "0.002", "--seed", "3"]


def _source_line(path, lineno):
    with open(path) as f:
        return f.read().splitlines()[lineno - 1]


def test_demo_warns_once_from_its_own_log_line_and_ends_with_next_steps(capsys, tmp_path):
    out = str(tmp_path / "d")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert main(["demo", "--out", out, *SMALL]) == 0
    fallbacks = [w for w in seen if issubclass(w.category, mx.config.StorageFallbackWarning)]
    assert len(fallbacks) == 1
    w = fallbacks[0]
    assert os.path.samefile(w.filename, demo.__file__)
    assert _source_line(w.filename, w.lineno).strip().startswith("nd.log(g)")
    assert "operator 'log'" in str(w.message) and "(row_sparse)" in str(w.message)

    text = capsys.readouterr().out
    assert (f"The one warning above is this demonstration's, raised by nd.log(g) at "
            f"demo.py:{w.lineno};\nnothing is wrong with your setup.") in text
    ending = text[text.index("== Where to go next"):]
    data = os.path.join(out, "dataset.libsvm")
    assert f"sparsenet inspect {data}\n" in ending
    assert f"sparsenet train {data} --features 3000 --out {out}/model --plot\n" in ending
    for page in ("docs/user_guide.md", "docs/cli.md", "docs/pytorch_users.md",
                 "examples/gallery/"):
        assert page in ending
    # the ending is the last thing printed
    assert text.rstrip().endswith("runnable examples: examples/gallery/.")


def test_make_demo_script_prints_the_warning_at_the_demo_line_not_its_own(tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("SPARSENET_STORAGE_FALLBACK", None)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "demo.py"), "--out",
                           str(tmp_path / "d"), *SMALL], capture_output=True, text=True,
                          timeout=300, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    located = re.findall(r"^(.*):(\d+): StorageFallbackWarning: ", proc.stderr, re.M)
    assert len(located) == 1, proc.stderr
    path, lineno = located[0]
    assert os.path.samefile(path, demo.__file__)      # not examples/demo.py
    assert "examples/demo.py" not in proc.stderr
    assert _source_line(path, int(lineno)).strip().startswith("nd.log(g)")
    assert proc.stdout.rstrip().endswith("runnable examples: examples/gallery/.")

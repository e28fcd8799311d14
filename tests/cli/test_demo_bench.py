"""``sparsenet demo`` on small generated data, and ``sparsenet bench`` on a fake benchmarks folder
(the real scripts take minutes), with their one-line errors."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from sparsenet.cli import bench, demo
from sparsenet.cli.main import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_demo_small(capsys, tmp_path):
    out = tmp_path / "demo"
    argv = ["demo", "--out", str(out), "--rows", "40", "--features", "3000", "--density",
            "0.002", "--seed", "3"]
    with pytest.warns(UserWarning, match="storage fallback: operator 'log'"):
        assert main(argv) == 0
    text = capsys.readouterr().out
    assert "CSRNDArray (40, 3000)" in text
    for name in ("nn.Dense on CSR (dense grad)", "FullyConnectedSparse (row_sparse grad)",
                 "PyTorch EmbeddingBag(sparse=True)", "dot(csr.T, dense)      -> row_sparse",
                 "log(row_sparse)"):
        assert name in text
    # the LibSVM file holds the generated data: 40 rows, density 0.002 of 40 x 3000 = 240 values
    lines = (out / "dataset.libsvm").read_text().splitlines()
    assert len(lines) == 40
    assert sum(len(line.split()) - 1 for line in lines) == 240
    assert f"{240:,} non-zero elements" in text


def test_generate_matches_its_definition():
    data, label = demo.generate(30, 500, 0.01, seed=5)
    dense = data.asnumpy()
    assert np.count_nonzero(dense) == 150 and dense.min() >= 0 and dense.max() < 1
    sums = dense.sum(axis=1)
    np.testing.assert_array_equal(label.asnumpy(), (sums > sums.mean()).astype(np.float32))


def test_examples_demo_script_runs_the_command(tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "demo.py"), "--rows",
                           "0"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "sparsenet demo: error: argument --rows: expected a positive integer, got '0'" \
        in proc.stderr


@pytest.fixture
def fake_benchmarks(tmp_path):
    folder = tmp_path / "benchmarks"
    folder.mkdir()
    (folder / "bench_fast.py").write_text(textwrap.dedent("""
        import sys
        print("measuring", sys.argv[1:])
        print("| peer | ms |")
        print("|---|---|")
        print("| sparsenet | 1.0 |")
    """))
    (folder / "bench_broken.py").write_text("import sys\nprint('| x |')\nsys.exit(3)\n")
    (folder / "helper.py").write_text("")
    return folder


def test_bench_runs_and_summarises(capsys, fake_benchmarks, monkeypatch):
    monkeypatch.setitem(bench.QUICK_ARGS, "bench_fast", ["--tiny"])
    assert main(["bench", "--dir", str(fake_benchmarks), "--quick", "fast"]) == 0
    out = capsys.readouterr().out
    assert "measuring ['--tiny']" in out
    summary = out.split("== Summary", 1)[1]
    assert "-- bench_fast: ok" in summary
    assert "| peer | ms |\n|---|---|\n| sparsenet | 1.0 |" in summary


def test_bench_failure_and_list(capsys, fake_benchmarks):
    assert main(["bench", "--dir", str(fake_benchmarks), "--list"]) == 0
    assert capsys.readouterr().out == "broken\nfast\n"
    assert main(["bench", "--dir", str(fake_benchmarks)]) == 1
    out, err = capsys.readouterr()
    assert "-- bench_broken: FAILED (exit 3)" in out and "measuring []" in out
    assert err == "sparsenet: error: 1 of 2 benchmarks failed: bench_broken (exit 3)\n"


def test_bench_errors(capsys, fake_benchmarks, tmp_path, monkeypatch):
    assert main(["bench", "--dir", str(fake_benchmarks), "nope"]) == 1
    assert capsys.readouterr().err == ("sparsenet: error: unknown benchmark 'nope': expected one "
                                       "of broken, fast\n")
    assert main(["bench", "--dir", str(tmp_path / "empty")]) == 1
    assert "not a folder holding bench_*.py scripts" in capsys.readouterr().err
    # an installed package: no ./benchmarks, none next to the package
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    monkeypatch.setattr(bench, "_source_tree_benchmarks", lambda: str(tmp_path / "site"))
    assert main(["bench"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("sparsenet: error: no benchmarks/ folder with bench_*.py scripts "
                          "found") and err.count("\n") == 1


def test_bench_finds_the_checkout_folder():
    assert "bench_dot" in bench.scripts(bench.find_benchmarks())

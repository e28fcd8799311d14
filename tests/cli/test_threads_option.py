"""``sparsenet train/eval/predict`` choose a torch thread count that does not oversubscribe
the cores the process may use, keep an explicit choice, and take ``--threads N``.
The count is read inside the command, not timed.
"""
import json
import os
import subprocess
import sys

import pytest

from sparsenet.cli import threads
from sparsenet.cli.main import build_parser

# In a fresh interpreter: restrict the affinity mask to argv[1]'s CPUs (after torch has
# chosen its own count, as a mask given by a scheduler or a cgroup leaves it), run
# `sparsenet train` on a tiny file with the training loop replaced by one that records
# torch's thread count, and print the counts before, during and after the command.
_CHILD = """
import json, os, sys
import torch
import sparsenet.cli.fit_loop as fit_loop
from sparsenet.cli.main import main

cpus, argv = json.loads(sys.argv[1]), sys.argv[2:]
if cpus:
    os.sched_setaffinity(0, cpus)
seen = []
def fit(*args, **kwargs):
    seen.append(torch.get_num_threads())
    return []
fit_loop.fit = fit
before = torch.get_num_threads()
code = main(argv)
print(json.dumps({"code": code, "before": before, "during": seen,
                  "after": torch.get_num_threads()}))
"""


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "d.svm"
    path.write_text("1 0:1 3:2\n0 2:1\n1 1:0.5\n")
    return path


def _train(tmp_path, data, cpus, *flags, omp=None):
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if omp is not None:
        env["OMP_NUM_THREADS"] = omp
    argv = ["train", str(data), "--features", "4", "--out", str(tmp_path / "m"), "--quiet",
            *flags]
    out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(cpus), *argv],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["code"] == 0
    return got


needs_affinity = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"),
                                    reason="no CPU affinity on this platform")


@needs_affinity
def test_default_is_at_most_the_cores_of_the_affinity_mask(tmp_path, data):
    """One allowed CPU: one thread, whatever torch chose for the whole machine."""
    cpu = min(os.sched_getaffinity(0))
    got = _train(tmp_path, data, [cpu])
    assert got["during"] == [1]
    assert got["after"] == got["before"]  # restored when main() returns


@needs_affinity
def test_default_never_exceeds_the_usable_cores(tmp_path, data):
    cpus = sorted(os.sched_getaffinity(0))
    got = _train(tmp_path, data, cpus)
    assert 1 <= got["during"][0] <= min(len(cpus), got["before"])


@needs_affinity
def test_threads_option_sets_the_count(tmp_path, data):
    cpu = min(os.sched_getaffinity(0))
    got = _train(tmp_path, data, [cpu], "--threads", "3")
    assert got["during"] == [3]
    assert got["after"] == got["before"]


@needs_affinity
def test_omp_num_threads_is_kept(tmp_path, data):
    """An explicit OMP_NUM_THREADS is the user's choice: the command leaves it alone."""
    cpu = min(os.sched_getaffinity(0))
    got = _train(tmp_path, data, [cpu], omp="2")
    assert got["before"] == 2 and got["during"] == [2]


@needs_affinity
def test_threads_option_wins_over_omp_num_threads(tmp_path, data):
    got = _train(tmp_path, data, [], "--threads", "1", omp="2")
    assert got["during"] == [1]


@pytest.mark.parametrize("command", [
    ["train", "d.svm", "--out", "m"], ["eval", "m", "d.svm"], ["predict", "m", "d.svm"]])
def test_train_eval_predict_take_threads(command):
    parser = build_parser()
    assert parser.parse_args(command).threads is None
    assert parser.parse_args(command + ["--threads", "4"]).threads == 4


@pytest.mark.parametrize("bad", ["0", "-1", "two"])
def test_threads_must_be_a_positive_integer(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["eval", "m", "d.svm", "--threads", bad])
    assert exc.value.code == 2
    assert f"expected a positive integer, got '{bad}'" in capsys.readouterr().err


@pytest.mark.parametrize("affinity, load, cpu_count, torch_threads, expected", [
    (2, 0.0, 2, 2, 2),      # idle machine: every usable core
    (2, 0.6, 2, 2, 2),      # less than one busy core is not subtracted
    (2, 1.2, 2, 2, 1),      # one core busy with other work
    (2, 3.5, 2, 2, 1),      # a loaded machine: at least one thread
    (1, 0.0, 64, 64, 1),    # taskset -c 0 on a 64-core machine
    (8, 32.0, 64, 64, 4),   # half the machine busy: half of our 8 cores
    (16, 0.0, 16, 4, 4),    # never more than torch's count (a set_num_threads(4) is kept)
])
def test_default_threads_rule(affinity, load, cpu_count, torch_threads, expected):
    assert threads.default_threads(affinity, load, cpu_count, torch_threads) == expected


def test_usable_cores_is_the_affinity_mask():
    if hasattr(os, "sched_getaffinity"):
        assert threads.usable_cores() == len(os.sched_getaffinity(0))
    else:
        assert threads.usable_cores() == (os.cpu_count() or 1)

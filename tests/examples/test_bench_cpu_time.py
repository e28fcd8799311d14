"""The example benchmark reports CPU time as well as wall time: ``Clock`` sums the process's
CPU time over its blocks, ``run_mxnet.py`` puts it in the result as ``cpu_seconds``, and
``bench_examples.summarise`` gives the per-pair ratios of both (median and range)."""
import importlib.util
import json
import os
import subprocess
import sys
import time

from tests.examples import common

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _bench_examples():
    spec = importlib.util.spec_from_file_location(
        "bench_examples", os.path.join(ROOT, "benchmarks", "bench_examples.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_clock_sums_process_cpu_time_of_its_blocks(monkeypatch):
    monkeypatch.setattr(common.Clock, "process_cpu_seconds", 0.0)
    clock = common.Clock(lambda: None)
    before = time.process_time()
    with clock:
        _spin(0.05)
    _spin(0.05)  # outside the block: not counted
    with clock:
        _spin(0.05)
    total = time.process_time() - before
    assert 0.1 <= clock.cpu_seconds < total - 0.04
    assert clock.seconds >= 0.0
    assert common.Clock.process_cpu_seconds == clock.cpu_seconds


def test_clock_does_not_count_sleep_as_cpu():
    clock = common.Clock(lambda: None)
    with clock:
        time.sleep(0.1)
    assert clock.seconds >= 0.1
    assert clock.cpu_seconds < 0.05


def test_summarise_gives_wall_and_cpu_ratios_per_pair():
    bench = _bench_examples()
    ours = [(300.0, 600.0), (200.0, 500.0), None]
    theirs = [(100.0, 300.0), (200.0, 250.0), (50.0, 50.0)]
    row = bench.summarise(ours, theirs)
    assert row["ours"] == "250" and row["theirs"] == "100"  # medians of each library's runs
    assert row["wall"] == "**2.00** [1.00, 3.00]"  # 300/100, 200/200: the failed pair dropped
    assert row["cpu"] == "**2.00** [2.00, 2.00]"  # 600/300, 500/250
    assert bench.summarise([(1.0, None)], [(2.0, None)])["cpu"] == "-"  # no CPU figures
    assert bench.summarise([(1.0, 1.0)], None) == {"ours": "1", "theirs": "-", "wall": "-",
                                                   "cpu": "-"}


def test_runner_reports_cpu_seconds(tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "examples", "run_mxnet.py"),
                           "matrix_factorization", "small", str(tmp_path), "--library",
                           "sparsenet"], env=env, capture_output=True, text=True, timeout=280)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert 0.0 < result["cpu_seconds"]
    assert result["samples"] > 0 and result["seconds"] > 0.0

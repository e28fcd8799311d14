"""Run a test scenario on W gloo ranks on 127.0.0.1, each a subprocess, always within a deadline.

``run_ranks('tests.kvstore.test_dist_core:scenario_main', 2)`` starts 2 Python
processes with the ``torchrun`` environment (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT, LOCAL_RANK) and a free port; each calls
``scenario_main(rank, world, *args)`` and pickles what it returns (or the
exception it raised) into a file the parent reads. If the ranks are not all done
within ``wall`` seconds, the parent kills them (by pid) and fails the test, with
their output: a test never hangs.
"""
import os
import pickle
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RankResult:
    """What one rank left: ``value`` (the scenario's return), or ``error`` (type, message)."""

    def __init__(self, rank, returncode, record, output):
        self.rank = rank
        self.returncode = returncode
        self.output = output
        self.value = record.get("value") if record else None
        self.error = record.get("error") if record else None
        self.finished = record is not None

    def __repr__(self):
        return (f"<rank {self.rank} rc={self.returncode} finished={self.finished} "
                f"error={self.error}>")


def _tail(path, limit=4000):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return ""
    return data[-limit:].decode(errors="replace")


def run_ranks(scenario, world, *args, timeout=30.0, wall=90.0, env=None):
    """Run ``scenario`` ('module:function') on ``world`` ranks; return a RankResult per rank.

    Parameters
    ----------
    scenario : str
        ``'package.module:function'``; the function is called ``(rank, world, *args)``
        and returns something picklable.
    world : int
    *args
        Picklable arguments for the scenario.
    timeout : float
        The process group's collective timeout (``SPARSENET_DIST_TIMEOUT``).
    wall : float
        Hard limit for the whole run: past it every rank is killed and the test fails.
    env : dict, optional
        Extra environment variables for every rank.
    """
    workdir = tempfile.mkdtemp(prefix="sparsenet-dist-")
    with open(os.path.join(workdir, "args.pkl"), "wb") as f:
        pickle.dump(args, f)
    port = free_port()
    procs = []
    for rank in range(world):
        child_env = dict(os.environ)
        child_env.update({
            "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world),
            "LOCAL_WORLD_SIZE": str(world), "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port), "SPARSENET_DIST_TIMEOUT": str(timeout),
            "OMP_NUM_THREADS": "1", "SPARSENET_STORAGE_FALLBACK": "error",
            "DIST_TEST_SCENARIO": scenario, "DIST_TEST_DIR": workdir,
            "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), ROOT,
                                           child_env.get("PYTHONPATH", "")]),
        })
        child_env.update(env or {})
        out = open(os.path.join(workdir, f"rank{rank}.log"), "wb")
        procs.append(subprocess.Popen(
            [sys.executable, "-c", "from tests.kvstore.dist_helpers import child_main; "
                                   "child_main()"],
            cwd=ROOT, env=child_env, stdout=out, stderr=subprocess.STDOUT))
        out.close()
    deadline = time.monotonic() + wall
    while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    hung = [r for r, p in enumerate(procs) if p.poll() is None]
    for p in procs:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
    results = []
    for rank, p in enumerate(procs):
        record = None
        path = os.path.join(workdir, f"rank{rank}.pkl")
        if os.path.exists(path):
            with open(path, "rb") as f:
                record = pickle.load(f)
        results.append(RankResult(rank, p.returncode, record,
                                  _tail(os.path.join(workdir, f"rank{rank}.log"))))
    if hung:
        logs = "\n".join(f"--- rank {r.rank} (rc {r.returncode}):\n{r.output}" for r in results)
        pytest.fail(f"ranks {hung} of {scenario} were still running after {wall} s and were "
                    f"killed\n{logs}")
    return results


def values(results):
    """The scenario's return value of every rank; fails with the ranks' output if one failed."""
    bad = [r for r in results if not r.finished or r.error is not None]
    if bad:
        logs = "\n".join(f"--- rank {r.rank} (rc {r.returncode}, error {r.error}):\n{r.output}"
                         for r in bad)
        pytest.fail(f"ranks {[r.rank for r in bad]} failed\n{logs}")
    return [r.value for r in results]


def child_main():
    """Entry point of a rank: run the scenario named in the environment, pickle the outcome."""
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    workdir = os.environ["DIST_TEST_DIR"]
    module_name, func_name = os.environ["DIST_TEST_SCENARIO"].split(":")
    with open(os.path.join(workdir, "args.pkl"), "rb") as f:
        args = pickle.load(f)
    import importlib  # the scenario's module, named by the parent
    func = getattr(importlib.import_module(module_name), func_name)
    try:
        record = {"value": func(rank, world, *args)}
        code = 0
    except BaseException as e:  # noqa: BLE001 - report whatever the scenario raised
        traceback.print_exc()
        record = {"error": (type(e).__name__, str(e))}
        code = 1
    path = os.path.join(workdir, f"rank{rank}.pkl")
    with open(path + ".tmp", "wb") as f:
        pickle.dump(record, f)
    os.replace(path + ".tmp", path)
    sys.stdout.flush()
    sys.exit(code)

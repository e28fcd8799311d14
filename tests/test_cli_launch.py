"""``sparsenet launch``: N local ranks through torchrun, exit statuses, failure reports, usage errors.

The launches run ``python -m sparsenet.cli launch ...`` in a subprocess under a hard
timeout (the test fails instead of hanging); the usage errors are checked in-process.
"""
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

from sparsenet.cli import launch
from sparsenet.cli.main import main
from torch.distributed.elastic.multiprocessing.errors import ChildFailedError, ProcessFailure

LAUNCH_TIMEOUT = 60  # seconds; a launch of 2 ranks takes about 3-4 s here

ALL_REDUCE_SCRIPT = textwrap.dedent("""
    import json, os, sys
    import torch, torch.distributed as dist
    import helper_next_to_script           # sys.path[0] is the script's folder

    out_dir = sys.argv[1]
    dist.init_process_group("gloo")
    try:
        rank, world = dist.get_rank(), dist.get_world_size()
        t = torch.tensor([rank + 1.0, 10.0 * rank])
        dist.all_reduce(t)
        with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
            json.dump({"rank": rank, "world": world, "sum": t.tolist(), "argv": sys.argv,
                       "name": __name__, "helper": helper_next_to_script.VALUE,
                       "timeout": os.environ.get("SPARSENET_DIST_TIMEOUT"),
                       "master_port": os.environ["MASTER_PORT"]}, f)
    finally:
        dist.destroy_process_group()
""")

FAILING_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    import torch.distributed as dist

    dist.init_process_group("gloo")
    try:
        if dist.get_rank() == 1:
            if sys.argv[1] == "raise":
                raise ValueError("rank one fails on purpose")
            os.kill(os.getpid(), signal.SIGKILL)
        dist.barrier()                     # rank 0 waits for rank 1, which never comes
    finally:
        dist.destroy_process_group()
""")


def _launch(*argv, cwd):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("SPARSENET_DIST_TIMEOUT", None)
    cmd = [sys.executable, "-m", "sparsenet.cli", "launch", *argv]
    try:
        return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=LAUNCH_TIMEOUT)
    except subprocess.TimeoutExpired as exc:  # subprocess.run kills the launcher
        pytest.fail(f"sparsenet launch did not finish within {LAUNCH_TIMEOUT} s:\n"
                    f"{exc.stdout}\n{exc.stderr}")


def _root_cause(stderr):
    assert "Root Cause (first observed failure):" in stderr, stderr
    return stderr.split("Root Cause (first observed failure):", 1)[1]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def all_reduce_script(tmp_path):
    (tmp_path / "helper_next_to_script.py").write_text("VALUE = 42\n")
    script = tmp_path / "train.py"
    script.write_text(ALL_REDUCE_SCRIPT)
    return script


def test_two_ranks_all_reduce_with_script_args_and_timeout(tmp_path, all_reduce_script):
    out = tmp_path / "out"
    out.mkdir()
    proc = _launch("-n", "2", "--timeout", "30", str(all_reduce_script), str(out), "--lr", "0.1",
                   "-n", "7", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = [json.loads((out / f"rank{r}.json").read_text()) for r in range(2)]
    for rank, res in enumerate(results):
        assert res["rank"] == rank and res["world"] == 2
        assert res["sum"] == [3.0, 10.0]            # (1 + 2, 0 + 10)
        assert res["argv"] == [str(all_reduce_script), str(out), "--lr", "0.1", "-n", "7"]
        assert res["name"] == "__main__" and res["helper"] == 42
        assert res["timeout"] == "30"
    assert results[0]["master_port"] == results[1]["master_port"]


def test_master_port_is_the_workers_master_port(tmp_path, all_reduce_script):
    out = tmp_path / "out"
    out.mkdir()
    port = _free_port()
    proc = _launch("-n", "2", "--master-port", str(port), str(all_reduce_script), str(out),
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for r in range(2):
        res = json.loads((out / f"rank{r}.json").read_text())
        assert res["master_port"] == str(port) and res["timeout"] is None
        assert res["sum"] == [3.0, 10.0]


def test_a_rank_that_raises_fails_the_launch_and_is_named_the_root_cause(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text(FAILING_SCRIPT)
    proc = _launch("-n", "2", str(script), "raise", cwd=tmp_path)
    assert proc.returncode == 1
    cause = _root_cause(proc.stderr)
    assert "rank      : 1 (local_rank: 1)" in cause
    assert "ValueError: rank one fails on purpose" in cause   # the traceback, no @record needed
    assert f"{script} FAILED" in proc.stderr


def test_a_killed_rank_fails_the_launch_with_its_signal(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text(FAILING_SCRIPT)
    proc = _launch("-n", "2", str(script), "kill", cwd=tmp_path)
    assert proc.returncode == 128 + signal.SIGKILL
    cause = _root_cause(proc.stderr)
    assert "rank      : 1 (local_rank: 1)" in cause and "SIGKILL" in cause


DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs" / "distributed.md"


def test_docs_first_job_runs_and_prints_what_the_docs_say(tmp_path):
    """docs/distributed.md section 1: the script, run as documented, gives the documented rows."""
    text = DOCS.read_text()
    script = re.search(r"```python\n(# train_kv.py\n.*?)```", text, flags=re.S).group(1)
    shown = re.search(r"```sh\nsparsenet launch -n 2 train_kv.py.*?\n(.*?)```", text,
                      flags=re.S).group(1)
    assert shown.splitlines() == ["# 0 [0 1 5] [0.5 0.5 1. ]", "# 1 [0 1 5] [0.5 0.5 1. ]"]
    # the ranks print at the same time; each also writes what it printed to its own file
    (tmp_path / "train_kv.py").write_text(
        script + "import os\nwith open(os.path.join(os.path.dirname(__file__), f'{rank}.out'), "
                 "'w') as f:\n    print(rank, rows.indices.asnumpy(), rows.data.asnumpy()[:, 0], "
                 "file=f)\n")
    proc = _launch("-n", "2", "train_kv.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for rank in range(2):
        # SGD(lr 0.5) on ones: rows 0 and 1 were pushed (1.0 each, one per rank), row 5 not
        assert (tmp_path / f"{rank}.out").read_text() == f"{rank} [0 1 5] [0.5 0.5 1. ]\n"


def _failure(tmp_path, rank, message, when, exitcode=1):
    path = tmp_path / f"error{rank}.json"
    if message is not None:
        path.write_text(json.dumps({"message": {"message": message, "extraInfo": {
            "py_callstack": message, "timestamp": str(int(when)), "sparsenet_time": repr(when)}}}))
    return ProcessFailure(local_rank=rank, pid=100 + rank, exitcode=exitcode, error_file=str(path))


def test_root_cause_is_the_own_error_not_the_peer_lost_one(tmp_path):
    # rank 0 raised first, but only because rank 1 went away; both in the same second
    lost = _failure(tmp_path, 0, "RuntimeError: [pair.cc:553] Connection closed by peer", 1000.1)
    own = _failure(tmp_path, 1, "ValueError: bad batch", 1000.2)
    later = _failure(tmp_path, 2, "KeyError: 'w'", 1000.3)
    report = launch.root_cause_first(ChildFailedError("t.py", {0: lost, 2: later, 1: own}), "t.py")
    assert report.get_first_failure()[0] == 1
    assert list(report.failures) == [1, 2, 0]
    assert report.name == "t.py"
    # torchrun SIGTERMs rank 0 after it wrote its error file: still not the root cause
    lost.exitcode = -signal.SIGTERM
    report = launch.root_cause_first(ChildFailedError("t.py", {0: lost, 1: own}), "t.py")
    assert report.get_first_failure()[0] == 1


def test_root_cause_is_the_killed_rank_not_the_peer_that_lost_it(tmp_path):
    lost = _failure(tmp_path, 0, "DistributedError: rank 0: push of key 3 failed: lost the "
                                 "connection to a peer; dead peer rank(s): [1]", 1000.1)
    killed = _failure(tmp_path, 1, None, 1000.0, exitcode=-signal.SIGKILL)
    report = launch.root_cause_first(ChildFailedError("t.py", {0: lost, 1: killed}), "t.py")
    assert report.get_first_failure()[0] == 1
    assert launch._exit_status(killed) == 128 + signal.SIGKILL


def test_a_rank_that_raised_exits_1_even_if_stopped_while_cleaning_up(tmp_path):
    # the rank raised (error file written), then torchrun SIGTERMed it during its finally:
    own = _failure(tmp_path, 1, "ValueError: bad batch", 1000.2, exitcode=-signal.SIGTERM)
    assert launch._exit_status(own) == 1
    assert launch._exit_status(_failure(tmp_path, 2, None, 1000.0, exitcode=3)) == 3


def test_help_documents_the_command_with_an_example(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["launch", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "--nproc-per-node N" in text and "SPARSENET_DIST_TIMEOUT" in text
    assert "sparsenet launch -n 2 train.py" in text and "torchrun --nnodes 2" in text


@pytest.fixture
def no_torchrun(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("torchrun must not start on a usage error")
    monkeypatch.setattr(launch.torchrun, "run", refuse)


@pytest.mark.parametrize("value, shown", [("0", "got 0"), ("-2", "got -2"), ("two", "got 'two'"),
                                          ("1.5", "got '1.5'")])
def test_n_must_be_a_positive_int(value, shown, capsys, no_torchrun):
    with pytest.raises(SystemExit) as exc:
        main(["launch", "-n", value, __file__])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument -n/--nproc: expected a positive integer number of processes" in err
    assert shown in err


@pytest.mark.parametrize("flag, value", [("--timeout", "0"), ("--timeout", "inf"),
                                         ("--timeout", "soon"), ("--master-port", "70000")])
def test_bad_timeout_or_port_is_a_usage_error(flag, value, capsys, no_torchrun):
    with pytest.raises(SystemExit) as exc:
        main(["launch", "-n", "2", flag, value, __file__])
    assert exc.value.code == 2
    assert f"argument {flag}: expected" in capsys.readouterr().err


def test_unknown_script_is_a_clear_error_before_launching(tmp_path, capsys, no_torchrun):
    missing = tmp_path / "nope.py"
    with pytest.raises(SystemExit) as exc:
        main(["launch", "-n", "2", str(missing)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"expected the path of a Python script to run, got '{missing}' (no such file)" in err
    with pytest.raises(SystemExit):
        main(["launch", "-n", "2", str(tmp_path)])
    assert "(is a directory)" in capsys.readouterr().err


def test_console_script_is_declared():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    root = pathlib.Path(__file__).resolve().parents[1]
    scripts = tomllib.loads((root / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["sparsenet"] == "sparsenet.cli.main:program"

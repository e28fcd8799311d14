"""``mx.profiler``: MXNet 1.9.1's profiler API over torch.profiler, and the kvstore's 'server'
profile.

The traces are checked as Chrome trace JSON by what the format requires (a ``traceEvents``
list; ``"X"`` events with numeric ``ts``/``dur``), the operator names by what torch itself
calls them, the clock against ``time.time_ns()``. MXNet 1.9.1's behaviour the tests pin
was measured with ``/work/mxnet-venv`` (MXNet 1.9.1, CPU) and is quoted where used.
The last test runs (our copy of) MXNet's ``tests/nightly/test_server_profiling.py`` on 3
gloo ranks with ``sparsenet launch``, as MXNet's CI runs it.
"""
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

import sparsenet as mx
from sparsenet import profiler
from sparsenet.base import ParameterAssertionError, StateError


def _reset():
    for p in profiler._PROFILES.values():
        p.end_session()
        p.config = dict(profiler.DEFAULTS)
        p.running = p.paused = False
        p.events, p.meta, p.stats = [], {}, {}
    profiler._refresh_tracing()


@pytest.fixture(autouse=True)
def clean_profiler(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _reset()
    yield
    _reset()


def _trace(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    assert isinstance(doc, dict) and isinstance(doc["traceEvents"], list)
    for e in doc["traceEvents"]:
        assert isinstance(e["name"], str) and isinstance(e["ph"], str)
        if e["ph"] == "X":
            assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float))
            assert e["dur"] >= 0
    return doc["traceEvents"]


def _names(events, ph=None):
    return {e["name"] for e in events if ph is None or e["ph"] == ph}


# ---------------------------------------------------------------------- worker profile
def test_worker_trace_holds_the_operators_and_user_events(tmp_path):
    path = tmp_path / "w.json"
    mx.profiler.set_config(filename=str(path), profile_all=True)
    before_us = time.time_ns() / 1e3
    mx.profiler.set_state("run")
    mx.nd.dot(mx.nd.ones((8, 8)), mx.nd.ones((8, 8))).wait_to_read()
    domain = mx.profiler.Domain("mydomain")
    task = domain.new_task("mytask")
    task.start()
    task.stop()
    with mx.profiler.Event("myevent"):
        pass
    frame = domain.new_frame("myframe")
    frame.start()
    frame.stop()
    counter = domain.new_counter("mycounter", 5)
    counter += 3
    domain.new_marker("mymarker").mark("thread")
    mx.profiler.set_state("stop")
    after_us = time.time_ns() / 1e3
    events = _trace(path)
    x = _names(events, "X")
    assert "aten::mm" in x                        # torch's name of the matrix product
    assert {"mytask", "myevent", "myframe"} <= x
    assert [e["args"]["mycounter"] for e in events if e["name"] == "mycounter"] == [5, 8]
    assert [e["s"] for e in events if e["name"] == "mymarker"] == ["t"]
    # one clock: microseconds since the epoch, for torch's events and ours alike
    timed = [e for e in events if e["ph"] in ("X", "C", "i")]
    assert all(before_us - 1e3 <= e["ts"] <= after_us + 1e3 for e in timed)
    mm = next(e for e in events if e["name"] == "aten::mm")
    task_ev = next(e for e in events if e["name"] == "mytask")
    assert task_ev["ts"] >= mm["ts"] + mm["dur"] - 1.0
    assert [e["ts"] for e in events if "ts" in e and e["ph"] != "M"] == \
        sorted(e["ts"] for e in events if "ts" in e and e["ph"] != "M")


def test_nothing_recorded_outside_run_or_while_paused(tmp_path):
    path = tmp_path / "p.json"
    mx.profiler.set_config(filename=str(path), profile_all=True)
    with mx.profiler.Event("before_run"):
        pass
    mx.profiler.set_state("run")
    mx.profiler.pause()
    with mx.profiler.Event("while_paused"):
        pass
    mx.nd.ones((3,)).exp().wait_to_read()
    mx.profiler.resume()
    with mx.profiler.Event("after_resume"):
        pass
    mx.profiler.set_state("stop")
    names = _names(_trace(path))
    assert "after_resume" in names
    assert not {"before_run", "while_paused", "aten::exp"} & names


def test_continuous_dump_off_writes_only_at_dump(tmp_path):
    path = tmp_path / "d.json"
    mx.profiler.set_config(filename=str(path), continuous_dump=False)
    mx.profiler.set_state("run")
    mx.nd.ones((3,)).exp().wait_to_read()
    mx.profiler.set_state("stop")
    assert not path.exists()
    mx.profiler.dump()
    assert "aten::exp" in _names(_trace(path))


def test_dump_not_finished_keeps_profiling(tmp_path):
    path = tmp_path / "k.json"
    mx.profiler.set_config(filename=str(path))
    mx.profiler.set_state("run")
    mx.nd.ones((3,)).exp().wait_to_read()
    mx.profiler.dump(finished=False)
    assert "aten::exp" in _names(_trace(path))
    mx.nd.ones((3,)).sqrt().wait_to_read()
    mx.profiler.set_state("stop")
    assert {"aten::exp", "aten::sqrt"} <= _names(_trace(path))


def test_set_config_starts_from_the_defaults(tmp_path):
    # MXNet 1.9.1, measured: set_config(filename='t.json') then set_config(aggregate_stats=True)
    # writes the next trace to 'profile.json' (every call starts from the defaults)
    mx.profiler.set_config(filename=str(tmp_path / "t.json"))
    mx.profiler.set_config(aggregate_stats=True)
    mx.profiler.set_state("run")
    mx.profiler.set_state("stop")
    assert (tmp_path / "profile.json").exists() and not (tmp_path / "t.json").exists()


# ---------------------------------------------------------------------- dumps
def test_dumps_is_empty_without_aggregate_stats():
    # MXNet 1.9.1, measured: dumps() == '' when aggregate_stats is off
    mx.profiler.set_config(filename="a.json")
    mx.profiler.set_state("run")
    mx.nd.ones((3,)).exp().wait_to_read()
    mx.profiler.set_state("stop")
    assert mx.profiler.dumps() == ""


def test_dumps_table_and_json_count_the_operators():
    mx.profiler.set_config(filename="a.json", aggregate_stats=True)
    mx.profiler.set_state("run")
    for _ in range(3):
        mx.nd.dot(mx.nd.ones((4, 4)), mx.nd.ones((4, 4))).wait_to_read()
    mx.profiler.set_state("stop")
    table = mx.profiler.dumps()
    assert "Profile Statistics:" in table and "operator" in table
    row = next(line for line in table.splitlines() if line.startswith("aten::mm "))
    assert row.split()[1] == "3"
    stats = json.loads(mx.profiler.dumps(format="json", reset=True))
    assert stats["Time"]["operator"]["aten::mm"]["Count"] == 3
    assert stats["Unit"]["Time"] == "ms"
    assert "aten::mm" not in mx.profiler.dumps()   # reset cleared them


@pytest.mark.parametrize("kwargs", [{"format": "xml"}, {"sort_by": "foo"}, {"reset": 2},
                                    {"ascending": "yes"}])
def test_dumps_refuses_bad_choices(kwargs):
    # MXNet 1.9.1 asserts: "Invalid value provided for format: xml. Support: 'table', 'json'"
    with pytest.raises(ParameterAssertionError, match="Invalid value provided for"):
        mx.profiler.dumps(**kwargs)
    with pytest.raises(AssertionError):
        mx.profiler.dumps(**kwargs)


# ---------------------------------------------------------------------- arguments
@pytest.mark.parametrize("kwargs, match", [
    ({"bogus": 1}, "unknown argument 'bogus'"),
    ({"profile_all": "maybe"}, "profile_all expects a boolean"),
    ({"dump_period": "x"}, "dump_period expects a number"),
    ({"dump_period": -1}, "dump_period expects a number"),
    ({"filename": 3}, "filename expects"),
    ({"profile_process": "bogus"}, "profile_process must be 'worker' or 'server'"),
])
def test_set_config_refuses_what_mxnet_refuses(kwargs, match):
    # MXNet 1.9.1, measured: each of these raises MXNetError ("Cannot find argument 'bogus'",
    # "Invalid Parameter format for profile_all expect boolean but value='maybe'", ...)
    with pytest.raises(mx.MXNetError, match=match):
        mx.profiler.set_config(**kwargs)
    with pytest.raises(ValueError):
        mx.profiler.set_config(**kwargs)


def test_set_config_accepts_mxnet_spellings_of_booleans():
    mx.profiler.set_config(profile_all="True", aggregate_stats=1, continuous_dump="0",
                           dump_period="2.5")
    config = profiler._PROFILES["worker"].config
    assert config["profile_all"] is True and config["aggregate_stats"] is True
    assert config["continuous_dump"] is False and config["dump_period"] == 2.5


def test_bad_state_and_process_are_refused():
    with pytest.raises(mx.MXNetError, match="state must be 'stop' or 'run', got 'bogus'"):
        mx.profiler.set_state("bogus")
    for call in (lambda: mx.profiler.set_state("run", profile_process="x"),
                 lambda: mx.profiler.dump(profile_process="x"),
                 lambda: mx.profiler.pause(profile_process="x"),
                 lambda: mx.profiler.resume(profile_process="x")):
        with pytest.raises(ValueError, match="profile_process must be"):
            call()


def test_server_profile_needs_a_kvstore(monkeypatch):
    # MXNet 1.9.1, measured: "Check failed: kvstoreHandle: KVStoreHandle passed to profiler
    # is null" when no kvstore was created
    monkeypatch.setattr(profiler, "_HANDLE", [None])
    with pytest.raises(StateError, match="mx.kv.create"):
        mx.profiler.set_config(filename="s.json", profile_process="server")
    with pytest.raises(RuntimeError, match="there is none"):
        mx.profiler.set_state("run", profile_process="server")


def test_user_objects_check_their_arguments():
    with pytest.raises(TypeError, match="name must be a str"):
        mx.profiler.Domain(3)
    with pytest.raises(mx.MXNetError, match="scope must be one of"):
        mx.profiler.Domain("d").new_marker("m").mark("galaxy")
    with pytest.raises(StateError, match="stop\\(\\) without start\\(\\)"):
        mx.profiler.Event("e").stop()
    with pytest.raises(TypeError, match="value must be an int"):
        mx.profiler.Domain("d").new_counter("c").set_value(1.5)


def test_deprecated_entry_points_warn(tmp_path):
    with pytest.warns(DeprecationWarning, match="set_config"):
        mx.profiler.profiler_set_config("all", str(tmp_path / "dep.json"))
    with pytest.warns(DeprecationWarning, match="set_state"):
        mx.profiler.profiler_set_state("run")
    with pytest.warns(DeprecationWarning, match="dump"):
        mx.profiler.dump_profile()
    assert (tmp_path / "dep.json").exists()


# ---------------------------------------------------------------------- server profile
def test_server_profile_names_the_keys_of_each_kvstore_call(tmp_path):
    kv = mx.kv.create("local")
    mx.profiler.set_config(filename=str(tmp_path / "srv.json"), profile_process="server")
    mx.profiler.set_state("run", profile_process="server")
    kv.init(["w", "7"], [mx.nd.ones((4, 2)), mx.nd.ones((4, 2)).tostype("row_sparse")])
    for _ in range(3):
        kv.push("w", mx.nd.ones((4, 2)))
        kv.pull("w", out=mx.nd.zeros((4, 2)))
    kv.row_sparse_pull("7", out=mx.nd.sparse.zeros("row_sparse", (4, 2)),
                       row_ids=mx.nd.array([1, 3]))
    mx.profiler.set_state("stop", profile_process="server")
    assert not (tmp_path / "srv.json").exists()
    events = [e for e in _trace(tmp_path / "rank0_srv.json") if e["ph"] == "X"]
    summary = [(e["args"]["op"], e["args"]["keys"]) for e in events]
    assert summary == [("init", ["w", "7"])] + [("push", ["w"]), ("pull", ["w"])] * 3 + \
        [("row_sparse_pull", ["7"])]
    assert all(e["cat"] == "kvstore" and e["name"].startswith(f"kvstore.{e['args']['op']} ")
               for e in events)


def test_kvstore_calls_record_nothing_when_profiling_is_off(tmp_path):
    kv = mx.kv.create("local")
    assert profiler.kvstore_span("push", "w") is profiler._OFF
    kv.init("w", mx.nd.ones((2,)))
    kv.push("w", mx.nd.ones((2,)))
    assert profiler._PROFILES["server"].events == []
    assert profiler._PROFILES["worker"].events == []


def test_worker_trace_shows_kvstore_calls(tmp_path):
    kv = mx.kv.create("local")
    kv.init(5, mx.nd.ones((2,)))
    mx.profiler.set_config(filename=str(tmp_path / "w.json"))
    mx.profiler.set_state("run")
    kv.push(5, mx.nd.ones((2,)))
    mx.profiler.set_state("stop")
    assert "kvstore.push 5" in _names(_trace(tmp_path / "w.json"), "X")


# ---------------------------------------------------------------------- MXNet's nightly test
# Our copy of MXNet 1.9.1's tests/nightly/test_server_profiling.py (Apache License 2.0),
# with `import sparsenet as mx` in place of `import mxnet as mx`; otherwise unchanged.
SERVER_PROFILING = textwrap.dedent("""
    import sparsenet as mx
    import json

    key = '99'
    shape = (1200, 1200)        # bigger than MXNET_KVSTORE_BIGARRAY_BOUND
    kv = mx.kv.create('dist_sync')

    def init_kv():
        # init kv dns keys
        kv.init(key, mx.nd.ones(shape))
        kv.set_optimizer(mx.optimizer.create('sgd'))
        return kv, kv.rank, kv.num_workers

    def test_sync_push_pull():
        kv, my_rank, nworker = init_kv()
        def check_default_keys(kv, my_rank):
            nrepeat = 10
            # checks pull after push in loop, because behavior during
            # consecutive pushes doesn't offer any guarantees
            for i in range(nrepeat):
                kv.push(key, mx.nd.ones(shape, dtype='float32') * (my_rank+1))
                val = mx.nd.zeros(shape, dtype='float32')
                kv.pull(key, out=val)
                mx.nd.waitall()
        check_default_keys(kv, my_rank)

    if __name__ == "__main__":
        server_filename_suffix = 'test_profile_server.json'
        worker_filename_suffix = 'test_profile_worker.json'
        mx.profiler.set_config(filename=server_filename_suffix, profile_all=True, profile_process='server')
        mx.profiler.set_config(filename='rank' + str(kv.rank) + '_' + worker_filename_suffix, profile_all=True, profile_process='worker')
        mx.profiler.set_state(state='run', profile_process='server')
        mx.profiler.set_state(state='run', profile_process='worker')
        test_sync_push_pull()
        mx.profiler.set_state(state='stop', profile_process='server')
        mx.profiler.set_state(state='stop', profile_process='worker')

        import glob, os

        # will only work when launcher mode is local, as used for integration test
        if kv.rank == 0:
            for rank in range(kv.num_workers):
                for suffix in [worker_filename_suffix, server_filename_suffix]:
                    # throws value error if file is not proper json
                    filename = 'rank' + str(rank) + '_' + suffix
                    print(glob.glob('*'), os.getcwd())
                    with open(filename, 'r') as f:
                        j = json.load(f)
""")

LAUNCH_WALL = 240  # seconds; the 3-rank run takes about 12 s here


def test_mxnet_server_profiling_test_on_three_ranks(tmp_path):
    script = tmp_path / "test_server_profiling.py"
    script.write_text(SERVER_PROFILING)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "sparsenet.cli", "launch", "-n", "3", "--timeout", "120",
           script.name]
    try:
        done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=LAUNCH_WALL)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the 3-rank run did not finish within {LAUNCH_WALL} s:\n{exc.stdout}\n"
                    f"{exc.stderr}")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for rank in range(3):
        server = [e for e in _trace(tmp_path / f"rank{rank}_test_profile_server.json")
                  if e["ph"] == "X"]
        ops = [e["args"]["op"] for e in server if e["args"]["keys"] == ["99"]]
        assert ops.count("push") == 10 and ops.count("pull") == 10 and ops.count("init") == 1
        assert ops.count("allreduce") == 10      # the collective under each push
        worker = _names(_trace(tmp_path / f"rank{rank}_test_profile_worker.json"), "X")
        assert "kvstore.push 99" in worker and any(n.startswith("aten::") for n in worker)

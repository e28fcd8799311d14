"""``sparsenet train``'s reading pipeline (issue 33, per-step cost): batches handed over a
parsed chunk at a time (``LibSVMIter.next_group``), labels checked for a whole group in the
reader thread (``training_groups``), and reading started before torch loads (``prepare``:
the first chunks of DATA and VAL, or the size-inferring scan).

Expected values come from the generated matrices (NumPy/SciPy), not from the reader.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import sparsenet as mx
import sparsenet.cli.train as train_cmd
import sparsenet.io.libsvm.stream as stream_mod
from sparsenet.cli.data_stream import batch_groups, training_groups
from sparsenet.cli.main import main
from tests.cli.libsvm_data import FEATURES, make_task, write_libsvm


def _matrix(rows, seed=0, features=40):
    rng = np.random.default_rng(seed)
    X = sp.random(rows, features, density=0.15, format="csr", random_state=seed,
                  dtype=np.float32)
    X.data = rng.uniform(0.5, 1.5, size=X.nnz).astype(np.float32)
    y = rng.integers(0, 2, size=rows)
    return X, y


@pytest.mark.parametrize("rows, batch, chunk, cache, several", [
    (1000, 64, 2048, 0, False),   # streamed: many chunks, batches cut across chunk ends
    (1000, 7, 4096, 0, True),     # streamed: a chunk completes several batches
    (1000, 300, 1024, 0, False),  # a batch larger than a chunk
    (1000, 64, 2048, 1 << 30, True),  # cached part: ready-made batches, handed out in groups
    (10, 64, 2048, 0, False),     # one short batch
])
def test_next_group_gives_every_row_once_in_file_order(tmp_path, rows, batch, chunk, cache,
                                                       several):
    X, y = _matrix(rows)
    path = write_libsvm(tmp_path / "d.svm", X, y)
    it = mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(40,), batch_size=batch,
                          round_batch=False, chunk_size=chunk, cache_bytes=cache)
    groups = []
    while True:
        group = it.next_group()
        if not group:
            break
        groups.append(group)
    flat = [b for g in groups for b in g]
    sizes = [b.data[0].shape[0] for b in flat]
    assert sizes == [batch] * (rows // batch) + ([rows % batch] if rows % batch else [])
    dense = np.concatenate([b.data[0].asnumpy() for b in flat])
    written = X.copy()  # the values as write_libsvm writes them (6 significant digits)
    written.data = np.array([float(f"{v:.6g}") for v in X.data], dtype=np.float32)
    np.testing.assert_array_equal(dense, written.toarray())
    np.testing.assert_array_equal(np.concatenate([b.label[0].asnumpy() for b in flat]), y)
    assert it.next_group() == []  # the end stays the end
    assert any(len(g) > 1 for g in groups) == several  # several batches per hand-over


def test_training_groups_check_a_group_at_once_and_name_the_row(tmp_path):
    X, y = _matrix(2000, seed=1)
    y = y.astype(float)
    y[1199] = 3.0  # not a binary label: file line 1200
    path = str(write_libsvm(tmp_path / "d.svm", X, y))
    watch = {"min_index": np.inf, "max_abs": 0.0}
    steps = []
    with pytest.raises(mx.base.InvalidArgumentError, match=r"d\.svm:1200: a binary model"):
        for group in training_groups(batch_groups(path, 40, 32, mx.cpu()), "binary", None,
                                     path, None, watch):
            steps.extend(group)
    # the file is one cached part: groups of 16 batches of 32 rows; the third holds the
    # bad row, so two groups (1024 rows) came before the error
    assert [s.labels.size for s in steps] == [32] * 32
    got = np.concatenate([s.y.asnumpy() for s in steps])
    np.testing.assert_array_equal(got, y[:1024].astype(np.float32))
    np.testing.assert_array_equal(np.concatenate([s.labels for s in steps]), y[:1024])
    assert watch["min_index"] == X[:1024].indices.min()
    assert watch["max_abs"] == pytest.approx(np.abs(X[:1024].data).max(), rel=1e-5)


def test_a_format_error_in_the_reader_thread_reports_file_and_line(tmp_path, capsys):
    X, y = _matrix(3000, seed=2)
    path = write_libsvm(tmp_path / "d.svm", X, y)
    lines = open(path).read().splitlines(keepends=True)
    lines[2499] = "1 4:0.5 oops\n"
    open(path, "w").write("".join(lines))
    code = main(["train", str(path), "--features", "40", "--out", str(tmp_path / "m"),
                 "--quiet", "--batch-size", "64"])
    err = capsys.readouterr().err
    assert code == 1
    assert f"{path}:2500:" in err, err


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_task(tmp_path_factory.mktemp("pipeline"), "binary", rows=3000)


def _weights(out):
    config = json.loads(open(os.path.join(out, "model.json")).read())
    params = mx.nd.load(os.path.join(out, config["params_file"]))
    return {k: v.asnumpy() for k, v in params.items()}


def test_the_first_epoch_takes_over_the_chunks_read_before_torch(data, tmp_path, monkeypatch):
    """``prepare`` starts DATA's and VAL's streams; the iterators claim them, and the run
    trains the same weights as one that reads nothing early."""
    train, val, _ = data
    claimed = []
    real_claim = stream_mod.claim

    def claim(*args, **kwargs):
        got = real_claim(*args, **kwargs)
        claimed.append((args[0][0].path, got is not None))
        return got

    monkeypatch.setattr("sparsenet.io.libsvm.iterator.claim", claim)
    flags = ["--features", str(FEATURES), "--val", val, "--quiet", "--batch-size", "64"]
    early = tmp_path / "early"
    assert main(["train", train, "--out", str(early), *flags]) == 0
    assert (train, True) in claimed and (val, True) in claimed, claimed
    assert not stream_mod._started
    monkeypatch.setattr(train_cmd, "prepare", lambda args: None)
    plain = tmp_path / "plain"
    assert main(["train", train, "--out", str(plain), *flags]) == 0
    a, b = _weights(early), _weights(plain)
    assert a.keys() == b.keys()
    for key in a:
        assert a[key].tobytes() == b[key].tobytes(), key


def test_a_stream_no_reader_took_is_closed(data, tmp_path, monkeypatch):
    train, _, _ = data
    out = tmp_path / "m"
    assert main(["train", train, "--features", str(FEATURES), "--out", str(out),
                 "--quiet"]) == 0
    made = []
    real = stream_mod.head_start
    monkeypatch.setattr(stream_mod, "head_start",
                        lambda *a, **k: made.append(real(*a, **k)) or made[-1])
    # --out already holds a model: the run stops before any reader
    assert main(["train", train, "--features", str(FEATURES), "--out", str(out),
                 "--quiet"]) == 1
    assert made and all(s._closed for s in made)
    assert not stream_mod._started  # and forgotten


def test_the_scan_started_before_torch_infers_the_sizes(data, tmp_path, monkeypatch,
                                                        capsys):
    train, _, _ = data
    import sparsenet.cli.data_scan as data_scan

    calls = []
    real = data_scan.scan_data
    monkeypatch.setattr(data_scan, "scan_data", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert main(["train", train, "--out", str(tmp_path / "m"), "--quiet"]) == 0
    assert len(calls) == 1
    lines = open(train).read().splitlines()
    largest = max(int(tok.split(":")[0]) for line in lines for tok in line.split()[1:])
    assert f"--features {largest + 1} inferred" in capsys.readouterr().err


def test_a_scan_error_still_names_file_and_line(tmp_path, capsys):
    path = tmp_path / "d.svm"
    path.write_text("1 0:1\n0 2:x\n")
    assert main(["train", str(path), "--out", str(tmp_path / "m"), "--quiet"]) == 1
    assert f"{path}:2:" in capsys.readouterr().err


_CHILD = """
import json, sys
from sparsenet.cli.main import build_parser
args = build_parser().parse_args(sys.argv[1:])
args._prepare(args)
early = [s is not None for s in args.early]
print(json.dumps({"torch": "torch" in sys.modules, "early": early,
                  "scan": args.scan_job is not None}))
"""


@pytest.mark.parametrize("flags, early, scan", [
    (["--features", "40"], [True], False),
    (["--features", "40", "--val", "VAL"], [True, True], False),
    ([], [], True),  # sizes to infer: the scan instead
])
def test_prepare_reads_without_importing_torch(tmp_path, flags, early, scan):
    X, y = _matrix(50)
    path = str(write_libsvm(tmp_path / "d.svm", X, y))
    flags = [path if f == "VAL" else f for f in flags]
    out = subprocess.run([sys.executable, "-c", _CHILD, "train", path, "--out",
                          str(tmp_path / "m"), *flags], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"torch": False, "early": early, "scan": scan}


def test_train_imports_no_scipy(tmp_path):
    """SciPy (a third of a second to import) is loaded only by what converts to or from it."""
    X, y = _matrix(200)
    path = str(write_libsvm(tmp_path / "d.svm", X, y))
    code = ("import json, sys\nfrom sparsenet.cli.main import main\n"
            "code = main(sys.argv[1:])\n"
            "print(json.dumps({'code': code, 'scipy': 'scipy' in sys.modules}))")
    out = subprocess.run([sys.executable, "-c", code, "train", path, "--features", "40",
                          "--val", path, "--out", str(tmp_path / "m"), "--quiet"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"code": 0, "scipy": False}


def test_scipy_input_still_converts_after_lazy_import():
    """``mx.nd.array`` and ``csr_matrix`` recognise a SciPy matrix (SciPy loaded by the
    caller), and ``asscipy`` loads SciPy itself."""
    m = sp.csr_matrix(np.array([[0, 2.0], [3.0, 0]], dtype=np.float32))
    x = mx.nd.array(m)
    assert x.stype == "csr"
    np.testing.assert_array_equal(x.asscipy().toarray(), m.toarray())


def test_start_up_runs_without_garbage_collection_and_restores_it():
    import gc

    from sparsenet.cli.head_start import quiet_heap, settle_heap

    assert gc.isenabled()
    before = gc.get_freeze_count()
    with quiet_heap():
        assert not gc.isenabled()
        junk = [[] for _ in range(1000)]
        settle_heap()
        assert gc.isenabled() and gc.get_freeze_count() >= before + len(junk)
        settle_heap()  # once only
    assert gc.isenabled() and gc.get_freeze_count() == before
    settle_heap()  # outside: nothing
    assert gc.get_freeze_count() == before


def test_a_train_run_leaves_the_collector_as_it_found_it(data, tmp_path):
    import gc

    train, _, _ = data
    before = gc.get_freeze_count()
    assert main(["train", train, "--features", str(FEATURES), "--out", str(tmp_path / "m"),
                 "--quiet"]) == 0
    assert gc.isenabled() and gc.get_freeze_count() == before
    assert main(["train", train, "--features", str(FEATURES), "--out", str(tmp_path / "m"),
                 "--quiet"]) == 1  # an error before settling restores it too
    assert gc.isenabled() and gc.get_freeze_count() == before


_PROGRAM = """
import atexit, sys
mark = sys.argv.pop(1)
atexit.register(lambda: open(mark, "w").write("ran"))
sys.argv[0] = "sparsenet"
from sparsenet.cli.main import program
sys.exit(program())
"""


@pytest.mark.parametrize("case", ["ok", "error"])
def test_the_program_flushes_runs_exit_handlers_and_keeps_the_status(data, tmp_path, case):
    """``program()`` ends the process without the interpreter's teardown once torch is
    loaded: what was printed arrives, atexit handlers run, the status is the command's."""
    train, _, _ = data
    out = tmp_path / "m"
    if case == "error":
        out.mkdir()
        (out / "model.json").write_text("{}")  # --out already holds a model
    mark = tmp_path / "mark"
    got = subprocess.run([sys.executable, "-c", _PROGRAM, str(mark), "train", train,
                          "--features", str(FEATURES), "--out", str(out), "--quiet"],
                         capture_output=True, text=True, timeout=300)
    assert mark.read_text() == "ran"
    if case == "ok":
        assert got.returncode == 0, got.stderr
        assert got.stdout.startswith("epoch 1/1 ") and got.stdout.endswith("\n")
        assert (out / "metrics.jsonl").read_text().count('"epoch"') == 1
    else:
        assert got.returncode == 1
        assert "sparsenet: error: --out" in got.stderr and "already holds a model" in got.stderr

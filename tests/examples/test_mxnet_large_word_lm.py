"""MXNet 1.9.1's own ``example/rnn/large_word_lm`` on sparsenet, unchanged but for the import.

The example's files are taken from a git mirror of Apache MXNet (``git archive v1.9.1``, as
``tools/run_mxnet_sparse_suite.py`` takes MXNet's unit tests), their imports are pointed at
sparsenet (``import mxnet as mx`` -> ``import sparsenet as mx``, nothing else), the Cython
sampler is built with ``python setup.py build_ext --inplace``, and ``train.py`` runs in a
child process on a tiny generated corpus (``examples/large_word_lm/make_corpus.py``) with
``mx.gpu`` mapped to ``mx.cpu``: one epoch of training with sampled softmax, a checkpoint,
and the held-out perplexity with the full softmax.

Skipped when the mirror, git, Cython or a C++ compiler is missing (``SPARSENET_MXNET_MIRROR``
names another mirror).

The runs are deterministic (the example seeds NumPy and ``mx.random``, reads its files in
order, and its sampler is a default-seeded C++ generator). With the initial weights drawn
from NumPy in both libraries (the runner replaces ``mx.init.Xavier._init_weight`` by the same
uniform law, ``factor_type='out'``, drawn with ``np.random.RandomState(crc32(name))``) and no
dropout, MXNet 1.9.1 and sparsenet print the same held-out perplexity to every digit and the
same training losses to float32 rounding. MXNet's figures were
measured with the same runner script, importing ``mxnet`` instead::

    MXNET_MKLDNN_ENABLED=0 OMP_NUM_THREADS=1 /work/mxnet-venv/bin/python runner.py mx \\
        EXAMPLE_DIR ARGS --dropout 0 [--gpus 0,1]
"""
import hashlib
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIRROR = os.environ.get("SPARSENET_MXNET_MIRROR", "/work/.mirror/apache+mxnet/repo")
REF = "v1.9.1"
EXAMPLE = "example/rnn/large_word_lm"
TIMEOUT = 600

CORPUS = dict(vocab_size=300, num_sentences=200, num_files=2, seed=0)
CORPUS_SHA256 = {  # the corpus MXNet's figures were measured on
    "vocab.txt": "804e6f56b98dd34cc5b489d95cbed0e423ba6a2848fcbf28d4fc0ba688c5e862",
    "test/test.txt": "367c3bab85963ae17c96ebda14a09b9e4525bc213e5a34f6a679aa41719245b3",
    "train/train-00000-of-00002.txt":
        "0363ec4ef80637a0fc21cc9da9770587563d892557ed18890edf29d9f31d05b5",
    "train/train-00001-of-00002.txt":
        "33e567cb04dcc9f43b7db9eaaa5bba36994335ab7d282d33d415b006af6a13ad",
}
SIZES = ["--emsize", "16", "--nhid", "32", "--num-proj", "16", "--k", "32", "--bptt", "5",
         "--batch-size", "4", "--epochs", "1", "--log-interval", "50"]

# measured with MXNet 1.9.1 (see the module docstring), two CPU contexts, no dropout
MXNET_TRAIN_LOSS = {50: 3.9200205, 100: 3.3054514}  # 'Iter[0] Batch [n] loss x'
MXNET_TEST_PPL = 132.5230903

RUNNER = '''"""Run the example's train.py: mx.gpu -> mx.cpu; with --numpy-init, NumPy initial weights."""
import os, runpy, sys, zlib
import numpy as np
lib = sys.argv.pop(1)
numpy_init = sys.argv[1] == "--numpy-init"
if numpy_init:
    sys.argv.pop(1)
if lib == "mx":
    import mxnet as mx
else:
    import sparsenet as mx
mx.gpu = mx.cpu


def numpy_xavier(self, name, arr):
    """Xavier(factor_type='out', rnd_type='uniform', magnitude=3)'s weights, drawn from NumPy."""
    shape = arr.shape
    fan_out = shape[0] * (np.prod(shape[2:]) if len(shape) > 2 else 1)
    scale = np.sqrt(3.0 / fan_out)
    rng = np.random.RandomState(zlib.crc32(str(name).encode()))
    arr[:] = rng.uniform(-scale, scale, shape).astype(np.float32)


if numpy_init:
    mx.init.Xavier._init_weight = numpy_xavier
d = os.path.abspath(sys.argv[1])
sys.path.insert(0, d)
sys.argv = [os.path.join(d, "train.py")] + sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _git(*args):
    return subprocess.run(["git", "-C", MIRROR, *args], capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The example's directory: extracted, imports rewritten, sampler built, plus a corpus."""
    if shutil.which("git") is None or not os.path.isdir(MIRROR):
        pytest.skip(f"no MXNet git mirror at {MIRROR} (set SPARSENET_MXNET_MIRROR)")
    if _git("cat-file", "-e", f"{REF}:{EXAMPLE}/train.py").returncode != 0:
        pytest.skip(f"the mirror at {MIRROR} has no {REF}:{EXAMPLE}")
    if importlib.util.find_spec("Cython") is None:
        pytest.skip("Cython is not installed: the example's sampler is a Cython extension")
    if shutil.which("c++") is None and shutil.which("g++") is None:
        pytest.skip("no C++ compiler for the example's sampler")
    tmp = tmp_path_factory.mktemp("large_word_lm")
    archive = _git("archive", "--format=tar", REF, EXAMPLE)
    assert archive.returncode == 0, archive.stderr.decode()
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(tmp, filter="data")
    src = tmp / EXAMPLE
    rewrite = _load(os.path.join(ROOT, "tools", "run_mxnet_sparse_suite.py"),
                    "_mxnet_suite").rewrite_imports
    for path in src.glob("*.py"):
        path.write_text(rewrite(path.read_text()))
    build = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=src,
                           capture_output=True, text=True, timeout=TIMEOUT)
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    (tmp / "runner.py").write_text(RUNNER)
    make_corpus = _load(os.path.join(ROOT, "examples", "large_word_lm", "make_corpus.py"),
                        "_make_corpus").make_corpus
    corpus = tmp / "corpus"
    paths = make_corpus(str(corpus), **CORPUS)
    got = {k: hashlib.sha256((corpus / k).read_bytes()).hexdigest() for k in CORPUS_SHA256}
    assert got == CORPUS_SHA256, "the generated corpus changed: re-measure MXNet's figures"
    return tmp, src, paths


def _train(example, name, *extra, numpy_init=False):
    tmp, src, paths = example
    ckp = tmp / f"checkpoint_{name}"
    cmd = [sys.executable, str(tmp / "runner.py"), "sn"] + (["--numpy-init"] if numpy_init
                                                            else [])
    cmd += [str(src), "--data", paths["train"], "--test", paths["test"], "--vocab",
            paths["vocab"], "--checkpoint-dir", str(ckp)] + SIZES + list(extra)
    env = dict(os.environ, OMP_NUM_THREADS="1", SPARSENET_STORAGE_FALLBACK="warn")
    proc = subprocess.run(cmd, cwd=str(tmp), capture_output=True, text=True, env=env,
                          timeout=TIMEOUT)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-4000:]
    assert "Training completed." in log, log[-4000:]
    return ckp, log


def _ppl(log):
    found = re.findall(r"Iter\[0\]\s+CE loss ([0-9]+\.[0-9]+), ppl ([0-9]+\.[0-9]+)", log)
    assert len(found) == 1, log[-3000:]
    return float(found[0][1])


@pytest.mark.slow
def test_same_losses_and_perplexity_as_mxnet_from_the_same_weights(example):
    ckp, log = _train(example, "numpy_init", "--dropout", "0", "--gpus", "0,1",
                      numpy_init=True)
    for nbatch, want in MXNET_TRAIN_LOSS.items():
        got = re.findall(rf"Iter\[0\] Batch \[{nbatch}\] \tloss ([0-9.]+)", log)
        assert got and float(got[0]) == pytest.approx(want, rel=1e-5), (nbatch, got)
    assert _ppl(log) == pytest.approx(MXNET_TEST_PPL, rel=1e-5)
    assert sorted(os.listdir(ckp)) == ["ckp-0000.params", "ckp-symbol.json"]
    # the only storage fallback is MXNet's too: the full-softmax FullyConnected on the
    # row_sparse decoder weight and bias
    nodes = set(re.findall(r"storage fallback: .*? at symbol node '([^']+)'", log))
    assert nodes == {"decode_fc"}, nodes


@pytest.mark.slow
def test_unchanged_example_trains_saves_and_evaluates(example):
    # the example as it is (its own Xavier draws and dropout 0.1), one context
    ckp, log = _train(example, "plain")
    assert sorted(os.listdir(ckp)) == ["ckp-0000.params", "ckp-symbol.json"]
    assert re.search(r"Iter\[0\] Batch \[50\]\tSpeed: [0-9.]+ samples/sec", log), log[-3000:]
    ppl = _ppl(log)
    assert 1.0 < ppl < CORPUS["vocab_size"]  # better than guessing uniformly
    import sparsenet as mx
    _, args, _ = mx.model.load_checkpoint(str(ckp / "ckp"), 0)
    assert args["encoder_weight"].stype == "row_sparse"
    assert args["encoder_weight"].shape == (CORPUS["vocab_size"], 16)
    assert "lstmp0_init_h" not in args and "sample" not in args  # states are not saved

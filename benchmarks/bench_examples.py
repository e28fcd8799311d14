"""MXNet 1.9.1's sparse example programs side by side: sparsenet vs MXNet, samples/s.

    python benchmarks/bench_examples.py [--programs wide_deep,factorization_machine,...]
        [--repeats 3] [--threads 1] [--mxnet-python /tmp/mx/bin/python]
        [--data-dir DIR] [--fm-input-size 1000000]
        [--lm-vocab-size 10000] [--lm-sentences 8000] [--lm-mxnet-dir DIR]

The programs are ``tests/examples/*_program.py``: our own code making the same
``mx`` calls in the same order as MXNet's ``example/sparse/`` programs
(``linear_classification``, ``factorization_machine``, ``matrix_factorization``,
``wide_deep``), with train.py's default model and batch sizes, on generated
data in each program's format (``tests/examples/recipes.py``, recipe ``bench``):

* wide_deep: 32,000 UCI Adult rows, batch 100, Adam;
* linear_classification: 200,000 Avazu LibSVM rows (15 features, 1,000,001
  columns), batch 8192, SGD, the custom weighted softmax loss;
* factorization_machine: 100,000 Criteo LibSVM rows (39 features,
  ``--fm-input-size`` columns, MXNet's default 1,000,000), batch 1000, factor 16,
  Adam through kvstore 'local';
* matrix_factorization: 200,000 MovieLens ratings, batch 128, factor 128, SGD
  with momentum through kvstore 'device', PrefetchingIter.

Every run is a fresh process (``tests/examples/run_mxnet.py``; for MXNet the name
``sparsenet`` resolves to ``mxnet``, so both run the same file), one epoch, with
``OMP_NUM_THREADS`` as ``--threads``; samples/s counts the training loop only
(``forward_backward``, ``update``, ``update_metric``, Speedometer; ``prepare`` for
the programs that call it; ``waitall`` at the end), not parsing, binding or
``score``. The two libraries alternate (sparsenet first on even repeats); the
table gives the median of each and the median of the per-pair ratios
(sparsenet / MXNet, >= 1: sparsenet at least as fast) with their range, the same
ratios from process CPU time over the same loop (every thread counted: MXNet's
engine workers and our prefetching thread; on a shared machine other work inflates
wall time, not CPU time), and each library's metric
of ``score`` on the test file after the epoch, which should agree (same data,
same initial weights).

The language model (program ``large_word_lm``, MXNet's ``example/rnn/large_word_lm``)
is compared differently: our own Gluon program ``examples/large_word_lm/train.py`` on
sparsenet against MXNet's own ``train.py`` (Module, symbols, Cython sampler) on MXNet,
run unchanged through ``examples/large_word_lm/run_mxnet_example.py`` (``mx.gpu``
mapped to ``mx.cpu``, ``MXNET_MKLDNN_ENABLED=0``). Both train one epoch on the same
corpus from ``examples/large_word_lm/make_corpus.py`` (``--lm-vocab-size`` words,
``--lm-sentences`` sentences, a tenth as many held out) with the issue's settings:
emsize 64, nhid 256, num-proj 64, k 1024, bptt 20, batch 32, dropout 0.1, AdaGrad
lr 0.1. Words/s counts the training loop (every batch position, as MXNet's
Speedometer does), not reading the corpus, binding, saving or the evaluation; the
metric is each one's held-out perplexity with the full softmax (batch 1). The runs
do not share initial weights or samples, so the perplexities agree only roughly.
MXNet's example is extracted from the MXNet mirror (``--mxnet-repo``) and its
Cython sampler built with ``--mxnet-python`` (which needs Cython) unless
``--lm-mxnet-dir`` names a directory where that was done.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tests.examples import recipes  # noqa: E402  (no mx import: data files only)

RUNNER = os.path.join(ROOT, "tests", "examples", "run_mxnet.py")
LM_DIR = os.path.join(ROOT, "examples", "large_word_lm")
PROGRAMS = ("wide_deep", "linear_classification", "factorization_machine",
            "matrix_factorization", "large_word_lm")
LM_SIZES = ["--emsize", "64", "--nhid", "256", "--num-proj", "64", "--k", "1024",
            "--bptt", "20", "--batch-size", "32", "--epochs", "1", "--log-interval", "1000"]
METRIC = {"wide_deep": ("val_acc", "acc"), "linear_classification": ("eval_nll", "nll"),
          "factorization_machine": ("eval_log_loss", "log-loss"),
          "matrix_factorization": ("eval_mse", "mse"),
          "large_word_lm": ("test_ppl", "held-out ppl")}


def run_once(python, library, program, data_dir, threads):
    """One fresh-process training run; its result dict, or ``{'error': last line}``."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads),
               MXNET_STORAGE_FALLBACK_LOG_VERBOSE="0", PYTHONPATH=ROOT)
    env.pop("SPARSENET_STORAGE_FALLBACK", None)
    proc = subprocess.run([python, RUNNER, program, "bench", data_dir, "--no-data",
                           "--library", library], env=env, capture_output=True, text=True)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": err[:120]}
    return json.loads(lines[-1])


def run_lm_once(python, library, data_dir, threads, mxnet_dir):
    """One fresh-process run of the language model: ours on sparsenet, or MXNet's own
    example on MXNet; ``{'samples', 'seconds', 'test_ppl'}`` or ``{'error': last line}``."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads),
               MXNET_STORAGE_FALLBACK_LOG_VERBOSE="0", MXNET_MKLDNN_ENABLED="0",
               PYTHONPATH=os.path.join(ROOT, "src"))
    env.pop("SPARSENET_STORAGE_FALLBACK", None)
    files = ["--data", os.path.join(data_dir, "train", "*"),
             "--test", os.path.join(data_dir, "test", "test.txt"),
             "--vocab", os.path.join(data_dir, "vocab.txt")]
    if library == "sparsenet":
        cmd = [python, os.path.join(LM_DIR, "train.py"), "--json"] + files + LM_SIZES
    else:
        ckp = tempfile.mkdtemp(prefix="bench_lm_ckp_")
        cmd = ([python, os.path.join(LM_DIR, "run_mxnet_example.py"), mxnet_dir] + files
               + LM_SIZES + ["--checkpoint-dir", os.path.join(ckp, "ckp")])
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": err[:120]}
    res = json.loads(lines[-1])
    return {"samples": res["words"], "seconds": res["train_seconds"],
            "test_ppl": res["test_ppl"]}


def mxnet_lm_example(mxnet_python, repo, dest):
    """Extract MXNet 1.9.1's ``example/rnn/large_word_lm`` from the git mirror ``repo``
    into ``dest`` and build its Cython sampler in place; return the example directory."""
    example = os.path.join(dest, "example", "rnn", "large_word_lm")
    if not os.path.isdir(example):
        os.makedirs(dest, exist_ok=True)
        archive = subprocess.run(["git", "-C", repo, "archive", "v1.9.1",
                                  "example/rnn/large_word_lm"], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)
    if not any(f.startswith("log_uniform") and f.endswith(".so") for f in os.listdir(example)):
        subprocess.run([mxnet_python, "setup.py", "build_ext", "--inplace"], cwd=example,
                       capture_output=True, check=True)
    return example


def metric_of(program, result):
    key, _ = METRIC[program]
    return result[key][-1]


def compare(program, repeats, ours_python, mxnet_python, threads, data_dir, mxnet_dir=None):
    """Per-repeat samples/s of both libraries (alternating) and their last metrics.

    Returns ``(ours, theirs, metrics)``: ``ours``/``theirs`` hold one
    ``(wall samples/s, CPU samples/s)`` per repeat (``None`` for a failed run; the CPU
    rate is ``None`` where the run reports no ``cpu_seconds``).
    """
    ours, theirs, metrics = [], [], {}
    for r in range(repeats):
        order = [("sparsenet", ours_python, ours), ("mxnet", mxnet_python, theirs)]
        if r % 2:
            order.reverse()
        for library, python, out in order:
            if python is None:
                continue
            if program == "large_word_lm":
                res = run_lm_once(python, library, data_dir, threads, mxnet_dir)
            else:
                res = run_once(python, library, program, data_dir, threads)
            if "error" in res:
                metrics[library] = res["error"]
                out.append(None)
                continue
            cpu = res.get("cpu_seconds")
            out.append((res["samples"] / res["seconds"],
                        res["samples"] / cpu if cpu else None))
            metrics[library] = metric_of(program, res)
    return ours, theirs, metrics


def fmt(x):
    return "failed" if x is None else f"{x:,.0f}"


def _ratios(ours, theirs):
    """``'**median** [lowest, highest]'`` of the per-pair ratios ours / theirs (pairs with
    both values), ``'-'`` without any."""
    pairs = sorted(x / y for x, y in zip(ours, theirs) if x is not None and y is not None)
    if not pairs:
        return "-"
    return f"**{statistics.median(pairs):.2f}** [{pairs[0]:.2f}, {pairs[-1]:.2f}]"


def summarise(ours, theirs):
    """The table cells of one program from :func:`compare`'s per-repeat
    ``(wall samples/s, CPU samples/s)`` pairs (``theirs`` None: MXNet not run).

    Wall samples/s are the medians of each library's runs; the ratios are per pair
    of runs (repeat ``r`` of each library), as median and range, from wall time
    and from process CPU time (which other work on a shared machine does not
    inflate).

    >>> row = summarise([(300.0, 600.0), (200.0, 500.0)], [(100.0, 300.0), (200.0, 250.0)])
    >>> row['ours'], row['theirs'], row['wall'], row['cpu']
    ('250', '150', '**2.00** [1.00, 3.00]', '**2.00** [2.00, 2.00]')
    >>> summarise([None], None)['ours'], summarise([None], None)['wall']
    ('failed', '-')
    """
    def median(runs, k):
        ok = [r[k] for r in runs if r is not None and r[k] is not None]
        return statistics.median(ok) if ok else None

    def column(runs, k):
        return [r[k] if r is not None else None for r in runs]

    row = {"ours": fmt(median(ours, 0)), "theirs": "-", "wall": "-", "cpu": "-"}
    if theirs is not None:
        row["theirs"] = fmt(median(theirs, 0))
        row["wall"] = _ratios(column(ours, 0), column(theirs, 0))
        row["cpu"] = _ratios(column(ours, 1), column(theirs, 1))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--mxnet-python", default=None)
    ap.add_argument("--data-dir", default=None, help="where the data files go (default: a "
                    "temporary directory)")
    ap.add_argument("--fm-input-size", type=int, default=1000000,
                    help="columns of the factorization machine's data (MXNet's default)")
    ap.add_argument("--lm-vocab-size", type=int, default=10000,
                    help="vocabulary of the language model's generated corpus")
    ap.add_argument("--lm-sentences", type=int, default=8000,
                    help="training sentences of the language model's generated corpus")
    ap.add_argument("--lm-mxnet-dir", default=None, help="MXNet's large_word_lm example, "
                    "its sampler built (default: extracted from --mxnet-repo and built)")
    ap.add_argument("--mxnet-repo", default="/work/.mirror/apache+mxnet/repo",
                    help="git mirror of MXNet (for MXNet's large_word_lm example)")
    args = ap.parse_args()
    base = args.data_dir or tempfile.mkdtemp(prefix="bench_examples_")
    print(f"\nMXNet 1.9.1's sparse example programs, one epoch per fresh process, "
          f"{args.threads} thread(s), median of {args.repeats}; training-loop samples/s\n")
    print("| program | sparsenet samples/s | MXNet 1.9.1 samples/s | sparsenet / MXNet "
          "(median of pairs [lowest, highest]) | same, by CPU time | test-set metric after "
          "the epoch (sparsenet / MXNet) |")
    print("|---|---:|---:|---:|---:|---|")
    for program in args.programs.split(","):
        data_dir = os.path.join(base, program)
        mxnet_dir = None
        if program == "large_word_lm":
            subprocess.run([sys.executable, os.path.join(LM_DIR, "make_corpus.py"), data_dir,
                            "--vocab-size", str(args.lm_vocab_size),
                            "--sentences", str(args.lm_sentences)],
                           check=True, capture_output=True)
            if args.mxnet_python:
                mxnet_dir = args.lm_mxnet_dir or mxnet_lm_example(
                    args.mxnet_python, args.mxnet_repo, os.path.join(base, "mxnet_example"))
        else:
            overrides = ({"input_size": args.fm_input_size}
                         if program == "factorization_machine" else {})
            kwargs = recipes.prepare(program, "bench", data_dir, **overrides)
            with open(os.path.join(data_dir, "kwargs.json"), "w") as f:
                json.dump(kwargs, f)
        ours, theirs, metrics = compare(program, args.repeats, sys.executable,
                                        args.mxnet_python, args.threads, data_dir, mxnet_dir)
        row = summarise(ours, theirs if args.mxnet_python else None)
        name, label = program, METRIC[program][1]
        m_ours = metrics.get("sparsenet")
        m_theirs = metrics.get("mxnet", "-")
        digits = 1 if program == "large_word_lm" else 4
        shown = " / ".join(f"{m:.{digits}f}" if isinstance(m, float) else str(m)
                           for m in (m_ours, m_theirs))
        if program == "large_word_lm":
            name = f"large_word_lm (words/s; {args.lm_vocab_size:,} words)"
        print(f"| {name} | {row['ours']} | {row['theirs']} | {row['wall']} | {row['cpu']} | "
              f"{label}: {shown} |", flush=True)


if __name__ == "__main__":
    main()

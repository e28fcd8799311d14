"""``examples/large_word_lm``: our LSTMP language model trains on a generated corpus.

The program (``examples/large_word_lm/train.py``) runs in a child process, as a user
runs it, on a small corpus from ``make_corpus.py`` whose words follow a hidden Markov
chain of 20 classes (each class moves to one of 2 others). One epoch must bring the
held-out perplexity (full softmax) well below that of the best unigram model, computed
here with NumPy from the files alone: a model that only learned word frequencies cannot
pass, and one that learned nothing is near the vocabulary size.

A second test runs a few training steps from fixed NumPy weights without dropout
(``fixed_steps.py``) and compares each step's loss and clipped-gradient norm with the
figures measured from MXNet 1.9.1 running the same file.
"""
import collections
import glob
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "large_word_lm")
CORPUS = ["--vocab-size", "202", "--sentences", "800", "--test-sentences", "100",
          "--files", "2", "--seed", "0", "--classes", "20", "--fanout", "2", "--zipf", "1.0"]


def _child(args, timeout=300):
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               SPARSENET_STORAGE_FALLBACK="error", PYTHONPATH=os.path.join(ROOT, "src"))
    proc = subprocess.run([sys.executable] + args, env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _unigram_cross_entropy(train_glob, test_path):
    """Nats per target of the add-one unigram model of the training targets on the test
    targets (targets: every word, then the closing ``<S>`` of each sentence)."""
    def targets(paths):
        for path in paths:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    yield from line.split() + ["<S>"]
    counts = collections.Counter(targets(sorted(glob.glob(train_glob))))
    test = list(targets([test_path]))
    vocab = set(counts) | set(test)
    total = sum(counts.values()) + len(vocab)
    logp = np.log(np.array([counts[w] + 1 for w in test], dtype=np.float64) / total)
    return float(-logp.mean())


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("lm_corpus"))
    _child([os.path.join(EXAMPLE, "make_corpus.py"), out] + CORPUS)
    return out


def test_corpus_is_deterministic(corpus, tmp_path):
    _child([os.path.join(EXAMPLE, "make_corpus.py"), str(tmp_path)] + CORPUS)
    for rel in ["vocab.txt", "test/test.txt", "train/train-00000-of-00002.txt",
                "train/train-00001-of-00002.txt"]:
        with open(os.path.join(corpus, rel), "rb") as a, open(tmp_path / rel, "rb") as b:
            assert a.read() == b.read(), rel


def test_vocab_is_sorted_by_training_count(corpus):
    with open(os.path.join(corpus, "vocab.txt")) as f:
        rows = [line.split() for line in f]
    assert rows[0][0] == "<S>" and rows[-1] == ["<UNK>", "0"]
    assert len(rows) == 202
    words = collections.Counter()
    for path in glob.glob(os.path.join(corpus, "train", "*")):
        with open(path, encoding="utf-8") as f:
            words.update(f.read().split())
    counts = [int(c) for _, c in rows[1:-1]]
    assert counts == sorted(counts, reverse=True)
    assert all(words[w] == int(c) for w, c in rows[1:-1])


def _train_one_epoch(corpus, ctx):
    unigram_ppl = math.exp(_unigram_cross_entropy(os.path.join(corpus, "train", "*"),
                                                  os.path.join(corpus, "test", "test.txt")))
    assert 60 < unigram_ppl < 202  # the corpus is what this test was sized for
    out = _child([os.path.join(EXAMPLE, "train.py"),
                  "--data", os.path.join(corpus, "train", "*"),
                  "--test", os.path.join(corpus, "test", "test.txt"),
                  "--vocab", os.path.join(corpus, "vocab.txt"),
                  "--emsize", "32", "--nhid", "64", "--num-proj", "32", "--k", "32",
                  "--batch-size", "16", "--bptt", "10", "--epochs", "1", "--lr", "0.1",
                  "--eval-batch-size", "16", "--log-interval", "1000", "--json",
                  "--ctx", ctx])
    result = json.loads(out.strip().splitlines()[-1])
    assert result["batches"] > 80 and result["words"] == 16 * 10 * result["batches"]
    ppl = result["test_ppl"][-1]
    # measured on CPU: about 28 (unigram model: about 80; the chain's floor: about 14)
    assert ppl < 0.6 * unigram_ppl, (ppl, unigram_ppl)
    assert result["words_per_second"] > 0


def test_one_epoch_beats_the_unigram_model(corpus):
    _train_one_epoch(corpus, "cpu")


def _has_cuda():
    import torch
    return torch.cuda.is_available()


@pytest.mark.skipif(not _has_cuda(), reason="needs CUDA")
def test_one_epoch_on_gpu_beats_the_unigram_model(corpus):
    _train_one_epoch(corpus, "gpu")


# Measured with MXNet 1.9.1 on the corpus of CORPUS (make_corpus.py, same arguments):
#   OMP_NUM_THREADS=1 /work/mxnet-venv/bin/python ALIAS examples/large_word_lm/fixed_steps.py \
#       DIR --steps 8
# where ALIAS sets sys.modules['sparsenet'] = mxnet and runpy-runs the file (MKLDNN on or
# off gives the same figures to 1e-6). Defaults: emsize 16, nhid 32, num-proj 16, k 32,
# batch 8, bptt 5, lr 0.1, eps 1e-4, clip 0.005 (active from step 6 on), weights N(0, 0.01).
MXNET_LOSS = [20.178552627563477, 25.8432559967041, 21.722782135009766, 21.900279998779297,
              21.171958923339844, 19.78348731994629, 22.20004653930664, 19.6068058013916]
MXNET_NORM = [0.002310630399733782, 0.003952331375330687, 0.0038198106922209263,
              0.0040543414652347565, 0.006725457031279802, 0.010749892331659794,
              0.023580476641654968, 0.029847636818885803]
MXNET_SUMSQ = {"decoder_bias": 3.1746917841161264, "decoder_weight": 0.7634974325447129,
               "encoder_weight": 0.32710843262305006, "lstmp0_h2h_bias": 0.037753453191005586,
               "lstmp0_h2h_weight": 0.18860277787041144,
               "lstmp0_h2r_weight": 0.11282721620679179,
               "lstmp0_i2h_bias": 0.036051037324619145,
               "lstmp0_i2h_weight": 0.20425529164055628}


def test_fixed_steps_match_mxnet(corpus):
    """Eight steps of the program's own train_step (row_sparse pulls through the Trainer's
    kvstore, sparse embedding and decoder gradients, LSTMP, sampled softmax, global-norm
    clipping, lazy AdaGrad) agree with MXNet 1.9.1 to float32 rounding."""
    out = _child([os.path.join(EXAMPLE, "fixed_steps.py"), corpus, "--steps", "8"])
    result = json.loads(out.strip().splitlines()[-1])
    np.testing.assert_allclose(result["loss"], MXNET_LOSS, rtol=1e-5)
    np.testing.assert_allclose(result["norm"], MXNET_NORM, rtol=1e-5)
    assert sorted(result["sumsq"]) == sorted(MXNET_SUMSQ)
    for name, value in MXNET_SUMSQ.items():
        assert result["sumsq"][name] == pytest.approx(value, rel=1e-5), name


def _example_module(name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"lm_example_{name}",
                                                  os.path.join(EXAMPLE, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["data", "sampler", "make_corpus"])
def test_example_doctests(name):
    import doctest
    result = doctest.testmod(_example_module(name))
    assert result.failed == 0 and result.attempted > 0


def test_sampler_draws_log_uniform_classes():
    """Distinct classes in range; with replacement the draws follow
    P(c) = log((c + 2) / (c + 1)) / log(V + 1); expected counts as 1 - (1 - P)^tries."""
    sampler = _example_module("sampler").LogUniformSampler(50, 20, seed=3)
    sample, count_sample, count_true = sampler.draw(np.array([0, 7, 49]))
    assert len(np.unique(sample)) == 20 and sample.min() >= 0 and sample.max() < 50
    p = np.log((np.arange(50) + 2.0) / (np.arange(50) + 1.0)) / np.log(51.0)
    assert p.sum() == pytest.approx(1.0)
    # the expected counts of the sampled and true classes share the same number of tries
    tries = np.log1p(-count_true.astype(np.float64)) / np.log1p(-p[[0, 7, 49]])
    assert np.allclose(tries, tries[0], rtol=1e-4) and tries[0] >= 20
    np.testing.assert_allclose(count_sample, 1 - (1 - p[sample]) ** tries[0], rtol=1e-4)
    # the first class of each of many draws is a draw with replacement from P
    firsts = np.array([sampler.draw([0])[0][0] for _ in range(4000)])
    freq = np.bincount(firsts, minlength=50) / 4000.0
    assert np.abs(freq - p).max() < 0.03


def test_batches_carry_sentences_across_batches():
    data = _example_module("data")
    vocab = data.Vocabulary(["<S>", "a", "b", "c", "<UNK>"])
    sents = [vocab.encode("a b c"), vocab.encode("c zz")]
    assert sents[1].tolist() == [0, 3, 4, 0]
    batches = list(data.BpttBatches(sents, batch_size=1, bptt=3))
    xs = [x.tolist() for x, _, _ in batches]
    ys = [y.tolist() for _, y, _ in batches]
    ms = [m.tolist() for _, _, m in batches]
    # stream: <S> a b c <S> | <S> c <UNK> <S>; a sentence's closing <S> is only a target
    assert xs == [[[0, 1, 2]], [[3, 0, 3]], [[4, 0, 0]]]
    assert ys == [[[1, 2, 3]], [[0, 3, 4]], [[0, 0, 0]]]
    assert ms == [[[1, 1, 1]], [[1, 1, 1]], [[1, 0, 0]]]

"""Generate a small deterministic corpus in the format of MXNet's ``large_word_lm`` example.

MXNet 1.9.1's ``example/rnn/large_word_lm`` trains on the One Billion Word benchmark: a
glob of sentence files (one tokenized sentence per line, words separated by spaces), a
held-out sentence file, and a vocabulary file of ``word count`` lines whose ids follow the
line order (``<S>`` and ``<UNK>`` among them; the log-uniform sampler assumes that low ids
are frequent words). This script writes a corpus of that shape that trains in seconds::

    python examples/large_word_lm/make_corpus.py OUT_DIR [--vocab-size 10000]
        [--sentences 8000] [--test-sentences 800] [--files 4] [--seed 0]

It writes ``OUT_DIR/train/train-0000N-of-0000F.txt``, ``OUT_DIR/test/test.txt``,
``OUT_DIR/vocab.txt`` and ``OUT_DIR/stats.json`` (sizes, the train/test unigram entropy
and the entropy rate of the generating process, in nats), and prints the paths.

The process is a hidden Markov chain: words are split into classes, each class moves to
one of a few successor classes (fixed random fan-out probabilities), and each class emits
its words with Zipf weights ``1 / (j + 1) ** s``. Word ranks are therefore Zipf-like
overall, while a model that learns the previous word's class predicts the next word far
better than the unigram distribution: the perplexity floor ``exp(entropy_rate)`` lies well
below ``exp(unigram entropy)`` and both far below the vocabulary size. The same arguments
always give the same files, byte for byte.

>>> import tempfile
>>> paths = make_corpus(tempfile.mkdtemp(), vocab_size=60, num_sentences=20,
...                     num_test_sentences=5, num_files=2)
>>> sorted(paths)
['stats', 'test', 'train', 'vocab']
>>> open(paths['vocab']).readline().split()[0]
'<S>'
"""
import argparse
import json
import os

import numpy as np

SENTENCE = "<S>"
UNKNOWN = "<UNK>"


def _process(num_words, num_classes, fanout, zipf_s, rng):
    """The generating chain: successor classes, their probabilities, emission CDFs."""
    successors = np.stack([rng.choice(num_classes, size=fanout, replace=False)
                           for _ in range(num_classes)])
    fan_p = 0.5 ** np.arange(fanout)
    fan_p = fan_p / fan_p.sum()
    members = [np.arange(c, num_words, num_classes) for c in range(num_classes)]
    emit_p = []
    for m in members:
        w = 1.0 / (np.arange(len(m)) + 1.0) ** zipf_s
        emit_p.append(w / w.sum())
    return successors, fan_p, members, emit_p


def _sentences(n, proc, min_len, max_len, rng):
    """``n`` sentences (int64 arrays of word indices) drawn from the chain ``proc``."""
    successors, fan_p, members, emit_p = proc
    num_classes = len(members)
    fan_cdf = np.cumsum(fan_p)
    emit_cdf = [np.cumsum(p) for p in emit_p]
    out = []
    for length in rng.integers(min_len, max_len + 1, size=n):
        classes = np.empty(length, dtype=np.int64)
        c = int(rng.integers(num_classes))
        moves = np.minimum(np.searchsorted(fan_cdf, rng.random(length), side="right"),
                           len(fan_p) - 1)
        for t in range(length):
            classes[t] = c
            c = int(successors[c, moves[t]])
        u = rng.random(length)
        words = np.empty(length, dtype=np.int64)
        for t in range(length):
            cdf = emit_cdf[classes[t]]
            j = min(int(np.searchsorted(cdf, u[t], side="right")), len(cdf) - 1)
            words[t] = members[classes[t]][j]
        out.append(words)
    return out


def _entropy(counts):
    """Entropy in nats of the distribution proportional to ``counts``."""
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def _entropy_rate(proc):
    """Entropy rate in nats per word of the chain: the successor choice plus the emission,
    averaged over the stationary distribution of the classes (a word names its class)."""
    successors, fan_p, members, emit_p = proc
    num_classes = len(members)
    trans = np.zeros((num_classes, num_classes))
    for c in range(num_classes):
        np.add.at(trans[c], successors[c], fan_p)
    vals, vecs = np.linalg.eig(trans.T)
    pi = np.abs(np.real(vecs[:, np.argmin(np.abs(vals - 1.0))]))
    pi = pi / pi.sum()
    emit_h = np.array([-(p * np.log(p)).sum() for p in emit_p])
    fan_h = -(fan_p * np.log(fan_p)).sum()
    return float(fan_h + (pi * emit_h).sum())


def make_corpus(out_dir, vocab_size=10000, num_sentences=8000, num_test_sentences=None,
                num_files=4, seed=0, num_classes=None, fanout=3, zipf_s=1.1,
                min_len=5, max_len=30):
    """Write a generated corpus into ``out_dir``; return a dict of the written paths.

    Parameters
    ----------
    out_dir : str
        Directory to write into (created if missing).
    vocab_size : int
        Lines of the vocabulary file, ``<S>`` and ``<UNK>`` included (>= 12).
    num_sentences, num_test_sentences : int
        Training and held-out sentences (held-out default: a tenth, at least 1).
    num_files : int
        Training sentence files (the example reads them through a glob).
    seed : int
        Seed of the generator; equal arguments give equal files.
    num_classes : int or None
        Hidden classes (default ``max(4, round(sqrt(words) / 2))``).
    fanout : int
        Successor classes of each class (probabilities halve: 4/7, 2/7, 1/7 for 3).
    zipf_s : float
        Zipf exponent of each class's emission weights.
    min_len, max_len : int
        Sentence length range in words (``<S>`` markers not counted).

    Returns
    -------
    dict
        ``{'train': glob pattern, 'test': path, 'vocab': path, 'stats': path}``.
    """
    num_words = int(vocab_size) - 2
    if num_words < 10 or num_sentences < 1 or num_files < 1 or not 1 <= min_len <= max_len:
        raise SystemExit(f"make_corpus: expected vocab_size >= 12, num_sentences >= 1, "
                         f"num_files >= 1 and 1 <= min_len <= max_len, got vocab_size="
                         f"{vocab_size}, num_sentences={num_sentences}, num_files={num_files}, "
                         f"min_len={min_len}, max_len={max_len}")
    if num_test_sentences is None:
        num_test_sentences = max(1, num_sentences // 10)
    if num_classes is None:
        num_classes = max(4, int(round(np.sqrt(num_words) / 2)))
    fanout = min(fanout, num_classes)
    rng = np.random.default_rng(seed)
    proc = _process(num_words, num_classes, fanout, zipf_s, rng)
    train = _sentences(num_sentences, proc, min_len, max_len, rng)
    test = _sentences(num_test_sentences, proc, min_len, max_len, rng)
    counts = np.bincount(np.concatenate(train), minlength=num_words)
    # vocabulary ids by decreasing training count (ties by index): low ids are frequent,
    # as the log-uniform sampler assumes; <S> (one per sentence) first, <UNK> (unused) last
    order = np.lexsort((np.arange(num_words), -counts))
    names = [f"w{k:05d}" for k in range(num_words)]
    os.makedirs(os.path.join(out_dir, "train"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "test"), exist_ok=True)
    vocab_path = os.path.join(out_dir, "vocab.txt")
    with open(vocab_path, "w", encoding="utf-8") as f:
        f.write(f"{SENTENCE} {num_sentences}\n")
        for k in order:
            f.write(f"{names[k]} {int(counts[k])}\n")
        f.write(f"{UNKNOWN} 0\n")
    per_file = -(-num_sentences // num_files)
    for i in range(num_files):
        path = os.path.join(out_dir, "train", f"train-{i:05d}-of-{num_files:05d}.txt")
        with open(path, "w", encoding="utf-8") as f:
            for s in train[i * per_file:(i + 1) * per_file]:
                f.write(" ".join(names[k] for k in s) + "\n")
    test_path = os.path.join(out_dir, "test", "test.txt")
    with open(test_path, "w", encoding="utf-8") as f:
        for s in test:
            f.write(" ".join(names[k] for k in s) + "\n")
    test_counts = np.bincount(np.concatenate(test), minlength=num_words)
    stats = {"vocab_size": int(vocab_size), "train_sentences": int(num_sentences),
             "test_sentences": int(num_test_sentences), "num_classes": int(num_classes),
             "train_words": int(counts.sum()), "test_words": int(test_counts.sum()),
             "train_unigram_entropy": _entropy(counts),
             "test_unigram_entropy": _entropy(test_counts),
             "entropy_rate": _entropy_rate(proc), "seed": int(seed)}
    stats_path = os.path.join(out_dir, "stats.json")
    with open(stats_path, "w") as f:
        json.dump(stats, f, indent=1)
    return {"train": os.path.join(out_dir, "train", "train-*"), "test": test_path,
            "vocab": vocab_path, "stats": stats_path}


def main(argv=None):
    """Command line: parse the arguments, write the corpus, print the paths as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--vocab-size", type=int, default=10000)
    ap.add_argument("--sentences", type=int, default=8000)
    ap.add_argument("--test-sentences", type=int, default=None)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--classes", type=int, default=None)
    ap.add_argument("--fanout", type=int, default=3)
    ap.add_argument("--zipf", type=float, default=1.1)
    ap.add_argument("--min-len", type=int, default=5)
    ap.add_argument("--max-len", type=int, default=30)
    a = ap.parse_args(argv)
    paths = make_corpus(a.out_dir, a.vocab_size, a.sentences, a.test_sentences, a.files,
                        a.seed, a.classes, a.fanout, a.zipf, a.min_len, a.max_len)
    print(json.dumps(paths))


if __name__ == "__main__":
    main()

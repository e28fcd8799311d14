"""Vocabulary and truncated-BPTT batches for the ``large_word_lm`` example (NumPy only).

The files are those of MXNet 1.9.1's ``example/rnn/large_word_lm`` (and of
``make_corpus.py``): sentence files, one tokenized sentence per line, and a vocabulary
file of ``word count`` lines whose line order gives the ids. Each sentence becomes
``<S> w1 ... wn <S>``; a word missing from the vocabulary becomes ``<UNK>``.

Batches keep one stream of sentences per batch row, so a row continues its sentence in
the next batch and the recurrent state is carried across batches. ``mask`` marks the
filled positions (the last batches of an epoch may be partly empty).

>>> vocab = Vocabulary(["<S>", "a", "b", "<UNK>"])
>>> sents = [vocab.encode("a b"), vocab.encode("b c")]
>>> sents[1].tolist()
[0, 2, 3, 0]
>>> x, y, m = next(iter(BpttBatches(sents, batch_size=1, bptt=4)))
>>> x.tolist(), y.tolist(), m.tolist()
([[0, 1, 2, 0]], [[1, 2, 0, 2]], [[1.0, 1.0, 1.0, 1.0]])
"""
import glob

import numpy as np

SENTENCE = "<S>"
UNKNOWN = "<UNK>"


class Vocabulary:
    """Words and their ids, in the order given.

    Parameters
    ----------
    tokens : list of str
        The words; ``<S>`` (the sentence marker) and ``<UNK>`` must be among them.
    """

    def __init__(self, tokens):
        self.tokens = list(tokens)
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        for t in (SENTENCE, UNKNOWN):
            if t not in self.ids:
                raise SystemExit(f"vocabulary: expected the token {t!r} among the "
                                 f"{len(self.tokens)} words, it is missing")
        self.s_id, self.unk_id = self.ids[SENTENCE], self.ids[UNKNOWN]

    def __len__(self):
        return len(self.tokens)

    @classmethod
    def from_file(cls, path):
        """Read a ``word count`` per line vocabulary file."""
        tokens = []
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                parts = line.split()
                if len(parts) != 2:
                    raise SystemExit(f"{path}:{lineno}: expected 'word count', got {line!r}")
                tokens.append(parts[0])
        return cls(tokens)

    def encode(self, line):
        """``<S>`` + the ids of the line's words + ``<S>``, as an int64 array."""
        unk = self.unk_id
        return np.array([self.s_id] + [self.ids.get(w, unk) for w in line.split()]
                        + [self.s_id], dtype=np.int64)


def read_sentences(pattern, vocab):
    """Every non-empty line of the files matching ``pattern`` (sorted), encoded."""
    paths = sorted(glob.glob(pattern))
    if not paths:
        raise SystemExit(f"no file matches {pattern!r}")
    out = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            out.extend(vocab.encode(line) for line in f if line.strip())
    return out


class BpttBatches:
    """One pass over ``sentences`` as ``(x, y, mask)`` arrays of shape ``(batch_size, bptt)``.

    Parameters
    ----------
    sentences : list of int arrays
        Encoded sentences (``<S>`` at both ends).
    batch_size, bptt : int
        Rows (streams) and time steps of a batch.
    shuffle : bool
        Visit the sentences in an order drawn from ``seed`` (else in the given order).
    seed : int
        Seed of the order.
    """

    def __init__(self, sentences, batch_size, bptt, shuffle=False, seed=0):
        self.sentences, self.batch_size, self.bptt = sentences, batch_size, bptt
        self.shuffle, self.seed = shuffle, seed

    def __iter__(self):
        n = len(self.sentences)
        order = (np.random.RandomState(self.seed).permutation(n) if self.shuffle
                 else np.arange(n))
        feed = iter(order.tolist())
        streams = [None] * self.batch_size
        done = False
        while not done:
            x = np.zeros((self.batch_size, self.bptt), np.int64)
            y = np.zeros_like(x)
            mask = np.zeros((self.batch_size, self.bptt), np.float32)
            for row in range(self.batch_size):
                filled = 0
                while filled < self.bptt:
                    s = streams[row]
                    if s is None or len(s) <= 1:
                        k = next(feed, None)
                        if k is None:
                            done = True
                            break
                        s = self.sentences[k]
                    take = min(len(s) - 1, self.bptt - filled)
                    x[row, filled:filled + take] = s[:take]
                    y[row, filled:filled + take] = s[1:take + 1]
                    mask[row, filled:filled + take] = 1
                    streams[row] = s[take:]
                    filled += take
            if not mask.any():
                return
            yield x, y, mask

"""A few training steps of the ``large_word_lm`` model from fixed weights, for comparisons.

Runs :func:`train.train_step` (the program's own step) ``--steps`` times on the first
batches of a corpus, in file order, without dropout, with every parameter set from
``numpy.random.RandomState(0)`` normal draws (standard deviation ``--sigma``, in sorted
parameter-name order) and the sampler seeded with 0, and prints a JSON line: each
step's loss and LSTMP gradient norm, and each parameter's sum of squares at the end.
The same file runs under MXNet 1.9.1 when the name ``sparsenet`` resolves to ``mxnet``::

    python examples/large_word_lm/fixed_steps.py CORPUS_DIR [--steps 4]
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sparsenet as mx  # noqa: E402
from sparsenet import gluon, nd  # noqa: E402

from data import BpttBatches, Vocabulary, read_sentences  # noqa: E402
from model import LanguageModel  # noqa: E402
from sampler import LogUniformSampler  # noqa: E402
from train import get_parser, train_step  # noqa: E402


def set_fixed_params(model, sigma):
    """Every parameter from ``RandomState(0)`` normal draws, in sorted name order."""
    rng = np.random.RandomState(0)
    for name, p in sorted(model.collect_params().items()):
        value = nd.array(rng.normal(0, sigma, size=p.shape).astype(np.float32))
        p.set_data(value.tostype("row_sparse") if p._stype == "row_sparse" else value)


def run(corpus, steps, sizes, sigma=0.01):
    """Train ``steps`` steps; return the result dict (see the module docstring)."""
    args = get_parser().parse_args(
        ["--data", os.path.join(corpus, "train", "*"), "--test", "-",
         "--vocab", os.path.join(corpus, "vocab.txt")] + sizes)
    ctx = mx.cpu()
    vocab = Vocabulary.from_file(args.vocab)
    sentences = read_sentences(args.data, vocab)
    model = LanguageModel(len(vocab), args.emsize, args.nhid, args.num_proj, args.nlayers,
                          dropout=0.0)
    model.initialize(ctx=ctx)
    set_fixed_params(model, sigma)
    trainer = gluon.Trainer(model.collect_params(), "adagrad",
                            {"learning_rate": args.lr, "eps": args.eps}, kvstore="device")
    sampler = LogUniformSampler(len(vocab), args.k, seed=0)
    rnn_params = model.rnn_params()
    states = model.begin_state(args.batch_size, ctx)
    losses, norms = [], []
    for i, batch in enumerate(BpttBatches(sentences, args.batch_size, args.bptt)):
        if i == steps:
            break
        loss, norm, states = train_step(model, trainer, sampler, rnn_params, batch, states,
                                        ctx, args)
        losses.append(float(loss.asscalar()))
        norms.append(float(norm))
    all_rows = nd.arange(len(vocab), ctx=ctx, dtype="int64")
    sumsq = {}
    for name, p in sorted(model.collect_params().items()):
        value = (p.row_sparse_data(all_rows).tostype("default") if p._stype == "row_sparse"
                 else p.data())
        sumsq[name.split("_", 1)[1]] = float((value.asnumpy().astype(np.float64) ** 2).sum())
    return {"loss": losses, "norm": norms, "sumsq": sumsq}


def main():
    """Command line: corpus directory, steps, and sizes as train.py takes them."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--sigma", type=float, default=0.01)
    a, rest = ap.parse_known_args()
    sizes = rest or ["--emsize", "16", "--nhid", "32", "--num-proj", "16", "--k", "32",
                     "--batch-size", "8", "--bptt", "5", "--clip", "0.005"]
    print(json.dumps(run(a.corpus, a.steps, sizes, a.sigma)))


if __name__ == "__main__":
    main()

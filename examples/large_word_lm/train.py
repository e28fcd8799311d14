"""Train the ``large_word_lm`` language model for some epochs and report held-out perplexity.

Our program in the manner of MXNet 1.9.1's ``example/rnn/large_word_lm/train.py`` (a
word-level LSTMP language model with a row_sparse embedding and sampled softmax over a
row_sparse decoder, trained with AdaGrad, the rows of each batch pulled from a kvstore),
written with Gluon::

    python examples/large_word_lm/make_corpus.py /tmp/lm
    python examples/large_word_lm/train.py --data '/tmp/lm/train/*' \\
        --test /tmp/lm/test/test.txt --vocab /tmp/lm/vocab.txt --emsize 64 --nhid 256 \\
        --num-proj 64 --k 1024 --epochs 1 [--ctx gpu] [--json]

Each batch: draw ``k`` log-uniform samples (``sampler.py``), pull the batch's embedding
rows and the decoder rows of the samples and labels (``row_sparse_data``), run the LSTMP
layers from the previous batch's final states, take the masked sampled-softmax loss
(summed over time, averaged over the batch rows, as MXNet's example rescales it), clip
the LSTMP gradients to a global norm, and let the Trainer's ``'device'`` kvstore apply
AdaGrad (lazily: only the rows a sparse gradient holds). After each epoch the held-out
file is scored with the full softmax. ``--json`` prints the result as one JSON line.
``words_per_second`` counts the training loop only (every batch position, as MXNet's
Speedometer does).
"""
import argparse
import json
import logging
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sparsenet as mx  # noqa: E402
from sparsenet import autograd, gluon, nd  # noqa: E402

from data import BpttBatches, Vocabulary, read_sentences  # noqa: E402
from model import LanguageModel  # noqa: E402
from sampler import LogUniformSampler  # noqa: E402


def get_parser():
    """The command-line options (MXNet's example's names and defaults, plus ``--ctx``)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="glob of the training sentence files")
    p.add_argument("--test", required=True, help="held-out sentence file")
    p.add_argument("--vocab", required=True, help="vocabulary file ('word count' lines)")
    p.add_argument("--emsize", type=int, default=512)
    p.add_argument("--nhid", type=int, default=2048)
    p.add_argument("--num-proj", type=int, default=512)
    p.add_argument("--nlayers", type=int, default=1)
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--eval-batch-size", type=int, default=1)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--eps", type=float, default=0.0001, help="AdaGrad epsilon")
    p.add_argument("--bptt", type=int, default=20)
    p.add_argument("--k", type=int, default=8192, help="sampled words per batch")
    p.add_argument("--ctx", choices=("cpu", "gpu"), default="cpu")
    p.add_argument("--log-interval", type=int, default=200)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--clip", type=float, default=1.0, help="global norm of LSTMP gradients")
    p.add_argument("--rescale-embed", type=float, default=None,
                   help="factor for the embedding gradient")
    p.add_argument("--json", action="store_true", help="print the result as a JSON line")
    return p


def _batch_arrays(x, y, mask, ctx):
    """The NDArrays of one batch: ids as float data and as int64 rows, labels, mask."""
    return (nd.array(x, ctx=ctx), nd.array(x.reshape(-1), ctx=ctx, dtype="int64"),
            nd.array(y.reshape(-1), ctx=ctx), nd.array(mask.reshape(-1), ctx=ctx))


def evaluate(model, sentences, batch_size, bptt, ctx):
    """Held-out cross entropy per word (nats) with the full softmax."""
    vocab_size = model.vocab_size
    all_rows = nd.arange(vocab_size, ctx=ctx, dtype="int64")
    weight = model.decoder_weight.row_sparse_data(all_rows).tostype("default")
    bias = model.decoder_bias.row_sparse_data(all_rows).tostype("default").reshape((-1,))
    states = model.begin_state(batch_size, ctx)
    total, count = 0.0, 0.0
    for x, y, mask in BpttBatches(sentences, batch_size, bptt):
        data, rows, label, m = _batch_arrays(x, y, mask, ctx)
        hidden, states = model(data, rows, states)
        ce = model.full_loss(hidden, label, weight, bias)
        total += float((ce * m).sum().asscalar())
        count += float(mask.sum())
    return total / count


def train_step(model, trainer, sampler, rnn_params, batch, states, ctx, args):
    """One training step on ``batch = (x, y, mask)`` from ``states``.

    Returns the batch's loss (NDArray), the LSTMP gradients' global norm before clipping
    and the final states (detached from this batch's graph by the next call).
    """
    x, y, mask = batch
    sample, prob_sample, prob_target = sampler.draw(y)
    data, rows, label, m = _batch_arrays(x, y, mask, ctx)
    dec_rows = nd.array(np.concatenate([sample, y.reshape(-1)]), ctx=ctx, dtype="int64")
    states = [[s.detach() for s in layer] for layer in states]
    with autograd.record():
        hidden, states = model(data, rows, states)
        ce = model.sampled_loss(hidden, label, dec_rows, nd.array(sample, ctx=ctx),
                                nd.array(prob_sample, ctx=ctx), nd.array(prob_target, ctx=ctx))
        loss = (ce * m).sum() / x.shape[0]
    loss.backward()
    if args.rescale_embed:
        grad = model.encoder_weight.grad(ctx)
        grad[:] = grad * args.rescale_embed
    norm = gluon.utils.clip_global_norm([p.grad(ctx) for p in rnn_params], args.clip)
    trainer.step(1)
    return loss, norm, states


def train(args):
    """Train and evaluate as ``args`` says; return the result dict."""
    ctx = mx.gpu() if args.ctx == "gpu" else mx.cpu()
    mx.random.seed(args.seed)
    np.random.seed(args.seed)
    vocab = Vocabulary.from_file(args.vocab)
    train_sents = read_sentences(args.data, vocab)
    test_sents = read_sentences(args.test, vocab)
    model = LanguageModel(len(vocab), args.emsize, args.nhid, args.num_proj, args.nlayers,
                          args.dropout)
    model.initialize(mx.init.Xavier(factor_type="out"), ctx=ctx)
    trainer = gluon.Trainer(model.collect_params(), "adagrad",
                            {"learning_rate": args.lr, "eps": args.eps}, kvstore="device")
    sampler = LogUniformSampler(len(vocab), args.k, seed=args.seed)
    rnn_params = model.rnn_params()
    result = {"words": 0, "batches": 0, "train_seconds": 0.0, "test_ppl": []}
    for epoch in range(args.epochs):
        states = model.begin_state(args.batch_size, ctx)
        interval_loss, nbatch = nd.zeros((1,), ctx=ctx), 0
        start = time.perf_counter()
        for x, y, mask in BpttBatches(train_sents, args.batch_size, args.bptt,
                                      shuffle=True, seed=args.seed + epoch):
            loss, _, states = train_step(model, trainer, sampler, rnn_params, (x, y, mask),
                                         states, ctx, args)
            interval_loss += loss
            nbatch += 1
            result["words"] += x.size
            if nbatch % args.log_interval == 0:
                cur = float(interval_loss.asscalar()) / args.log_interval / args.bptt
                logging.info("epoch %d batch %d: %.0f words/s, loss %.4f, ppl %.1f", epoch,
                             nbatch, result["words"] / (time.perf_counter() - start
                                                        + result["train_seconds"]),
                             cur, math.exp(min(cur, 50.0)))
                interval_loss[:] = 0.0
        nd.waitall()
        result["train_seconds"] += time.perf_counter() - start
        result["batches"] += nbatch
        test_loss = evaluate(model, test_sents, args.eval_batch_size, args.bptt, ctx)
        result["test_ppl"].append(math.exp(test_loss))
        logging.info("epoch %d: held-out cross entropy %.4f, perplexity %.2f", epoch,
                     test_loss, math.exp(test_loss))
    result["words_per_second"] = result["words"] / result["train_seconds"]
    return result


def main(argv=None):
    """Command line entry point."""
    args = get_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    result = train(args)
    if args.json:
        print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()

"""The language model of the ``large_word_lm`` example: sparse embedding, LSTMP, sampled softmax.

:class:`LanguageModel` is a Gluon ``Block`` with three row_sparse parameters (the word
embedding ``encoder_weight`` and the decoder's ``decoder_weight`` and ``decoder_bias``)
whose rows are pulled per batch with ``row_sparse_data`` (through the Trainer's kvstore)
and whose gradients are row_sparse (``Embedding(..., sparse_grad=True)``), and
``nlayers`` ``gluon.contrib.rnn.LSTMPCell`` layers (an LSTM whose output is projected to
``num_proj`` units) unrolled over the ``bptt`` steps of a batch.

Training scores each position against the true next word and ``k`` sampled words only
(:meth:`LanguageModel.sampled_loss`: sampled softmax with the log expected counts
subtracted, accidental hits removed); evaluation uses the full softmax over the whole
vocabulary (:meth:`LanguageModel.full_loss`).
"""
import sparsenet as mx
from sparsenet import gluon, nd


class LanguageModel(gluon.Block):
    """Word-level LSTMP language model with row_sparse embedding and decoder.

    Parameters
    ----------
    vocab_size, emsize, nhid, num_proj, nlayers : int
        Vocabulary size, embedding size, LSTM units, projection units, layers.
    dropout : float
        Dropout on the embedding and after every layer (training only).
    """

    def __init__(self, vocab_size, emsize, nhid, num_proj, nlayers=1, dropout=0.1, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size, self.emsize, self.num_proj = vocab_size, emsize, num_proj
        self.dropout = dropout
        with self.name_scope():
            self.encoder_weight = self.params.get(
                "encoder_weight", shape=(vocab_size, emsize), stype="row_sparse",
                grad_stype="row_sparse")
            self.decoder_weight = self.params.get(
                "decoder_weight", shape=(vocab_size, num_proj), stype="row_sparse",
                grad_stype="row_sparse")
            self.decoder_bias = self.params.get(
                "decoder_bias", shape=(vocab_size, 1), init="zeros", stype="row_sparse",
                grad_stype="row_sparse")
            self.cells = []
            for i in range(nlayers):
                cell = mx.gluon.contrib.rnn.LSTMPCell(
                    nhid, num_proj, input_size=emsize if i == 0 else num_proj,
                    prefix=f"lstmp{i}_")
                self.register_child(cell)
                self.cells.append(cell)

    def rnn_params(self):
        """The LSTMP layers' parameters (the ones whose gradient norm is clipped)."""
        return [p for cell in self.cells for p in cell.collect_params().values()]

    def begin_state(self, batch_size, ctx):
        """Zero states, ``[h, c]`` per layer."""
        return [cell.begin_state(batch_size=batch_size, ctx=ctx) for cell in self.cells]

    def forward(self, data, row_ids, states):
        """Hidden outputs ``(batch * bptt, num_proj)`` and the next states.

        ``data`` holds the word ids ``(batch, bptt)``; ``row_ids`` the same ids as int64,
        the embedding rows to pull.
        """
        weight = self.encoder_weight.row_sparse_data(row_ids)
        x = nd.Embedding(data, weight, input_dim=self.vocab_size, output_dim=self.emsize,
                         sparse_grad=True)
        x = nd.Dropout(x, p=self.dropout)
        next_states = []
        for cell, state in zip(self.cells, states):
            x, state = cell.unroll(data.shape[1], x, begin_state=state, layout="NTC",
                                   merge_outputs=True)
            x = nd.Dropout(x, p=self.dropout)
            next_states.append(state)
        return x.reshape((-1, self.num_proj)), next_states

    def sampled_loss(self, hidden, label, row_ids, sample, prob_sample, prob_target):
        """Per-position cross entropy of the true word against ``k`` sampled words.

        Parameters
        ----------
        hidden : NDArray ``(n, num_proj)``
        label : NDArray ``(n,)``, the true next words.
        row_ids : int64 NDArray ``(k + n,)``, the sampled words then the labels.
        sample, prob_sample : NDArray ``(k,)``, sampled words and their expected counts.
        prob_target : NDArray ``(n,)``, the true words' expected counts.
        """
        k = sample.shape[0]
        ids = row_ids.astype("float32")
        w = nd.Embedding(ids, self.decoder_weight.row_sparse_data(row_ids),
                         input_dim=self.vocab_size, output_dim=self.num_proj,
                         sparse_grad=True)
        b = nd.Embedding(ids, self.decoder_bias.row_sparse_data(row_ids),
                         input_dim=self.vocab_size, output_dim=1, sparse_grad=True)
        sample_w = nd.slice_axis(w, axis=0, begin=0, end=k)
        target_w = nd.slice_axis(w, axis=0, begin=k, end=None)
        sample_b = nd.slice_axis(b, axis=0, begin=0, end=k).reshape((-1,))
        target_b = nd.slice_axis(b, axis=0, begin=k, end=None)
        true_logit = nd.sum(target_w * hidden, axis=1, keepdims=True) + target_b
        sample_logit = nd.FullyConnected(hidden, sample_w, sample_b, num_hidden=k)
        hits = nd.broadcast_equal(label.reshape((-1, 1)), sample.reshape((1, -1)))
        sample_logit = sample_logit + hits * -1e37
        logits = nd.concat(true_logit - nd.log(prob_target.reshape((-1, 1))),
                           nd.broadcast_sub(sample_logit, nd.log(prob_sample.reshape((1, -1)))),
                           dim=1)
        logp = nd.log_softmax(logits, axis=-1)
        return -nd.slice_axis(logp, axis=1, begin=0, end=1).reshape((-1,))

    def full_loss(self, hidden, label, weight, bias):
        """Per-position cross entropy with the full softmax over the vocabulary.

        ``weight`` ``(vocab_size, num_proj)`` and ``bias`` ``(vocab_size,)`` are dense.
        """
        logits = nd.FullyConnected(hidden, weight, bias, num_hidden=self.vocab_size)
        return -nd.pick(nd.log_softmax(logits, axis=-1), label, axis=1)

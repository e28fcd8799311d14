"""Text for language models: :func:`encode_sentences` (tokens to ids) and
:class:`BucketSentenceIter` (batches of equal-length sentences, each padded to its bucket,
the label the next token).

>>> import sparsenet as mx
>>> ids, vocab = encode_sentences([['a', 'b'], ['b', 'c']])
>>> ids, vocab
([[0, 1], [1, 2]], {'\\n': -1, 'a': 0, 'b': 1, 'c': 2})
"""
import bisect
import logging
import random

import numpy as np

from .. import ndarray as nd
from ..base import InvalidArgumentError
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["encode_sentences", "BucketSentenceIter"]


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key="\n", start_label=0,
                     unknown_token=None):
    """Encode tokenized sentences as lists of ids, adding new tokens to the vocabulary.

    Parameters
    ----------
    sentences : list of list of str
    vocab : dict of str to int, optional
        Start from this vocabulary (it is copied, not modified). Default: a new one,
        ``{invalid_key: invalid_label}``.
    invalid_label : int, default -1
        The id no token gets (e.g. the end of sentence).
    invalid_key : str, default '\\n'
    start_label : int, default 0
        The first id given to a new token.
    unknown_token : str, optional
        With a given ``vocab``: unknown tokens are encoded as this token (added with the
        next id the first time). Without one, an unknown token in a given ``vocab`` is an
        error.

    Returns
    -------
    encoded : list of list of int
    vocab : dict of str to int

    Notes
    -----
    MXNet 1.9.1 writes the new tokens into the caller's ``vocab`` and gives
    ``unknown_token`` a new id at each unknown token (so earlier sentences keep a stale
    id); here the caller's dict is left alone and ``unknown_token`` keeps its first id.
    """
    idx = start_label
    new_vocab = vocab is None
    vocab = {invalid_key: invalid_label} if new_vocab else dict(vocab)
    encoded = []
    for sent in sentences:
        coded = []
        for word in sent:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise InvalidArgumentError(f"encode_sentences: unknown token {word!r} (not "
                                               f"in the vocab given, and no unknown_token)")
                if unknown_token:
                    word = unknown_token
                if word not in vocab:
                    if idx == invalid_label:
                        idx += 1
                    vocab[word] = idx
                    idx += 1
            coded.append(vocab[word])
        encoded.append(coded)
    return encoded, vocab


class BucketSentenceIter(DataIter):
    """Batches of encoded sentences grouped by length into buckets.

    Each sentence goes to the smallest bucket at least as long, padded with
    ``invalid_label``; longer ones are discarded (with a warning). A batch comes
    from one bucket (``bucket_key`` = its length); its label is the data shifted by
    one step, ending with ``invalid_label``. ``reset`` shuffles the batches and the
    sentences within each bucket (with Python's and NumPy's global random state).

    Parameters
    ----------
    sentences : list of list of int
    batch_size : int
    buckets : list of int, optional
        Default: every length that at least ``batch_size`` sentences have.
    invalid_label : int, default -1
    data_name : str, default 'data'
    label_name : str, default 'softmax_label'
    dtype : str, default 'float32'
    layout : {'NT', 'TN'}, default 'NT'
        ``(batch, length)`` or ``(length, batch)``.
    """

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1, data_name="data",
                 label_name="softmax_label", dtype="float32", layout="NT"):
        super().__init__(batch_size)
        if layout not in ("NT", "TN"):
            raise InvalidArgumentError(f"BucketSentenceIter: layout must be 'NT' (batch "
                                       f"major) or 'TN' (time major), got {layout!r}")
        if not buckets:
            counts = np.bincount([len(s) for s in sentences]) if sentences else []
            buckets = [i for i, n in enumerate(counts) if n >= batch_size]
        buckets = sorted(buckets)
        if not buckets:
            raise InvalidArgumentError(f"BucketSentenceIter: no bucket (no sentence length is "
                                       f"shared by batch_size={batch_size} sentences; give "
                                       f"buckets)")
        per_bucket = [[] for _ in buckets]
        discarded = 0
        for sent in sentences:
            b = bisect.bisect_left(buckets, len(sent))
            if b == len(buckets):
                discarded += 1
                continue
            row = np.full((buckets[b],), invalid_label, dtype=dtype)
            row[:len(sent)] = sent
            per_bucket[b].append(row)
        if discarded:
            logging.warning("BucketSentenceIter: discarded %d sentences longer than the "
                            "largest bucket (%d)", discarded, buckets[-1])
        kept = [i for i, rows in enumerate(per_bucket) if rows]
        self.buckets = [buckets[i] for i in kept]
        self.data = [np.asarray(per_bucket[i], dtype=dtype) for i in kept]
        if not self.data:
            raise InvalidArgumentError("BucketSentenceIter: no sentence fits a bucket")
        self.batch_size = batch_size
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.layout = layout
        self.major_axis = layout.find("N")
        self.default_bucket_key = max(self.buckets)
        shape = (batch_size, self.default_bucket_key) if self.major_axis == 0 else \
            (self.default_bucket_key, batch_size)
        self.provide_data = [DataDesc(name=data_name, shape=shape, layout=layout)]
        self.provide_label = [DataDesc(name=label_name, shape=shape, layout=layout)]
        self.idx = [(i, j) for i, rows in enumerate(self.data)
                    for j in range(0, len(rows) - batch_size + 1, batch_size)]
        self.curr_idx = 0
        self.nddata, self.ndlabel = [], []
        self.reset()

    def reset(self):
        """Shuffle the batches and the sentences of each bucket; start again."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for rows in self.data:
            np.random.shuffle(rows)
        self.nddata, self.ndlabel = [], []
        for rows in self.data:
            label = np.empty_like(rows)
            label[:, :-1] = rows[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(nd.array(rows, dtype=self.dtype))
            self.ndlabel.append(nd.array(label, dtype=self.dtype))

    def next(self):
        """The next :class:`~sparsenet.io.DataBatch` (``bucket_key`` set); StopIteration at
        the end."""
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(name=self.data_name, shape=data.shape,
                                                layout=self.layout)],
                         provide_label=[DataDesc(name=self.label_name, shape=label.shape,
                                                 layout=self.layout)])

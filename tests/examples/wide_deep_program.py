"""MXNet 1.9.1's ``example/sparse/wide_deep`` program, on sparsenet.

Our own program making the example's calls in its order (``data.py``,
``model.py``, ``config.py``, ``train.py``): UCI Adult CSV rows become a CSR
array of hashed crossed columns (the wide part) and a dense array of embedding
ids, one-hot indicators and continuous columns (the deep part); the model is
``sparse.dot`` with a row_sparse weight plus two ``contrib.SparseEmbedding`` and
three ``FullyConnected`` layers under ``SoftmaxOutput``, trained by a Module
with Adam, accuracy as metric, ``score`` on the test file and a checkpoint with
optimizer states every epoch.

Differences from MXNet's file, none in the ``mx`` calls: no download (the data
files are given), Python's per-process randomised ``hash()`` is replaced by
``zlib.crc32`` so both libraries see the same features, the initial weights are
fixed (:func:`common.fixed_params`) and ``np.random`` is seeded, and
:func:`train` returns its metrics instead of only logging them.
"""
import logging
import os
import zlib
from csv import DictReader

import numpy as np

import sparsenet as mx

from tests.examples.common import Clock, fan_in_sigma, fixed_params, param_summary

ADULT = {
    'train': 'adult.data',
    'test': 'adult.test',
    'num_linear_features': 3000,
    'num_embed_features': 2,
    'num_cont_features': 38,
    'embed_input_dims': [1000, 1000],
    'hidden_units': [8, 50, 100],
}

VOCABULARY = {
    "gender": ["Female", "Male"],
    "education": ["Bachelors", "HS-grad", "11th", "Masters", "9th", "Some-college",
                  "Assoc-acdm", "Assoc-voc", "7th-8th", "Doctorate", "Prof-school", "5th-6th",
                  "10th", "1st-4th", "Preschool", "12th"],
    "marital_status": ["Married-civ-spouse", "Divorced", "Married-spouse-absent",
                       "Never-married", "Separated", "Married-AF-spouse", "Widowed"],
    "relationship": ["Husband", "Not-in-family", "Wife", "Own-child", "Unmarried",
                     "Other-relative"],
    "workclass": ["Self-emp-not-inc", "Private", "State-gov", "Federal-gov", "Local-gov", "?",
                  "Self-emp-inc", "Without-pay", "Never-worked"],
}
COLUMNS = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
           "occupation", "relationship", "race", "gender", "capital_gain", "capital_loss",
           "hours_per_week", "native_country", "income_bracket"]
CROSSED = [["education", "occupation"], ["native_country", "occupation"],
           ["age_buckets", "education", "occupation"]]
AGE_BOUNDARIES = [18, 25, 30, 35, 40, 45, 50, 55, 60, 65]
INDICATOR = ['workclass', 'education', 'gender', 'relationship']
EMBEDDING = ['native_country', 'occupation']
CONTINUOUS = ['age', 'education_num', 'capital_gain', 'capital_loss', 'hours_per_week']
BUCKETS = 1000


def _hash(s):
    return zlib.crc32(s.encode())


def preprocess_uci_adult(path):
    """(CSR wide features, dense deep features, labels) of an Adult CSV file."""
    dns_ncols = len(CONTINUOUS) + len(EMBEDDING) + sum(len(VOCABULARY[c]) for c in INDICATOR)
    labels, wide, deep = [], [], []
    with open(path) as f:
        for row in DictReader(f, fieldnames=COLUMNS):
            labels.append(["<", ">"].index(row['income_bracket'].strip()[0]))
            for i, cols in enumerate(CROSSED):
                if cols[0] == "age_buckets":
                    bucket = np.digitize(float(row["age"]), AGE_BOUNDARIES)
                    s = '_'.join(row[c].strip() for c in cols[1:]) + '_' + str(bucket)
                else:
                    s = '_'.join(row[c].strip() for c in cols)
                wide.append((i * BUCKETS + _hash(s) % BUCKETS, 1.0))
            dns = [0] * dns_ncols
            k = 0
            for col in EMBEDDING:
                dns[k] = _hash(row[col].strip()) % BUCKETS
                k += 1
            for col in INDICATOR:
                dns[k + VOCABULARY[col].index(row[col].strip())] = 1.0
                k += len(VOCABULARY[col])
            for col in CONTINUOUS:
                dns[k] = float(row[col].strip())
                k += 1
            deep.append(dns)
    data = [v for _, v in wide]
    indices = [c for c, _ in wide]
    indptr = range(0, len(indices) + 1, len(CROSSED))
    csr = mx.nd.sparse.csr_matrix((data, indices, indptr),
                                  shape=(len(labels), BUCKETS * len(CROSSED)))
    return csr, np.array(deep), np.array(labels)


def wide_deep_model(num_linear_features, num_embed_features, num_cont_features,
                    input_dims, hidden_units):
    """The wide (sparse linear) plus deep (embeddings + MLP) softmax classifier."""
    csr_data = mx.symbol.Variable("csr_data", stype='csr')
    label = mx.symbol.Variable("softmax_label")
    norm_init = mx.initializer.Normal(sigma=0.01)
    weight = mx.symbol.Variable("linear_weight", shape=(num_linear_features, 2),
                                init=norm_init, stype='row_sparse')
    bias = mx.symbol.Variable("linear_bias", shape=(2,))
    linear_out = mx.symbol.broadcast_add(mx.symbol.sparse.dot(csr_data, weight), bias)
    dns_data = mx.symbol.Variable("dns_data")
    x = mx.symbol.slice(data=dns_data, begin=(0, 0), end=(None, num_embed_features))
    embeds = mx.symbol.split(data=x, num_outputs=num_embed_features, squeeze_axis=1)
    x = mx.symbol.slice(data=dns_data, begin=(0, num_embed_features),
                        end=(None, num_embed_features + num_cont_features))
    features = [x]
    for i, embed in enumerate(embeds):
        embed_weight = mx.symbol.Variable('embed_%d_weight' % i, stype='row_sparse')
        features.append(mx.symbol.contrib.SparseEmbedding(
            data=embed, weight=embed_weight, input_dim=input_dims[i],
            output_dim=hidden_units[0]))
    hidden = mx.symbol.concat(*features, dim=1)
    hidden = mx.symbol.FullyConnected(data=hidden, num_hidden=hidden_units[1])
    hidden = mx.symbol.Activation(data=hidden, act_type='relu')
    hidden = mx.symbol.FullyConnected(data=hidden, num_hidden=hidden_units[2])
    hidden = mx.symbol.Activation(data=hidden, act_type='relu')
    deep_out = mx.symbol.FullyConnected(data=hidden, num_hidden=2)
    return mx.symbol.SoftmaxOutput(linear_out + deep_out, label, name='model')


def train(data_dir, num_epoch=10, batch_size=100, lr=0.001, optimizer='adam',
          log_interval=100, seed=0, checkpoint=None):
    """Train as ``train.py`` does; returns per-epoch metrics and training-loop seconds.

    ``checkpoint``: the checkpoint prefix (default ``<data_dir>/checkpoint``).
    """
    np.random.seed(seed)
    ctx = mx.cpu()
    train_csr, train_dns, train_label = preprocess_uci_adult(
        os.path.join(data_dir, ADULT['train']))
    val_csr, val_dns, val_label = preprocess_uci_adult(os.path.join(data_dir, ADULT['test']))
    model = wide_deep_model(ADULT['num_linear_features'], ADULT['num_embed_features'],
                            ADULT['num_cont_features'], ADULT['embed_input_dims'],
                            ADULT['hidden_units'])
    train_data = mx.io.NDArrayIter({'csr_data': train_csr, 'dns_data': train_dns},
                                   {'softmax_label': train_label}, batch_size,
                                   shuffle=True, last_batch_handle='discard')
    eval_data = mx.io.NDArrayIter({'csr_data': val_csr, 'dns_data': val_dns},
                                  {'softmax_label': val_label}, batch_size,
                                  shuffle=True, last_batch_handle='discard')
    mod = mx.mod.Module(symbol=model, context=ctx, data_names=['csr_data', 'dns_data'],
                        label_names=['softmax_label'])
    mod.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label)
    mod.init_params()
    initial = fixed_params(mx, mod, seed, fan_in_sigma(0.01))
    optim = mx.optimizer.create(optimizer, learning_rate=lr, rescale_grad=1.0 / batch_size)
    mod.init_optimizer(optimizer=optim)
    metric = mx.metric.create(['acc'])
    speedometer = mx.callback.Speedometer(batch_size, log_interval)
    clock = Clock(mx.nd.waitall)
    result = {'train_acc': [], 'val_acc': [], 'samples': 0}
    data_iter = iter(train_data)
    for epoch in range(num_epoch):
        nbatch = 0
        metric.reset()
        with clock:
            for batch in data_iter:
                nbatch += 1
                mod.forward_backward(batch)
                mod.update()
                mod.update_metric(metric, batch.label)
                speedometer_param = mx.model.BatchEndParam(epoch=epoch, nbatch=nbatch,
                                                           eval_metric=metric, locals=locals())
                speedometer(speedometer_param)
        result['samples'] += nbatch * batch_size
        result['train_acc'].append(float(metric.get_name_value()[0][1]))
        score = mod.score(eval_data, ['acc'])
        logging.info('epoch %d, accuracy = %s', epoch, score[0][1])
        result['val_acc'].append(float(score[0][1]))
        mod.save_checkpoint(checkpoint or os.path.join(data_dir, "checkpoint"), epoch,
                            save_optimizer_states=True)
        data_iter.reset()
    result['seconds'] = clock.seconds
    result['params'] = param_summary(mod, initial)
    return result

"""How measured.json and the .params files here were made (run with MXNet 1.9.1, not by the suite).

    OMP_NUM_THREADS=1 /work/mxnet-venv/bin/python measure.py > out.txt

Each cell (hidden 3, input 2; LSTMP projection 2) gets deterministic weights
``sin(0.7 * arange(n) + k) / 2`` (k: the parameter's index in sorted name order), is
unrolled over ``x = cos(0.9 * arange(12)).reshape(2, 3, 2)`` (NTC), with and without
``valid_length=[2, 3]``; outputs and states are printed (and turned into measured.json).
The LSTM's and the LSTMP's parameters are also saved with ``collect_params().save``.
"""
import numpy as np
import mxnet as mx


def wts(shape, k):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + k) * 0.5).reshape(shape).astype('float32')


x = np.cos(np.arange(2 * 3 * 2) * 0.9).reshape(2, 3, 2).astype('float32')
for name, cls, kw in [('lstm', mx.gluon.rnn.LSTMCell, {}), ('gru', mx.gluon.rnn.GRUCell, {}),
                      ('rnn', mx.gluon.rnn.RNNCell, {}),
                      ('rnnrelu', mx.gluon.rnn.RNNCell, {'activation': 'relu'}),
                      ('lstmp', mx.gluon.contrib.rnn.LSTMPCell, {'projection_size': 2})]:
    cell = cls(3, input_size=2, prefix=name + '0_', **kw)
    cell.initialize()
    for k, (pn, p) in enumerate(sorted(cell.collect_params().items())):
        p.set_data(mx.nd.array(wts(p.shape, k)))
    if name in ('lstm', 'lstmp'):
        cell.collect_params().save(name + '.params')
    out, st = cell.unroll(3, mx.nd.array(x), layout='NTC', merge_outputs=True)
    print(name, 'params', sorted(cell.collect_params().keys()))
    print(name, 'out', repr(out.asnumpy().round(7).tolist()))
    print(name, 'states', [repr(s.asnumpy().round(7).tolist()) for s in st])
    out, st = cell.unroll(3, mx.nd.array(x), layout='NTC', merge_outputs=True,
                          valid_length=mx.nd.array([2, 3]))
    print(name, 'vl_out', repr(out.asnumpy().round(7).tolist()))
    print(name, 'vl_states', [repr(s.asnumpy().round(7).tolist()) for s in st])

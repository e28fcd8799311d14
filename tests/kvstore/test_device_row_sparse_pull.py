"""The ``'device'`` kvstore calls of MXNet's large_word_lm ``custom_module.py``, on CPU devices.

``prepare_sparse_params`` pulls, for each row_sparse parameter, the rows a batch uses into
every device's copy: ``row_sparse_pull(name, [one array per device], row_ids=<float ids
concatenated and cast to int64>, priority=-index)``; ``get_params_from_kv`` pulls every row
into one array (``row_ids=arange``) and the dense parameters with ``pull``. Expected arrays
are the stored table's rows, selected with NumPy.
"""
import numpy as np
import pytest

import sparsenet as mx

TABLE = np.arange(24, dtype=np.float32).reshape(8, 3)


def _store():
    kv = mx.kv.create('device')
    kv.init('decoder_weight', mx.nd.array(TABLE).tostype('row_sparse'))
    kv.init('lstm_weight', mx.nd.array(TABLE[:2]))
    return kv


def _rows_only(ids):
    want = np.zeros_like(TABLE)
    want[np.unique(ids)] = TABLE[np.unique(ids)]
    return want


def test_kind_is_device():
    assert mx.kv.create('device').type == 'device'


def test_one_id_array_fills_every_devices_copy():
    kv = _store()
    outs = [mx.nd.sparse.zeros('row_sparse', TABLE.shape, ctx=mx.cpu(i)) for i in range(2)]
    sampled = mx.nd.array([5, 1, 7])  # float ids, as the example's sampler gives them
    label = mx.nd.array([[1, 3], [3, 0]])
    ids = mx.nd.concat(*[r.reshape((-1,)).astype(np.int64) for r in (sampled, label)], dim=0)
    kv.row_sparse_pull('decoder_weight', outs, row_ids=ids, priority=-1)
    want = _rows_only([5, 1, 7, 1, 3, 3, 0])
    for i, out in enumerate(outs):
        assert out.stype == 'row_sparse' and out.context == mx.cpu(i)
        np.testing.assert_array_equal(out.indices.asnumpy(), [0, 1, 3, 5, 7])
        np.testing.assert_array_equal(out.asnumpy(), want)


def test_one_id_array_per_device():
    kv = _store()
    outs = [mx.nd.sparse.zeros('row_sparse', TABLE.shape, ctx=mx.cpu(i)) for i in range(2)]
    kv.row_sparse_pull('decoder_weight', out=outs,
                       row_ids=[mx.nd.array([6, 2, 2], dtype='int64'), mx.nd.array([4.0])],
                       priority=-3)
    np.testing.assert_array_equal(outs[0].asnumpy(), _rows_only([6, 2]))
    np.testing.assert_array_equal(outs[1].asnumpy(), _rows_only([4]))


def test_every_row_and_dense_pull_as_get_params_from_kv():
    kv = _store()
    full = mx.nd.sparse.zeros('row_sparse', TABLE.shape)
    kv.row_sparse_pull('decoder_weight', full, row_ids=mx.nd.arange(start=0, stop=8,
                                                                    dtype='int64'))
    np.testing.assert_array_equal(full.asnumpy(), TABLE)
    dense = mx.nd.zeros((2, 3))
    kv.pull('lstm_weight', out=dense)
    np.testing.assert_array_equal(dense.asnumpy(), TABLE[:2])


def test_ids_per_device_must_match_the_outputs():
    kv = _store()
    outs = [mx.nd.sparse.zeros('row_sparse', TABLE.shape, ctx=mx.cpu(i)) for i in range(2)]
    with pytest.raises(mx.MXNetError):
        kv.row_sparse_pull('decoder_weight', out=outs,
                           row_ids=[mx.nd.array([1]), mx.nd.array([2]), mx.nd.array([3])])

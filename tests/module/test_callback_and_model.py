"""Callbacks (speed, checkpoints, progress bars) and mx.model checkpoint files."""
import io
import logging
import os

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import FileFormatError
from sparsenet.model import BatchEndParam


def _param(nbatch, metric=None, epoch=0):
    return BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=metric, locals=None)


def test_speedometer_logs_every_frequent_batches_and_resets_local(caplog, monkeypatch):
    clock = iter([100.0, 102.0, 104.0, 200.0, 201.0])
    monkeypatch.setattr(mx.callback, "_clock", lambda: next(clock))
    metric = mx.metric.MSE()
    metric.update([mx.nd.array([1.0])], [mx.nd.array([3.0])])
    speed = mx.callback.Speedometer(batch_size=8, frequent=2)
    with caplog.at_level(logging.INFO):
        for nbatch in range(5):   # batch 0 starts the clock; batches 2 and 4 log
            speed(_param(nbatch, metric))
    msgs = [r.getMessage() for r in caplog.records]
    # 2 batches x 8 samples in 2 s = 8/s; then 16 samples in 96 s
    assert msgs[0] == "Epoch[0] Batch [0-2]\tSpeed: 8.00 samples/sec\tmse=4.000000"
    assert msgs[1].startswith("Epoch[0] Batch [2-4]\tSpeed: 0.17 samples/sec\tmse=nan")
    assert metric.get_global()[1] == 4.0  # only the local statistics were reset


def test_speedometer_without_metric_and_new_epoch(caplog):
    speed = mx.callback.Speedometer(batch_size=1, frequent=1, auto_reset=False)
    with caplog.at_level(logging.INFO):
        speed(_param(0)), speed(_param(1)), speed(_param(0, epoch=1)), speed(_param(1, epoch=1))
    msgs = [r.getMessage() for r in caplog.records]
    assert len(msgs) == 2 and msgs[0].startswith("Iter[0] Batch [1]")
    assert msgs[1].startswith("Iter[1] Batch [1]")


def test_do_checkpoint_period(tmp_path):
    prefix = str(tmp_path / "m")
    sym = mx.sym.var('w') * 2
    cb = mx.callback.do_checkpoint(prefix, period=2)
    for epoch in range(4):
        cb(epoch, sym, {'w': mx.nd.ones((1,)) * epoch}, {})
    assert sorted(os.listdir(tmp_path)) == ['m-0002.params', 'm-0004.params', 'm-symbol.json']
    _, args, _ = mx.model.load_checkpoint(prefix, 4)
    assert args['w'].asnumpy().tolist() == [3.0]


def test_progress_bars(caplog):
    bar = mx.callback.ProgressBar(total=4, length=10)
    with caplog.at_level(logging.INFO):
        bar(_param(1))
    assert caplog.records[-1].getMessage() == "[=====-----] 50.0%"
    out = io.StringIO()
    epoch_bar = mx.callback.EpochProgressBar(total=3, file=out)
    metric = mx.metric.create('acc')
    epoch_bar.start(7)
    for i in range(3):
        epoch_bar(_param(i, metric))
    epoch_bar.close()
    text = out.getvalue()
    assert "Epoch 7" in text and "3/3" in text
    epoch_bar(_param(3, metric))  # closed: ignored


def test_log_train_metric_and_validation_callback(caplog):
    metric = mx.metric.MAE()
    metric.update([mx.nd.array([1.0])], [mx.nd.array([1.5])])
    with caplog.at_level(logging.INFO):
        mx.callback.log_train_metric(period=1, auto_reset=True)(_param(0, metric))
        mx.callback.LogValidationMetricsCallback()(_param(0, metric, epoch=3))
    msgs = [r.getMessage() for r in caplog.records]
    assert msgs[0] == "Iter[0] Batch[0] Train-mae=0.500000"
    assert msgs[1] == "Epoch[3] Validation-mae=nan"  # reset_local by auto_reset


def test_checkpoint_keeps_storage_types(tmp_path):
    prefix = str(tmp_path / "net")
    net = mx.sym.dot(mx.sym.var('data', stype='csr'), mx.sym.var('w', stype='row_sparse'))
    w = mx.nd.sparse.row_sparse_array(([[1.0], [2.0]], [0, 3]), shape=(5, 1))
    mx.model.save_checkpoint(prefix, 12, net, {'w': w, 'b': mx.nd.ones((2,))}, {})
    sym, args, aux = mx.model.load_checkpoint(prefix, 12)
    assert sym.tojson() == net.tojson() and aux == {}
    assert args['w'].stype == 'row_sparse'
    np.testing.assert_array_equal(args['w'].indices.asnumpy(), [0, 3])
    np.testing.assert_array_equal(args['w'].asnumpy(), w.asnumpy())
    assert mx.model.load_params(prefix, 12)[0].keys() == {'w', 'b'}


def test_checkpoint_errors(tmp_path):
    prefix = str(tmp_path / "x")
    with pytest.raises(FileNotFoundError, match="x-symbol.json"):
        mx.model.load_checkpoint(prefix, 1)
    mx.nd.save(prefix + "-0001.params", {'weight': mx.nd.ones((1,))})
    mx.sym.var('a').save(prefix + "-symbol.json")
    with pytest.raises(FileFormatError, match="key 'weight' is neither 'arg:<name>'"):
        mx.model.load_checkpoint(prefix, 1)
    mx.nd.save(prefix + "-0002.params", [mx.nd.ones((1,))])
    with pytest.raises(FileFormatError, match="expected a dict of parameters"):
        mx.model.load_params(prefix, 2)
    with open(prefix + "-symbol.json", "w") as f:
        f.write("{broken")
    with pytest.raises(mx.base.SparsenetError, match="x-symbol.json: load_json"):
        mx.model.load_checkpoint(prefix, 1)

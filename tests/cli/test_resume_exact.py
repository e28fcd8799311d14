"""``sparsenet train --lazy exact``: checkpoints hold caught-up weights, so --resume continues
as the uninterrupted run and the .params equal standard (dense) training;
the Gluon Trainer's exact-mode guard and save_parameters."""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.cli.main import main
from tests.cli.libsvm_data import FEATURES, make_task

CASES = [("linear", "adam", []), ("linear", "sgd", ["--wd", "0.01"]),
         ("fm", "adagrad", ["--factor-size", "3", "--wd", "0.001"])]
IDS = ["linear-adam", "linear-sgd-wd", "fm-adagrad"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_task(tmp_path_factory.mktemp("exact_data"), "binary")


def _train(train, out, lazy, model, optimizer, extra, *flags):
    return main(["train", train, "--features", str(FEATURES), "--out", str(out), "--quiet",
                 "--model", model, "--optimizer", optimizer, "--lazy", lazy,
                 "--batch-size", "50", "--lr", "0.05", *extra, *flags])


def _params(path):
    return {k: v.asnumpy() for k, v in mx.nd.load(str(path)).items()}


@pytest.mark.parametrize("model,optimizer,extra", CASES, ids=IDS)
def test_resume_equals_uninterrupted_and_dense(data, tmp_path, model, optimizer, extra):
    train, _, _ = data
    straight, resumed, dense = tmp_path / "s", tmp_path / "r", tmp_path / "d"
    assert _train(train, straight, "exact", model, optimizer, extra, "--epochs", "3") == 0
    assert _train(train, resumed, "exact", model, optimizer, extra, "--epochs", "2") == 0
    assert main(["train", train, "--out", str(resumed), "--epochs", "3", "--resume",
                 "--quiet"]) == 0
    assert _train(train, dense, "false", model, optimizer, extra, "--epochs", "3") == 0
    a, b = _params(straight / "epoch-0003.params"), _params(resumed / "epoch-0003.params")
    ref = _params(dense / "epoch-0003.params")
    for key in ref:
        np.testing.assert_allclose(b[key], a[key], rtol=0, atol=1e-7, err_msg=key)
        # the exact mode's weights, as written, are standard training's
        np.testing.assert_allclose(a[key], ref[key], rtol=1e-4, atol=1e-5, err_msg=key)


def _embedding_step(net, trainer, ids, catch_up):
    x = mx.nd.array(ids)
    if catch_up:
        trainer.catch_up(net.weight, x)
    with mx.autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    trainer.step(1)


def _net(lazy, **kw):
    net = mx.gluon.nn.Embedding(10, 2, sparse_grad=True)
    net.initialize(init="ones")
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               dict(learning_rate=0.1, momentum=0.9, lazy_update=lazy, **kw))
    return net, trainer


def test_trainer_guard_raises_on_a_stale_forward():
    net, trainer = _net("exact")
    _embedding_step(net, trainer, [1, 2], False)
    before = net.weight.data().asnumpy()
    with pytest.raises(mx.MXNetError, match=r"trainer\.catch_up"):
        _embedding_step(net, trainer, [3], False)  # row 3 skipped step 1: stale
    np.testing.assert_array_equal(net.weight.data().asnumpy(), before)  # nothing applied


def test_trainer_catch_up_and_save_parameters_give_the_dense_run(tmp_path):
    net, trainer = _net("exact", wd=0.05)
    ref, ref_trainer = _net(False, wd=0.05)
    for ids in ([1, 2], [3], [1, 7], [2], [3, 9]):
        _embedding_step(net, trainer, ids, True)
        _embedding_step(ref, ref_trainer, ids, False)
    path = tmp_path / "net.params"
    net.save_parameters(str(path))  # no explicit sync: the saved rows are caught up
    saved = mx.nd.load(str(path))["weight"].asnumpy()
    np.testing.assert_allclose(saved, ref.weight.data().asnumpy(), rtol=1e-6, atol=1e-7)

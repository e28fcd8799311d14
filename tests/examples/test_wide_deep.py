"""MXNet 1.9.1's wide & deep program (``wide_deep_program.py``) on sparsenet, against MXNet.

Measured with MXNet 1.9.1 on the same generated UCI Adult files (2,000 train
rows, 1,000 test rows), the same initial weights and the same batch order::

    OMP_NUM_THREADS=1 /tmp/mx/bin/python tests/examples/run_mxnet.py wide_deep small DIR

One epoch of 20 batches of 100: ``NDArrayIter(shuffle=True)`` draws its order
from ``np.random`` (seeded by the program); later epochs are left out because
MXNet's NDArrayIter composes each new shuffle with the previous one, which
sparsenet's does not (the orders differ from the second epoch on).
"""
import numpy as np
import pytest

import sparsenet as mx
from tests.examples.checks import assert_params_close, run

DATA_SHA256 = {
    "adult.data": "5a10b0f46b2bf147a473e69800212a5d9e4e347303e50679f82ba75d29c24d8e",
    "adult.test": "f40ff9aabb1233ba1e8fe3ada6320397f3f87409cd070b490024bc284c9d28ba",
}

# measured with MXNet 1.9.1 (see the module docstring)
MXNET_TRAIN_ACC = [0.49]
MXNET_VAL_ACC = [0.651]
MXNET_PARAMS = {  # name: [sum, sum of squares, squared change from the initial weights]
    "embed_0_weight": [-1.3163801220455298, 0.783419092416348, 0.004373737151054239],
    "embed_1_weight": [-0.44430705836524, 0.7919131078614278, 0.0030991791953631992],
    "fullyconnected0_bias": [-0.15341595385689288, 0.0023285812667024255,
                             0.0023285812667024255],
    "fullyconnected0_weight": [0.6405236433056416, 48.85236470462992, 0.11321762859255144],
    "fullyconnected1_bias": [-0.11775243177544326, 0.003304452177875344,
                             0.003304452177875344],
    "fullyconnected1_weight": [12.311870306846686, 100.21230384126773, 0.16312427686890635],
    "fullyconnected2_bias": [-1.862645149230957e-09, 5.23177531562731e-05,
                             5.23177531562731e-05],
    "fullyconnected2_weight": [-3.1163297232124023, 1.9699454582134206, 0.008804789518244037],
    "linear_bias": [0.0, 5.231777220954942e-05, 5.231777220954942e-05],
    "linear_weight": [-0.9381510909815916, 0.6099171385754764, 0.012857080650774545],
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wide_deep")
    return tmp, run("wide_deep", tmp, DATA_SHA256)


def test_accuracy_matches_mxnet(trained):
    _, result = trained
    assert result["samples"] == 2000
    # 1,000 test rows: one prediction flipped by float32 rounding would move 0.001
    assert result["train_acc"] == pytest.approx(MXNET_TRAIN_ACC, abs=1e-3)
    assert result["val_acc"] == pytest.approx(MXNET_VAL_ACC, abs=1e-3)


def test_weights_match_mxnet(trained):
    _, result = trained
    assert_params_close(result["params"], MXNET_PARAMS)


def test_checkpoint_holds_the_trained_weights(trained):
    tmp, result = trained
    assert (tmp / "checkpoint-0000.states").exists()
    assert (tmp / "checkpoint-symbol.json").exists()
    _, arg_params, _ = mx.model.load_checkpoint(str(tmp / "checkpoint"), 0)
    assert arg_params["linear_weight"].stype == "row_sparse"
    for name, (s, ss, _) in result["params"].items():
        a = arg_params[name].asnumpy().astype(np.float64)
        assert a.sum() == pytest.approx(s, rel=1e-12, abs=1e-12)
        assert (a * a).sum() == pytest.approx(ss, rel=1e-12)

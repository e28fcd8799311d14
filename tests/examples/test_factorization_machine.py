"""MXNet 1.9.1's factorization machine program (``factorization_machine_program.py``)
on sparsenet, against MXNet.

Measured with MXNet 1.9.1 on the same generated Criteo LibSVM files (3,000
train rows, 1,000 test rows, 39 features each, ``input_size`` 20,000), the same
initial weights, ``batch_size`` 500, two epochs::

    OMP_NUM_THREADS=1 /tmp/mx/bin/python tests/examples/run_mxnet.py factorization_machine small DIR

``LibSVMIter`` does not shuffle, so every batch is the same in both runs.
"""
import pytest

from tests.examples.checks import assert_params_close, run

DATA_SHA256 = {
    "criteo.t": "38744d0c579704a5146206b2b7379cab60676dcca87760c0c8b9a0116f518e00",
    "criteo.tr": "e6546632b0409fbb80d5f4927fcbbf9b03d0adcc66c3adb4c3d959783f447f7e",
}

# measured with MXNet 1.9.1 (see the module docstring): per epoch [log_loss, auc] on the
# training batches, and the log loss of score() on the test file after all rows are pulled
MXNET_TRAIN = [[0.6144500630696614, 0.5199068145350737],
               [0.5317512664794922, 0.5736905156014993]]
MXNET_EVAL_LOG_LOSS = [0.5246183471679687, 0.48984967041015626]
MXNET_SKIPPED = 0
MXNET_PARAMS = {  # name: [sum, sum of squares, squared change from the initial weights]
    "v": [0.20929783817780034, 0.32550963466195765, 0.005137056635091856],
    "w": [-12.220895698909437, 2.092592607066796, 0.08402027212490706],
    "w0": [-1.0168869495391846, 1.034059068143108, 1.0252122085168194],
}


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return run("factorization_machine", tmp_path_factory.mktemp("fm"), DATA_SHA256)


def test_metrics_match_mxnet(result):
    assert result["samples"] == 6000
    assert result["skipped"] == MXNET_SKIPPED  # nothing raised inside the program's try
    for got, want in zip(result["train"], MXNET_TRAIN):
        # log loss: float32 rounding only; auc: near-tied predictions may swap places
        assert got[0] == pytest.approx(want[0], rel=1e-5)
        assert got[1] == pytest.approx(want[1], abs=1e-4)
    assert result["eval_log_loss"] == pytest.approx(MXNET_EVAL_LOG_LOSS, rel=1e-5)


def test_weights_match_mxnet(result):
    assert_params_close(result["params"], MXNET_PARAMS)

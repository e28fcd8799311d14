"""MXNet 1.9.1's matrix factorization program (``matrix_factorization_program.py``) on
sparsenet, against MXNet.

Measured with MXNet 1.9.1 on the same generated MovieLens files (3,000 train
ratings, 1,024 test ratings), the same initial weights and batch order,
``factor_size`` 16, ``batch_size`` 128 (the last training batch padded, as
NDArrayIter's default ``last_batch_handle='pad'``)::

    OMP_NUM_THREADS=1 /tmp/mx/bin/python tests/examples/run_mxnet.py matrix_factorization small DIR

One epoch: NDArrayIter(shuffle=True) draws from ``np.random`` (seeded by the
program), and MXNet composes each new shuffle with the previous one from the
second epoch on, which sparsenet's NDArrayIter does not.
"""
import pytest

from tests.examples.checks import assert_params_close, run

# one context: kvstore='device' makes no store (as MXNet 1.9.1's _create_kvstore), so
# Module.prepare warns that it has nothing to pull, as MXNet's does
pytestmark = pytest.mark.filterwarnings("ignore:Parameters are not updated in the KVStore")

DATA_SHA256 = {
    "ml-10M100K/r1.test": "928145c58cd60c61a9b2a14f17e0c3028a0ae805764c74509b4fd0267d6b4a34",
    "ml-10M100K/r1.train": "68f837e8e0956a31e5f4ec5e45cd0ce813d471347c600388a60b6834e2fafc61",
}

# measured with MXNet 1.9.1 (see the module docstring)
MXNET_TRAIN_MSE = [4.494424397746722]
MXNET_EVAL_MSE = [2.039223536849022]
MXNET_PARAMS = {  # name: [sum, sum of squares, squared change from the initial weights]
    "fullyconnected0_bias": [-1.4611307568848133, 4.043618276686246, 4.043618276686246],
    "fullyconnected0_weight": [1.2777258725836873, 14.566137745735627, 0.8044084457256043],
    "fullyconnected1_bias": [-1.3151574283838272, 3.2535536941874343, 3.2535536941874343],
    "fullyconnected1_weight": [-6.3487916444428265, 16.21205956331265, 0.571828886742507],
    "item_weight": [288.6789074754672, 65117.910362220464, 1.1224220036090504],
    "user_weight": [119.62719920691333, 71501.46571603489, 2.2680591415584668],
}


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return run("matrix_factorization", tmp_path_factory.mktemp("mf"), DATA_SHA256)


def test_mse_matches_mxnet(result):
    assert result["samples"] == 24 * 128
    # float32 rounding only
    assert result["train_mse"] == pytest.approx(MXNET_TRAIN_MSE, rel=1e-5)
    assert result["eval_mse"] == pytest.approx(MXNET_EVAL_MSE, rel=1e-5)


def test_weights_match_mxnet(result):
    # an item whose embedding is all negative under the ReLU has an all-zero gradient row:
    # MXNet keeps every looked-up row in the row_sparse gradient (its lazy SGD then applies
    # momentum and weight decay to that row), and so does sparsenet
    assert_params_close(result["params"], MXNET_PARAMS)

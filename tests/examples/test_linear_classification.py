"""MXNet 1.9.1's linear classification program (``linear_classification_program.py``) on
sparsenet, against MXNet.

Measured with MXNet 1.9.1 on the same generated Avazu LibSVM files (3,072
train rows, 1,024 test rows, 15 features each, 1,000,001 columns), the same
initial weights, ``batch_size`` 512, two epochs, for the default optimizer
(``sgd``) and for ``adagrad`` (train.py's ``--optimizer``; SGD at train.py's
learning rate 0.01 moves the weights little in 12 steps)::

    OMP_NUM_THREADS=1 /tmp/mx/bin/python tests/examples/run_mxnet.py \\
        linear_classification small DIR [--options '{"optimizer": "adagrad"}']

The row counts are multiples of the batch size: on a file whose last batch
wraps around, MXNet's LibSVMIter starts its next pass after the wrapped rows
(and ``score``'s reset of a fresh iterator skips them too), which sparsenet's
does not.
"""
import pytest

from tests.examples.checks import assert_params_close, run

# with no kvstore, Module.prepare warns that it has nothing to pull, as MXNet 1.9.1's does
pytestmark = pytest.mark.filterwarnings("ignore:Parameters are not updated in the KVStore")

DATA_SHA256 = {
    "avazu-app": "7580d7fee31ecb3d06f1e1542a6193919136c3a1691cd27adbd299279c938405",
    "avazu-app.t": "92b3f969c4d2f0c0bbef7880c6aa02c8014202dc97b7f644fdd1e1978ef52795",
}

# measured with MXNet 1.9.1 (see the module docstring): per epoch the nll of the training
# batches and of score() on the test file; parameters: [sum, sum of squares, squared change]
MXNET = {
    "sgd": {
        "train_nll": [0.6953509549299876, 0.6986492574214935],
        "eval_nll": [0.6970784962177277, 0.7008998095989227],
        "params": {"bias": [0.0, 9.111057166130742e-05, 9.111057166130742e-05],
                   "weight": [18.17328753627099, 199.76217454362123, 0.00036246351457065083]},
    },
    "adagrad": {
        "train_nll": [0.722106804450353, 0.699203093846639],
        "eval_nll": [0.7387343645095825, 0.7376412451267242],
        "params": {"bias": [0.0, 0.0007424199558188349, 0.0007424199558188349],
                   "weight": [18.173287329934837, 201.24036480712718, 1.488608423923339]},
    },
}


@pytest.fixture(scope="module", params=sorted(MXNET))
def case(request, tmp_path_factory):
    optimizer = request.param
    tmp = tmp_path_factory.mktemp(f"linear_{optimizer}")
    return tmp, MXNET[optimizer], run("linear_classification", tmp, DATA_SHA256,
                                      optimizer=optimizer)


def test_nll_matches_mxnet(case):
    _, want, result = case
    assert result["samples"] == 2 * 3072
    # float32 rounding only (the same batches, the same initial weights)
    assert result["train_nll"] == pytest.approx(want["train_nll"], rel=1e-5)
    assert result["eval_nll"] == pytest.approx(want["eval_nll"], rel=1e-5)


def test_weights_match_mxnet(case):
    _, want, result = case
    assert_params_close(result["params"], want["params"])


def test_checkpoints_written(case):
    tmp, _, _ = case
    assert (tmp / "checkpoint-symbol.json").exists()
    assert (tmp / "checkpoint-0000.params").exists()
    assert (tmp / "checkpoint-0001.params").exists()

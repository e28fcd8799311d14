"""mx.test_utils devices, environment variables, retries and build features."""
import os
import sys

import pytest

import sparsenet as mx
from sparsenet import test_utils as tu
from sparsenet.base import InvalidArgumentError


def test_default_context_is_the_current_context():
    assert tu.default_context() == mx.cpu()
    try:
        tu.set_default_context(mx.cpu(1))
        # measured with MXNet 1.9.1: the global default changes too
        assert mx.current_context() == mx.cpu(1) and tu.default_context() == mx.cpu(1)
    finally:
        tu.set_default_context(mx.cpu(0))
    assert mx.current_context() == mx.cpu(0)
    assert list(tu.list_gpus()) == list(range(mx.num_gpus()))


def test_machine_queries():
    with pytest.raises(InvalidArgumentError, match="Expecting a gpu context to get cuda compute "
                                                   "capability, while received ctx cpu"):
        tu.get_cuda_compute_capability(mx.cpu())
    if mx.num_gpus():
        assert tu.get_cuda_compute_capability(mx.gpu(0)) >= 30
    assert tu.has_tvm_ops() is False and tu.is_op_runnable() is True
    with tu.environment("CD_JOB", "1"):
        assert tu.is_cd_run()
    with tu.environment("CD_JOB", None):
        assert not tu.is_cd_run()
    assert tu.is_aarch64_run() == (os.uname().machine == "aarch64")


def test_environment_sets_and_restores():
    os.environ.pop("SN_X", None)
    os.environ["SN_Y"] = "old"
    with tu.environment({"SN_X": "1", "SN_Y": None}):
        assert os.environ["SN_X"] == "1" and "SN_Y" not in os.environ
    assert "SN_X" not in os.environ and os.environ.pop("SN_Y") == "old"
    with pytest.raises(RuntimeError):
        with tu.environment("SN_X", 5):
            assert tu.getenv("SN_X") == "5"
            raise RuntimeError("restored even on error")
    assert tu.getenv("SN_X") is None
    with pytest.raises(InvalidArgumentError, match="one dict .* or two arguments"):
        with tu.environment("A", "b", "c"):
            pass


def test_getenv_setenv():
    tu.setenv("SN_U", "v")
    assert os.environ["SN_U"] == "v" and tu.getenv("SN_U") == "v"
    tu.setenv("SN_U", None)
    assert "SN_U" not in os.environ and tu.getenv("SN_U") is None


def test_retry():
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) >= 3

    flaky()
    assert len(calls) == 3

    @tu.retry(2)
    def bad():
        calls.append(1)
        raise AssertionError("nope")

    with pytest.raises(AssertionError, match="nope"):
        bad()
    assert len(calls) == 5 and bad.__name__ == "bad"

    @tu.retry(5)
    def broken():
        calls.append(1)
        raise KeyError("not retried")

    with pytest.raises(KeyError):
        broken()
    assert len(calls) == 6
    with pytest.raises(InvalidArgumentError, match="positive int"):
        tu.retry(0)


def test_discard_stderr(capfd):
    with tu.discard_stderr():
        os.write(2, b"hidden\n")
    os.write(2, b"shown\n")
    sys.stderr.flush()
    err = capfd.readouterr().err
    assert "hidden" not in err and "shown" in err

"""SyncBatchNorm: local batch statistics with one device, global ones over the ranks of a job.

Expected values come from torch's own batch normalisation over the whole batch
(``torch.nn.functional.batch_norm`` with autograd).
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import sparsenet as mx
from tests.kvstore.dist_helpers import run_ranks, values

SHAPE = (8, 3, 4, 2)


def _data(seed=0):
    return np.random.default_rng(seed).normal(2.0, 3.0, size=SHAPE).astype(np.float32)


def _torch_reference(x, head):
    """Outputs, input gradient, gamma/beta gradients and running statistics of the full batch."""
    xt = torch.tensor(x, requires_grad=True)
    gamma = torch.tensor([1.5, 0.5, 2.0], requires_grad=True)
    beta = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
    rm, rv = torch.zeros(3), torch.ones(3)
    out = F.batch_norm(xt, rm, rv, gamma, beta, training=True, momentum=0.1, eps=1e-5)
    out.backward(torch.tensor(head))
    # torch's running variance is unbiased; MXNet's (and sparsenet's) is the biased one
    var = x.transpose(1, 0, 2, 3).reshape(3, -1).var(axis=1)
    mean = x.transpose(1, 0, 2, 3).reshape(3, -1).mean(axis=1)
    return {"out": out.detach().numpy(), "dx": xt.grad.numpy(), "dgamma": gamma.grad.numpy(),
            "dbeta": beta.grad.numpy(), "mean": 0.1 * mean, "var": 0.9 + 0.1 * var}


def _run_layer(x, head, num_devices):
    bn = mx.gluon.contrib.nn.SyncBatchNorm(in_channels=3, num_devices=num_devices)
    bn.initialize()
    bn.gamma.set_data(mx.nd.array([1.5, 0.5, 2.0]))
    bn.beta.set_data(mx.nd.array([0.1, -0.2, 0.3]))
    xs = mx.nd.array(x)
    xs.attach_grad()
    with mx.autograd.record():
        out = bn(xs)
    out.backward(mx.nd.array(head))
    return {"out": out.asnumpy(), "dx": xs.grad.asnumpy(), "dgamma": bn.gamma.grad().asnumpy(),
            "dbeta": bn.beta.grad().asnumpy(), "mean": bn.running_mean.data().asnumpy(),
            "var": bn.running_var.data().asnumpy()}


def test_one_device_is_batch_norm_of_the_batch():
    x, head = _data(0), _data(1)
    got, want = _run_layer(x, head, 1), _torch_reference(x, head)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-4, err_msg=k)


def test_hybridized_equals_eager():
    x = _data(2)
    outs = []
    for hybrid in (False, True):
        bn = mx.gluon.contrib.nn.SyncBatchNorm(in_channels=3, num_devices=1)
        bn.initialize()
        if hybrid:
            bn.hybridize()
        with mx.autograd.record():
            y = bn(mx.nd.array(x))
        outs.append(y.asnumpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6, atol=1e-6)


def test_several_devices_without_a_job_is_refused():
    bn = mx.gluon.contrib.nn.SyncBatchNorm(in_channels=3, num_devices=2)
    bn.initialize()
    with pytest.raises(mx.MXNetError, match=r"ndev=2 .*sparsenet launch -n 2") as info:
        with mx.autograd.record():
            bn(mx.nd.array(_data(0)))
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_num_devices_validated(bad):
    with pytest.raises(mx.MXNetError, match="num_devices"):
        mx.gluon.contrib.nn.SyncBatchNorm(num_devices=bad)


def scenario_two_ranks(rank, world):
    mx.kv.create("dist_sync")  # starts the job's process group
    x, head = _data(0), _data(1)
    part = slice(rank * SHAPE[0] // world, (rank + 1) * SHAPE[0] // world)
    return _run_layer(x[part], head[part], world)


def test_two_ranks_normalise_with_the_global_batch():
    x, head = _data(0), _data(1)
    want = _torch_reference(x, head)
    outs = values(run_ranks("tests.gluon.test_sync_batch_norm:scenario_two_ranks", 2))
    np.testing.assert_allclose(np.concatenate([o["out"] for o in outs]), want["out"],
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.concatenate([o["dx"] for o in outs]), want["dx"],
                               rtol=1e-4, atol=1e-4)
    # each rank holds its slice's share of the parameter gradients (a kvstore sums them)
    np.testing.assert_allclose(outs[0]["dgamma"] + outs[1]["dgamma"], want["dgamma"],
                               rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(outs[0]["dbeta"] + outs[1]["dbeta"], want["dbeta"],
                               rtol=1e-4, atol=1e-3)
    for o in outs:  # every rank's running statistics are the global batch's
        np.testing.assert_allclose(o["mean"], want["mean"], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(o["var"], want["var"], rtol=1e-4, atol=1e-5)

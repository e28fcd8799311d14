"""The same optimizer code on CUDA tensors: lazy, standard and exact updates equal the CPU ones."""
import numpy as np
import pytest
import torch
from optim_helpers import grad_sequence

import sparsenet as mx

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")

CASES = [("sgd", dict(momentum=0.9, wd=0.1)), ("adam", dict()), ("adagrad", dict(wd=0.1)),
         ("ftrl", dict()), ("rmsprop", dict(centered=True)), ("lamb", dict(wd=0.1)),
         ("groupadagrad", dict()), ("nadam", dict())]


def run(ctx, name, kwargs, lazy, stype, w0, grads):
    opt = mx.optimizer.create(name, lazy_update=lazy, learning_rate=0.05, **kwargs)
    w = mx.nd.array(w0, ctx=ctx)
    if stype == "row_sparse":
        w = mx.nd.sparse.row_sparse_array((w0, np.arange(w0.shape[0])), shape=w0.shape, ctx=ctx)
    state = opt.create_state(0, w)
    for g, rows in grads:
        grad = mx.nd.sparse.row_sparse_array((g[rows], rows), shape=g.shape, ctx=ctx)
        opt.update(0, w, grad, state)
    opt.sync(w, state)
    assert w.context == ctx
    return w.asnumpy()


@pytest.mark.parametrize("stype", ["default", "row_sparse"])
@pytest.mark.parametrize("lazy", [True, False, "exact"])
@pytest.mark.parametrize("name,kwargs", CASES)
def test_cuda_equals_cpu(name, kwargs, lazy, stype):
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((30, 4)).astype(np.float32)
    grads = grad_sequence(w0.shape, ["random", "empty", "random", "all", "random"], rng)
    cpu = run(mx.cpu(), name, kwargs, lazy, stype, w0, grads)
    gpu = run(mx.gpu(), name, kwargs, lazy, stype, w0, grads)
    np.testing.assert_allclose(gpu, cpu, rtol=1e-4, atol=1e-5)

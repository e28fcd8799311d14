"""A compiled Program runs its dense nodes through prebound calls.

A node the storage plan runs on dense inputs with no rule row to choose calls the
operator's dense definition directly, decided once per input signature; the
registry's dispatch (rule lookup, graph checks) is left to the nodes that need
it. Values and gradients must stay those of torch, and a node whose input
turns out not dense at run time dispatches as before.
"""
import numpy as np
import pytest
import torch

import sparsenet as mx
from sparsenet.context import LOGICAL
from sparsenet.ops.registry import Operator
from sparsenet.symbol.program import Program


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


@pytest.fixture(autouse=True)
def _no_logical_contexts(monkeypatch):
    # once any array went to a host context other than cpu(0) (an earlier test in this
    # process), nodes dispatch so that results are placed; these tests are about the
    # process that never did
    monkeypatch.setattr(LOGICAL, "on", False)


@pytest.fixture
def dispatches(monkeypatch):
    """The operator names that went through ``Operator._dispatch``, in call order."""
    calls = []
    original = Operator._dispatch

    def counting(self, inputs, params):
        calls.append(self.name)
        return original(self, inputs, params)
    monkeypatch.setattr(Operator, "_dispatch", counting)
    return calls


def _mlp():
    x, w, b = mx.sym.var("x"), mx.sym.var("w"), mx.sym.var("b")
    h = mx.sym.FullyConnected(x, w, b, num_hidden=3, name="fc")
    return mx.sym.sum(mx.sym.relu(h) * 2.0, name="s")


def test_dense_nodes_do_not_dispatch_and_match_torch(dispatches):
    rng = np.random.RandomState(0)
    xv, wv, bv = (rng.normal(size=s).astype(np.float32) for s in ((4, 5), (3, 5), (3,)))
    prog = Program(_mlp(), {})
    assert all(step.dense is not None for step in prog.steps)
    x, w, b = mx.nd.array(xv), mx.nd.array(wv), mx.nd.array(bv)
    w.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        (out,) = prog.run([x, w, b])
    out.backward()
    assert dispatches == []  # every node ran its prebound dense call

    tx, tw, tb = torch.tensor(xv), torch.tensor(wv, requires_grad=True), \
        torch.tensor(bv, requires_grad=True)
    ref = (torch.relu(tx @ tw.T + tb) * 2.0).sum()
    ref.backward()
    np.testing.assert_allclose(out.asnumpy(), [ref.item()], rtol=1e-6)
    np.testing.assert_allclose(w.grad.asnumpy(), tw.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.asnumpy(), tb.grad.numpy(), rtol=1e-6)


def test_sparse_nodes_still_dispatch(dispatches):
    x = mx.sym.var("x", stype="csr")
    y = mx.sym.relu(mx.sym.dot(x, mx.sym.var("w")), name="r")
    prog = Program(y, {})
    assert [step.dense is not None for step in prog.steps] == [False, True]
    xv = np.array([[0, 1, 0], [2, 0, -3]], np.float32)
    wv = np.arange(6, dtype=np.float32).reshape(3, 2) - 2
    inputs = [mx.nd.array(xv).tostype("csr"), mx.nd.array(wv)]
    dispatches.clear()
    (out,) = prog.run(inputs)
    assert dispatches == ["dot"]  # the sparse kernel's row, chosen by the registry
    np.testing.assert_allclose(out.asnumpy(), np.maximum(xv @ wv, 0))


def test_an_input_that_is_not_dense_at_run_time_dispatches(dispatches):
    # compiled for a dense 'x', run with a CSR one (as when a kernel upstream declines and
    # hands on another storage type): the node dispatches, and the registry's storage
    # fallback gives the dense value
    prog = Program(mx.sym.relu(mx.sym.var("x"), name="r"), {"x": "default"})
    xv = np.array([[0, -1, 2]], np.float32)
    x = mx.nd.array(xv).tostype("csr")
    dispatches.clear()
    with mx.config.storage_fallback("silent"):
        (out,) = prog.run([x])
    assert dispatches == ["relu"]
    np.testing.assert_allclose(out.tostype("default").asnumpy(), [[0, 0, 2]])


def test_errors_still_name_the_node():
    y = mx.sym.elemwise_add(mx.sym.var("a"), mx.sym.var("b"), name="adder")
    prog = Program(y, {})
    with pytest.raises(mx.MXNetError, match="at symbol node 'adder'") as info:
        prog.run([mx.nd.ones((2, 3)), mx.nd.ones((3,))])
    assert isinstance(info.value, ValueError)

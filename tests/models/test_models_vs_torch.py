"""Each ready model against the same model written directly with torch (dense tensors,
the same initial weights copied in): forward scores, gradients, and a few SGD steps.
The large tables' gradients must be row_sparse, holding the rows the batch touches."""
import numpy as np
import pytest
import scipy.sparse as sp
import torch

import sparsenet as mx
from sparsenet.models import MLP, FactorizationMachine, LinearModel, WideAndDeep
from sparsenet.models.tasks import make_loss

F = 30  # features
B = 16  # batch size


def _batch(seed, task, classes=3):
    rng = np.random.default_rng(seed)
    x = sp.random(B, F, density=0.15, format="csr", random_state=seed, dtype=np.float32)
    x.data = rng.uniform(-1.5, 1.5, size=x.nnz).astype(np.float32)
    if task == "regression":
        y = rng.normal(size=B)
    elif task == "binary":
        y = rng.integers(0, 2, size=B)
    else:
        y = rng.integers(0, classes, size=B)
    return x, y.astype(np.float32)


def _t(param):
    return torch.tensor(param.data().asnumpy(), requires_grad=True)


def _torch_loss(scores, y, task):
    y = torch.tensor(y)
    if task == "regression":
        return 0.5 * (scores.reshape(-1) - y) ** 2
    if task == "binary":
        return torch.nn.functional.binary_cross_entropy_with_logits(scores.reshape(-1), y,
                                                                   reduction="none")
    return torch.nn.functional.cross_entropy(scores, y.long(), reduction="none")


# each case: (build sparsenet net, (table params, other params) getters, torch forward)
def _linear(task):
    net = LinearModel(F, task=task, num_classes=3, weight_initializer=mx.init.Normal(0.3))

    def params(n):
        return [n.linear.weight], [n.linear.bias]

    def forward(t, X):
        w, b = t
        return X @ w + b
    return net, params, forward


def _fm(task):
    net = FactorizationMachine(F, factor_size=4, task=task,
                               factor_initializer=mx.init.Normal(0.3))

    def params(n):
        return [n.linear.weight, n.factors], [n.linear.bias]

    def forward(t, X):
        w, v, b = t
        pairs = 0.5 * ((X @ v) ** 2 - (X ** 2) @ (v ** 2)).sum(1, keepdim=True)
        return X @ w + b + pairs
    return net, params, forward


def _wide_deep(task):
    net = WideAndDeep(F, hidden=(8, 5), task=task, num_classes=3)

    def params(n):
        return ([n.wide.weight, n.embed.weight],
                [n.wide.bias, n.embed.bias, n.deep[0].weight, n.deep[0].bias,
                 n.deep[1].weight, n.deep[1].bias])

    def forward(t, X):
        ww, we, bw, be, w1, b1, w2, b2 = t
        h = torch.relu(X @ we + be)
        h = torch.relu(h @ w1.T + b1)
        return X @ ww + bw + h @ w2.T + b2
    return net, params, forward


def _mlp(task):
    net = MLP(F, hidden=(12, 8), task=task, num_classes=3)

    def params(n):
        return ([n.embed.weight],
                [n.embed.bias, n.dense[0].weight, n.dense[0].bias, n.dense[1].weight,
                 n.dense[1].bias])

    def forward(t, X):
        we, be, w1, b1, w2, b2 = t
        h = torch.sigmoid(X @ we + be)
        h = torch.sigmoid(h @ w1.T + b1)
        return h @ w2.T + b2
    return net, params, forward


CASES = [(_linear, "regression"), (_linear, "binary"), (_linear, "multiclass"),
         (_fm, "regression"), (_fm, "binary"), (_wide_deep, "binary"),
         (_wide_deep, "multiclass"), (_mlp, "binary"), (_mlp, "regression")]
IDS = [f"{build.__name__[1:]}-{task}" for build, task in CASES]


def _setup(build, task):
    mx.random.seed(3)
    net, params, forward = build(task)
    net.initialize(init=mx.init.Uniform(0.3))
    tables, others = params(net)
    ref = [_t(p) for p in tables + others]
    return net, tables, others, forward, ref


@pytest.mark.parametrize("build, task", CASES, ids=IDS)
def test_forward_and_gradients_match_torch(build, task):
    net, tables, others, forward, ref = _setup(build, task)
    x, y = _batch(1, task)
    loss_fn = make_loss({"regression": "l2", "binary": "logistic",
                         "multiclass": "softmax"}[task], task)
    with mx.autograd.record():
        scores = net(mx.nd.sparse.csr_matrix(x))
        loss = loss_fn(scores, mx.nd.array(y))
    loss.backward()
    X = torch.tensor(x.toarray())
    t_scores = forward(ref, X)
    t_loss = _torch_loss(t_scores, y, task)
    t_loss.sum().backward()
    np.testing.assert_allclose(scores.asnumpy(), t_scores.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loss.asnumpy(), t_loss.detach().numpy(), rtol=1e-5, atol=1e-6)
    touched = np.unique(x.indices)
    for p, t in zip(tables + others, ref):
        grad = p.grad()
        if p in tables:
            assert grad.stype == "row_sparse", p.name
            assert set(grad.indices.asnumpy()) <= set(touched)
        np.testing.assert_allclose(grad.asnumpy(), t.grad.numpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=p.name)


@pytest.mark.parametrize("build, task", CASES, ids=IDS)
def test_sgd_steps_match_torch(build, task):
    net, tables, others, forward, ref = _setup(build, task)
    loss_fn = make_loss({"regression": "l2", "binary": "logistic",
                         "multiclass": "softmax"}[task], task)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    opt = torch.optim.SGD(ref, lr=0.5)
    for step in range(4):
        x, y = _batch(10 + step, task)
        with mx.autograd.record():
            loss = loss_fn(net(mx.nd.sparse.csr_matrix(x)), mx.nd.array(y))
        loss.backward()
        trainer.step(B)
        opt.zero_grad()
        (_torch_loss(forward(ref, torch.tensor(x.toarray())), y, task).sum() / B).backward()
        opt.step()
    for p, t in zip(tables + others, ref):
        np.testing.assert_allclose(p.data().asnumpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=p.name)
    assert np.abs(tables[0].data().asnumpy() - 0).max() > 0  # training moved the table


def test_bad_arguments_raise():
    with pytest.raises(mx.base.InvalidArgumentError, match="num_features must be a positive"):
        LinearModel(0)
    with pytest.raises(ValueError, match="task must be one of regression, binary, multiclass"):
        MLP(4, task="ranking")
    with pytest.raises(ValueError, match="FactorizationMachine supports the tasks regression"):
        FactorizationMachine(4, task="multiclass")
    with pytest.raises(ValueError, match=r"hidden must be a non-empty sequence .* got \(\)"):
        WideAndDeep(4, hidden=())
    with pytest.raises(ValueError, match="num_classes must be at least 2"):
        LinearModel(4, task="multiclass", num_classes=1)
    with pytest.raises(ValueError, match="loss 'softmax' trains multiclass models, but"):
        make_loss("softmax", "binary")

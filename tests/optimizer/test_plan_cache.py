"""The per-index update plan (``Optimizer._planned_update`` through
``UpdateOperator.update_memo``, the Updater's and the Trainer's fast paths) gives the weights
of an uncached computation written here with plain torch arithmetic, while what the plan
remembers changes between steps: the learning rate (``set_learning_rate``, an
``lr_scheduler``), the multipliers (``set_lr_mult``/``set_wd_mult``, a Gluon parameter's
``lr_mult``), the gradient's storage type, ``lazy_update``, the states (``set_states``) and
the weight of an index.
"""
import math

import numpy as np
import pytest
import torch

import sparsenet as mx

ROWS, DIM = 7, 3


# ---------------------------------------------------------------------- torch references
class Ref:
    """One optimizer's update on dense torch tensors, written from the formulas (MXNet's
    lazy rule: a row_sparse gradient touches its rows only, weight decay included)."""

    def __init__(self, kind, w, lr, wd=0.0, momentum=0.0, rescale=1.0):
        self.kind, self.w, self.lr, self.wd = kind, w.clone().double(), lr, wd
        self.momentum, self.rescale, self.t = momentum, rescale, 0
        self.s1 = torch.zeros_like(self.w)
        self.s2 = torch.zeros_like(self.w)

    def step(self, g, rows=None, lr_mult=1.0, wd_mult=1.0, lazy=True):
        """``g`` dense (ROWS, DIM); ``rows`` the rows of a row_sparse gradient or None."""
        self.t += 1
        lr, wd = self.lr * lr_mult, self.wd * wd_mult
        g = g.double() * self.rescale
        if rows is not None:  # a row_sparse gradient: zero outside its rows
            keep = torch.zeros(ROWS, 1, dtype=torch.float64)
            keep[list(rows)] = 1.0
            g = g * keep
        sel = torch.arange(ROWS) if rows is None or not lazy else torch.as_tensor(rows)
        w, s1, s2, gs = self.w[sel], self.s1[sel], self.s2[sel], g[sel]
        if self.kind == "sgd" and self.momentum == 0.0:
            w = w * (1 - lr * wd) - lr * gs
        elif self.kind == "sgd":
            s1 = self.momentum * s1 - lr * wd * w - lr * gs
            w = w + s1
        elif self.kind == "adam":
            b1, b2, eps = 0.9, 0.999, 1e-8
            lr_t = lr * math.sqrt(1 - b2 ** self.t) / (1 - b1 ** self.t)
            gs = gs + wd * w
            s1 = b1 * s1 + (1 - b1) * gs
            s2 = b2 * s2 + (1 - b2) * gs * gs
            w = w - lr_t * s1 / (s2.sqrt() + eps)
        elif self.kind == "adagrad":
            eps = 1e-7
            s1 = s1 + gs * gs
            w = w - lr * (gs / (s1 + eps).sqrt() + wd * w)
        self.w[sel], self.s1[sel], self.s2[sel] = w, s1, s2


def make_opt(kind, lr, wd=0.0, momentum=0.0, **kw):
    if kind == "sgd":
        return mx.optimizer.SGD(learning_rate=lr, wd=wd, momentum=momentum, **kw)
    if kind == "adam":
        return mx.optimizer.Adam(learning_rate=lr, wd=wd, **kw)
    return mx.optimizer.AdaGrad(learning_rate=lr, wd=wd, eps=1e-7, **kw)


def grad_of(g, rows):
    """The gradient as an NDArray: dense (rows None) or row_sparse holding ``g[rows]``."""
    if rows is None:
        return mx.nd.array(g.numpy())
    return mx.nd.sparse.row_sparse_array((g[rows].numpy(), np.asarray(rows)),
                                         shape=(ROWS, DIM))


def check(weight, ref):
    np.testing.assert_allclose(weight.asnumpy(), ref.w.numpy(), rtol=2e-5, atol=1e-6)


CASES = [("sgd", 0.0), ("sgd", 0.9), ("adam", 0.0), ("adagrad", 0.0)]
WD = {"sgd": 0.1, "adam": 0.05, "adagrad": 0.0}


def _data(seed):
    gen = torch.Generator().manual_seed(seed)
    w0 = torch.randn(ROWS, DIM, generator=gen)
    grads = [torch.randn(ROWS, DIM, generator=gen) for _ in range(8)]
    return w0, grads


@pytest.mark.parametrize("kind,momentum", CASES)
def test_grad_stype_changes_between_steps(kind, momentum):
    """row_sparse, row_sparse, dense, row_sparse (other rows), dense: each step's kernel is
    the one of that step's gradient."""
    w0, grads = _data(1)
    opt = make_opt(kind, 0.1, wd=WD[kind], momentum=momentum, rescale_grad=0.5)
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.array(w0.numpy())
    ref = Ref(kind, w0, 0.1, wd=WD[kind], momentum=momentum, rescale=0.5)
    for g, rows in zip(grads, [[1, 4], [0, 4, 6], None, [2, 3], None, [5]]):
        upd(0, grad_of(g, rows), w)
        ref.step(g, rows)
        check(w, ref)


@pytest.mark.parametrize("kind,momentum", CASES)
def test_learning_rate_and_multipliers_change(kind, momentum):
    """set_learning_rate, set_lr_mult and set_wd_mult between steps take effect at once."""
    w0, grads = _data(2)
    opt = make_opt(kind, 0.1, wd=WD[kind], momentum=momentum)
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.array(w0.numpy())
    ref = Ref(kind, w0, 0.1, wd=WD[kind], momentum=momentum)
    rows = [0, 2, 5]
    upd(3, grad_of(grads[0], rows), w)
    ref.step(grads[0], rows)
    opt.set_learning_rate(0.03)
    ref.lr = 0.03
    upd(3, grad_of(grads[1], rows), w)
    ref.step(grads[1], rows)
    opt.set_lr_mult({3: 2.5})
    upd(3, grad_of(grads[2], rows), w)
    ref.step(grads[2], rows, lr_mult=2.5)
    opt.set_wd_mult({3: 4.0})
    upd(3, grad_of(grads[3], None), w)
    ref.step(grads[3], None, lr_mult=2.5, wd_mult=4.0)
    opt.set_lr_mult({})
    opt.set_wd_mult({})
    upd(3, grad_of(grads[4], rows), w)
    ref.step(grads[4], rows)
    check(w, ref)


@pytest.mark.parametrize("kind,momentum", CASES)
def test_lr_scheduler_changes_lr_mid_run(kind, momentum):
    w0, grads = _data(3)
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.2)
    opt = make_opt(kind, None, wd=WD[kind], momentum=momentum, lr_scheduler=sched)
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.array(w0.numpy())
    ref = Ref(kind, w0, 0.2, wd=WD[kind], momentum=momentum)
    for k in range(6):
        # MXNet's FactorScheduler: the rate halves once num_update passes 2, 4, ...
        ref.lr = 0.2 * 0.5 ** max(0, (k + 1 - 1) // 2)
        upd(0, grad_of(grads[k], [1, 3]), w)
        ref.step(grads[k], [1, 3])
        check(w, ref)


def test_lazy_update_switched_between_steps():
    """lazy_update=True (only the gradient's rows decay), then False (every row decays):
    the row picked for the signature follows the flag."""
    w0, grads = _data(4)
    opt = make_opt("sgd", 0.1, wd=0.2)
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.array(w0.numpy())
    ref = Ref("sgd", w0, 0.1, wd=0.2)
    upd(0, grad_of(grads[0], [1]), w)
    ref.step(grads[0], [1])
    opt.lazy_update = False
    upd(0, grad_of(grads[1], [2]), w)
    ref.step(grads[1], [2], lazy=False)
    opt.lazy_update = True
    upd(0, grad_of(grads[2], [2]), w)
    ref.step(grads[2], [2])
    check(w, ref)


def test_states_replaced_and_new_weight():
    """set_states gives the index new state arrays, and a new weight array under an index
    gets its own update: the plan follows both."""
    w0, grads = _data(5)
    opt = make_opt("sgd", 0.1, momentum=0.9)
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.array(w0.numpy())
    ref = Ref("sgd", w0, 0.1, momentum=0.9)
    upd(0, grad_of(grads[0], [1, 2]), w)
    ref.step(grads[0], [1, 2])
    saved = upd.get_states()
    upd(0, grad_of(grads[1], [1, 2]), w)  # momentum after this step is thrown away
    upd.set_states(saved)
    w[:] = mx.nd.array(ref.w.float().numpy())  # back to the state of step 1
    upd(0, grad_of(grads[2], [2, 3]), w)
    ref.step(grads[2], [2, 3])
    check(w, ref)
    w2 = mx.nd.array(w0.numpy())  # a new weight under the same index: its state is kept
    upd(0, grad_of(grads[3], [0]), w2)
    ref2 = Ref("sgd", w0, 0.1, momentum=0.9)
    ref2.s1 = ref.s1.clone()
    ref2.step(grads[3], [0])
    check(w2, ref2)


def test_hyperparameter_check_still_runs_after_plan():
    """A value the plan has not checked (a NaN learning rate after good steps) is refused."""
    opt = make_opt("sgd", 0.1)
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.ones((ROWS, DIM))
    g = grad_of(torch.ones(ROWS, DIM), [1])
    upd(0, g, w)
    upd(0, g, w)
    opt.set_learning_rate(float("nan"))
    with pytest.raises(mx.base.InvalidArgumentError, match="hyperparameter lr=nan"):
        upd(0, g, w)


def _csr_batch(rows_used):
    data = np.ones(len(rows_used), dtype=np.float32)
    return mx.nd.sparse.csr_matrix((data, np.asarray(rows_used), [0, len(rows_used)]),
                                   shape=(1, ROWS))


@pytest.mark.parametrize("kind,momentum", CASES)
def test_trainer_steps_with_param_lr_mult_and_lr_changes(kind, momentum):
    """gluon.Trainer over a row_sparse-gradient parameter (the Trainer's one-parameter fast
    path): the Parameter's lr_mult and the trainer's learning rate change between steps."""
    w0, _ = _data(6)
    p = mx.gluon.Parameter("emb_weight", shape=(ROWS, DIM), grad_stype="row_sparse")
    p.initialize(mx.init.Zero())
    p.set_data(mx.nd.array(w0.numpy()))
    opt = make_opt(kind, 0.1, wd=WD[kind], momentum=momentum)
    trainer = mx.gluon.Trainer([p], opt)
    ref = Ref(kind, w0, 0.1, wd=WD[kind], momentum=momentum, rescale=1 / 4)
    for k, rows in enumerate([[1, 3], [3, 5], [0, 6], [2, 3]]):
        if k == 1:
            p.lr_mult = 3.0
        if k == 2:
            trainer.set_learning_rate(0.05)
            ref.lr = 0.05
        c = torch.arange(DIM, dtype=torch.float32) + 1.0 + k
        with mx.autograd.record():
            out = mx.nd.sparse.dot(_csr_batch(rows), p.data())
            loss = (out * mx.nd.array(c.numpy().reshape(1, DIM))).sum()
        loss.backward()
        trainer.step(4)
        g = torch.zeros(ROWS, DIM)
        g[rows] = c  # d loss / d w[r] = c for each row of the batch
        ref.step(g, rows, lr_mult=p.lr_mult)
        check(p.data(), ref)

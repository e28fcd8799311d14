"""Threads: each thread's backward stores the gradients of its own graph only.

Two threads, each training its own network with its own Trainer, must give bit for
bit the weights of the same two runs done one after the other. In the threaded runs,
each step one thread (by turns) stops inside torch's backward after its leaves have
their gradients, until the other thread's backward has returned; the other's backward
must not have touched the stopped thread's gradient buffers (a backward that took
every pending gradient of the process took the other thread's, and a concurrent
``Trainer.step`` could see a stale gradient).
"""
import threading

import numpy as np
import pytest

import sparsenet as mx
from sparsenet import autograd, gluon
from sparsenet.gluon import nn

STEPS = 4
BATCH = 8
WAIT_S = 60


class _Meet(autograd.Function):
    """Identity whose backward waits for ``event`` (None: no wait)."""

    def __init__(self, event):
        super().__init__()
        self.event = event

    def forward(self, x):
        return x * 1

    def backward(self, dy):
        if self.event is not None:
            assert self.event.wait(WAIT_S), "the other thread did not finish its backward"
        return dy * 1


class _Turns:
    """Step-by-step meeting of the training threads (see the module docstring)."""

    def __init__(self, n):
        self.barrier = threading.Barrier(n)
        self.done = [threading.Event() for _ in range(STEPS)]
        self.grads = {}      # thread number -> its gradient buffers
        self.before = {}     # thread number -> their values before this step's backward
        self.touched = []    # (step, thread) whose buffers another backward wrote

    def abort(self):
        self.barrier.abort()
        for e in self.done:
            e.set()


def _net(kind):
    net = nn.Sequential()
    if kind == "dense":
        net.add(nn.Dense(6, in_units=5, activation="relu"), nn.Dense(3, in_units=6))
    else:
        net.add(nn.Embedding(30, 4, sparse_grad=True), nn.Dense(2, in_units=4))
    net.initialize(mx.init.Zero())
    return net


def _set_weights(net, seed):
    rng = np.random.RandomState(seed)
    for p in net.collect_params().values():
        p.set_data(mx.nd.array(rng.uniform(-0.5, 0.5, p.shape).astype(np.float32)))


def _batches(kind, seed):
    rng = np.random.RandomState(100 + seed)
    if kind == "dense":
        return [mx.nd.array(rng.randn(BATCH, 5).astype(np.float32)) for _ in range(STEPS)]
    return [mx.nd.array(rng.randint(0, 30, size=(BATCH,)).astype(np.float32))
            for _ in range(STEPS)]


def _train(kind, optimizer, seed, turns=None, me=0):
    net = _net(kind)
    _set_weights(net, seed)
    params = list(net.collect_params().values())
    trainer = gluon.Trainer(params, optimizer, {"learning_rate": 0.1})
    for step, x in enumerate(_batches(kind, seed)):
        waits = turns is not None and step % 2 == me
        meet = mx.nd.zeros((1,))
        meet.attach_grad()
        with autograd.record():
            # recorded first, so torch runs its backward last: after the network's
            # leaves have their gradients
            tail = _Meet(turns.done[step] if waits else None)(meet).sum()
            loss = (net(x) ** 2).sum() + tail
        if turns is not None:
            turns.grads[me] = [p.grad() for p in params]
            turns.before[me] = [g.asnumpy() for g in turns.grads[me]]
            turns.barrier.wait(WAIT_S)  # both threads reach backward together
        loss.backward()
        if turns is not None and not waits:
            other = 1 - me  # stopped inside its backward: its buffers are as before
            if any(not np.array_equal(g.asnumpy(), b)
                   for g, b in zip(turns.grads[other], turns.before[other])):
                turns.touched.append((step, other))
            turns.done[step].set()
        trainer.step(BATCH)
    return [p.data().asnumpy() for p in params]


def _threaded(kind, optimizer, seeds):
    turns = _Turns(len(seeds))
    results, errors = [None] * len(seeds), []

    def work(i):
        try:
            results[i] = _train(kind, optimizer, seeds[i], turns, i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
            turns.abort()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(seeds))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(4 * WAIT_S)
    assert not any(t.is_alive() for t in threads), "a training thread hung"
    real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
    if errors:
        raise (real or errors)[0]
    assert turns.touched == [], "a backward wrote another thread's gradient buffers"
    return results


@pytest.mark.parametrize("optimizer", ["sgd", "adam", "adagrad"])
@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_two_threads_train_their_own_networks_as_one_after_the_other(kind, optimizer):
    seeds = (1, 2)
    expected = [_train(kind, optimizer, s) for s in seeds]
    got = _threaded(kind, optimizer, seeds)
    for want, have in zip(expected, got):
        assert len(want) == len(have)
        for w, h in zip(want, have):
            np.testing.assert_array_equal(h, w)  # bit for bit


def test_sparse_gradient_of_each_thread_lands_in_its_own_buffer():
    """Each thread's row_sparse gradient holds exactly the rows of its own batch, and a
    backward leaves the buffers of a backward stopped in another thread alone."""
    rows = {0: [1, 4, 4], 1: [7, 9, 2]}
    found, errors, grads = {}, [], {}
    started, done = threading.Event(), threading.Event()

    def work(i):
        try:
            w = mx.nd.ones((12, 3))
            w.attach_grad(stype="row_sparse")
            grads[i] = w.grad
            meet = mx.nd.zeros((1,))
            meet.attach_grad()
            idx = mx.nd.array(rows[i])
            with autograd.record():
                # thread 0 stops inside its backward until thread 1's has returned
                tail = _Meet(done if i == 0 else None)(meet).sum()
                loss = mx.nd.Embedding(idx, w, input_dim=12, output_dim=3,
                                       sparse_grad=True).sum() + tail
            if i == 1:
                assert started.wait(WAIT_S)
            else:
                started.set()
            loss.backward()
            found[i] = (w.grad.indices.asnumpy().tolist(), w.grad.data.asnumpy())
            if i == 1:
                found["0 while stopped"] = grads[0].indices.asnumpy().tolist()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            if i == 1:
                done.set()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(4 * WAIT_S)
    assert not errors, errors
    assert found["0 while stopped"] == []  # thread 1's backward left thread 0's buffer alone
    for i, ids in rows.items():
        uniq, counts = np.unique(ids, return_counts=True)
        assert found[i][0] == uniq.tolist()
        np.testing.assert_array_equal(found[i][1], np.repeat(counts[:, None], 3, 1)
                                      .astype(np.float32))


def test_failed_store_leaves_no_pending_gradient(monkeypatch):
    """A store that fails drops the pass's pending gradients: the next backward does
    not add them to its own."""
    from sparsenet import grad_store
    x, y = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0])
    x.attach_grad()
    y.attach_grad()
    real, calls = grad_store.store_nograd, []

    def fails_first(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("store failed")
        return real(*args, **kwargs)

    monkeypatch.setattr(grad_store, "store_nograd", fails_first)
    with autograd.record():
        loss = (x * 3).sum() + (y * 3).sum()
    with pytest.raises(RuntimeError, match="store failed"):
        loss.backward()
    with autograd.record():
        loss = (x * 5).sum() + (y * 5).sum()
    loss.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [5.0, 5.0])
    np.testing.assert_array_equal(y.grad.asnumpy(), [5.0])


class _Fails(autograd.Function):
    def forward(self, x):
        return x * 1

    def backward(self, dy):
        raise RuntimeError("backward failed")


def test_failed_backward_leaves_no_pending_gradient():
    """Leaves that torch reached before a backward failed do not carry that gradient
    into the next backward."""
    x, w = mx.nd.array([1.0]), mx.nd.array([2.0, 2.0])
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        loss = _Fails()(x).sum() + (w * 3).sum()  # torch reaches w before the failure
    with pytest.raises(RuntimeError, match="backward failed"):
        loss.backward()
    with autograd.record():
        loss = (w * 5).sum()
    loss.backward()
    np.testing.assert_array_equal(w.grad.asnumpy(), [5.0, 5.0])


def test_recording_and_training_switches_are_per_thread():
    """MXNet's is_recording/is_training are thread-local: a record() scope in one
    thread is not seen by another."""
    inside, seen = threading.Event(), threading.Event()
    other = {}

    def look():
        inside.wait(WAIT_S)
        other["state"] = (autograd.is_recording(), autograd.is_training())
        x = mx.nd.array([1.0])
        x.attach_grad()
        other["recorded"] = (x * 2)._autograd_tensor().requires_grad
        seen.set()

    t = threading.Thread(target=look)
    t.start()
    with autograd.record():
        inside.set()
        seen.wait(WAIT_S)
        assert autograd.is_recording() and autograd.is_training()
    t.join(WAIT_S)
    assert other == {"state": (False, False), "recorded": False}

"""Issue 19, item 10: one Gluon network and Trainer shared by several threads.

What sparsenet promises (docs/errors_and_limits.md, the Trainer's docstring): the Trainer's
methods take turns (a lock per trainer); a backward pass whose forward read a weight that a
step changed since raises ConcurrentModificationError (never a random torch error or a
wrong gradient); with a lock around each whole iteration, threads train exactly as the
same iterations run one after the other.
"""
import threading
import time

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import ConcurrentModificationError


def make_net(seed=0):
    mx.random.seed(seed)
    net = mx.gluon.nn.Sequential()
    net.add(mx.gluon.nn.Dense(16, in_units=50, activation="relu"),
            mx.gluon.nn.Dense(1, in_units=16))
    net.initialize(mx.init.Xavier())
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.01, "momentum": 0.9})
    return net, trainer


def batch(thread, i):
    rng = np.random.default_rng(1000 * thread + i)
    return (mx.nd.array(rng.standard_normal((8, 50))),
            mx.nd.array(rng.standard_normal((8, 1))))


def iteration(net, trainer, x, y):
    with mx.autograd.record():
        loss = mx.gluon.loss.L2Loss()(net(x), y)
    loss.backward()
    trainer.step(8, ignore_stale_grad=True)


def test_a_step_between_forward_and_backward_is_a_clear_error():
    net, trainer = make_net()
    x1, y1 = batch(0, 0)
    with mx.autograd.record():
        loss1 = mx.gluon.loss.L2Loss()(net(x1), y1)
    iteration(net, trainer, *batch(1, 0))   # what another thread's iteration does meanwhile
    with pytest.raises(ConcurrentModificationError, match="lock around each whole iteration"):
        loss1.backward()
    with pytest.raises(mx.MXNetError):       # ported code catching MXNetError catches it
        loss1.backward()


def test_unlocked_threads_fail_only_with_the_documented_error():
    net, trainer = make_net()
    errors = []

    def work(thread):
        try:
            for i in range(150):
                iteration(net, trainer, *batch(thread, i))
        except Exception as e:  # noqa: BLE001 (the test checks every error's type)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert all(isinstance(e, ConcurrentModificationError) for e in errors), errors


def test_threads_with_a_lock_train_as_the_same_iterations_in_one_thread():
    net, trainer = make_net()
    lock, order = threading.Lock(), []

    def work(thread):
        for i in range(40):
            with lock:
                order.append((thread, i))
                iteration(net, trainer, *batch(thread, i))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(order) == 120
    serial, serial_trainer = make_net()
    for thread, i in order:
        iteration(serial, serial_trainer, *batch(thread, i))
    for (name, p), q in zip(net.collect_params().items(), serial.collect_params().values()):
        np.testing.assert_array_equal(p.data().asnumpy(), q.data().asnumpy(), err_msg=name)


def test_concurrent_steps_take_turns():
    # steps from 4 threads at once: the trainer's lock lets one update run at a time (the
    # update is slowed down so that, unlocked, the threads would overlap inside it)
    net, trainer = make_net()
    x, y = batch(0, 0)
    with mx.autograd.record():
        loss = mx.gluon.loss.L2Loss()(net(x), y)
    loss.backward()
    inside, most, errors = [0], [0], []
    original = trainer._update

    def slow_update(*args, **kwargs):
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        time.sleep(0.005)
        try:
            return original(*args, **kwargs)
        finally:
            inside[0] -= 1

    trainer._update = slow_update
    barrier = threading.Barrier(4)

    def work():
        try:
            barrier.wait(timeout=60)
            for _ in range(5):
                trainer.step(8, ignore_stale_grad=True)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert most[0] == 1
    assert trainer._optimizer.num_update == 1  # the one fresh gradient was used once

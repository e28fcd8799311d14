"""Several Trainers on one KVStore, loading parameters a store holds, and ``priority``.

MXNet 1.9.1's Trainer sets its store up in ``_init_kvstore`` (no key is touched) and gives the
keys (the parameters' positions) their values in ``_init_params`` at the first step. Setting or
loading a parameter whose store updates it (``update_on_kvstore``) resets an in-process store
(a new optimizer state; the next step starts from the loaded value) and raises for a
distributed one (tests/kvstore/test_dist_nightly_mirror.py). Expected values are computed by
hand (SGD) in each test.
"""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet import autograd, gluon


def _backward_ones(param):
    """d(sum(w))/dw = 1 on every context."""
    with autograd.record():
        for w in param.list_data():
            w.sum().backward()


def test_second_trainer_on_one_store_reinitialises_its_keys():
    # old code: "kvstore init: duplicate init of key 0" at the second trainer's first step
    # (MXNet 1.9.1's 'local' store raises the same; its dist store re-initialises)
    kv = mx.kv.create('local')
    a = gluon.Parameter('a', shape=(2,))
    a.initialize(init='ones', ctx=[mx.cpu(0), mx.cpu(1)])
    b = gluon.Parameter('b', shape=(3,))
    b.initialize(init='zeros', ctx=[mx.cpu(0), mx.cpu(1)])
    ta = gluon.Trainer([a], 'sgd', {'learning_rate': 0.1}, kvstore=kv)
    tb = gluon.Trainer([b], 'sgd', {'learning_rate': 0.1}, kvstore=kv)
    _backward_ones(a)
    ta.step(1)
    _backward_ones(b)
    tb.step(1)
    # gradient 1 on each of 2 contexts, summed: 2; w -= 0.1 * 2
    np.testing.assert_allclose(a.data().asnumpy(), [0.8, 0.8], rtol=1e-6)
    np.testing.assert_allclose(b.data().asnumpy(), [-0.2] * 3, rtol=1e-6)
    out = mx.nd.zeros((3,))
    kv.pull(0, out=out)  # key 0 now holds the second trainer's parameter
    np.testing.assert_allclose(out.asnumpy(), [-0.2] * 3, rtol=1e-6)


def test_init_kvstore_touches_no_key():
    # MXNet: _init_kvstore() configures; the keys are given values at the first step
    kv = mx.kv.create('local')
    x = gluon.Parameter('x', shape=(2,))
    x.initialize(init='ones')
    trainer = gluon.Trainer([x], 'sgd', {'learning_rate': 1.0}, kvstore=kv)
    trainer._init_kvstore()
    assert trainer._kv_initialized and trainer._update_on_kvstore is True
    kv.init(0, mx.nd.full((2,), 5.0))  # free: the trainer has not initialised it
    _backward_ones(x)
    trainer.step(1)  # re-initialises key 0 with x's value, then updates: 1 - 1
    np.testing.assert_allclose(x.data().asnumpy(), [0.0, 0.0])


def test_public_duplicate_init_still_raises():
    kv = mx.kv.create('local')
    kv.init(0, mx.nd.ones((2,)))
    with pytest.raises(mx.MXNetError, match="duplicate init of key 0"):
        kv.init(0, mx.nd.ones((2,)))


@pytest.mark.parametrize("how", ["ParameterDict.load", "Block.load_parameters"])
def test_load_under_an_in_process_store_resets_it(tmp_path, how):
    # MXNet 1.9.1 (tests/python/unittest/test_gluon_trainer.py, test_trainer_reset_kv): the
    # load drops the store (trainer._kvstore None, _kv_initialized False); the next step starts
    # from the loaded value with a new optimizer state. Momentum shows it: with the state kept
    # (old code) the second step gives -0.38 instead of -0.2.
    kv = mx.kv.create('local')
    net = gluon.nn.Dense(4, in_units=1, use_bias=False)
    net.initialize(init='zeros', ctx=[mx.cpu(0), mx.cpu(1)])
    x = net.weight
    params = net.collect_params()
    fname = str(tmp_path / 'w.params')
    if how == "ParameterDict.load":
        params.save(fname)
    else:
        net.save_parameters(fname)
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1, 'momentum': 0.9}, kvstore=kv)
    for step in range(2):
        _backward_ones(x)  # gradient 2 (two contexts)
        trainer.step(1)
        # step 0: mom = -0.2, w = -0.2. After the load: w = 0, mom = 0 -> again -0.2
        np.testing.assert_allclose(x.data().asnumpy(), np.full((4, 1), -0.2), rtol=1e-6)
        if step == 0:
            if how == "ParameterDict.load":
                params.load(fname)
            else:
                net.load_parameters(fname, ctx=[mx.cpu(0), mx.cpu(1)])
            assert trainer._kvstore is None and trainer._kv_initialized is False
            np.testing.assert_array_equal(x.data(mx.cpu(1)).asnumpy(), np.zeros((4, 1)))
    assert trainer._kvstore is kv


def test_set_data_before_the_first_step_keeps_the_store():
    kv = mx.kv.create('local')
    x = gluon.Parameter('x', shape=(2,))
    x.initialize(init='zeros')
    trainer = gluon.Trainer([x], 'sgd', {'learning_rate': 1.0}, kvstore=kv)
    trainer._init_kvstore()
    x.set_data(mx.nd.full((2,), 3.0))  # the store does not hold x yet: nothing to reset
    assert trainer._kv_initialized
    _backward_ones(x)
    trainer.step(1)
    np.testing.assert_allclose(x.data().asnumpy(), [2.0, 2.0])


# ---------------------------------------------------------------------- priority
def _store():
    kv = mx.kv.create('local')
    kv.init(3, mx.nd.ones((2,)))
    return kv


CALLS = {
    "push": lambda kv, p: kv.push(3, mx.nd.ones((2,)), p),
    "pull": lambda kv, p: kv.pull(3, mx.nd.zeros((2,)), p),
    "pushpull": lambda kv, p: kv.pushpull(3, mx.nd.ones((2,)), None, p),
    "broadcast": lambda kv, p: kv.broadcast(7, mx.nd.ones((2,)), mx.nd.zeros((2,)), p),
    "row_sparse_pull": lambda kv, p: kv.row_sparse_pull(
        3, mx.nd.sparse.zeros('row_sparse', (2,)), p, mx.nd.array([0])),
}


@pytest.mark.parametrize("method", sorted(CALLS))
@pytest.mark.parametrize("priority", [0, -5, 7, np.int64(2), True])
def test_priority_accepted_as_mxnet_accepts_it(method, priority):
    # MXNet 1.9.1 passes priority through ctypes.c_int: any integer, NumPy's too
    CALLS[method](_store(), priority)


@pytest.mark.parametrize("method", sorted(CALLS))
@pytest.mark.parametrize("priority", [1.5, None, '3'])
def test_priority_refused_as_mxnet_refuses_it(method, priority):
    # MXNet 1.9.1 (measured): TypeError "'float' object cannot be interpreted as an integer"
    with pytest.raises(TypeError, match="priority must be an integer") as err:
        CALLS[method](_store(), priority)
    assert isinstance(err.value, mx.MXNetError)


def test_priority_keyword_on_every_method():
    kv = _store()
    kv.push(3, mx.nd.ones((2,)), priority=-1)
    out = mx.nd.zeros((2,))
    kv.pull(3, out=out, priority=-1)
    kv.pushpull(3, mx.nd.ones((2,)), out=out, priority=-1)
    kv.broadcast(8, mx.nd.ones((2,)), out=out, priority=-1)
    kv.row_sparse_pull(3, out=mx.nd.sparse.zeros('row_sparse', (2,)), priority=-1,
                       row_ids=mx.nd.array([1]))
    np.testing.assert_array_equal(out.asnumpy(), [1.0, 1.0])  # the broadcast value

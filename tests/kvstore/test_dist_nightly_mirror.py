"""What MXNet 1.9.1's nightly distributed test (tests/nightly/dist_sync_kvstore.py, run by its
CI at 7 workers) checks, written for sparsenet and run on 2 and 3 gloo ranks on 127.0.0.1.

One spawn per world size runs every check on every rank; each rank returns the names of the
checks it passed (a failed assertion fails the rank, and the test shows its output). The
world sizes come from ``SPARSENET_DIST_NIGHTLY_WORLDS`` (comma separated; default ``2,3``);
``make test-dist`` runs them at 7, as MXNet's CI does. Expected values are the formulas of
MXNet's test (worker ``r`` pushes ``r + 1``; the store's update is
``weight += rate * grad``), computed with NumPy here.

Not here: gradient compression (``compressed_cpu``) and MXNet's ``test`` optimizer, built
elsewhere; the update rule they check is set with ``kv.set_updater``.
"""
import os

import numpy as np
import pytest

import sparsenet as mx
from sparsenet import autograd, gluon
from tests.kvstore.dist_helpers import run_ranks, values

RATE = 2
SHAPE = (2, 3)
BIG = (40, 5)  # MXNet uses 1200 x 1200; the checks are the same at any size
NREPEAT = 3
WORLDS = [int(w) for w in os.environ.get("SPARSENET_DIST_NIGHTLY_WORLDS", "2,3").split(",")]


def _same(got, want, what):
    got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
    np.testing.assert_array_equal(got, np.broadcast_to(want, got.shape), err_msg=what)


# ---------------------------------------------------------------------- push / pull
def check_push_pull(kv, rank, world):
    """MXNet's default_cpu run: dense and row_sparse keys, float32 and float16."""
    kv.set_updater(lambda key, grad, weight: weight.__iadd__(grad * RATE))
    for dtype, base in (("float32", 0), ("float16", 100)):
        dense = [(str(base + 3), SHAPE), (str(base + 5), SHAPE), (str(base + 99), BIG)]
        for k, s in dense:
            kv.init(k, mx.nd.ones(s, dtype=dtype))
        rsp, zero_k, zero_big = str(base + 9), str(base + 11), str(base + 97)
        kv.init(rsp, mx.nd.ones(SHAPE, dtype=dtype).tostype('row_sparse'))
        kv.init(zero_k, mx.nd.ones(SHAPE, dtype=dtype).tostype('row_sparse'))
        kv.init(zero_big, mx.nd.ones(BIG, dtype=dtype).tostype('row_sparse'))
        # dense: every rank pushes rank+1 -> sum W(W+1)/2, times RATE, per round
        for k, s in dense:
            for i in range(NREPEAT):
                kv.push(k, mx.nd.ones(s, dtype=dtype) * (rank + 1))
                out = mx.nd.zeros(s, dtype=dtype)
                kv.pull(k, out=out)
                _same(out, (world + 1) * world * RATE / 2 * (i + 1) + 1, f"dense {k} {i}")
        # row_sparse: rank r pushes r+1 into row r % 2; pull random rows
        v = np.zeros(SHAPE, dtype=dtype)
        v[rank % SHAPE[0]] = rank + 1
        rs = np.random.RandomState(rank)
        for i in range(NREPEAT):
            kv.push(rsp, mx.nd.array(v, dtype=dtype).tostype('row_sparse'))
            ids = rs.randint(SHAPE[0], size=SHAPE[0])
            out = mx.nd.sparse.zeros('row_sparse', SHAPE, dtype=dtype)
            kv.row_sparse_pull(rsp, out=out, row_ids=mx.nd.array(ids, dtype=dtype))
            updated = np.ones(SHAPE)
            for r in range(world):
                updated[r % SHAPE[0]] += (r + 1) * RATE * (i + 1)
            want = np.zeros(SHAPE)
            want[ids] = updated[ids]
            _same(out, want.astype(dtype), f"row_sparse {rsp} {i}")
        # empty row_sparse pushes leave the value; an empty row_ids pulls nothing
        for k, s in ((zero_k, SHAPE), (zero_big, BIG)):
            kv.push(k, mx.nd.sparse.zeros('row_sparse', s, dtype=dtype))
            out = mx.nd.sparse.zeros('row_sparse', s, dtype=dtype)
            kv.row_sparse_pull(k, out=out, row_ids=mx.nd.arange(0, s[0]))
            _same(out, 1, f"zeros {k}")
            kv.row_sparse_pull(k, out=out, row_ids=mx.nd.array([]))
            _same(out, 0, f"empty pull {k}")
    return "push_pull"


def check_init(kv, rank, world):
    """MXNet's init_gpu run, on the CPU: a key's value is what init gave."""
    for i, dtype in enumerate(["float32", "float16"] * 2):
        s = SHAPE if i < 2 else BIG
        k = f"init{i}"
        kv.init(k, [mx.nd.ones(s, dtype=dtype) * i])
        out = mx.nd.zeros(s, dtype=dtype)
        kv.pull(k, out=out)
        _same(out, i, k)
    return "init"


# ---------------------------------------------------------------------- invalid
def check_invalid(kv, rank, world, workdir):
    """MXNet's invalid_cpu run: a store that updates a parameter cannot be reset by a load."""
    params = gluon.ParameterDict()
    x = params.get('x', shape=(4, 2), stype='row_sparse')
    params.initialize(ctx=mx.cpu(0), init='zeros')
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1}, kvstore=kv)
    fname = os.path.join(workdir, f'reset_{rank}.params')
    params.save(fname)
    x.row_sparse_data(mx.nd.arange(0, 4))  # the store now holds x
    assert trainer._kv_initialized and trainer._update_on_kvstore
    for load in (lambda: params.load(fname), lambda: x.set_data(mx.nd.ones((4, 2)))):
        with pytest.raises(RuntimeError, match="Cannot reset distributed KVStore") as err:
            load()
        assert isinstance(err.value, mx.MXNetError)
    # the same for a Block's dense parameters (load_parameters)
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize(init='ones')
    dense_trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1},
                                  kvstore=kv)
    fname = os.path.join(workdir, f'dense_{rank}.params')
    net.save_parameters(fname)
    with autograd.record():
        net(mx.nd.ones((1, 3))).sum().backward()
    dense_trainer.step(1)
    before = net.weight.data().asnumpy()
    with pytest.raises(mx.MXNetError, match="Cannot reset distributed KVStore"):
        net.load_parameters(fname)
    _same(net.weight.data(), before, "a refused load leaves the value")
    # a pull of a key never initialised raises on the rank that pulls (no collective); MXNet's
    # check pulls a str key from a store of int keys, which raises for its key type
    kv.init(999, mx.nd.ones((2, 2)).tostype('row_sparse'))
    out = mx.nd.ones((2, 2)).tostype('row_sparse')
    with pytest.raises(mx.MXNetError, match="'invalid_key' is a str, but this store's keys"):
        kv.pull('invalid_key', out=out, ignore_sparse=False)
    with pytest.raises(mx.MXNetError, match="1000 has not been initialized"):
        kv.pull(1000, out=out, ignore_sparse=False)
    kv.pull(999, out=out, ignore_sparse=False)
    _same(out, 1, "row_sparse pull with ignore_sparse=False")
    return "invalid"


# ---------------------------------------------------------------------- Trainer
def check_trainer_types(kv, rank, world):
    """MXNet's gluon_type_cpu run: seven Trainers over one store, update_on_kvstore decided."""
    cases = [('default', 'default', None, True), ('default', 'default', True, True),
             ('default', 'default', False, False), ('default', 'row_sparse', None, True),
             ('default', 'row_sparse', False, ValueError),
             ('row_sparse', 'row_sparse', None, True),
             ('row_sparse', 'row_sparse', False, ValueError)]
    for stype, grad_stype, update_on_kv, expected in cases:
        params = gluon.ParameterDict()
        params.get('x', shape=(10, 1), stype=stype, grad_stype=grad_stype)
        params.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init='zeros')
        trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1}, kvstore=kv,
                                update_on_kvstore=update_on_kv)
        if isinstance(expected, type):
            with pytest.raises(expected):
                trainer._init_kvstore()
            continue
        trainer._init_kvstore()
        assert trainer._kv_initialized and trainer._update_on_kvstore is expected
    return "trainer_types"


def check_trainer_steps(kv, rank, world):
    """MXNet's gluon_step_cpu and gluon_sparse_step_cpu runs, then a second Trainer over
    other parameters on the same store: its keys (0...) are re-initialised with its values."""
    want = 1 - (1 + world) * world / 2  # lr 1: w -= sum over ranks of (rank + 1)
    x = gluon.Parameter('x', shape=(10, 1))
    x.initialize(init='ones')
    t1 = gluon.Trainer([x], 'sgd', {'learning_rate': 1.0}, kvstore=kv)
    with autograd.record():
        ((rank + 1) * x.data()).backward()
    t1.step(1)
    _same(x.data(), want, "dense step")
    rows = mx.nd.arange(0, 2)
    y = gluon.Parameter('y', shape=(2, 10), stype='row_sparse', grad_stype='row_sparse')
    y.initialize(init='ones')
    t2 = gluon.Trainer([y], 'sgd', {'learning_rate': 1.0}, kvstore=kv)
    with autograd.record():
        ((rank + 1) * y.row_sparse_data(rows)).backward()
    t2.step(1)
    _same(y.row_sparse_data(rows), want, "sparse step")
    z = gluon.Parameter('z', shape=(3,))
    z.initialize(init='zeros')
    t3 = gluon.Trainer([z], 'sgd', {'learning_rate': 1.0}, kvstore=kv)
    for i in range(2):
        with autograd.record():
            ((rank + 1) * z.data()).backward()
        t3.step(1)
        _same(z.data(), (want - 1) * (i + 1), f"third trainer step {i}")
    return "trainer_steps"


def check_priority(kv, rank, world):
    """``priority`` on every method, positional and by keyword; a non-integer raises the same
    error on every rank."""
    kv.init('p', mx.nd.zeros((2,)))
    kv.push('p', mx.nd.ones((2,)), -1)
    kv.push('p', mx.nd.ones((2,)), priority=np.int64(3))
    out = mx.nd.zeros((2,))
    kv.pull('p', out, 5)
    kv.pushpull('p', mx.nd.ones((2,)), out, priority=-2)
    kv.broadcast('q', mx.nd.ones((2,)), out, priority=1)
    kv.row_sparse_pull('q', mx.nd.sparse.zeros('row_sparse', (2,)), -4, mx.nd.array([1]))
    # a push is collective: every rank raises the same DistributedError, naming the problem
    with pytest.raises(mx.MXNetError, match=f"{world} of {world} rank.*priority must be an int"):
        kv.push('p', mx.nd.ones((2,)), priority=1.5)
    kv.pull('p', out=out)
    _same(out, world, "the last push")  # no updater on this store: a push stores the sum
    return "priority"


def scenario_nightly(rank, world, workdir):
    kv = mx.kv.create('dist_sync')
    assert (kv.rank, kv.num_workers) == (rank, world)
    done = [check_push_pull(kv, rank, world), check_init(kv, rank, world)]
    kv2 = mx.kv.create('dist_sync')  # the same process group: a fresh set of keys
    done += [check_priority(kv2, rank, world)]
    # the Trainers' keys are ints: a store of their own (a store takes one key type, as MXNet's
    # CI runs the Trainer checks in invocations of their own)
    kv3 = mx.kv.create('dist_sync')
    done += [check_trainer_types(kv3, rank, world), check_trainer_steps(kv3, rank, world),
             check_invalid(kv3, rank, world, workdir)]
    kv.barrier()
    return done


@pytest.mark.parametrize("world", WORLDS)
def test_mxnet_nightly_checks_pass_on_gloo_ranks(world, tmp_path):
    wall = 60.0 + 40.0 * world
    outs = values(run_ranks("tests.kvstore.test_dist_nightly_mirror:scenario_nightly", world,
                            str(tmp_path), timeout=30.0 + 10.0 * world, wall=wall))
    want = ["push_pull", "init", "priority", "trainer_types", "trainer_steps", "invalid"]
    assert outs == [want] * world

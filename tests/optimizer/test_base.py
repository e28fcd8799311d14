"""The Optimizer base class: registry, learning rates and multipliers, update counts,
multi-precision plumbing, and the Updater's state round trip."""
import pickle

import numpy as np
import pytest

import sparsenet as mx


def test_create_is_case_insensitive_and_passes_kwargs():
    opt = mx.optimizer.create("SgD", learning_rate=0.3, momentum=0.5)
    assert isinstance(opt, mx.optimizer.SGD)
    assert (opt.lr, opt.momentum) == (0.3, 0.5)
    assert mx.optimizer.Optimizer.create_optimizer is mx.optimizer.create


def test_create_unknown_name_lists_known_ones():
    with pytest.raises(ValueError, match=r"Cannot find optimizer 'nosuch'.*'sgd'"):
        mx.optimizer.create("nosuch")


def test_register_warns_when_overriding():
    class Dup(mx.optimizer.SGD):
        pass

    mx.optimizer.register(Dup)

    class Dup(mx.optimizer.SGD):
        pass

    with pytest.warns(UserWarning, match="overriding existing optimizer"):
        mx.optimizer.register(Dup)
    assert mx.optimizer.Optimizer.opt_registry["dup"] is Dup
    del mx.optimizer.Optimizer.opt_registry["dup"]


def test_defaults_match_mxnet():
    opt = mx.optimizer.SGD()
    assert (opt.lr, opt.wd, opt.rescale_grad, opt.clip_gradient, opt.momentum) == \
        (0.01, 0.0, 1.0, None, 0.0)
    assert opt.lazy_update is True and opt.multi_precision is False


@pytest.mark.parametrize("bad", ["yes", 2, None])
def test_lazy_update_values_are_checked(bad):
    with pytest.raises(ValueError, match=r"lazy_update must be True, False or 'exact'"):
        mx.optimizer.SGD(lazy_update=bad)


def test_lr_mult_and_wd_mult_by_index_name_and_param_dict():
    class Param:
        lr_mult, wd_mult = 3.0, 0.5

    opt = mx.optimizer.SGD(learning_rate=0.2, wd=0.1,
                           param_idx2name={0: "fc_weight", 1: "fc_bias", 2: "emb_weight"},
                           param_dict={5: Param()})
    opt.set_lr_mult({0: 0.5, "emb_weight": 2.0})
    assert opt._get_lr(0) == pytest.approx(0.1)
    assert opt._get_lr(2) == pytest.approx(0.4)
    assert opt._get_lr(1) == pytest.approx(0.2)
    assert opt._get_lr(5) == pytest.approx(0.6)
    # names not ending in _weight/_gamma get no weight decay by default
    assert opt._get_wd(1) == 0.0 and opt._get_wd(0) == pytest.approx(0.1)
    assert opt._get_wd(5) == pytest.approx(0.05)
    opt.set_wd_mult({"fc_bias": 1.0})
    assert opt._get_wd(1) == pytest.approx(0.1)


def test_sym_attributes_give_multipliers():
    class Sym:
        def attr_dict(self):
            return {"a": {"__lr_mult__": "0.5", "__wd_mult__": "0"}}

        def list_arguments(self):
            return ["a", "b"]

    opt = mx.optimizer.SGD(learning_rate=1.0, wd=1.0, sym=Sym(),
                           param_idx2name={0: "a", 1: "b_weight"})
    assert (opt._get_lr(0), opt._get_wd(0)) == (0.5, 0.0)
    assert (opt._get_lr(1), opt._get_wd(1)) == (1.0, 1.0)


def test_param_idx2name_must_be_dict():
    with pytest.raises(TypeError, match="param_idx2name must be a dict"):
        mx.optimizer.SGD(param_idx2name=["w"])


def test_update_counts_and_scheduler():
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    opt = mx.optimizer.SGD(lr_scheduler=sched, begin_num_update=0)
    w = mx.nd.zeros((1,))
    seen = []
    for _ in range(5):
        opt.update(0, w, mx.nd.ones((1,)), None)
        seen.append(opt.learning_rate)
    # lr used at update n is sched(n): 1, 1, .5, .5, .25 -> w = -(1+1+.5+.5+.25)
    assert seen == [1.0, 1.0, 0.5, 0.5, 0.25]
    assert w.asnumpy()[0] == pytest.approx(-3.25)
    assert opt.num_update == 5 and opt._index_update_count[0] == 5
    opt.update(1, mx.nd.zeros((1,)), mx.nd.ones((1,)), None)
    assert opt._index_update_count[1] == 1 and opt.num_update == 5


def test_learning_rate_given_overrides_scheduler_base_lr():
    sched = mx.lr_scheduler.FactorScheduler(step=10, base_lr=0.5)
    with pytest.warns(UserWarning, match="overwritten"):
        opt = mx.optimizer.SGD(learning_rate=0.2, lr_scheduler=sched)
    assert sched.base_lr == 0.2 and opt.learning_rate == 0.2
    with pytest.raises(UserWarning, match="LRScheduler of the optimizer has already"):
        opt.set_learning_rate(0.1)


def test_set_learning_rate_and_property_setter():
    opt = mx.optimizer.SGD(learning_rate=0.1)
    opt.set_learning_rate(0.3)
    assert opt.learning_rate == 0.3
    opt.learning_rate = 0.4
    assert opt.lr == 0.4


def test_per_device_update_counts():
    opt = mx.optimizer.SGD()
    opt.update(0, mx.nd.zeros((1,)), mx.nd.ones((1,)), None)
    opt._set_current_context(1)
    opt.update(0, mx.nd.zeros((1,)), mx.nd.ones((1,)), None)
    assert opt._all_index_update_counts == {0: {0: 1}, 1: {0: 1}}


def test_custom_optimizer_subclass_works_with_updater():
    @mx.optimizer.register
    class PlusGrad(mx.optimizer.Optimizer):
        def create_state(self, index, weight):
            return mx.nd.zeros(weight.shape)

        def update(self, index, weight, grad, state):
            weight[:] = weight + grad * self.rescale_grad
            state[:] = weight

    upd = mx.optimizer.get_updater(mx.optimizer.create("plusgrad", rescale_grad=2.0))
    w = mx.nd.zeros((2,))
    upd(0, mx.nd.ones((2,)), w)
    upd(0, mx.nd.ones((2,)), w)
    assert w.asnumpy().tolist() == [4.0, 4.0]
    assert upd.states[0].asnumpy().tolist() == [4.0, 4.0]
    del mx.optimizer.Optimizer.opt_registry["plusgrad"]


def test_base_update_without_override_says_what_to_do():
    with pytest.raises(NotImplementedError, match="must override update"):
        mx.optimizer.Optimizer().update(0, mx.nd.zeros((1,)), mx.nd.ones((1,)), None)


def test_updater_states_round_trip_with_sparse_state():
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.ones((4, 2)).tostype("row_sparse")
    g = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [2]), shape=(4, 2))
    upd(0, g, w)
    upd("emb", mx.nd.ones((3,)), mx.nd.zeros((3,)))
    blob = upd.get_states()
    fresh = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    fresh.set_states(blob)
    assert set(fresh.states) == {0, "emb"}
    assert fresh.states[0].stype == "row_sparse"
    np.testing.assert_allclose(fresh.states[0].asnumpy(), upd.states[0].asnumpy())
    assert fresh.states_synced == {0: False, "emb": False}
    # continuing from the loaded states equals continuing from the original ones
    w2 = w.copy()
    upd(0, g, w)
    fresh(0, g, w2)
    np.testing.assert_allclose(w2.asnumpy(), w.asnumpy())


class _Param:
    lr_mult, wd_mult = 1.0, 1.0


def test_updater_dump_optimizer():
    opt = mx.optimizer.SGD(learning_rate=0.25, momentum=0.5, param_dict={0: _Param()})
    upd = mx.optimizer.get_updater(opt)
    upd(0, mx.nd.ones((2,)), mx.nd.zeros((2,)))
    states, opt2 = pickle.loads(upd.get_states(dump_optimizer=True))
    assert isinstance(opt2, mx.optimizer.SGD) and opt2.lr == 0.25 and opt2.param_dict == {}
    assert opt2._index_update_count == {0: 1}
    fresh = mx.optimizer.get_updater(mx.optimizer.SGD())
    fresh.set_states(upd.get_states(dump_optimizer=True))
    assert fresh.optimizer.lr == 0.25


def test_updater_bytes_index_and_lists():
    upd = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=1.0))
    ws = [mx.nd.zeros((1,)), mx.nd.zeros((1,))]
    upd([b"a", b"b"], [mx.nd.ones((1,)), mx.nd.ones((1,)) * 2], ws)
    assert set(upd.states) == {"a", "b"}
    assert [w.asnumpy()[0] for w in ws] == [-1.0, -2.0]


def test_updater_sync_state_context():
    upd = mx.optimizer.get_updater(mx.optimizer.SGD())
    st = (mx.nd.ones((1,)), [mx.nd.zeros((1,)), None])
    out = upd.sync_state_context(st, mx.cpu())
    assert isinstance(out, tuple) and isinstance(out[1], list) and out[1][1] is None

"""mx.init / mx.initializer: registry, name dispatch, distributions, row_sparse filling."""
import json

import numpy as np
import pytest

import sparsenet as mx
from sparsenet import initializer as I


def _fill(init, name, shape, stype="default"):
    arr = mx.nd.zeros(shape, stype=stype)
    init(I.InitDesc(name), arr)
    return arr


def test_create_by_name_alias_json_and_instance():
    assert isinstance(I.create("zeros"), I.Zero) and isinstance(I.create("One"), I.One)
    u = I.create('["uniform", {"scale": 0.5}]')
    assert isinstance(u, I.Uniform) and u.scale == 0.5
    x = I.Xavier(magnitude=2)
    assert I.create(x) is x
    assert json.loads(x.dumps()) == ["xavier", {"rnd_type": "uniform", "factor_type": "avg",
                                                 "magnitude": 2}]
    assert I.create(x.dumps()) == x
    assert mx.init.MSRAPrelu().dumps() == '["msraprelu", {"factor_type": "avg", "slope": 0.25}]'
    with pytest.raises(ValueError, match="unknown initializer 'nope'"):
        I.create("nope")
    with pytest.raises(TypeError, match="expected an Initializer"):
        I.create(3)


def test_name_suffix_dispatch_and_unknown_pattern():
    u = I.Uniform(0.1)
    w = _fill(u, "fc_weight", (50, 4))
    assert w.asnumpy().std() > 0 and abs(w.asnumpy()).max() <= 0.1
    np.testing.assert_array_equal(_fill(u, "fc_bias", (3,)).asnumpy(), 0)
    np.testing.assert_array_equal(_fill(u, "bn_gamma", (3,)).asnumpy(), 1)
    np.testing.assert_array_equal(_fill(u, "bn_beta", (3,)).asnumpy(), 0)
    with pytest.raises(ValueError, match="Unknown initialization pattern for 'mystery'"):
        _fill(u, "mystery", (2,))


def test_param_specific_init_overrides_name():
    arr = mx.nd.zeros((2, 2))
    I.Uniform()(I.InitDesc("fc_bias", {"__init__": "ones"}), arr)
    np.testing.assert_array_equal(arr.asnumpy(), 1)
    arr = mx.nd.zeros((2,))
    I.Zero()(I.InitDesc("x", {"__init__": I.Constant(4.0)}), arr)
    np.testing.assert_array_equal(arr.asnumpy(), 4)


def test_distributions_have_the_documented_scale():
    mx.random.seed(0)
    n = _fill(I.Normal(0.5), "w_weight", (400, 100)).asnumpy()
    assert abs(n.std() - 0.5) < 0.01 and abs(n.mean()) < 0.01
    x = _fill(I.Xavier(), "w_weight", (300, 200)).asnumpy()
    bound = np.sqrt(3 / 250)
    assert x.max() <= bound and x.min() >= -bound and x.max() > 0.95 * bound
    g = _fill(I.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2), "w_weight",
              (200, 400)).asnumpy()
    assert abs(g.std() - np.sqrt(2 / 400)) < 0.003
    m = _fill(I.MSRAPrelu(slope=0.0), "w_weight", (200, 300)).asnumpy()
    assert abs(m.std() - np.sqrt(2 / 250)) < 0.003
    c = _fill(I.Xavier(), "w_weight", (8, 2, 3, 3)).asnumpy()
    assert abs(c).max() <= np.sqrt(3 / ((18 + 72) / 2))


def test_xavier_errors():
    with pytest.raises(ValueError, match="cannot be applied to vector 'b_weight'"):
        _fill(I.Xavier(), "b_weight", (3,))
    with pytest.raises(ValueError, match="factor_type must be"):
        _fill(I.Xavier(factor_type="mid"), "w_weight", (3, 3))
    with pytest.raises(ValueError, match="rnd_type must be"):
        _fill(I.Xavier(rnd_type="cauchy"), "w_weight", (3, 3))


def test_constant_scalar_and_array():
    np.testing.assert_array_equal(_fill(I.Constant(2.5), "w_weight", (2, 2)).asnumpy(), 2.5)
    arr = _fill(I.Constant(mx.nd.array([1.0, 2.0])), "w_weight", (3, 2)).asnumpy()
    np.testing.assert_array_equal(arr, [[1, 2]] * 3)
    assert I.Constant(np.array([1.0])).dumps() == '["constant", {"value": [1.0]}]'


def test_row_sparse_arrays_get_every_row_stored():
    r = _fill(I.Uniform(0.1), "emb_weight", (6, 3), stype="row_sparse")
    assert r.stype == "row_sparse" and r.indices.asnumpy().tolist() == list(range(6))
    z = _fill(I.Zero(), "emb_weight", (4, 2), stype="row_sparse")
    assert z.indices.asnumpy().tolist() == [0, 1, 2, 3] and not z.asnumpy().any()


def test_register_and_alias_custom_initializer():
    @I.register
    @I.alias("halves")
    class Half(I.Initializer):
        def _init_weight(self, name, arr):
            arr[:] = 0.5

    assert isinstance(mx.init.create("half"), Half) and isinstance(I.create("halves"), Half)
    with pytest.raises(TypeError, match="expected an Initializer subclass"):
        I.register(int)


def test_seeded_initialization_is_reproducible():
    mx.random.seed(11)
    a = _fill(I.Uniform(), "w_weight", (5, 5)).asnumpy()
    mx.random.seed(11)
    b = _fill(I.Uniform(), "w_weight", (5, 5)).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert mx.init is mx.initializer

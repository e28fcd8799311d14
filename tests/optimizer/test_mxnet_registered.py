"""The optimizers MXNet 1.9.1 registers, all of them: the registry holds every name, and the two
that were missing (``test``, MXNet's kvstore-test optimizer, and ``lbsgd``) give MXNet's numbers on
dense and row_sparse gradients, float32 and float16 with ``multi_precision`` (float32 master copy),
and through a local kvstore as MXNet's ``tests/nightly/dist_sync_kvstore.py`` drives ``test``.

``MEASURED`` was measured with MXNet 1.9.1 (/work/mxnet-venv): ``opt = mx.optimizer.create(name,
multi_precision=mp, **kwargs)`` on the dense weight ``W0`` (dtype float32, or float16 with
``mp=True``), ``state = opt.create_state_multi_precision(0, w)``, then
``opt.update_multi_precision(0, w, g, state)`` for each gradient of ``GRADS`` in turn (repeated
to ``STEPS`` calls), each gradient dense or ``.tostype('row_sparse')`` (the given rows only),
in the weight's dtype. Each entry lists the weight, then every array of the state in order
(multi-precision: ``(master, inner state)``); float16 weights are printed as float16, the rest
as float32. MXNet 1.9.1 gave the same numbers for a row_sparse weight (``W0.tostype(
'row_sparse')``) with LBSGD; with ``test`` it updates a row_sparse weight the same way and then
raises a TypeError copying it into the dense state (sparsenet finishes the copy).
"""
import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import InvalidArgumentError, MXNetError

# sorted(mx.optimizer.Optimizer.opt_registry.keys()) in MXNet 1.9.1
MXNET_1_9_1_REGISTERED = [
    "adadelta", "adagrad", "adam", "adamax", "ccsgd", "dcasgd", "ftml", "ftrl", "groupadagrad",
    "lamb", "lars", "lbsgd", "nadam", "nag", "rmsprop", "sgd", "sgld", "signum", "test"]

W0 = np.array([[0.5, -0.3], [0.2, 0.8], [-0.6, 0.1], [0.9, -0.4]], np.float32)
GRADS = [(np.array([[1.0, -2.0]], np.float32), [1]),
         (np.array([[0.5, 0.25], [-1.0, 3.0]], np.float32), [1, 3]),
         (np.array([[0.5, 0.5]], np.float32), [3])]

CONFIGS = {
    "test": ("test", dict(rescale_grad=2.0), 3),
    "lbsgd-momentum": ("lbsgd", dict(momentum=0.9, wd=0.1, learning_rate=0.1), 3),
    "lbsgd-plain": ("lbsgd", dict(wd=0.1, learning_rate=0.1), 3),
    "lbsgd-clip": ("lbsgd", dict(momentum=0.9, wd=0.1, learning_rate=0.1, rescale_grad=0.5,
                                 clip_gradient=0.6), 3),
    "lbsgd-scale2-linear": ("lbsgd", dict(momentum=0.9, wd=0.1, learning_rate=0.1, batch_scale=2,
                                          warmup_epochs=1, updates_per_epoch=4), 6),
    "lbsgd-scale3-sqrt": ("lbsgd", dict(momentum=0.9, wd=0.1, learning_rate=0.1, batch_scale=3,
                                        warmup_epochs=1, updates_per_epoch=2,
                                        warmup_strategy="sqrt"), 6),
    "lbsgd-lars": ("lbsgd", dict(momentum=0.9, wd=0.1, learning_rate=0.1,
                                 warmup_strategy="lars"), 3),
}

MEASURED = {
    ('test', 'default', 'float32'): [
        [[0.5, -0.3], [3.2, -2.7], [-0.6, 0.1], [-0.100000024, 6.6]],
        [[0.5, -0.3], [3.2, -2.7], [-0.6, 0.1], [-0.100000024, 6.6]],
    ],
    ('test', 'default', 'float16'): [
        [[0.5, -0.3], [3.2, -2.7], [-0.6, 0.1], [-0.1001, 6.6]],
        [[0.5, -0.30004883], [3.1999512, -2.7001953],
         [-0.60009766, 0.099975586], [-0.100097656, 6.6000977]],
        [[0.5, -0.30004883], [3.1999512, -2.7001953],
         [-0.60009766, 0.099975586], [-0.100097656, 6.6000977]],
    ],
    ('test', 'row_sparse', 'float32'): [
        [[0.5, -0.3], [3.2, -2.7], [-0.6, 0.1], [-0.100000024, 6.6]],
        [[0.5, -0.3], [3.2, -2.7], [-0.6, 0.1], [-0.100000024, 6.6]],
    ],
    ('test', 'row_sparse', 'float16'): [
        [[0.5, -0.3], [3.2, -2.7], [-0.6, 0.1], [-0.1001, 6.6]],
        [[0.5, -0.30004883], [3.1999512, -2.7001953],
         [-0.60009766, 0.099975586], [-0.100097656, 6.6000977]],
        [[0.5, -0.30004883], [3.1999512, -2.7001953],
         [-0.60009766, 0.099975586], [-0.100097656, 6.6000977]],
    ],
    ('lbsgd-momentum', 'default', 'float32'): [
        [[0.47218952, -0.28331372], [-0.17283417, 1.2426732],
         [-0.56662744, 0.0944379], [0.9889411, -0.9947516]],
        [[-0.013360501, 0.008016301], [-0.12805419, 0.112793185],
         [0.016032603, -0.0026721002], [0.014951106, -0.3063116]],
    ],
    ('lbsgd-momentum', 'default', 'float16'): [
        [[0.4722, -0.2834], [-0.1729, 1.242], [-0.567, 0.0944], [0.989, -0.9946]],
        [[0.47218952, -0.2833598], [-0.17288029, 1.2424887],
         [-0.5667196, 0.09441484], [0.98884887, -0.9946594]],
        [[-0.013360501, 0.008017605], [-0.12805289, 0.1127984],
         [0.01603521, -0.0026714476], [0.014953706, -0.30631423]],
    ],
    ('lbsgd-momentum', 'row_sparse', 'float32'): [
        [[0.5, -0.3], [-0.044779986, 1.12988], [-0.6, 0.1], [1.01299, -1.00544]],
        [[0.0, 0.0], [-0.14277999, 0.13787998], [0.0, 0.0], [0.02198999, -0.30944002]],
    ],
    ('lbsgd-momentum', 'row_sparse', 'float16'): [
        [[0.5, -0.3], [-0.04483, 1.13], [-0.6, 0.1], [1.013, -1.005]],
        [[0.5, -0.30004883], [-0.04482741, 1.1296903],
         [-0.60009766, 0.099975586], [1.0128951, -1.0053451]],
        [[0.0, 0.0], [-0.14277907, 0.13788368], [0.0, 0.0], [0.021991838, -0.30944186]],
    ],
    ('lbsgd-plain', 'default', 'float32'): [
        [[0.48514953, -0.2910897], [0.0465498, 0.9475092],
         [-0.5821794, 0.0970299], [0.9222691, -0.73511964]],
    ],
    ('lbsgd-plain', 'default', 'float16'): [
        [[0.485, -0.291], [0.0465, 0.9473], [-0.582, 0.097], [0.9224, -0.735]],
        [[0.48514953, -0.29113707], [0.046502423, 0.94731975],
         [-0.58227414, 0.09700621], [0.9221744, -0.73502487]],
    ],
    ('lbsgd-plain', 'row_sparse', 'float32'): [
        [[0.5, -0.3], [0.04702, 0.95708], [-0.6, 0.1], [0.93109, -0.73904]],
    ],
    ('lbsgd-plain', 'row_sparse', 'float16'): [
        [[0.5, -0.3], [0.04697, 0.957], [-0.6, 0.1], [0.931, -0.739]],
        [[0.5, -0.30004883], [0.046972144, 0.9568886],
         [-0.60009766, 0.099975586], [0.93099433, -0.7389443]],
    ],
    ('lbsgd-clip', 'default', 'float32'): [
        [[0.47218952, -0.28331372], [0.008020811, 0.8922042],
         [-0.56662744, 0.0944379], [0.91944104, -0.5161516]],
        [[-0.013360501, 0.008016301], [-0.06669919, 0.014424197],
         [0.016032603, -0.0026721002], [-0.0045489017, -0.0677116]],
    ],
    ('lbsgd-clip', 'default', 'float16'): [
        [[0.4722, -0.2834], [0.00797, 0.892], [-0.567, 0.0944], [0.9194, -0.516]],
        [[0.47218952, -0.2833598], [0.007974692, 0.89201975],
         [-0.5667196, 0.09441484], [0.91934884, -0.51605934]],
        [[-0.013360501, 0.008017605], [-0.066697896, 0.014429417],
         [0.01603521, -0.0026714476], [-0.004546294, -0.06771421]],
    ],
    ('lbsgd-clip', 'row_sparse', 'float32'): [
        [[0.5, -0.3], [0.07472, 0.87778], [-0.6, 0.1], [0.94348997, -0.52684]],
        [[0.0, 0.0], [-0.07328, 0.02578], [0.0, 0.0], [0.002489997, -0.07084]],
    ],
    ('lbsgd-clip', 'row_sparse', 'float16'): [
        [[0.5, -0.3], [0.07465, 0.8774], [-0.6, 0.1], [0.9434, -0.527]],
        [[0.5, -0.30004883], [0.07467259, 0.87759036],
         [-0.60009766, 0.099975586], [0.94339514, -0.5267452]],
        [[0.0, 0.0], [-0.073279075, 0.025783692], [0.0, 0.0], [0.0024918448, -0.07084185]],
    ],
    ('lbsgd-scale2-linear', 'default', 'float32'): [
        [[0.451442, -0.2708652], [-0.3537932, 1.4190722],
         [-0.5417304, 0.0902884], [0.96617556, -1.3978937]],
        [[-0.024458002, 0.014674801], [-0.2326532, 0.2108822],
         [0.029349603, -0.0048916], [0.0185556, -0.5441736]],
    ],
    ('lbsgd-scale2-linear', 'default', 'float16'): [
        [[0.4514, -0.271], [-0.3538, 1.419], [-0.542, 0.0903], [0.9663, -1.397]],
        [[0.451442, -0.27090925], [-0.35383728, 1.4188958],
         [-0.5418185, 0.09026636], [0.9660874, -1.3978055]],
        [[-0.024458002, 0.014677189], [-0.2326508, 0.21089172],
         [0.029354379, -0.004890406], [0.018560372, -0.54417837]],
    ],
    ('lbsgd-scale2-linear', 'row_sparse', 'float32'): [
        [[0.5, -0.3], [-0.3537932, 1.4190722], [-0.6, 0.1], [0.96617556, -1.3978937]],
        [[0.0, 0.0], [-0.2326532, 0.2108822], [0.0, 0.0], [0.0185556, -0.5441736]],
    ],
    ('lbsgd-scale2-linear', 'row_sparse', 'float16'): [
        [[0.5, -0.3], [-0.3538, 1.419], [-0.6, 0.1], [0.9663, -1.397]],
        [[0.5, -0.30004883], [-0.35383728, 1.4188958],
         [-0.60009766, 0.099975586], [0.9660874, -1.3978055]],
        [[0.0, 0.0], [-0.2326508, 0.21089172], [0.0, 0.0], [0.018560372, -0.54417837]],
    ],
    ('lbsgd-scale3-sqrt', 'default', 'float32'): [
        [[0.45695, -0.27417], [-0.24772, 1.23337], [-0.54834, 0.09139], [0.96601, -1.37006]],
        [[-0.028050002, 0.016830001], [-0.29172, 0.28236997],
         [0.033660002, -0.0056100003], [0.043010004, -0.63206]],
    ],
    ('lbsgd-scale3-sqrt', 'default', 'float16'): [
        [[0.457, -0.2742], [-0.2478, 1.233], [-0.5483, 0.0914], [0.966, -1.37]],
        [[0.45695, -0.27421463], [-0.24776463, 1.2331915],
         [-0.54842925, 0.091367684], [0.96592075, -1.3699707]],
        [[-0.028050002, 0.01683274], [-0.29171726, 0.28238094],
         [0.03366548, -0.0056086304], [0.043015487, -0.6320654]],
    ],
    ('lbsgd-scale3-sqrt', 'row_sparse', 'float32'): [
        [[0.5, -0.3], [-0.24772, 1.23337], [-0.6, 0.1], [0.96601, -1.37006]],
        [[0.0, 0.0], [-0.29172, 0.28236997], [0.0, 0.0], [0.043010004, -0.63206]],
    ],
    ('lbsgd-scale3-sqrt', 'row_sparse', 'float16'): [
        [[0.5, -0.3], [-0.2478, 1.233], [-0.6, 0.1], [0.966, -1.37]],
        [[0.5, -0.30004883], [-0.24776463, 1.2331915],
         [-0.60009766, 0.099975586], [0.96592075, -1.3699707]],
        [[0.0, 0.0], [-0.29171726, 0.28238094], [0.0, 0.0], [0.043015487, -0.6320654]],
    ],
    ('lbsgd-lars', 'default', 'float32'): [
        [[0.476861, -0.28611663], [-0.034216672, 1.097683],
         [-0.57223326, 0.0953722], [0.85465723, -0.75387514]],
        [[-0.014327167, 0.0085963], [-0.0789589, 0.06957438],
         [0.0171926, -0.0028654332], [-0.07848833, -0.213904]],
    ],
    ('lbsgd-lars', 'default', 'float16'): [
        [[0.4768, -0.2861], [-0.03424, 1.098], [-0.5723, 0.09534], [0.8545, -0.754]],
        [[0.47686288, -0.28616428], [-0.034242198, 1.09747],
         [-0.57232857, 0.09534929], [0.85456496, -0.7537508]],
        [[-0.014326108, 0.008597064], [-0.078950554, 0.069573775],
         [0.017194128, -0.002864522], [-0.07848143, -0.21388903]],
    ],
    ('lbsgd-lars', 'row_sparse', 'float32'): [
        [[0.5, -0.3], [0.04463376, 1.0280361], [-0.6, 0.1], [0.8704702, -0.76269203]],
        [[0.0, 0.0], [-0.086887404, 0.09913476], [0.0, 0.0], [-0.074318364, -0.21700601]],
    ],
    ('lbsgd-lars', 'row_sparse', 'float16'): [
        [[0.5, -0.3], [0.0446, 1.027], [-0.6, 0.1], [0.8706, -0.7627]],
        [[0.5, -0.30004883], [0.0445999, 1.0278239],
         [-0.60009766, 0.099975586], [0.8703747, -0.7625652]],
        [[0.0, 0.0], [-0.08687892, 0.09912813], [0.0, 0.0], [-0.074312426, -0.2169904]],
    ],
}


def _grad(g, rows, stype, dtype):
    dense = np.zeros(W0.shape, np.float32)
    dense[rows] = g
    arr = mx.nd.array(dense, dtype=dtype)
    return arr.tostype("row_sparse") if stype == "row_sparse" else arr


def _flat(state):
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [a for s in state for a in _flat(s)]
    return [state]


def _run(config, wstype, gstype, dtype, **extra):
    name, kwargs, steps = CONFIGS[config]
    opt = mx.optimizer.create(name, multi_precision=dtype == "float16", **kwargs, **extra)
    weight = mx.nd.array(W0, dtype=dtype)
    if wstype == "row_sparse":
        weight = weight.tostype("row_sparse")
    state = opt.create_state_multi_precision(0, weight)
    for g, rows in (GRADS * 2)[:steps]:
        opt.update_multi_precision(0, weight, _grad(g, rows, gstype, dtype), state)
    opt.sync(weight, state)
    return opt, weight, state


def test_every_mxnet_optimizer_is_registered():
    registered = set(mx.optimizer.Optimizer.opt_registry)
    assert set(MXNET_1_9_1_REGISTERED) <= registered, sorted(
        set(MXNET_1_9_1_REGISTERED) - registered)
    for name in MXNET_1_9_1_REGISTERED:  # and each is created by its name, with its defaults
        assert isinstance(mx.optimizer.create(name), mx.optimizer.Optimizer)
    assert type(mx.optimizer.create("Test")).__name__ == "Test"
    assert type(mx.optimizer.create("LBSGD")).__name__ == "LBSGD"


@pytest.mark.parametrize("wstype", ["default", "row_sparse"])
@pytest.mark.parametrize("key", sorted(MEASURED), ids=lambda k: "-".join(k))
def test_against_mxnet_1_9_1(key, wstype):
    config, gstype, dtype = key
    _, weight, state = _run(config, wstype, gstype, dtype)
    expected = MEASURED[key]
    assert weight.stype == wstype and weight.dtype == np.dtype(dtype)
    if dtype == "float16":  # the float16 weight is the float32 master rounded
        np.testing.assert_allclose(weight.asnumpy(), np.asarray(expected[0], np.float16),
                                   rtol=1e-3, atol=1e-4)
    else:
        np.testing.assert_allclose(weight.asnumpy(), expected[0], rtol=1e-6, atol=1e-7)
    arrays = _flat(state)
    assert len(arrays) == len(expected) - 1
    for got, want in zip(arrays, expected[1:]):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, atol=2e-7)
    if dtype == "float16":  # the weight is the master copy rounded to float16
        np.testing.assert_array_equal(weight.asnumpy(),
                                      arrays[0].asnumpy().astype(np.float16))


def test_test_state_is_a_dense_float32_copy():
    # MXNet 1.9.1's Test.create_state: zeros(weight.shape, weight.context), float32 and dense
    opt = mx.optimizer.create("test", rescale_grad=2.0)
    for weight in (mx.nd.ones((3, 2), dtype="float16"),
                   mx.nd.ones((3, 2)).tostype("row_sparse")):
        state = opt.create_state(0, weight)
        assert state.stype == "default" and state.dtype == np.float32 and state.shape == (3, 2)


@pytest.mark.parametrize("lazy", [True, False, "exact"])
def test_test_rule_on_row_sparse_gradients_numpy(lazy):
    """NumPy reference of MXNet's rule: ``w += rescale_grad * g``; the state copies the weight
    (every row, or the gradient's rows with lazy_update=True)."""
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((6, 3)).astype(np.float32)
    opt = mx.optimizer.create("test", rescale_grad=0.5, lazy_update=lazy)
    weight = mx.nd.array(w0)
    state = opt.create_state_multi_precision(0, weight)
    w, s = w0.copy(), np.zeros_like(w0)
    for rows in ([1, 4], [], [0, 1, 5]):
        g = rng.standard_normal((len(rows), 3)).astype(np.float32)
        grad = mx.nd.sparse.row_sparse_array((g.reshape(-1, 3), rows), shape=w0.shape)
        opt.update_multi_precision(0, weight, grad, state)
        w[rows] += g * np.float32(0.5)
        if lazy is True:
            s[rows] = w[rows]
        else:
            s = w.copy()
    opt.sync(weight, state)
    np.testing.assert_array_equal(weight.asnumpy(), w)
    if lazy is True:
        np.testing.assert_array_equal(state.asnumpy()[[0, 1, 4, 5]], w[[0, 1, 4, 5]])
        np.testing.assert_array_equal(state.asnumpy()[[2, 3]], 0)
    else:
        np.testing.assert_array_equal(state.asnumpy(), s)
    assert opt.num_update == 0  # MXNet's Test does not count updates


def _sgd_momentum_reference(w, g, mom, lr, wd, momentum):
    """MXNet's sgd_mom_update (dense): mom = momentum*mom - lr*wd*w - lr*g; w += mom."""
    mom = momentum * mom - lr * wd * w - lr * g
    return w + mom, mom


@pytest.mark.parametrize("lazy", [False, "exact"])
def test_lbsgd_standard_and_exact_match_dense_sgd_numpy(lazy):
    """With ``lazy_update=False`` (and ``'exact'`` after sync) a row_sparse gradient gives the
    dense rule: NumPy SGD with momentum on the mean of each ``batch_scale`` gradients, with the
    warmup multiplier (linear: 1 + (M-1) n/N before N calls, then M)."""
    rng = np.random.default_rng(5)
    w0 = rng.standard_normal((5, 2))
    opt = mx.optimizer.create("lbsgd", learning_rate=0.1, momentum=0.9, wd=0.05, batch_scale=2,
                              warmup_epochs=1, updates_per_epoch=4, lazy_update=lazy)
    weight = mx.nd.array(w0)
    state = opt.create_state_multi_precision(0, weight)
    w, mom, total = w0.copy(), np.zeros_like(w0), np.zeros_like(w0)
    for n, rows in enumerate(([0], [3], [1, 3], [], [4], [0, 4], [2], [2]), start=1):
        g = np.zeros_like(w0)
        g[rows] = rng.standard_normal((len(rows), 2))
        grad = mx.nd.sparse.row_sparse_array((g[rows].astype(np.float32).reshape(-1, 2), rows),
                                             shape=w0.shape)
        opt.update_multi_precision(0, weight, grad, state)
        total += g.astype(np.float32)
        if n % 2 == 0:
            mult = 1.0 + (2 - 1) * n / 4 if n < 4 else 2.0
            w, mom = _sgd_momentum_reference(w, total / 2, mom, 0.1 * mult, 0.05, 0.9)
            total[:] = 0
    opt.sync(weight, state)
    np.testing.assert_allclose(weight.asnumpy(), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state.asnumpy(), mom, rtol=1e-5, atol=1e-6)


def test_lbsgd_sums_copies_not_the_callers_gradient_buffer():
    """A gradient buffer the caller overwrites between calls (a Trainer's) is summed with the
    values it had at each call (MXNet 1.9.1 keeps a reference and would read the new values)."""
    opt = mx.optimizer.create("lbsgd", learning_rate=1.0, batch_scale=2, warmup_epochs=0)
    weight = mx.nd.zeros((2,))
    buf = mx.nd.array([1.0, 2.0])
    opt.update(0, weight, buf, None)
    np.testing.assert_array_equal(weight.asnumpy(), [0.0, 0.0])  # first of two: no step
    buf[:] = mx.nd.array([3.0, 4.0])
    opt.update(0, weight, buf, None)
    # no warmup: lr * batch_scale; the mean of the two gradients: -1 * 2 * (g1 + g2) / 2
    np.testing.assert_array_equal(weight.asnumpy(), [-4.0, -6.0])


@pytest.mark.parametrize("kwargs, match", [
    (dict(warmup_strategy="cosine"), r"warmup_strategy must be one of linear, power2, sqrt, "
                                     r"lars, got 'cosine'"),
    (dict(batch_scale=0), r"batch_scale must be a positive integer .* got 0"),
    (dict(batch_scale=1.5), r"batch_scale must be a positive integer .* got 1.5"),
])
def test_lbsgd_refuses_bad_arguments(kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match) as info:
        mx.optimizer.create("lbsgd", **kwargs)
    assert isinstance(info.value, MXNetError) and isinstance(info.value, ValueError)


def test_test_optimizer_through_local_kvstore_as_mxnet_dist_test():
    """MXNet's dist_sync_kvstore.py ``test_sync_push_pull`` on a local store: ``nworker``
    pushes per key (a list), optimizer ``test`` with ``rescale_grad=rate`` and
    ``multi_precision=True``, float32 and float16 keys, dense and row_sparse. The expected
    values are the test's own formulas: dense keys read
    ``(nworker + 1) * nworker * rate / 2 * (i + 1) + 1`` after push ``i``; row_sparse row ``r``
    (pushed ``r + 1.5`` by worker ``r``) reads ``1 + (r + 1.5) * rate * (i + 1)``. MXNet 1.9.1's
    local store measured the same for every key but the float16 row_sparse one, which it leaves
    at 1 (its Test raises copying the row_sparse master into the dense state, before the
    float16 copy is written back; its dist server writes it back and the dist test expects the
    update)."""
    shape, rate, nworker = (3, 4), 2.0, 3
    kv = mx.kv.create("local")
    kv.init("d32", mx.nd.ones(shape))
    kv.init("d16", mx.nd.ones(shape, dtype="float16"))
    kv.init("r32", mx.nd.ones(shape).tostype("row_sparse"))
    kv.init("r16", mx.nd.ones(shape, dtype="float16").tostype("row_sparse"))
    kv.set_optimizer(mx.optimizer.create("test", rescale_grad=rate, multi_precision=True))
    for i in range(3):
        for key, dtype in (("d32", "float32"), ("d16", "float16")):
            kv.push(key, [mx.nd.ones(shape, dtype=dtype) * (r + 1) for r in range(nworker)])
            val = mx.nd.zeros(shape, dtype=dtype)
            kv.pull(key, out=val)
            num = (nworker + 1) * nworker * rate / 2 * (i + 1) + 1
            assert val.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(val.asnumpy(), np.full(shape, num, dtype))
        for key, dtype in (("r32", "float32"), ("r16", "float16")):
            pushes = []
            for r in range(nworker):
                v = mx.nd.zeros(shape, dtype=dtype)
                v[r % shape[0]] = r + 1.5
                pushes.append(v.tostype("row_sparse"))
            kv.push(key, pushes)
            val = mx.nd.zeros(shape, stype="row_sparse", dtype=dtype)
            kv.row_sparse_pull(key, out=val, row_ids=mx.nd.array([0, 2], dtype=dtype))
            expected = np.zeros(shape, dtype)
            for r in (0, 2):
                expected[r] = 1 + (r + 1.5) * rate * (i + 1)
            assert val.stype == "row_sparse" and val.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(val.asnumpy(), expected)

"""Hybridized and eager training give the same weights.

For each network, two copies start from the same weights and see the same
batches: one runs imperatively (``F = mx.nd``), the other hybridized (traced once
into a symbol graph and run as a cached program). After several training steps
through the Gluon ``Trainer`` (sparse CSR inputs, row_sparse weight gradients and
gradients, lazy optimizer updates) their weights must agree to float32 rounding.
The networks:

- seed 000's three Gluon networks (``sparsenet.cli._seed000.build_net``), as the
  tutorial builds them (a ``Sequential`` of hybridized children) and inside one
  ``HybridSequential`` (one graph for the whole network);
- MXNet's four sparse example models (``tests/examples/*_program.py``: linear
  classification with its custom loss operator, factorization machine, matrix
  factorization, wide & deep), written once with ``F`` so that the same code
  runs eagerly and hybridized; and the examples' own symbols trained by the
  Module API (the bound executor), which must agree with the eager Gluon run;
- a custom operator (``mx.operator.CustomOp``) inside a hybridized block.

Expected values come from the eager run, whose operators are tested against
NumPy/torch elsewhere, and for the custom-operator block also from MXNet 1.9.1
(figures pasted below with how they were measured).
"""
import numpy as np
import pytest
import scipy.sparse as sps

import sparsenet as mx
from sparsenet.cli._seed000 import FullyConnectedSparse, build_net
from tests.examples import factorization_machine_program as fm_prog
from tests.examples import linear_classification_program as lc_prog  # registers the custom op
from tests.examples import matrix_factorization_program as mf_prog
from tests.examples import wide_deep_program as wd_prog

STEPS = 5
# seed 000's networks are Sequentials of HybridBlocks, as the tutorial writes them
pytestmark = pytest.mark.filterwarnings("ignore:All children of this Sequential layer")
# the two runs call the same kernels in the same order: they agree to float32 rounding
RTOL, ATOL = 1e-5, 1e-6


@pytest.fixture(autouse=True)
def _fresh_names():
    """Symbol names from a scope of their own (other tests pin names such as '_plus0')."""
    with mx.name.NameManager():
        yield


# ---------------------------------------------------------------------- data and helpers
def _csr(rng, rows, cols, density):
    m = sps.random(rows, cols, density=density, format="csr", random_state=rng,
                   dtype=np.float32)
    m.data = rng.uniform(-1, 1, size=m.nnz).astype(np.float32)
    return mx.nd.sparse.csr_matrix((m.data, m.indices, m.indptr), shape=(rows, cols))


def _weights(params):
    """``{name: dense numpy copy}`` of a ParameterDict (or a dict of NDArrays)."""
    out = {}
    for name, p in params.items():
        arr = p.data() if hasattr(p, "data") and not isinstance(p, mx.nd.NDArray) else p
        out[name] = arr.tostype("default").asnumpy() if arr.stype != "default" \
            else arr.asnumpy()
    return out


def _grads(params):
    """``{name: (stype, stored row ids or None, dense numpy copy)}`` of every gradient."""
    out = {}
    for name, p in params.items():
        g = p.grad()
        rows = g.indices.asnumpy() if g.stype == "row_sparse" else None
        out[name] = (g.stype, rows, g.tostype("default").asnumpy())
    return out


def _assert_same_grads(got, want, what):
    """Same storage type, same stored rows (a row_sparse gradient keeps only touched rows)
    and the same values."""
    for name, (stype, rows, value) in want.items():
        g_stype, g_rows, g_value = got[name]
        assert g_stype == stype, f"{what}: {name} gradient is {g_stype}, eager {stype}"
        if rows is not None:
            np.testing.assert_array_equal(g_rows, rows, err_msg=f"{what}: {name} rows")
        np.testing.assert_allclose(g_value, value, rtol=RTOL, atol=ATOL,
                                   err_msg=f"{what}: {name} gradient")


def _set_weights(params, values):
    for name, p in params.items():
        arr = mx.nd.array(values[name])
        p.set_data(arr.tostype(p.stype) if p.stype != "default" else arr)


def _assert_same(got, want, what):
    assert sorted(got) == sorted(want), what
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=RTOL, atol=ATOL,
                                   err_msg=f"{what}: {name}")


def _changed(before, after):
    """Training moved every parameter (else the comparison proves nothing)."""
    for name in before:
        assert not np.array_equal(before[name], after[name]), f"{name} did not change"


class FnBlock(mx.gluon.HybridBlock):
    """A block running ``fn(F, *inputs, **params)``; parameters named exactly as declared.

    ``specs``: ``{name: dict(shape=..., stype=..., grad_stype=..., lr_mult=..., ...)}``.
    """

    def __init__(self, fn, specs):
        super().__init__(prefix="")
        self._fn = fn
        for name, spec in specs.items():
            self.params.get(name, allow_deferred_init=False, **spec)
            self._reg_params[name] = self.params[name]

    def hybrid_forward(self, F, *args, **params):
        return self._fn(F, *args, **params)


def _train_block(fn, specs, init, batches, optimizer, opt_params, hybridize, loss_fn=None):
    """Train ``FnBlock(fn, specs)`` from weights ``init`` on ``batches``; its weights after."""
    net = FnBlock(fn, specs)
    net.initialize(mx.init.Zero())
    _set_weights(net.collect_params(), init)
    if hybridize:
        net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), optimizer, dict(opt_params))
    grads = []
    for inputs, label in batches:
        with mx.autograd.record():
            out = net(*inputs, label) if loss_fn is None else loss_fn(net(*inputs), label)
        out.backward()
        grads.append(_grads(net.collect_params()))
        trainer.step(label.shape[0])
    if hybridize:
        assert net._cached_graph is not None  # it ran as one graph
    return _weights(net.collect_params()), grads


def _train_module(symbol, data_names, label_name, init, batches, optimizer, opt_params):
    """Train the example's own symbol with the Module API (its bound executor)."""
    inputs, label = batches[0]
    mod = mx.mod.Module(symbol, data_names=data_names, label_names=[label_name])
    mod.bind(data_shapes=list(zip(data_names, [x.shape for x in inputs])),
             label_shapes=[(label_name, label.shape)])
    mod.init_params(mx.init.Zero())
    arg_params, aux_params = mod.get_params()
    assert sorted(arg_params) == sorted(init)
    mod.set_params({k: (mx.nd.array(init[k]).tostype(v.stype) if v.stype != "default"
                        else mx.nd.array(init[k])) for k, v in arg_params.items()}, aux_params)
    # by name, as the examples do: the optimizer then reads lr_mult/wd_mult off the symbol
    mod.init_optimizer(optimizer=optimizer,
                       optimizer_params=dict(opt_params, rescale_grad=1.0 / label.shape[0]))
    for inputs, label in batches:
        mod.forward_backward(mx.io.DataBatch(data=list(inputs), label=[label]))
        mod.update()
    return _weights(mod.get_params()[0])


def _check_block(fn, specs, init, batches, optimizer, opt_params, loss_fn=None):
    eager, eager_grads = _train_block(fn, specs, init, batches, optimizer, opt_params, False,
                                      loss_fn)
    hybrid, hybrid_grads = _train_block(fn, specs, init, batches, optimizer, opt_params, True,
                                        loss_fn)
    _changed(init, eager)
    for step, (h, e) in enumerate(zip(hybrid_grads, eager_grads)):
        _assert_same_grads(h, e, f"step {step}: hybridized vs eager")
    _assert_same(hybrid, eager, "hybridized vs eager")
    return eager


def _normal(rng, specs, sigma):
    return {n: (rng.normal(0, sigma(n), size=s["shape"]).astype(np.float32))
            for n, s in specs.items()}


# ---------------------------------------------------------------------- seed 000
SEED000_FEATURES, SEED000_BATCH = 2000, 16


class BroadcastFullyConnectedSparse(FullyConnectedSparse):
    """The tutorial's block as it must be written to hybridize: ``broadcast_add`` for the bias.

    The tutorial's ``F.sparse.dot(x, weight) + bias`` broadcasts on NDArrays only; on
    Symbols ``+`` is ``elemwise_add``, and MXNet 1.9.1 rejects the hybridized block
    ("Incompatible attr in node fullyconnectedsparse0__plus0 at 1-th input: expected
    [3,4], got [4]"), as sparsenet does (:func:`test_seed000_tutorial_block_needs_broadcast`).
    """

    def hybrid_forward(self, F, x, weight, bias):
        return F.broadcast_add(F.sparse.dot(x, weight), bias)


def _seed000_net(variant):
    net = build_net(variant, SEED000_FEATURES)
    for child in net._children.values():
        if type(child) is FullyConnectedSparse:
            child.__class__ = BroadcastFullyConnectedSparse
    return net


def test_seed000_tutorial_block_needs_broadcast():
    net = FullyConnectedSparse(20, 4)
    net.initialize()
    net.hybridize()
    with pytest.raises(mx.MXNetError, match="shapes must be equal"):
        net(mx.nd.ones((3, 20)).tostype("csr"))


def _seed000_run(variant, hybridize, whole, init, batches):
    net = _seed000_net(variant)
    if whole:  # the same layers in one HybridSequential: one graph for the network
        seq = mx.gluon.nn.HybridSequential()
        for child in net._children.values():
            seq.add(child)
        net = seq
    params = list(net.collect_params().values())
    for p, value in zip(params, init):
        p.set_data(mx.nd.array(value))
    if hybridize:
        net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.5, "momentum": 0.9, "wd": 1e-3})
    loss_fn = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss()
    grads = []
    for data, label in batches:
        with mx.autograd.record():
            loss = loss_fn(net(data), label)
        loss.backward()
        grads.append(_grads(dict(enumerate(params))))
        trainer.step(data.shape[0])
    return [p.data().asnumpy() for p in params], grads


@pytest.mark.parametrize("whole", [False, True], ids=["sequential", "one_graph"])
@pytest.mark.parametrize("variant", [1, 2, 3])
def test_seed000_networks(variant, whole):
    rng = np.random.RandomState(variant)
    batches = []
    for _ in range(STEPS):
        data = _csr(rng, SEED000_BATCH, SEED000_FEATURES, 0.005)
        label = mx.nd.array((rng.uniform(size=SEED000_BATCH) > 0.5).astype(np.float32))
        batches.append((data, label))
    net = build_net(variant, SEED000_FEATURES)
    init = [rng.normal(0, 0.1, size=p.shape).astype(np.float32)
            for p in net.collect_params().values()]
    eager, eager_grads = _seed000_run(variant, False, whole, init, batches)
    hybrid, hybrid_grads = _seed000_run(variant, True, whole, init, batches)
    if variant == 3:  # the first layer's weight gradient holds only the rows a batch touches
        assert eager_grads[0][0][0] == "row_sparse"
    for step, (h, e) in enumerate(zip(hybrid_grads, eager_grads)):
        _assert_same_grads(h, e, f"step {step}: hybridized vs eager")
    for k, (a, b, w0) in enumerate(zip(hybrid, eager, init)):
        assert not np.array_equal(b, w0), f"parameter {k} did not change"
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=f"parameter {k}")


# ---------------------------------------------------------------------- linear classification
LC_FEATURES, LC_BATCH = 500, 32


def _linear_fn(F, x, label, weight, bias):
    pred = F.broadcast_add(F.sparse.dot(x, weight), bias)
    return F.MakeLoss(F.Custom(pred, label, op_type="weighted_softmax_ce_loss",
                               positive_cls_weight=2, name="out"))


LC_SPECS = {"weight": dict(shape=(LC_FEATURES, 2), grad_stype="row_sparse"),
            "bias": dict(shape=(2,))}


def _lc_batches(rng):
    return [((_csr(rng, LC_BATCH, LC_FEATURES, 0.02),),
             mx.nd.array(rng.randint(0, 2, size=LC_BATCH).astype(np.float32)))
            for _ in range(STEPS)]


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_linear_classification(optimizer):
    rng = np.random.RandomState(1)
    init = _normal(rng, LC_SPECS, lambda n: 0.1)
    batches = _lc_batches(rng)
    params = {"learning_rate": 0.5} if optimizer == "sgd" else {"learning_rate": 0.05}
    eager = _check_block(_linear_fn, LC_SPECS, init, batches, optimizer, params)
    with mx.name.NameManager():
        symbol = lc_prog.linear_model(LC_FEATURES, 2)
    module = _train_module(symbol, ["data"], "softmax_label", init, batches, optimizer, params)
    _assert_same(module, eager, "Module vs eager Gluon")


# ---------------------------------------------------------------------- factorization machine
FM_FEATURES, FM_FACTORS, FM_BATCH = 400, 8, 32
FM_LR = {"v": 0.01, "w": 0.1, "w0": 1.0}
FM_WD = {"v": 1e-4, "w": 1e-3, "w0": 1e-2}


def _fm_fn(F, x, label, v, w, w0):
    w1 = F.broadcast_add(F.dot(x, w), w0)
    v_s = F._internal._square_sum(data=v, axis=1, keepdims=True)
    x_s = x.square()
    bd_sum = F.dot(x_s, v_s)
    w2 = F.dot(x, v)
    w2_squared = 0.5 * F.square(data=w2)
    w_all = F.Concat(w1, w2_squared, dim=1)
    model = w_all.sum(axis=1, keepdims=True) + (-0.5 * bd_sum)
    return F.LogisticRegressionOutput(data=model, label=label)


FM_SPECS = {
    "v": dict(shape=(FM_FEATURES, FM_FACTORS), grad_stype="row_sparse",
              lr_mult=FM_LR["v"], wd_mult=FM_WD["v"]),
    "w": dict(shape=(FM_FEATURES, 1), grad_stype="row_sparse",
              lr_mult=FM_LR["w"], wd_mult=FM_WD["w"]),
    "w0": dict(shape=(1,), lr_mult=FM_LR["w0"], wd_mult=FM_WD["w0"]),
}


def test_factorization_machine():
    rng = np.random.RandomState(2)
    init = _normal(rng, FM_SPECS, lambda n: {"v": 0.1, "w": 0.1, "w0": 0.1}[n])
    batches = [((_csr(rng, FM_BATCH, FM_FEATURES, 0.02),),
                mx.nd.array(rng.randint(0, 2, size=(FM_BATCH, 1)).astype(np.float32)))
               for _ in range(STEPS)]
    params = {"learning_rate": 1.0, "wd": 1.0, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}
    eager = _check_block(_fm_fn, FM_SPECS, init, batches, "adam", params)
    with mx.name.NameManager():
        symbol = fm_prog.factorization_machine_model(
            FM_FACTORS, FM_FEATURES, FM_LR, FM_WD,
            {k: mx.init.Zero() for k in ("v", "w", "w0")})
    module = _train_module(symbol, ["data"], "softmax_label", init, batches, "adam", params)
    _assert_same(module, eager, "Module vs eager Gluon")


# ---------------------------------------------------------------------- matrix factorization
MF_USERS, MF_ITEMS, MF_FACTORS, MF_BATCH = 300, 200, 16, 100


def _mf_fn(F, user, item, score, user_weight, item_weight, fullyconnected0_weight,
           fullyconnected0_bias, fullyconnected1_weight, fullyconnected1_bias):
    user = F.Embedding(data=user, weight=user_weight, sparse_grad=True,
                       input_dim=MF_USERS, output_dim=MF_FACTORS)
    item = F.Embedding(data=item, weight=item_weight, sparse_grad=True,
                       input_dim=MF_ITEMS, output_dim=MF_FACTORS)
    user = F.Activation(data=user, act_type="relu")
    user_act = F.FullyConnected(user, fullyconnected0_weight, fullyconnected0_bias,
                                num_hidden=MF_FACTORS)
    item = F.Activation(data=item, act_type="relu")
    item_act = F.FullyConnected(item, fullyconnected1_weight, fullyconnected1_bias,
                                num_hidden=MF_FACTORS)
    pred = F.Flatten(data=F.sum(data=user_act * item_act, axis=1))
    return F.LinearRegressionOutput(data=pred, label=score)


MF_SPECS = {
    "user_weight": dict(shape=(MF_USERS, MF_FACTORS), grad_stype="row_sparse"),
    "item_weight": dict(shape=(MF_ITEMS, MF_FACTORS), grad_stype="row_sparse"),
    "fullyconnected0_weight": dict(shape=(MF_FACTORS, MF_FACTORS)),
    # an optimizer made for a symbol (Module) decays only ``*_weight``/``*_gamma`` arguments
    # (MXNet 1.9.1's Optimizer.set_wd_mult); a Gluon parameter says so with wd_mult=0
    "fullyconnected0_bias": dict(shape=(MF_FACTORS,), wd_mult=0.0),
    "fullyconnected1_weight": dict(shape=(MF_FACTORS, MF_FACTORS)),
    "fullyconnected1_bias": dict(shape=(MF_FACTORS,), wd_mult=0.0),
}


def _mf_batches(rng, steps=STEPS, batch=MF_BATCH):
    return [((mx.nd.array(rng.randint(0, MF_USERS, size=batch), dtype="int32"),
              mx.nd.array(rng.randint(0, MF_ITEMS, size=batch).astype(np.float32))),
             mx.nd.array(rng.uniform(1, 5, size=batch).astype(np.float32)))
            for _ in range(steps)]


def _mf_init(rng):
    return {n: (rng.normal(0, 1.0 / np.sqrt(s["shape"][-1]), size=s["shape"])
                if not n.endswith("_bias") else rng.normal(0, 0.1, size=s["shape"]))
            .astype(np.float32) for n, s in MF_SPECS.items()}


def test_matrix_factorization():
    rng = np.random.RandomState(3)
    init = _mf_init(rng)
    batches = _mf_batches(rng)
    params = {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-4}
    eager = _check_block(_mf_fn, MF_SPECS, init, batches, "sgd", params)
    with mx.name.NameManager():
        symbol = mf_prog.matrix_fact_net(MF_FACTORS, MF_FACTORS, MF_USERS, MF_ITEMS, False)
    module = _train_module(symbol, ["user", "item"], "score", init, batches, "sgd", params)
    _assert_same(module, eager, "Module vs eager Gluon")


# ---------------------------------------------------------------------- wide & deep
WD_LINEAR, WD_EMBED, WD_CONT, WD_DIMS, WD_HIDDEN, WD_BATCH = 300, 3, 4, [7, 5, 9], [4, 16, 8], 20


def _wd_fn(F, csr_data, dns_data, label, linear_weight, linear_bias, embed_0_weight,
           embed_1_weight, embed_2_weight, fullyconnected0_weight, fullyconnected0_bias,
           fullyconnected1_weight, fullyconnected1_bias, fullyconnected2_weight,
           fullyconnected2_bias):
    linear_out = F.broadcast_add(F.sparse.dot(csr_data, linear_weight), linear_bias)
    x = F.slice(data=dns_data, begin=(0, 0), end=(None, WD_EMBED))
    embeds = F.split(data=x, num_outputs=WD_EMBED, squeeze_axis=1)
    x = F.slice(data=dns_data, begin=(0, WD_EMBED), end=(None, WD_EMBED + WD_CONT))
    features = [x]
    for i, w in enumerate((embed_0_weight, embed_1_weight, embed_2_weight)):
        features.append(F.contrib.SparseEmbedding(data=embeds[i], weight=w,
                                                  input_dim=WD_DIMS[i],
                                                  output_dim=WD_HIDDEN[0]))
    hidden = F.concat(*features, dim=1)
    hidden = F.Activation(F.FullyConnected(hidden, fullyconnected0_weight, fullyconnected0_bias,
                                           num_hidden=WD_HIDDEN[1]), act_type="relu")
    hidden = F.Activation(F.FullyConnected(hidden, fullyconnected1_weight, fullyconnected1_bias,
                                           num_hidden=WD_HIDDEN[2]), act_type="relu")
    deep_out = F.FullyConnected(hidden, fullyconnected2_weight, fullyconnected2_bias,
                                num_hidden=2)
    return F.SoftmaxOutput(linear_out + deep_out, label, name="model")


WD_IN = WD_CONT + WD_EMBED * WD_HIDDEN[0]
WD_SPECS = {
    "linear_weight": dict(shape=(WD_LINEAR, 2), grad_stype="row_sparse"),
    "linear_bias": dict(shape=(2,)),
    **{f"embed_{i}_weight": dict(shape=(d, WD_HIDDEN[0]), grad_stype="row_sparse")
       for i, d in enumerate(WD_DIMS)},
    "fullyconnected0_weight": dict(shape=(WD_HIDDEN[1], WD_IN)),
    "fullyconnected0_bias": dict(shape=(WD_HIDDEN[1],)),
    "fullyconnected1_weight": dict(shape=(WD_HIDDEN[2], WD_HIDDEN[1])),
    "fullyconnected1_bias": dict(shape=(WD_HIDDEN[2],)),
    "fullyconnected2_weight": dict(shape=(2, WD_HIDDEN[2])),
    "fullyconnected2_bias": dict(shape=(2,)),
}


def test_wide_deep():
    rng = np.random.RandomState(4)
    init = _normal(rng, WD_SPECS, lambda n: 0.0 if n.endswith("_bias") else 0.3)
    init = {n: v + (0.05 if n.endswith("_bias") else 0) for n, v in init.items()}
    batches = []
    for _ in range(STEPS):
        cats = np.stack([rng.randint(0, d, size=WD_BATCH) for d in WD_DIMS], axis=1)
        dns = np.concatenate([cats, rng.normal(size=(WD_BATCH, WD_CONT))], axis=1)
        batches.append(((_csr(rng, WD_BATCH, WD_LINEAR, 0.03),
                         mx.nd.array(dns.astype(np.float32))),
                        mx.nd.array(rng.randint(0, 2, size=WD_BATCH).astype(np.float32))))
    params = {"learning_rate": 0.01}
    eager = _check_block(_wd_fn, WD_SPECS, init, batches, "adam", params)
    with mx.name.NameManager():
        symbol = wd_prog.wide_deep_model(WD_LINEAR, WD_EMBED, WD_CONT, WD_DIMS, WD_HIDDEN)
    module = _train_module(symbol, ["csr_data", "dns_data"], "softmax_label", init, batches,
                           "adam", params)
    _assert_same(module, eager, "Module vs eager Gluon")


# ---------------------------------------------------------------------- a custom operator
class _ScaledTanh(mx.operator.CustomOp):
    """y = tanh(x) * s; a hand-written backward."""

    def __init__(self, scale):
        self.scale = float(scale)

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.tanh(in_data[0]) * self.scale)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y = out_data[0] / self.scale
        self.assign(in_grad[0], req[0], out_grad[0] * (1 - y * y) * self.scale)


@mx.operator.register("hybrid_equivalence_scaled_tanh")
class _ScaledTanhProp(mx.operator.CustomOpProp):
    def __init__(self, scale=1.0):
        super().__init__(need_top_grad=True)
        self.scale = scale

    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shapes):
        return in_shapes, (in_shapes[0],), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _ScaledTanh(self.scale)


class CustomNet(mx.gluon.HybridBlock):
    """``Dense(Custom(sparse.dot(csr, weight) + bias))``, the weight's gradient row_sparse:
    the custom operator sits between a sparse kernel and a dense layer, so gradients flow
    through its backward."""

    def __init__(self, features, hidden, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(features, hidden),
                                          grad_stype="row_sparse")
            self.bias = self.params.get("bias", shape=(hidden,))
            self.out = mx.gluon.nn.Dense(1, in_units=hidden)

    def hybrid_forward(self, F, x, weight, bias):
        h = F.broadcast_add(F.sparse.dot(x, weight), bias)
        h = F.Custom(h, op_type="hybrid_equivalence_scaled_tanh", scale=1.5)
        return self.out(h)


CUSTOM_FEATURES, CUSTOM_HIDDEN, CUSTOM_BATCH = 50, 4, 8


def _custom_data():
    """Deterministic small data (no RNG, so MXNet 1.9.1 gets the very same)."""
    k = np.arange(CUSTOM_FEATURES * CUSTOM_HIDDEN, dtype=np.float64)
    weight = (np.sin(k) * 0.3).reshape(CUSTOM_FEATURES, CUSTOM_HIDDEN).astype(np.float32)
    bias = np.linspace(-0.1, 0.1, CUSTOM_HIDDEN).astype(np.float32)
    out_w = np.linspace(-0.5, 0.5, CUSTOM_HIDDEN).reshape(1, CUSTOM_HIDDEN).astype(np.float32)
    out_b = np.array([0.05], np.float32)
    batches = []
    for step in range(STEPS):
        rows = np.arange(CUSTOM_BATCH)
        dense = np.zeros((CUSTOM_BATCH, CUSTOM_FEATURES), np.float32)
        dense[rows, (rows * 7 + step * 3) % CUSTOM_FEATURES] = 1.0
        dense[rows, (rows * 11 + step * 5 + 1) % CUSTOM_FEATURES] = 0.5
        label = ((rows + step) % 2).astype(np.float32)
        batches.append((dense, label))
    return [weight, bias, out_w, out_b], batches


def _custom_run(hybridize):
    init, batches = _custom_data()
    net = CustomNet(CUSTOM_FEATURES, CUSTOM_HIDDEN)
    net.initialize(mx.init.Zero())
    for p, value in zip(net.collect_params().values(), init):
        arr = mx.nd.array(value)
        p.set_data(arr.tostype(p.stype) if p.stype != "default" else arr)
    if hybridize:
        net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.5, "momentum": 0.5})
    loss_fn = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss()
    for dense, label in batches:
        x = mx.nd.array(dense).tostype("csr")
        with mx.autograd.record():
            loss = loss_fn(net(x), mx.nd.array(label))
        loss.backward()
        trainer.step(CUSTOM_BATCH)
    if hybridize:
        assert net._cached_graph is not None
    return [p.data().tostype("default").asnumpy() for p in net.collect_params().values()]


# Measured with MXNet 1.9.1 (OMP_NUM_THREADS=1 /work/mxnet-venv/bin/python running this
# file's _ScaledTanh, _ScaledTanhProp, CustomNet, _custom_data and _custom_run unchanged but for
# ``p._stype``), hybridized (eager gave the same figures); per parameter in
# collect_params() order (weight, bias, dense0_weight, dense0_bias): [sum, sum of squares]
MXNET_CUSTOM = [[0.2843971252441406, 8.748200557827893],
                [0.009739458560943604, 0.006499688364047801],
                [0.021719127893447876, 0.22539840141241074],
                [-0.046073392033576965, 0.0021227574534796734]]


def test_custom_operator_in_hybridized_block():
    eager = _custom_run(False)
    hybrid = _custom_run(True)
    init, _ = _custom_data()
    for k, (a, b, w0) in enumerate(zip(hybrid, eager, init)):
        assert not np.array_equal(b, w0), f"parameter {k} did not change"
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=f"parameter {k}")
    for k, (a, (s, ss)) in enumerate(zip(hybrid, MXNET_CUSTOM)):  # float32 rounding
        np.testing.assert_allclose([a.sum(), (a.astype(np.float64) ** 2).sum()], [s, ss],
                                   rtol=1e-5, atol=1e-6, err_msg=f"parameter {k}")

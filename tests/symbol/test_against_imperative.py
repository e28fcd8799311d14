"""Same registry, two paths: random graphs run by the executor and by eager ``mx.nd`` calls.

Graphs are drawn from the registry's operators (chosen by behaviour, not by a
hand-kept list): every output and every gradient must have the same values and
the same storage type on both paths.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sparsenet as mx
from sparsenet.ops.registry import OPERATORS, list_ops

SHAPE = (4, 4)
STYPES = ("default", "csr", "row_sparse")


def _sample(seed=0):
    return mx.nd.array(np.random.RandomState(seed).uniform(0.5, 1.5, SHAPE))


def _shape_preserving(op, args, params):
    """The operator runs on (4, 4) float inputs, keeps the shape, and is deterministic (the
    samplers are random by definition: two equal draws, e.g. one row permutation in 24 for
    ``_shuffle``, prove nothing)."""
    if op.fn.__module__ == "sparsenet.ops.sampling":
        return False
    try:
        with mx.autograd.record():
            first = op(*args, **params)
            second = op(*args, **params)
    except Exception:
        return False
    if isinstance(first, list) or first.shape != SHAPE or first.dtype != np.float32:
        return False
    return np.array_equal(first.asnumpy(), second.asnumpy(), equal_nan=True)


def _candidates():
    unary, binary = [], []
    x, y = _sample(1), _sample(2)
    for name in list_ops():
        op = OPERATORS[name]
        if op.variadic:
            continue
        if op.input_names == ("data",):
            params = {"scalar": 1.5} if "scalar" in op.defaults else {}
            if _shape_preserving(op, [x], params):
                unary.append(name)
        elif op.input_names == ("lhs", "rhs") and _shape_preserving(op, [x, y], {}):
            binary.append(name)
    return unary, binary


UNARY, BINARY = _candidates()


def test_the_candidate_pools_cover_the_registry_families():
    assert {"negative", "sqrt", "log", "relu", "_plus_scalar", "_mul_scalar", "BlockGrad",
            "cast_storage"} <= set(UNARY)
    assert {"elemwise_add", "elemwise_mul", "broadcast_add", "dot"} <= set(BINARY)
    assert "Dropout" not in UNARY  # random in training mode: not comparable


@st.composite
def graphs(draw):
    nvars = draw(st.integers(1, 3))
    stypes = [draw(st.sampled_from(STYPES)) for _ in range(nvars)]
    steps = []
    nnodes = nvars
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["unary", "binary", "add_n"]))
        if kind == "unary":
            name = draw(st.sampled_from(UNARY))
            params = {"scalar": draw(st.sampled_from([0.5, 2.0, -1.5]))} \
                if "scalar" in OPERATORS[name].defaults else {}
            ins = [draw(st.integers(0, nnodes - 1))]
        elif kind == "binary":
            name = draw(st.sampled_from(BINARY))
            params = {"transpose_a": draw(st.booleans()), "transpose_b": draw(st.booleans())} \
                if name == "dot" else {}
            ins = [draw(st.integers(0, nnodes - 1)) for _ in range(2)]
        else:
            name, params = "add_n", {}
            ins = [draw(st.integers(0, nnodes - 1)) for _ in range(draw(st.integers(1, 3)))]
        steps.append((name, params, ins))
        nnodes += 1
    heads = sorted(set([nnodes - 1] + [draw(st.integers(nvars, nnodes - 1))]))
    return stypes, steps, heads


def _build_symbolic(stypes, steps, heads):
    nodes = [mx.sym.var(f"v{i}", stype=s) for i, s in enumerate(stypes)]
    for name, params, ins in steps:
        nodes.append(getattr(mx.sym, name)(*[nodes[i] for i in ins], **params))
    return mx.sym.Group([nodes[h] for h in heads])


def _grad_stypes(exe, nvars):
    """The executor's gradient storage types (inferred as MXNet does), per variable."""
    grads = exe.grad_dict
    return [grads[f"v{i}"].stype if grads.get(f"v{i}") is not None else "default"
            for i in range(nvars)]


def _run_imperative(values, stypes, steps, heads, head_grads, grad_stypes):
    arrays = [v.copy() for v in values]
    for a, s in zip(arrays, grad_stypes):
        a.attach_grad(stype=s)
    with mx.autograd.record():
        nodes = list(arrays)
        for name, params, ins in steps:
            nodes.append(OPERATORS[name](*[nodes[i] for i in ins], **params))
    outs = [nodes[h] for h in heads]
    live = [(o, g) for o, g in zip(outs, head_grads)
            if o._autograd_tensor() is not None and o._autograd_tensor().requires_grad]
    if live:
        mx.autograd.backward([o for o, _ in live], [g for _, g in live])
    grads = [a.grad if live else None for a in arrays]
    return outs, grads


def _same(got, expected, what):
    assert got.stype == expected.stype, f"{what}: stype {got.stype} != {expected.stype}"
    np.testing.assert_allclose(got.asnumpy(), expected.asnumpy(), rtol=1e-6, atol=1e-6,
                               equal_nan=True, err_msg=what)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_random_graphs_executor_equals_imperative(graph):
    stypes, steps, heads = graph
    rng = np.random.RandomState(len(steps) * 7 + len(heads))
    values = [mx.test_utils.rand_ndarray(SHAPE, s, density=0.5) if s != "default"
              else mx.nd.array(rng.uniform(-1.5, 1.5, SHAPE)) for s in stypes]
    head_grads = [mx.nd.array(rng.uniform(-1, 1, SHAPE)) for _ in heads]
    sym = _build_symbolic(stypes, steps, heads)
    used = sym.list_arguments()
    with mx.config.storage_fallback("silent"):
        exe = sym.simple_bind(mx.cpu(), **{name: SHAPE for name in used})
        for name in used:
            exe.arg_dict[name][:] = values[int(name[1:])]
        outs = exe.forward(is_train=True)
        exe.backward(head_grads)
        ref_outs, ref_grads = _run_imperative(values, stypes, steps, heads, head_grads,
                                              _grad_stypes(exe, len(stypes)))
    for k, (got, exp) in enumerate(zip(outs, ref_outs)):
        _same(got, exp, f"output {k}")
    for i, ref in enumerate(ref_grads):
        if f"v{i}" not in used:
            continue
        got = exe.grad_dict[f"v{i}"]
        if ref is None:  # no differentiable head: the executor writes zeros
            assert not np.any(got.asnumpy())
        else:
            _same(got, ref, f"gradient of v{i}")


@pytest.mark.parametrize("stype", STYPES)
def test_each_unary_candidate_matches(stype):
    """Every unary candidate once per input storage type (values, stypes, gradients)."""
    for name in UNARY:
        params = {"scalar": 2.0} if "scalar" in OPERATORS[name].defaults else {}
        test_graph = ([stype], [(name, params, [0])], [1])
        stypes, steps, heads = test_graph
        values = [mx.test_utils.rand_ndarray(SHAPE, stype, density=0.5)]
        head_grads = [mx.nd.ones(SHAPE)]
        with mx.config.storage_fallback("silent"):
            exe = _build_symbolic(stypes, steps, heads).simple_bind(mx.cpu(), v0=SHAPE)
            exe.arg_dict["v0"][:] = values[0]
            out = exe.forward(is_train=True)[0]
            exe.backward(head_grads)
            ref_outs, ref_grads = _run_imperative(values, stypes, steps, heads, head_grads,
                                                  _grad_stypes(exe, 1))
        _same(out, ref_outs[0], f"{name}({stype})")
        if ref_grads[0] is not None:
            _same(exe.grad_dict["v0"], ref_grads[0], f"grad {name}({stype})")

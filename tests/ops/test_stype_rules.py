"""Every operator's storage-type behaviour, as data.

For each operator case below and every combination of input storage types, one
pytest id checks: the output value against the operator's dense definition run
on the densified inputs, the output storage type against the registry's
inference (``Operator.infer_storage``), and the fallback policy: a combination
without a rule raises under 'error' and warns under 'warn'. A final test checks
that every rule row of the registry is exercised by some case here.
"""
import itertools
import warnings

import numpy as np
import pytest
import torch

import sparsenet as mx
from sparsenet.base import StorageFallbackError, StorageFallbackWarning
from sparsenet.ops.registry import OPERATORS

from tests.helpers import STYPES, check_against_dense, make_array

D, C, R = "default", "csr", "row_sparse"


class Case:
    """One operator call pattern: input shapes, parameters, value range, allowed stypes."""

    def __init__(self, op, shapes, params=None, low=-2.0, high=2.0, stypes=None, ints=(),
                 label=""):
        self.op = OPERATORS[op]
        self.shapes = shapes
        self.params = params or {}
        self.low, self.high = low, high
        self.stypes = stypes  # per-input tuple of allowed stypes, default: all that fit
        self.ints = ints      # inputs holding integer ids: (index, upper bound)
        self.label = label

    def combos(self):
        per_input = []
        for i, shape in enumerate(self.shapes):
            allowed = self.stypes[i] if self.stypes else STYPES
            allowed = [s for s in allowed if s != C or len(shape) == 2]
            if any(i == j for j, _ in self.ints):
                allowed = [D]
            per_input.append(allowed)
        return list(itertools.product(*per_input))

    def ident(self, stypes):
        ps = ",".join(f"{k}={v}" for k, v in self.params.items())
        abbrev = {D: "dns", C: "csr", R: "rsp"}
        return f"{self.op.name}[{self.label or ps}]({','.join(abbrev[s] for s in stypes)})"


UNARY_DOMAINS = {
    "sqrt": (0.1, 4.0), "log1p": (-0.5, 2.0), "arcsin": (-0.9, 0.9), "arctanh": (-0.9, 0.9),
    "erfinv": (-0.9, 0.9), "log": (0.1, 3.0), "log10": (0.1, 3.0), "log2": (0.1, 3.0),
    "rsqrt": (0.1, 3.0), "arccos": (-0.9, 0.9), "arccosh": (1.1, 3.0), "gamma": (0.2, 3.0),
    "gammaln": (0.2, 3.0), "reciprocal": (0.5, 2.0), "rcbrt": (0.5, 2.0), "cbrt": (0.1, 3.0),
}
UNARY = ["abs", "sign", "round", "rint", "ceil", "floor", "trunc", "fix", "square", "sqrt",
         "cbrt", "expm1", "log1p", "sin", "sinh", "tan", "tanh", "arcsin", "arcsinh", "arctan",
         "arctanh", "degrees", "radians", "relu", "negative", "erf", "erfinv", "BlockGrad",
         "_copy", "exp", "log", "log10", "log2", "sigmoid", "cos", "cosh", "arccos", "arccosh",
         "rsqrt", "rcbrt", "reciprocal", "gamma", "gammaln", "softsign", "zeros_like",
         "ones_like", "logical_not"]

CASES = []
for name in UNARY:
    lo, hi = UNARY_DOMAINS.get(name, (-2.0, 2.0))
    CASES.append(Case(name, [(4, 5)], low=lo, high=hi))
    CASES.append(Case(name, [(4, 3, 2)], low=lo, high=hi, label="3d"))
CASES += [
    Case("Cast", [(4, 5)], {"dtype": "float64"}),
    Case("Cast", [(4, 5)], {"dtype": "int32"}),
    Case("clip", [(4, 5)], {"a_min": -1.0, "a_max": 1.0}),
    Case("clip", [(4, 5)], {"a_min": 0.5, "a_max": 1.0}),
    Case("softmax", [(4, 5)], {"axis": -1}),
    Case("cast_storage", [(4, 5)], {"stype": D}),
    Case("cast_storage", [(4, 5)], {"stype": C}),
    Case("cast_storage", [(4, 5)], {"stype": R}),
    Case("cast_storage", [(4, 3, 2)], {"stype": R}, label="3d->rsp"),
]
SCALARS = {
    "_plus_scalar": [0.0, 1.5], "_minus_scalar": [0.0, -2.0], "_rminus_scalar": [0.0, 3.0],
    "_mul_scalar": [2.0, 0.0, -0.5], "_div_scalar": [4.0, -0.5], "_rdiv_scalar": [1.0],
    "_mod_scalar": [3.0], "_rmod_scalar": [3.0], "_power_scalar": [2.0, 0.5],
    "_rpower_scalar": [2.0], "_maximum_scalar": [0.0, 1.0, -1.0],
    "_minimum_scalar": [0.0, -1.0, 1.0], "_equal_scalar": [0.0, 1.0],
    "_not_equal_scalar": [0.0, 1.0], "_greater_scalar": [0.0, -1.0],
    "_greater_equal_scalar": [0.0, 1.0], "_lesser_scalar": [0.0, 1.0],
    "_lesser_equal_scalar": [0.0, -1.0], "_hypot_scalar": [0.0, 2.0],
    "_logical_and_scalar": [0.0, 2.0], "_logical_or_scalar": [0.0, 2.0],
    "_logical_xor_scalar": [0.0, 2.0],
}
for name, values in SCALARS.items():
    positive = name in ("_power_scalar", "_rdiv_scalar", "_rmod_scalar")
    for v in values:
        CASES.append(Case(name, [(4, 5)], {"scalar": v}, low=0.5 if positive else -2.0))
for name in ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "broadcast_add",
             "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_maximum",
             "broadcast_minimum", "broadcast_hypot", "broadcast_greater", "_maximum",
             "_minimum", "_hypot"):
    CASES.append(Case(name, [(4, 5), (4, 5)], low=0.5 if "div" in name else -2.0))
    CASES.append(Case(name, [(3, 2, 2), (3, 2, 2)], label="3d",
                      low=0.5 if "div" in name else -2.0))
for name in ("broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div"):
    for vec in ((1, 5), (4, 1)):
        CASES.append(Case(name, [(4, 5), vec], low=0.5, stypes=[STYPES, (D,)],
                          label=f"vector{vec}"))
CASES += [
    Case("add_n", [(4, 5)] * 3),
    Case("add_n", [(4, 5)]),
    Case("where", [(4, 5)] * 3, low=0.0, high=1.0),
]
for axis, keep in ((None, False), (0, False), (1, True), (1, False), ((0, 1), True)):
    for name in ("sum", "mean"):
        CASES.append(Case(name, [(4, 5)], {"axis": axis, "keepdims": keep}))
    CASES.append(Case("_square_sum", [(4, 5)], {"axis": axis, "keepdims": keep}))
for axis in (None, 1, 2, (0, 2)):
    CASES.append(Case("sum", [(4, 3, 2)], {"axis": axis}, label=f"3d,axis={axis}"))
for ord_, axis in ((2, None), (1, None), (2, 1), (2, 0), (1, 1)):
    CASES.append(Case("norm", [(4, 5)], {"ord": ord_, "axis": axis}))
CASES.append(Case("max", [(4, 5)], {"axis": 1}))
for ta, tb in itertools.product((False, True), repeat=2):
    m, k, n = 4, 5, 3
    lhs = (k, m) if ta else (m, k)
    rhs = (n, k) if tb else (k, n)
    CASES.append(Case("dot", [lhs, rhs], {"transpose_a": ta, "transpose_b": tb}))
for fs in (D, C, R):
    CASES.append(Case("dot", [(4, 5), (5, 3)], {"forward_stype": fs}))
CASES += [
    Case("slice", [(4, 5)], {"begin": (1, 1), "end": (3, 4)}),
    Case("slice", [(4, 5)], {"begin": (1,), "end": (3,)}, label="rows"),
    Case("slice", [(4, 5)], {"begin": (None, 2), "end": (None, None)}, label="cols"),
    Case("slice", [(4, 5)], {"begin": (0, 0), "end": (4, 5), "step": (2, 1)}, label="step"),
    Case("slice_axis", [(4, 5)], {"axis": 0, "begin": 1, "end": 3}),
    Case("slice_axis", [(4, 5)], {"axis": 1, "begin": 1, "end": -1}),
    Case("take", [(4, 5), (3,)], {"axis": 0}, ints=((1, 4),)),
    Case("take", [(4, 5), (3,)], {"axis": 1}, ints=((1, 5),)),
    Case("retain", [(6, 3), (3,)], ints=((1, 6),)),
    Case("retain", [(6, 2, 2), (2,)], ints=((1, 6),), label="3d"),
    Case("Concat", [(2, 5), (3, 5)], {"dim": 0}),
    Case("Concat", [(4, 2), (4, 3)], {"dim": 1}),
    Case("Concat", [(2, 3, 2), (1, 3, 2)], {"dim": 0}, label="3d"),
    Case("FullyConnected", [(4, 5), (3, 5), (3,)], {"num_hidden": 3}, stypes=[STYPES, STYPES, (D,)]),
    Case("FullyConnected", [(4, 5), (3, 5)], {"num_hidden": 3, "no_bias": True},
         label="no_bias"),
    Case("Embedding", [(4,), (6, 3)], {"input_dim": 6, "output_dim": 3}, ints=((0, 6),)),
    Case("Activation", [(4, 5)], {"act_type": "relu"}),
    Case("Activation", [(4, 5)], {"act_type": "sigmoid"}),
    Case("Activation", [(4, 5)], {"act_type": "tanh"}),
    Case("_contrib_quadratic", [(4, 5)], {"a": 1.5, "b": -2.0, "c": 0.0}),
    Case("_contrib_quadratic", [(4, 5)], {"a": 1.5, "b": -2.0, "c": 1.0}),
    Case("shape_array", [(4, 5)]),
    Case("size_array", [(4, 3, 2)], label="3d"),
    Case("size_array", [(4, 5)]),
]

PARAMS = [(case, stypes) for case in CASES for stypes in case.combos()]
IDS = [case.ident(stypes) for case, stypes in PARAMS]


def _inputs(case, stypes):
    arrays, dense = [], []
    for i, (shape, st) in enumerate(zip(case.shapes, stypes)):
        bound = dict(case.ints).get(i)
        if bound is not None:
            d = np.random.randint(0, bound, size=shape).astype(np.float32)
            arrays.append(mx.nd.array(d))
            dense.append(d)
            continue
        a, d = make_array(shape, st, density=0.5, low=case.low, high=case.high)
        arrays.append(a)
        dense.append(d)
    return arrays, dense


def _reference(case, dense):
    with torch.no_grad():
        out = case.op.fn(*[torch.from_numpy(np.ascontiguousarray(d)) for d in dense],
                         **case.op.bind_params(case.params))
    return out.reshape(1) if out.dim() == 0 else out


@pytest.mark.parametrize("case,stypes", PARAMS, ids=IDS)
def test_rule(case, stypes):
    arrays, dense = _inputs(case, stypes)
    out_stype, kernel = case.op.infer_storage(stypes, case.params)
    expected = _reference(case, dense).numpy()
    if kernel:
        result = case.op(*arrays, **case.params)  # policy 'error': must not fall back
    else:
        with pytest.raises(StorageFallbackError, match=case.op.name):
            case.op(*arrays, **case.params)
        with mx.config.storage_fallback("warn"):
            mx.config.reset_fallback_counts()
            with pytest.warns(StorageFallbackWarning, match=case.op.name):
                result = case.op(*arrays, **case.params)
            assert mx.config.fallback_counts() == {(case.op.name, tuple(stypes)): 1}
            with warnings.catch_warnings():  # warned once per signature: silent now
                warnings.simplefilter("error", StorageFallbackWarning)
                case.op(*arrays, **case.params)
    check_against_dense(result, expected, stype=out_stype, rtol=1e-5, atol=1e-5)
    assert result.dtype == expected.dtype.type or case.op.name in ("dot",)


@pytest.mark.parametrize("case,stypes", [p for p in PARAMS if p[0].op.name in
                                         ("elemwise_add", "elemwise_mul", "dot", "log",
                                          "_mul_scalar")],
                         ids=[i for p, i in zip(PARAMS, IDS) if p[0].op.name in
                              ("elemwise_add", "elemwise_mul", "dot", "log", "_mul_scalar")])
def test_out_keeps_destination_stype(case, stypes):
    """``out=`` keeps the destination's storage type whatever the operator returns."""
    arrays, dense = _inputs(case, stypes)
    expected = _reference(case, dense).numpy()
    if expected.ndim != 2:
        pytest.skip("CSR destinations are 2-D")
    for dst_stype in STYPES:
        dst = mx.nd.zeros(expected.shape, stype=dst_stype)
        with mx.config.storage_fallback("silent"):
            ret = case.op(*arrays, out=dst, **case.params)
        assert ret is dst
        check_against_dense(dst, expected, stype=dst_stype, rtol=1e-5, atol=1e-5)


def test_every_rule_is_exercised():
    hit = set()
    for case, stypes in PARAMS:
        r = case.op.find_rule(tuple(stypes), case.op.bind_params(case.params))
        if r is not None:
            hit.add(id(r))
    missing = [f"{r.op.name}({r.inputs_text()}) when {r.condition or 'always'}"
               for op in OPERATORS.values() for r in op.rules()
               if id(r) not in hit and not op.name.startswith("_doc_")
               and op.__module__.startswith("sparsenet.ops.") and op.name in _COVERED_OPS]
    assert not missing, f"rule rows without a test case: {missing}"


# operators whose rules live outside this file's scope are tested next to their packages
_COVERED_OPS = {c.op.name for c in CASES} | {
    name for name, op in OPERATORS.items()
    if op.__module__ in ("sparsenet.ops.unary", "sparsenet.ops.scalar", "sparsenet.ops.binary",
                         "sparsenet.ops.reduce", "sparsenet.ops.dot", "sparsenet.ops.indexing",
                         "sparsenet.ops.cast", "sparsenet.ops.nn")}

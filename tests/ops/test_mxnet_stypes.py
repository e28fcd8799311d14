"""sparsenet against MXNet 1.9.1's measured output storage types, one pytest id per record.

``data/mxnet_1_9_1_stypes.json`` holds what MXNet 1.9.1 returned (measured with
``tools/measure_mxnet_stypes.py``) for every documented sparse operator, every
combination of input storage types and every parameter variant that changes
the output storage type: the output storage type or the error, whether MXNet
fell back to dense, and the output values. Each record is rebuilt here from the
same inputs and called by the same name in sparsenet, which must give:

* MXNet's output storage type, values, shape and dtype, and for update operators
  the same states afterwards (inputs not changed by MXNet stay unchanged);
* no storage fallback where MXNet had a kernel (the call runs under the policy
  'error'); where MXNet fell back, any policy-conforming result is fine, so the
  call runs under 'silent';
* a :class:`sparsenet.MXNetError` where MXNet raised, unless the record is one of
  the deliberate differences in ``DELIBERATE`` (each listed in docs/differences.md).

``KNOWN_MISMATCHES`` lists the records sparsenet does not match yet (strict xfail:
an entry that starts passing fails the suite so that it gets removed).
"""
import json
import pathlib

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.base import SparsenetError
from sparsenet.ops.registry import get_op

_DATA = json.loads((pathlib.Path(__file__).parent / "data" / "mxnet_1_9_1_stypes.json")
                   .read_text())
ARRAYS = _DATA["arrays"]
RECORDS = _DATA["records"]

D, C, R = "default", "csr", "row_sparse"


def _expand(op, params, stype_lists):
    """Record ids ``op(stypes)params`` for each comma-separated storage-type list."""
    return [f"{op}({stypes}){params}" for stypes in stype_lists]


def _same(ids, stype):
    return {i: stype for i in ids}


_SQUARE_SUM = ["_internal._square_sum(dns)[keepdims=False]",
               "_internal._square_sum(dns)[keepdims=True]",
               "_internal._square_sum(dns)[axis=0,keepdims=False]",
               "_internal._square_sum(dns)[axis=0,keepdims=True]",
               "_internal._square_sum(dns)[axis=1,keepdims=False]",
               "_internal._square_sum(dns)[axis=1,keepdims=True]",
               "_internal._square_sum(rsp)[keepdims=False]",
               "_internal._square_sum(rsp)[keepdims=True]",
               "_internal._square_sum(csr)[keepdims=False]",
               "_internal._square_sum(csr)[keepdims=True]",
               "_internal._square_sum(csr)[axis=0,keepdims=False]",
               "_internal._square_sum(csr)[axis=0,keepdims=True]",
               "_internal._square_sum(csr)[axis=1,keepdims=False]",
               "_internal._square_sum(csr)[axis=1,keepdims=True]"]
_DNS_PLUS_SPARSE_VECTOR = [f"{op}(dns,{st})[rhs={shape}]"
                           for op in ("nd.broadcast_add", "nd.broadcast_sub", "nd.broadcast_plus",
                                      "nd.broadcast_minus", "sparse.add", "sparse.subtract")
                           for shape in ("(1,4)", "(3,1)") for st in ("csr", "rsp")]
_OPT = {  # update operators: (name, params) of the measured variants
    "adagrad": ("sparse.adagrad_update", "[lr=0.1,epsilon=1e-07,wd={}]"),
    "group": ("contrib.group_adagrad_update", "[lr=0.1]"),
}


def _opt(key, stype_lists, flags=(None,)):
    op, params = _OPT[key]
    return [i for f in flags for i in _expand(op, params.format(f), stype_lists)]


# ---------------------------------------------------------------------------------------------
# Deliberate differences from MXNet 1.9.1, each one listed in docs/differences.md:
# reason -> {record id: storage type sparsenet returns, or "error" for a SparsenetError}.
# Values are checked against MXNet's where MXNet computed them ("lazy" rows: MXNet's values on
# the gradient's rows, the inputs' values elsewhere), else against NumPy where _numpy_reference
# has the operator.
_DELIBERATE_BY_REASON = {
    "clip with zero outside [a_min, a_max] falls back to dense; 1.9.1 raises": _same(
        ["nd.clip(csr)[a_min=0.5,a_max=2.0]", "nd.clip(rsp)[a_min=0.5,a_max=2.0]",
         "nd.clip(csr)[a_min=-2.0,a_max=-0.25]", "nd.clip(rsp)[a_min=-2.0,a_max=-0.25]"], D),
    "CSR <-> row_sparse conversion works; 1.9.1 raises": {
        "nd.cast_storage(rsp)[stype=csr]": C, "nd.cast_storage(csr)[stype=row_sparse]": R},
    "more sparse kernels: add_n/concat keep CSR or row_sparse; 1.9.1 densifies": {
        "nd.concat(rsp,rsp)[dim=0]": R, "nd.Concat(rsp,rsp)[dim=0]": R,
        "nd.concat(csr,csr)[dim=1]": C, "nd.add_n(csr,csr)": C, "nd.add_n(csr,csr,csr)": C,
        "nd.add_n(csr,csr,csr,csr,csr)": C, "nd.ElementWiseSum(csr,csr)": C},
    "broadcast_* on equal shapes follows the elemwise_* rows; 1.9.1 densifies": {
        **{f"nd.{op}({st},{st})": stype for op in ("broadcast_add", "broadcast_sub",
                                                   "broadcast_plus", "broadcast_minus")
           for st, stype in (("csr", C), ("rsp", R))},
        "nd.broadcast_mul(dns,csr)": C, "nd.broadcast_mul(csr,csr)": C,
        "nd.broadcast_mul(dns,rsp)": R, "nd.broadcast_mul(rsp,dns)": R,
        "nd.broadcast_mul(rsp,rsp)": R},
    "broadcast_div(csr, dns) on equal shapes stays CSR, 0/0 stored as NaN; 1.9.1 raises": {
        "nd.broadcast_div(csr,dns)": C},
    "row_sparse times a dense row or column vector stays row_sparse; 1.9.1 densifies": _same(
        ["sparse.multiply(rsp,dns)[rhs=(1,4)]", "sparse.multiply(rsp,dns)[rhs=(3,1)]",
         "nd.broadcast_mul(rsp,dns)[rhs=(1,4)]", "nd.broadcast_mul(rsp,dns)[rhs=(3,1)]"], R),
    "symmetric rows: dns * csr -> csr, dns * rsp -> rsp, csr / dns works": {
        "__mul__(dns,csr)": C, "__mul__(dns,rsp)": R, "__truediv__(csr,dns)": D},
    "scalar operators keep the storage type when they map zero to zero": {
        "__rsub__(csr)[other=0.0]": C, "__rsub__(rsp)[other=0.0]": R,
        "__pow__(csr)[other=2.0]": C, "__pow__(rsp)[other=2.0]": R,
        "contrib.quadratic(rsp)[a=1.0,b=2.0,c=0.0]": R},
    "no kernel in 1.9.1 ('Operator not implemented', no fallback): sparsenet falls back or has "
    "a kernel": {
        **_same(_SQUARE_SUM, D), "sparse.retain(dns,dns)": D, "sparse.retain(csr,dns)": D,
        "nd.Embedding(dns,csr)[input_dim=6,output_dim=3,sparse_grad=False]": D,
        "nd.Embedding(dns,csr)[input_dim=6,output_dim=3,sparse_grad=True]": D,
        "contrib.SparseEmbedding(dns,csr)[input_dim=6,output_dim=3]": D},
    "1.9.1 limitations lifted: getnnz(axis=0), sparse dot with a 1-D rhs, dot(csr.T, rsp) to "
    "dense, FullyConnected with a row_sparse weight missing rows, dense + sparse vector": {
        "contrib.getnnz(csr)[axis=0]": D, "nd.dot(csr,dns)": D, "nd.dot(csr,rsp)": D,
        "nd.dot(csr,rsp)[transpose_a=True,transpose_b=False,forward_stype=default]": D,
        "nd.FullyConnected(dns,rsp,dns)[num_hidden=2]": D,
        "nd.FullyConnected(dns,rsp)[num_hidden=2,no_bias=True]": D,
        **_same(_DNS_PLUS_SPARSE_VECTOR, D)},
    "update operators decide by lazy_update only and update the gradient's rows lazily "
    "(MXNet: standard rule, or densified gradient)": {
        "nd.sgd_mom_update(rsp,rsp,dns)[lr=0.1,momentum=0.9,wd=0.1,lazy_update=True]": R,
        "nd.adam_update(rsp,rsp,dns,dns)[lr=0.1,wd=0.1,lazy_update=True]": R,
        "nd.ftrl_update(dns,rsp,dns,dns)[lr=0.1]": D,
        "nd.ftrl_update(rsp,rsp,dns,dns)[lr=0.1]": R,
        "nd.mp_sgd_update(dns,rsp,dns)[lr=0.1,wd=0.1]": D,
        "nd.mp_sgd_update(rsp,rsp,dns)[lr=0.1,wd=0.1]": R,
        "nd.mp_sgd_update(rsp,rsp,rsp)[lr=0.1,wd=0.1]": R,
        "nd.mp_sgd_mom_update(dns,rsp,dns,dns)[lr=0.1,momentum=0.9,wd=0.1]": D,
        "nd.mp_sgd_mom_update(rsp,rsp,dns,dns)[lr=0.1,momentum=0.9,wd=0.1]": R,
        "nd.mp_sgd_mom_update(rsp,rsp,rsp,rsp)[lr=0.1,momentum=0.9,wd=0.1]": R,
        "nd.signsgd_update(dns,rsp)[lr=0.1,wd=0.1]": D,
        "nd.signsgd_update(rsp,rsp)[lr=0.1,wd=0.1]": R,
        "nd.signum_update(dns,rsp,dns)[lr=0.1,momentum=0.9,wd=0.1]": D,
        "nd.signum_update(rsp,rsp,dns)[lr=0.1,momentum=0.9,wd=0.1]": R,
        "nd.signum_update(rsp,rsp,rsp)[lr=0.1,momentum=0.9,wd=0.1]": R},
    "adagrad_update has a dense rule and weight decay; group_adagrad_update a dense rule "
    "(1.9.1 raises)": {
        **_same(_opt("adagrad", ["dns,dns,dns", "dns,csr,dns"], (0.0, 0.1)), D),
        **_same(_opt("adagrad", ["rsp,dns,dns", "rsp,dns,rsp", "rsp,rsp,dns"], (0.0, 0.1)), R),
        **_same(_opt("adagrad", ["dns,rsp,dns"], (0.1,)), D),
        **_same(_opt("adagrad", ["rsp,rsp,rsp"], (0.1,)), R),
        **_same(_opt("group", ["dns,dns,dns", "dns,csr,dns"]), D),
        **_same(_opt("group", ["rsp,dns,dns", "rsp,dns,rsp", "rsp,rsp,dns"]), R)},
}
DELIBERATE = {i: (stype, reason) for reason, ids in _DELIBERATE_BY_REASON.items()
              for i, stype in ids.items()}
# records whose values follow the lazy rule (MXNet's values on the gradient's rows only)
_LAZY_VALUES = set(_DELIBERATE_BY_REASON[
    "update operators decide by lazy_update only and update the gradient's rows lazily "
    "(MXNet: standard rule, or densified gradient)"])

# ---------------------------------------------------------------------------------------------
# Records sparsenet does not match yet: cause -> record ids. Strict xfail:
# remove an entry when it starts passing.
_KNOWN_BY_CAUSE = {}
KNOWN_MISMATCHES = {i: cause for cause, ids in _KNOWN_BY_CAUSE.items() for i in ids}


def _inputs(rec):
    arrays = []
    for (name, dtype), stype in zip(rec["args"], rec["inputs"]):
        a = mx.nd.array(np.asarray(ARRAYS[name], dtype=dtype), dtype=dtype)
        arrays.append(a if stype == D else a.tostype(stype))
    return arrays


def _function(rec):
    if rec["ns"] == "_internal":
        return get_op(rec["op"])
    namespace = mx.nd if rec["ns"] == "nd" else getattr(mx.nd, rec["ns"])
    return getattr(namespace, rec["op"])


def _call(rec, arrays):
    if rec["call"] == "method":
        rest = arrays[1:] or ([] if rec["other"] is None else [rec["other"]])
        return getattr(arrays[0], rec["op"])(*rest)
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in rec["params"].items()}
    if rec["out_is_first_input"]:
        params["out"] = arrays[0]
    return _function(rec)(*arrays, **params)


def _tolerance(dtype):
    return {"rtol": 1e-3, "atol": 1e-3} if dtype == "float16" else {"rtol": 1e-5, "atol": 1e-6}


def _check_value(got, expected, dtype):
    if got.stype != D:
        got.check_format()
    values = got.asnumpy()
    want = np.asarray(expected, dtype=dtype)
    assert values.shape == want.shape, f"shape {values.shape}, expected {want.shape}"
    np.testing.assert_allclose(values, want, equal_nan=True, **_tolerance(dtype))


def _dense(rec):
    return [np.asarray(ARRAYS[name], dtype=dtype) for name, dtype in rec["args"]]


def _numpy_reference(rec):
    """Dense NumPy result of a record MXNet raised for (None: no cheap reference)."""
    x = _dense(rec)
    p, op = rec["params"], rec["op"]
    axis = tuple(p["axis"]) if isinstance(p.get("axis"), list) else p.get("axis")
    with np.errstate(divide="ignore", invalid="ignore"):
        if op == "clip":
            return np.clip(x[0], p["a_min"], p["a_max"])
        if op == "cast_storage":
            return x[0]
        if op == "getnnz":
            return (x[0] != 0).sum(axis=axis)
        if op == "_square_sum":
            out = np.sum(x[0] * x[0], axis=axis, keepdims=p.get("keepdims", False))
            return out.reshape(1) if out.ndim == 0 else out
        if op == "retain":
            keep = np.zeros(len(x[0]), bool)
            keep[x[1].astype(int)] = True
            return np.where(keep[:, None], x[0], 0)
        if op in ("broadcast_add", "broadcast_plus", "add"):
            return x[0] + x[1]
        if op in ("broadcast_sub", "broadcast_minus", "subtract"):
            return x[0] - x[1]
        if op in ("broadcast_div", "__truediv__"):
            return x[0] / x[1]
        if op == "dot":
            a = x[0].T if p.get("transpose_a") else x[0]
            return a @ (x[1].T if p.get("transpose_b") else x[1])
        if op in ("Embedding", "SparseEmbedding"):
            return x[1][x[0].astype(int)]
        if op == "FullyConnected":
            return x[0] @ x[1].T + (x[2] if len(x) > 2 else 0)
    return None


def _lazy(rec, expected, original):
    """MXNet's dense-rule values on the gradient's rows, ``original`` on the other rows."""
    touched = np.any(np.asarray(ARRAYS[rec["args"][1][0]]) != 0, axis=1)
    return np.where(touched[:, None], np.asarray(expected, dtype=np.float64),
                    np.asarray(original, dtype=np.float64))


def _params():
    out = []
    for rec in RECORDS:
        marks = []
        if rec["id"] in KNOWN_MISMATCHES:
            marks.append(pytest.mark.xfail(
                strict=True, reason=f"{KNOWN_MISMATCHES[rec['id']]}"))
        out.append(pytest.param(rec, id=rec["id"], marks=marks))
    return out


@pytest.mark.parametrize("rec", _params())
def test_matches_mxnet_1_9_1(rec):
    arrays = _inputs(rec)
    mxnet_error = isinstance(rec["out"], str) and rec["out"].startswith("error:")
    stype, _reason = DELIBERATE.get(rec["id"], ("error" if mxnet_error else rec["out"], None))
    # no fallback where MXNet had a kernel; anything goes where MXNet densified or differs
    policy = "error" if rec["id"] not in DELIBERATE and not rec["fallback"] else "silent"
    with mx.config.storage_fallback(policy):
        if stype == "error":
            with pytest.raises(SparsenetError):
                _call(rec, arrays)
            return
        result = _call(rec, arrays)
    assert result.stype == stype, f"storage type {result.stype}, expected {stype} " \
                                  f"(MXNet 1.9.1: {rec['out']})"
    if mxnet_error:
        reference = _numpy_reference(rec)
        if reference is not None:
            _check_value(result, reference, "float32")
        return
    assert np.dtype(result.dtype) == np.dtype(rec["dtype"]), \
        f"dtype {result.dtype}, MXNet {rec['dtype']}"
    lazy = rec["id"] in _LAZY_VALUES
    value = _lazy(rec, rec["value"], ARRAYS[rec["args"][0][0]]) if lazy else rec["value"]
    _check_value(result, value, rec["dtype"])
    if rec["out_is_first_input"]:
        assert result is arrays[0]
    after = rec.get("inputs_after", {})
    for i, ((name, dtype), a) in enumerate(zip(rec["args"], arrays)):
        if rec["out_is_first_input"] and i == 0:
            continue
        want = after.get(str(i), ARRAYS[name])
        _check_value(a, _lazy(rec, want, ARRAYS[name]) if lazy else want, dtype)


def test_listed_records_exist():
    """Every id in DELIBERATE and KNOWN_MISMATCHES names a measured record."""
    ids = {rec["id"] for rec in RECORDS}
    assert len(ids) == len(RECORDS)
    assert not set(DELIBERATE) - ids, sorted(set(DELIBERATE) - ids)
    assert not set(KNOWN_MISMATCHES) - ids, sorted(set(KNOWN_MISMATCHES) - ids)


def test_data_covers_the_documented_families():
    """The measured table holds each operator family the sparse docs describe."""
    ops = {rec["op"] for rec in RECORDS}
    for name in ("dot", "sum", "mean", "norm", "slice", "take", "retain", "concat", "add_n",
                 "where", "elemwise_add", "elemwise_mul", "broadcast_mul", "cast_storage",
                 "clip", "Embedding", "FullyConnected", "sgd_update", "sgd_mom_update",
                 "adam_update", "ftrl_update", "adagrad_update", "group_adagrad_update"):
        assert name in ops, name
    assert sum(rec["fallback"] for rec in RECORDS) > 100

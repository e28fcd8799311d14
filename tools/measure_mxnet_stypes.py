"""Measure MXNet 1.9.1's output storage types, as test data for sparsenet.

For every operator whose MXNet 1.9.1 documentation describes sparse storage
support (the ``mx.nd`` / ``mx.nd.sparse`` / ``mx.nd.contrib`` functions whose
docstrings carry "storage type" notes, the sparse update operators, and the
Python arithmetic operators of sparse arrays) this script calls the operator
eagerly on small fixed arrays, for every combination of input storage types
and every documented parameter variant that changes the output storage type,
and records what MXNet returned:

``{"id", "ns", "op", "call", "inputs": [stypes], "args": [[array name, dtype]],
"other", "out_is_first_input", "params", "out": stype | [stypes] | "error:<Type>",
"fallback": bool, "shape", "dtype", "value", "inputs_after", "error"}``

The file is ``{"mxnet": "1.9.1", "arrays": {name: dense values}, "records": [...]}``;
``args`` names the dense input values in ``arrays``, ``inputs`` their storage types
(a row_sparse input stores the non-zero rows, a CSR input the non-zero values).

``fallback`` is True when MXNet printed "Storage type fallback detected" while
running the call (each call runs in a fresh thread, because MXNet logs a
fallback signature once per thread). ``value`` is the dense output. Update
operators are called as MXNet's optimizers call them, with ``out=weight``
(``out_is_first_input``); ``inputs_after`` maps the position of each input the
call changed (the states) to its dense value afterwards. The file is read by
``tests/ops/test_mxnet_stypes.py``, which rebuilds the same calls in sparsenet.

This script is not part of the package and is never imported by the tests.
Re-run it (it needs MXNet 1.9.1 and takes a few seconds) with::

    /tmp/mx/bin/python tools/measure_mxnet_stypes.py

which rewrites ``tests/ops/data/mxnet_1_9_1_stypes.json``; pass ``--out PATH``
to write elsewhere.

Operators whose docstrings mention sparse storage but that are not measured
here: graph sampling (``contrib.dgl_*``, ``contrib.edge_id``), quantization
(``contrib.quantized_embedding``), control flow (``contrib.cond``),
``contrib.hawkesll``, ``BatchNorm`` (dense only), creation functions
(``sparse.zeros``, ``empty``, ``array``, ``csr_matrix``, ``row_sparse_array``)
and I/O (``save``, ``load``), which have no input storage types to vary; and
``sparse.gs_retain``, which in 1.9.1 returns the tuple ``(0,)`` whatever its inputs.
"""
import argparse
import itertools
import json
import os
import pathlib
import tempfile
import threading

os.environ.setdefault("MXNET_ENGINE_TYPE", "NaiveEngine")  # errors raise at the call
os.environ["MXNET_STORAGE_FALLBACK_LOG_VERBOSE"] = "1"

import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

D, C, R = "default", "csr", "row_sparse"
ALL = (D, C, R)
TARGET = (pathlib.Path(__file__).resolve().parents[1] / "tests" / "ops" / "data"
          / "mxnet_1_9_1_stypes.json")

# Input values: zero rows (so row_sparse stores a subset) and zeros inside rows (csr).
ARRAYS = {
    "A": [[1.5, 0.0, -0.5, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0, 3.0]],
    "B": [[0.0, 2.0, 0.0, -1.0], [0.25, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
    "A2": [[0.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
    "COND": [[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]],
    "AT": [[1.5, 0.0, 0.0], [0.0, 0.0, 0.5], [-0.5, 0.0, 0.0], [0.0, 0.0, 3.0]],
    "RK": [[1.0, 0.0], [0.0, 0.0], [2.0, -1.0], [0.0, 0.5]],
    "RKT": [[1.0, 0.0, 2.0, 0.0], [0.0, 0.0, -1.0, 0.5]],
    "V4": [1.0, 0.0, 2.0, -1.0],
    "ROWV": [[2.0, 0.0, -1.0, 0.5]],
    "COLV": [[2.0], [0.0], [-0.5]],
    "L3": [[[1.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 1.0]],
           [[0.0] * 4, [0.0] * 4, [0.0] * 4]],
    "R3": [[[1.0, 0.0], [0.0, 2.0], [0.0, 0.0], [1.0, 1.0]],
           [[0.5, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, -1.0]]],
    "IDX_ROWS": [2.0, 0.0],
    "IDX_RETAIN": [0.0, 1.0],
    "IDS": [0.0, 2.0, 5.0, 2.0],
    "EMB": [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [4.0, 5.0, 6.0], [0.0, 0.0, 0.0],
            [7.0, 8.0, 9.0], [0.5, 0.0, 0.0]],
    "FCW": [[1.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
    "FCB": [0.5, -1.0],
    # update operators: every weight row present, a gradient with a zero row
    "W": [[1.0, 2.0, 3.0, 4.0], [-1.0, -2.0, -3.0, -4.0], [0.5, 0.5, 0.5, 0.5]],
    "G": [[0.1, 0.0, -0.2, 0.0], [0.0, 0.0, 0.0, 0.0], [0.3, 0.3, 0.0, -0.1]],
    "S": [[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], [0.9, 1.0, 1.1, 1.2]],
    "S2": [[0.01, 0.02, 0.03, 0.04], [0.05, 0.06, 0.07, 0.08], [0.09, 0.1, 0.11, 0.12]],
    "H1": [[0.1], [0.2], [0.3]],
}


class Case:
    """One call pattern: operator, input arrays, parameters, storage types to try.

    ``args`` are ``(array name, allowed stypes)`` or ``(array name, allowed, dtype)``;
    ``slots`` groups argument positions that share one storage type (optimizer
    states); ``combos`` lists explicit storage-type tuples instead of the product.
    """

    def __init__(self, ns, op, args, params=None, call="op", other=None, slots=None,
                 combos=None, mutates=False, tag=""):
        self.ns, self.op, self.call = ns, op, call
        self.args = [a if len(a) == 3 else (a[0], a[1], "float32") for a in args]
        self.params = params or {}
        self.other = other
        self.slots = slots or [[i] for i in range(len(self.args))]
        self.combos = combos
        self.mutates = mutates
        self.tag = tag

    def stype_combos(self):
        if self.combos is not None:
            return [tuple(c) for c in self.combos]
        allowed = []
        for slot in self.slots:
            allowed.append([s for s in self.args[slot[0]][1]
                            if all(s != C or np.ndim(ARRAYS[self.args[i][0]]) == 2
                                   for i in slot)])
        out = []
        for choice in itertools.product(*allowed):
            stypes = [None] * len(self.args)
            for slot, s in zip(self.slots, choice):
                for i in slot:
                    stypes[i] = s
            out.append(tuple(stypes))
        return out


def _fmt(v):
    if isinstance(v, tuple):
        return "(" + ",".join(_fmt(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return str(v)


def record_id(case, stypes):
    abbrev = {D: "dns", C: "csr", R: "rsp"}
    ps = ",".join(f"{k}={_fmt(v)}" for k, v in case.params.items())
    if case.other is not None:
        ps = f"other={case.other}" + ("," + ps if ps else "")
    if case.tag:
        ps = case.tag + ("," + ps if ps else "")
    head = f"{case.ns}.{case.op}" if case.call == "op" else case.op
    return f"{head}({','.join(abbrev[s] for s in stypes)})" + (f"[{ps}]" if ps else "")


def _shape_tag(name):
    """``rhs=(1,4)`` for a broadcast operand, empty for a same-shape one."""
    shape = np.shape(ARRAYS[name])
    return "" if shape == np.shape(ARRAYS["A"]) else f"rhs={_fmt(shape)}"


UNARY = ["abs", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "cbrt", "ceil",
         "cos", "cosh", "degrees", "exp", "expm1", "fix", "floor", "gamma", "gammaln", "log",
         "log10", "log1p", "log2", "make_loss", "negative", "radians", "relu", "rint", "round",
         "rsqrt", "sigmoid", "sign", "sin", "sinh", "softsign", "sqrt", "square", "tan", "tanh",
         "trunc", "zeros_like"]


def build_cases():
    cases = [Case("nd", name, [("A", ALL)]) for name in UNARY]
    cases += [Case("sparse", "stop_gradient", [("A", ALL)]),
              Case("contrib", "round_ste", [("A", ALL)]),
              Case("contrib", "sign_ste", [("A", ALL)])]
    for lo, hi in ((-1.0, 1.0), (0.0, 1.0), (0.5, 2.0), (-2.0, -0.25)):
        cases.append(Case("nd", "clip", [("A", ALL)], {"a_min": lo, "a_max": hi}))
    for st in ALL:
        cases.append(Case("nd", "cast_storage", [("A", ALL)], {"stype": st}))
    for c in (0.0, 1.0):
        cases.append(Case("contrib", "quadratic", [("A", ALL)], {"a": 1.0, "b": 2.0, "c": c}))
    for axis in (None, 0, 1):
        cases.append(Case("contrib", "getnnz", [("A", ALL)], {"axis": axis}))
    # reductions
    for name in ("sum", "mean"):
        for params in ({}, {"axis": 0}, {"axis": 1}, {"axis": -1}, {"axis": (0, 1)},
                       {"axis": 0, "keepdims": True}, {"axis": 1, "keepdims": True},
                       {"axis": 0, "exclude": True}):
            cases.append(Case("nd" if name == "sum" else "sparse", name, [("A", ALL)], params))
    for axis in (0, 1):
        cases.append(Case("nd", "sum_axis", [("A", ALL)], {"axis": axis}))
    for params in ({}, {"ord": 1}, {"ord": 2, "axis": 0}, {"ord": 2, "axis": 1},
                   {"ord": 1, "axis": 1}, {"ord": 2, "axis": 1, "keepdims": True},
                   {"ord": 2, "axis": (0, 1)}):
        cases.append(Case("nd", "norm", [("A", ALL)], params))
    for axis in (None, 0, 1):
        for keep in (False, True):
            params = {"keepdims": keep} if axis is None else {"axis": axis, "keepdims": keep}
            cases.append(Case("_internal", "_square_sum", [("A", ALL)], params))
    # structure
    for params in ({"begin": (1,), "end": (3,)}, {"begin": (0, 1), "end": (2, 3)},
                   {"begin": (0,), "end": (3,), "step": (2,)},
                   {"begin": (None, 1), "end": (None, 3)}):
        cases.append(Case("nd", "slice", [("A", ALL)], params))
    cases.append(Case("nd", "crop", [("A", ALL)], {"begin": (0, 1), "end": (2, 3)}))
    for axis in (0, 1):
        cases.append(Case("nd", "take", [("A", ALL), ("IDX_ROWS", (D,))], {"axis": axis}))
    cases.append(Case("sparse", "retain", [("A", ALL), ("IDX_RETAIN", (D,))]))
    for dim in (0, 1):
        cases.append(Case("nd", "concat", [("A", ALL), ("B", ALL)], {"dim": dim}))
    cases.append(Case("nd", "Concat", [("A", ALL), ("B", ALL)], {"dim": 0}))
    cases.append(Case("nd", "add_n", [("A", ALL), ("B", ALL)]))
    cases.append(Case("nd", "add_n", [("A", ALL), ("B", ALL), ("A2", ALL)]))
    cases.append(Case("nd", "add_n", [("A", ALL), ("B", ALL), ("A2", ALL), ("A", ALL),
                                      ("B", ALL)],
                      combos=[(D,) * 5, (R,) * 5, (C,) * 5, (D, R, R, R, R), (R, R, R, R, D),
                              (C, D, C, C, C), (D, C, D, C, D)]))
    cases.append(Case("nd", "ElementWiseSum", [("A", ALL), ("B", ALL)]))
    cases.append(Case("nd", "where", [("COND", ALL), ("A", ALL), ("B", ALL)]))
    # binary, same shape and broadcasting
    for name in ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div"):
        cases.append(Case("nd", name, [("A", ALL), ("B", ALL)]))
    for name in ("add", "subtract", "multiply", "divide"):
        for rhs in ("B", "ROWV", "COLV"):
            cases.append(Case("sparse", name, [("A", ALL), (rhs, ALL)], tag=_shape_tag(rhs)))
    for name in ("broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
                 "broadcast_plus", "broadcast_minus"):
        for rhs in ("B", "ROWV", "COLV"):
            cases.append(Case("nd", name, [("A", ALL), (rhs, ALL)], tag=_shape_tag(rhs)))
    # Python operators
    for name in ("__add__", "__sub__", "__mul__", "__truediv__"):
        cases.append(Case("nd", name, [("A", ALL), ("B", ALL)], call="method"))
    for name, scalars in (("__add__", (0.0, 1.0)), ("__sub__", (0.0, 1.0)),
                          ("__rsub__", (0.0, 2.0)), ("__mul__", (2.0,)), ("__rmul__", (2.0,)),
                          ("__truediv__", (2.0,)), ("__rtruediv__", (2.0,)),
                          ("__pow__", (2.0,)), ("__neg__", (None,)), ("__eq__", (0.0,)),
                          ("__ne__", (0.0,)), ("__gt__", (0.0,)), ("__lt__", (1.0,)),
                          ("__ge__", (1.0,)), ("__le__", (0.0,))):
        for s in scalars:
            cases.append(Case("nd", name, [("A", ALL)], call="method", other=s))
    # dot
    for ta, tb in itertools.product((False, True), repeat=2):
        lhs, rhs = ("AT" if ta else "A"), ("RKT" if tb else "RK")
        base = {"transpose_a": ta, "transpose_b": tb}
        cases.append(Case("nd", "dot", [(lhs, ALL), (rhs, ALL)], base))
        if not (ta and tb):
            for fs in ALL:
                cases.append(Case("nd", "dot", [(lhs, ALL), (rhs, ALL)],
                                  dict(base, forward_stype=fs)))
    cases.append(Case("nd", "dot", [("A", ALL), ("V4", (D, R))]))
    cases.append(Case("nd", "batch_dot", [("L3", (D, R)), ("R3", (D, R))]))
    # layers
    for sg in (False, True):
        cases.append(Case("nd", "Embedding", [("IDS", (D,)), ("EMB", ALL)],
                          {"input_dim": 6, "output_dim": 3, "sparse_grad": sg}))
    cases.append(Case("contrib", "SparseEmbedding", [("IDS", (D,)), ("EMB", ALL)],
                      {"input_dim": 6, "output_dim": 3}))
    cases.append(Case("nd", "FullyConnected", [("A", ALL), ("FCW", ALL), ("FCB", (D,))],
                      {"num_hidden": 2}))
    cases.append(Case("nd", "FullyConnected", [("A", ALL), ("FCW", ALL)],
                      {"num_hidden": 2, "no_bias": True}))
    for name in ("LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"):
        cases.append(Case("nd", name, [("A", ALL), ("B", ALL)]))
    # update operators (states of one optimizer share a storage type)
    opt = dict(mutates=True)
    for lazy in (True, False):
        cases.append(Case("nd", "sgd_update", [("W", ALL), ("G", ALL)],
                          {"lr": 0.1, "wd": 0.1, "lazy_update": lazy}, **opt))
        cases.append(Case("nd", "sgd_mom_update", [("W", ALL), ("G", ALL), ("S2", ALL)],
                          {"lr": 0.1, "momentum": 0.9, "wd": 0.1, "lazy_update": lazy}, **opt))
        cases.append(Case("nd", "adam_update",
                          [("W", ALL), ("G", ALL), ("S2", ALL), ("S", ALL)],
                          {"lr": 0.1, "wd": 0.1, "lazy_update": lazy},
                          slots=[[0], [1], [2, 3]], **opt))
    cases.append(Case("nd", "ftrl_update", [("W", ALL), ("G", ALL), ("S2", ALL), ("S", ALL)],
                      {"lr": 0.1}, slots=[[0], [1], [2, 3]], **opt))
    for wd in (0.0, 0.1):
        cases.append(Case("sparse", "adagrad_update", [("W", ALL), ("G", ALL), ("S", ALL)],
                          {"lr": 0.1, "epsilon": 1e-7, "wd": wd}, **opt))
    cases.append(Case("contrib", "group_adagrad_update", [("W", ALL), ("G", ALL), ("H1", ALL)],
                      {"lr": 0.1}, **opt))
    cases.append(Case("nd", "mp_sgd_update",
                      [("W", ALL, "float16"), ("G", ALL, "float16"), ("W", ALL)],
                      {"lr": 0.1, "wd": 0.1}, slots=[[0], [1], [2]], **opt))
    cases.append(Case("nd", "mp_sgd_mom_update",
                      [("W", ALL, "float16"), ("G", ALL, "float16"), ("S2", ALL), ("W", ALL)],
                      {"lr": 0.1, "momentum": 0.9, "wd": 0.1}, slots=[[0], [1], [2, 3]], **opt))
    cases.append(Case("nd", "signsgd_update", [("W", ALL), ("G", ALL)],
                      {"lr": 0.1, "wd": 0.1}, **opt))
    cases.append(Case("nd", "signum_update", [("W", ALL), ("G", ALL), ("S2", ALL)],
                      {"lr": 0.1, "momentum": 0.9, "wd": 0.1}, **opt))
    return cases


def _as_list(x):
    """Dense values as nested lists, each float written with its dtype's shortest repr."""
    a = x.asnumpy() if isinstance(x, mx.nd.NDArray) else np.asarray(x)
    if a.dtype.kind == "f":
        return np.vectorize(lambda v: float(str(v)), otypes=[object])(a).tolist() \
            if a.size else a.tolist()
    return a.tolist()


def _make(name, stype, dtype):
    arr = mx.nd.array(np.asarray(ARRAYS[name], dtype=dtype), dtype=dtype)
    return arr if stype == D else arr.tostype(stype)


def _run_captured(fn, mutated):
    """Run ``fn`` in a fresh thread with fd 2 captured.

    Returns ``(outputs as (stype, shape, dtype, values) tuples, exception, stderr)``;
    values are read inside the thread, so errors raised when MXNet computes count.
    """
    box = {}

    def target():
        try:
            out = fn()
            outs = out if isinstance(out, (list, tuple)) else [out]
            for o in outs:
                if not isinstance(o, mx.nd.NDArray):
                    raise TypeError(f"returned {type(out).__name__} {out!r}, not an NDArray")
            box["outs"] = [(o.stype, list(o.shape), np.dtype(o.dtype).name, _as_list(o))
                           for o in outs]
            box["after"] = [_as_list(a) for a in mutated]
        except Exception as e:  # noqa: BLE001 - recorded as data
            box["err"] = e

    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(2)
        os.dup2(tmp.fileno(), 2)
        try:
            t = threading.Thread(target=target)
            t.start()
            t.join()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        err_text = tmp.read().decode(errors="replace")
    return box, err_text


def _function(case):
    if case.ns == "nd":
        return getattr(mx.nd, case.op)
    if case.ns == "_internal":
        return getattr(mx.nd._internal, case.op)
    return getattr(getattr(mx.nd, case.ns), case.op)


def measure(case, stypes):
    arrays = [_make(name, st, dtype) for (name, _, dtype), st in zip(case.args, stypes)]
    if case.call == "method":
        method = getattr(arrays[0], case.op)
        rest = arrays[1:] if len(arrays) > 1 else ([] if case.other is None else [case.other])
        fn = lambda: method(*rest)  # noqa: E731
    else:
        op = _function(case)
        out_kw = {"out": arrays[0]} if case.mutates else {}  # update operators: out=weight
        fn = lambda: op(*arrays, **case.params, **out_kw)  # noqa: E731
    box, log = _run_captured(fn, arrays if case.mutates else [])
    rec = {"id": record_id(case, stypes), "ns": case.ns, "op": case.op, "call": case.call,
           "inputs": list(stypes),
           "args": [[name, dtype] for name, _, dtype in case.args], "other": case.other,
           "out_is_first_input": case.mutates, "params": case.params,
           "fallback": "Storage type fallback detected" in log}
    if "err" in box:
        err = box["err"]
        rec["out"] = f"error:{type(err).__name__}"
        msg = [ln for ln in str(err).splitlines() if ln.strip() and "Traceback" not in ln
               and not ln.lstrip().startswith("File ")]
        rec["error"] = (msg[0] if msg else "")[:200]
        return rec
    outs = box["outs"]
    one = len(outs) == 1
    for key, pos in (("out", 0), ("shape", 1), ("dtype", 2), ("value", 3)):
        rec[key] = outs[0][pos] if one else [o[pos] for o in outs]
    if case.mutates:  # the inputs the call changed, by position
        rec["inputs_after"] = {str(i): after for i, ((name, _, dtype), after)
                               in enumerate(zip(case.args, box["after"]))
                               if not np.array_equal(np.asarray(after, dtype=dtype),
                                                     np.asarray(ARRAYS[name], dtype=dtype))}
    return rec


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(TARGET), help="JSON file to write")
    args = parser.parse_args(argv)
    assert mx.__version__ == "1.9.1", f"needs MXNet 1.9.1, found {mx.__version__}"
    records = []
    for case in build_cases():
        for stypes in case.stype_combos():
            records.append(measure(case, stypes))
    ids = [r["id"] for r in records]
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, f"duplicate record ids: {sorted(dup)}"
    path = pathlib.Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        f.write('{"mxnet":"1.9.1",\n"arrays":')
        f.write(json.dumps(ARRAYS, separators=(",", ":")))
        f.write(',\n"records":[\n')
        f.write(",\n".join(json.dumps(r, separators=(",", ":")) for r in records))
        f.write("\n]}\n")
    n_err = sum(r["out"].startswith("error") for r in records if isinstance(r["out"], str))
    n_fb = sum(r["fallback"] for r in records)
    print(f"wrote {len(records)} records ({n_err} errors, {n_fb} fallbacks) to {path}")


if __name__ == "__main__":
    main()

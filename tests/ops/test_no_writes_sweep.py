"""No operator writes into memory its caller owns, swept over every storage-type rule row.

For each rule row of the registry (the rows ``docs/stype_table.md`` lists) the inputs
come from the matching case of ``tests/ops/test_stype_rules.py`` when there is one,
else from generated arrays of shape ``(4, 5)`` with the row's storage types and the
operator's default parameters. Each row then runs

* eagerly under ``autograd.record()``, forward and backward with a head gradient,
  three times, and
* through a bound symbol (``bind`` with the same arrays, ``grad_req='write'``),
  forward and ``backward(head)`` three times,

and after every call each input (its values and, for sparse arrays, its indices and
indptr) and each head gradient must be bit-identical to a copy taken before, and each
gradient must equal the first call's bit for bit (``'write'`` overwrites, never
accumulates). The fused optimizer updates (``sgd_update``, ...) are left out: writing
into the weight and state arrays is their contract (MXNet's ``out=weight``).
Rows whose operator cannot be called with generated inputs are listed by
:func:`test_sweep_reaches_most_rows`, which also bounds how many may be left out.
"""
import numpy as np
import pytest

import sparsenet as mx
import sparsenet.ndarray  # noqa: F401 - loads the containers before the registry
from sparsenet import autograd
from sparsenet.base import SparsenetError
from sparsenet.ops.registry import OPERATORS, Many
from sparsenet.symbol.op import SYMBOL_OPS

from tests.helpers import make_array
from tests.ops.test_stype_rules import CASES

D, C, R = "default", "csr", "row_sparse"
REPEATS = 3


def _in_place_by_contract(op):
    return op.__module__.startswith("sparsenet.ops.update_rules") or op.name.startswith("_doc_")


def _row_stypes(row):
    if isinstance(row.pattern, Many):
        first = row.pattern.needs or sorted(row.pattern.allowed)[0]
        return (first, first)
    return tuple(row.pattern)


def _plan(op, row):
    """``(shapes, stypes, params, ints, low, high)`` that reach ``row``, or None."""
    for case in CASES:
        if case.op is not op:
            continue
        for stypes in case.combos():
            try:
                hit = op.find_rule(tuple(stypes), op.bind_params(case.params))
            except SparsenetError:
                continue
            if hit is row:
                return case.shapes, tuple(stypes), case.params, dict(case.ints), case.low, \
                    case.high
    stypes = _row_stypes(row)
    try:
        params = op.bind_params({})
    except SparsenetError:
        return None
    if not row.applies(params) or op.find_rule(stypes, params) is not row:
        return None
    return [(4, 5)] * len(stypes), stypes, {}, {}, 0.5, 2.0


ROWS = [(op, row) for op in OPERATORS.values() if not _in_place_by_contract(op)
        for row in op.rules()]
PLANS = [(op, row, _plan(op, row)) for op, row in ROWS]
RUNNABLE = [(op, row, plan) for op, row, plan in PLANS if plan is not None]
# Rows again with the parameters whose backward hands the head gradient on as values
# (sparse_grad=True; repeated ids are summed): the path MXNet's test_sparse_embedding caught.
for _name, _extra in (("Embedding", {"sparse_grad": True}), ("_contrib_SparseEmbedding", {})):
    for _row in OPERATORS[_name].rules():
        RUNNABLE.append((OPERATORS[_name], _row,
                         ([(8,), (6, 3)], _row_stypes(_row), dict(input_dim=6, output_dim=3,
                                                                  **_extra), {0: 3}, -2.0, 2.0)))
IDS = [f"{op.name}({row.inputs_text()})->{row.out}" + (f"[{row.condition}]" if row.condition
                                                        else "") + f"-{k}"
       for k, (op, row, _) in enumerate(RUNNABLE)]


def _inputs(plan):
    shapes, stypes, _, ints, low, high = plan
    arrays = []
    for i, (shape, st) in enumerate(zip(shapes, stypes)):
        if i in ints:
            arrays.append(mx.nd.array(np.random.randint(0, ints[i], size=shape)))
        else:
            arrays.append(make_array(shape, st, density=0.6, low=low, high=high)[0])
    return arrays


def _snapshot(a):
    """Bytes of every part of ``a`` (values; indices and indptr of a sparse array)."""
    parts = [a.asnumpy()]
    if a.stype == C:
        parts += [a.data.asnumpy(), a.indices.asnumpy(), a.indptr.asnumpy()]
    elif a.stype == R:
        parts += [a.data.asnumpy(), a.indices.asnumpy()]
    return [(p.dtype.str, p.shape, p.tobytes()) for p in parts]


def _outputs(result):
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _is_float(a):
    return np.dtype(a.dtype).kind == "f"


def _heads(outs):
    return [mx.nd.array(np.random.uniform(0.5, 1.5, size=o.shape), dtype=o.dtype)
            for o in outs]


def _check_unchanged(before, arrays, what):
    for i, (snap, a) in enumerate(zip(before, arrays)):
        assert _snapshot(a) == snap, f"{what} {i} ({a.stype}) was written into"


def _call_or_skip(fn):
    try:
        return fn()
    except SparsenetError as e:  # the generated inputs do not suit this operator
        pytest.skip(f"not callable with generated inputs: {e}")


@pytest.mark.parametrize("op,row,plan", RUNNABLE, ids=IDS)
def test_eager_forward_backward_write_nothing(op, row, plan):
    params = plan[2]
    arrays = _call_or_skip(lambda: _inputs(plan))
    before = [_snapshot(a) for a in arrays]
    _call_or_skip(lambda: op(*arrays, **params))
    _check_unchanged(before, arrays, "input")
    grads_of = [a for a in arrays if _is_float(a)] if op.differentiable else []
    for a in grads_of:
        a.attach_grad(grad_req="write")
    first = None
    heads = head_snaps = None
    for _ in range(REPEATS):
        with autograd.record():
            outs = _outputs(op(*arrays, **params))
        _check_unchanged(before, arrays, "input")
        float_outs = [o for o in outs if _is_float(o)]
        if not grads_of or not float_outs:
            continue
        if heads is None:
            heads = _heads(float_outs)
            head_snaps = [_snapshot(h) for h in heads]
        try:
            autograd.backward(float_outs, heads)
        except SparsenetError as e:  # no gradient path (BlockGrad, zeros_like, ...)
            assert "cannot differentiate" in str(e)
            break
        _check_unchanged(before, arrays, "input")
        _check_unchanged(head_snaps, heads, "head gradient")
        grads = [_snapshot(a.grad) if a.grad is not None else None for a in grads_of]
        if first is None:
            first = grads
        assert grads == first, "a repeated backward with grad_req='write' changed the gradient"


@pytest.mark.parametrize("op,row,plan", RUNNABLE, ids=IDS)
def test_bound_forward_backward_write_nothing(op, row, plan):
    params = plan[2]
    arrays = _call_or_skip(lambda: _inputs(plan))
    before = [_snapshot(a) for a in arrays]
    names = [f"in{i}" for i in range(len(arrays))]
    variables = [mx.sym.var(n, stype=a.stype) for n, a in zip(names, arrays)]
    sym = _call_or_skip(lambda: SYMBOL_OPS[op.name](*variables, **params))
    train = op.differentiable
    grads = {n: mx.nd.zeros(a.shape, dtype=a.dtype) for n, a in zip(names, arrays)
             if _is_float(a) and train}
    reqs = {n: ("write" if n in grads else "null") for n in names}
    exe = _call_or_skip(lambda: sym.bind(mx.cpu(), args=dict(zip(names, arrays)),
                                         args_grad=grads or None, grad_req=reqs))
    first = None
    heads = head_snaps = None
    for _ in range(REPEATS):
        _call_or_skip(lambda: exe.forward(is_train=train))
        _check_unchanged(before, arrays, "bound argument")
        outs = exe.outputs
        if not grads or not all(_is_float(o) for o in outs):
            continue
        if heads is None:
            heads = _heads(outs)
            head_snaps = [_snapshot(h) for h in heads]
        exe.backward(heads)
        _check_unchanged(before, arrays, "bound argument")
        _check_unchanged(head_snaps, heads, "head gradient")
        got = [_snapshot(exe.grad_dict[n]) for n in sorted(grads)]
        if first is None:
            first = got
        assert got == first, "a repeated backward with grad_req='write' changed the gradient"


def test_sweep_reaches_most_rows():
    """Every rule row outside the fused optimizer updates is planned; the ones that are not
    are named here (and must stay few)."""
    unplanned = [f"{op.name}({row.inputs_text()}) when {row.condition or 'always'}"
                 for op, row, plan in PLANS if plan is None]
    assert len(RUNNABLE) >= 0.8 * len(PLANS), f"rows without generated inputs: {unplanned}"


def test_the_check_sees_a_write_into_any_part():
    """The snapshot catches an in-place change of a value, an index and a dense element."""
    csr = mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 2], [0, 1, 2]), shape=(2, 3))
    rsp = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [1]), shape=(3, 2))
    dns = mx.nd.array([[1.0, 2.0]])
    before = [_snapshot(a) for a in (csr, rsp, dns)]
    csr._data[1] = 3.0  # an in-place write into the stored values
    with pytest.raises(AssertionError, match="input 0"):
        _check_unchanged(before, [csr, rsp, dns], "input")
    dns[0, 1] = 5.0
    with pytest.raises(AssertionError, match="input 1"):
        _check_unchanged(before[1:], [rsp, dns], "input")
